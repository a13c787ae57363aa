"""BERT encoder (Devlin et al. 2018), Hugging Face `BertModel` names.

Post-LayerNorm blocks: h = LN(h + Attn(h)); h = LN(h + FFN(h)), FFN = W2 act(W1 h).
Embeddings: LN(word[id] + token_type[0] + position[p]), positions 0..S-1.
Output: the last hidden state [B, S, hidden].
"""
import math

import torch
from torch import nn

from .common import ACTIVATIONS, attention, attention_mask, merge_heads, split_heads


class BertEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden_size"]
        self.word_embeddings = nn.Embedding(c["vocab_size"], h)  # [V, h]
        self.position_embeddings = nn.Embedding(c["max_position_embeddings"], h)  # [P, h]
        self.token_type_embeddings = nn.Embedding(c["type_vocab_size"], h)  # [T, h]
        self.LayerNorm = nn.LayerNorm(h, eps=c["layer_norm_eps"])

    def forward(self, ids):
        s = ids.shape[1]
        x = self.word_embeddings(ids) + self.token_type_embeddings(torch.zeros_like(ids))
        x = x + self.position_embeddings(torch.arange(s))[None]
        return self.LayerNorm(x)


class BertSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden_size"]
        self.heads = c["num_attention_heads"]
        self.query = nn.Linear(h, h)
        self.key = nn.Linear(h, h)
        self.value = nn.Linear(h, h)

    def forward(self, x, allowed):
        q = split_heads(self.query(x), self.heads)  # [B, H, S, D]
        k = split_heads(self.key(x), self.heads)
        v = split_heads(self.value(x), self.heads)
        scale = 1.0 / math.sqrt(q.shape[-1])
        return merge_heads(attention(q, k, v, allowed, scale=scale))  # [B, S, h]


class BertSelfOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])

    def forward(self, a, residual):
        return self.LayerNorm(self.dense(a) + residual)


class BertAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertSelfOutput(c)

    def forward(self, x, allowed):
        return self.output(self.self(x, allowed), x)


class BertIntermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["intermediate_size"])
        self.act = ACTIVATIONS[c["hidden_act"]]

    def forward(self, x):
        return self.act(self.dense(x))


class BertOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["intermediate_size"], c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])

    def forward(self, f, residual):
        return self.LayerNorm(self.dense(f) + residual)


class BertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = BertAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = BertOutput(c)

    def forward(self, x, allowed):
        a = self.attention(x, allowed)
        return self.output(self.intermediate(a), a)


class BertEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(c) for _ in range(c["num_hidden_layers"]))


class BertModel(nn.Module):
    kind = "encoder"

    def __init__(self, c):
        super().__init__()
        if c.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError("only absolute positions")
        self.embeddings = BertEmbeddings(c)
        self.encoder = BertEncoder(c)
        # The checkpoints' pooler (dense + tanh over the first token) is not part of the output.

    def forward(self, ids, valid):
        """ids: long [B, S]; valid: bool [B, S] (False on padding). Returns [B, S, hidden]."""
        x = self.embeddings(ids)
        allowed = attention_mask(valid, ids.shape[1])
        for layer in self.encoder.layer:
            x = layer(x, allowed)
        return x
