"""DistilBERT encoder (Sanh et al. 2019), Hugging Face `DistilBertModel` names.

BERT without token types: embeddings LN(word[id] + position[p]) with LayerNorm eps 1e-12 (written
into modeling_distilbert.py, not a config key), positions 0..S-1; post-LayerNorm blocks
h = sa_layer_norm(h + Attn(h)); h = output_layer_norm(h + lin2(act(lin1(h)))).
sinusoidal_pos_embds: position_embeddings.weight holds create_sinusoidal_embeddings' table
(angle pos / 10000^(2 * (j // 2) / dim) in float64, sin in even columns, cos in odd ones) and is
saved in the checkpoint like a learned table.
Output: the last hidden state [B, S, dim].
"""
import math

import numpy as np
import torch
from torch import nn

from .common import ACTIVATIONS, attention, attention_mask, merge_heads, split_heads

LAYER_NORM_EPS = 1e-12


def sinusoidal_table(n_pos, dim):
    """create_sinusoidal_embeddings' values [n_pos, dim], float32."""
    j = np.arange(dim)
    angle = np.arange(n_pos)[:, None] / np.power(10000.0, 2 * (j // 2) / dim)[None, :]
    out = np.where(j % 2 == 0, np.sin(angle), np.cos(angle))
    return torch.from_numpy(out.astype(np.float32))


class Embeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["dim"]
        self.word_embeddings = nn.Embedding(c["vocab_size"], d)  # [V, d]
        self.position_embeddings = nn.Embedding(c["max_position_embeddings"], d)  # [P, d]
        self.LayerNorm = nn.LayerNorm(d, eps=LAYER_NORM_EPS)
        if c.get("sinusoidal_pos_embds", False):
            with torch.no_grad():
                self.position_embeddings.weight.copy_(
                    sinusoidal_table(c["max_position_embeddings"], d))

    def forward(self, ids):
        s = ids.shape[1]
        x = self.word_embeddings(ids) + self.position_embeddings(torch.arange(s))[None]
        return self.LayerNorm(x)


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["dim"]
        self.heads = c["n_heads"]
        self.q_lin = nn.Linear(d, d)
        self.k_lin = nn.Linear(d, d)
        self.v_lin = nn.Linear(d, d)
        self.out_lin = nn.Linear(d, d)

    def forward(self, x, allowed):
        q = split_heads(self.q_lin(x), self.heads)  # [B, H, S, D]
        k = split_heads(self.k_lin(x), self.heads)
        v = split_heads(self.v_lin(x), self.heads)
        q = q / math.sqrt(q.shape[-1])  # DistilBERT scales q, not the scores
        return self.out_lin(merge_heads(attention(q, k, v, allowed)))  # [B, S, d]


class FFN(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.lin1 = nn.Linear(c["dim"], c["hidden_dim"])
        self.lin2 = nn.Linear(c["hidden_dim"], c["dim"])
        self.act = ACTIVATIONS[c["activation"]]

    def forward(self, x):
        return self.lin2(self.act(self.lin1(x)))


class TransformerBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["dim"]
        self.attention = MultiHeadSelfAttention(c)
        self.sa_layer_norm = nn.LayerNorm(d, eps=LAYER_NORM_EPS)
        self.ffn = FFN(c)
        self.output_layer_norm = nn.LayerNorm(d, eps=LAYER_NORM_EPS)

    def forward(self, x, allowed):
        a = self.sa_layer_norm(self.attention(x, allowed) + x)
        return self.output_layer_norm(self.ffn(a) + a)


class Transformer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList(TransformerBlock(c) for _ in range(c["n_layers"]))


class DistilBertModel(nn.Module):
    kind = "encoder"

    def __init__(self, c):
        super().__init__()
        if c["dim"] % c["n_heads"] != 0:
            raise ValueError("n_heads must divide dim")
        self.embeddings = Embeddings(c)
        self.transformer = Transformer(c)

    def forward(self, ids, valid):
        """ids: long [B, S]; valid: bool [B, S] (False on padding). Returns [B, S, dim]."""
        x = self.embeddings(ids)
        allowed = attention_mask(valid, ids.shape[1])
        for layer in self.transformer.layer:
            x = layer(x, allowed)
        return x
