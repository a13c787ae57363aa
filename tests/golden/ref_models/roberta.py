"""RoBERTa / XLM-RoBERTa encoders (Liu et al. 2019; Conneau et al. 2019), Hugging Face
`RobertaModel` / `XLMRobertaModel` names: BERT's layers (bert.py) with RoBERTa's positions.

Positions (create_position_ids_from_input_ids): with padding_idx = pad_token_id, a token gets
padding_idx + (its index among the non-pad tokens, from 1) and a pad token gets padding_idx:
right-padded, real token p sits at position padding_idx + 1 + p. Token type 0 everywhere
(type_vocab_size 1). Output: the last hidden state [B, S, hidden].
"""
import torch
from torch import nn

from .bert import BertEncoder, BertModel


def position_ids(ids, padding_idx):
    """[B, S] position ids as create_position_ids_from_input_ids computes them."""
    mask = (ids != padding_idx).long()
    return torch.cumsum(mask, dim=1) * mask + padding_idx


class RobertaEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden_size"]
        self.padding_idx = c["pad_token_id"]
        self.word_embeddings = nn.Embedding(c["vocab_size"], h)  # [V, h]
        self.position_embeddings = nn.Embedding(c["max_position_embeddings"], h)  # [P + pad + 1, h]
        self.token_type_embeddings = nn.Embedding(c["type_vocab_size"], h)  # [T, h]
        self.LayerNorm = nn.LayerNorm(h, eps=c["layer_norm_eps"])

    def forward(self, ids):
        x = self.word_embeddings(ids) + self.token_type_embeddings(torch.zeros_like(ids))
        x = x + self.position_embeddings(position_ids(ids, self.padding_idx))
        return self.LayerNorm(x)


class RobertaModel(BertModel):
    def __init__(self, c):
        nn.Module.__init__(self)
        if c.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError("only absolute positions")
        self.embeddings = RobertaEmbeddings(c)
        self.encoder = BertEncoder(c)
