"""Marian NMT: the original Transformer (Vaswani et al. 2017) as Marian trains it, Hugging Face
`MarianMTModel` names.

Post-norm encoder-decoder: h = LN(h + SelfAttn(h)); [decoder: h = LN(h + CrossAttn(h, enc))];
h = LN(h + fc2(swish(fc1(h)))). Inputs: emb[id] * sqrt(d_model) + pos[p], positions 0..S-1 from
sinusoids in Marian's layout (columns [0, d/2): sin(p / 10000^(2j/d)); columns [d/2, d): cos of
the same angles). Attention: softmax((q * head_dim^-0.5) k^T) v with biased projections.
Logits = dec @ shared^T + final_logits_bias.
"""
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .common import ACTIVATIONS, KVCache, attention, attention_mask, merge_heads, split_heads


def sinusoids(n_pos, dim):
    """[n_pos, dim] float32, computed in float64 then rounded (as Hugging Face does)."""
    angles = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)]
                       for pos in range(n_pos)])
    out = np.zeros((n_pos, dim))
    half = dim // 2 if dim % 2 == 0 else dim // 2 + 1
    out[:, :half] = np.sin(angles[:, 0::2])
    out[:, half:] = np.cos(angles[:, 1::2])
    return torch.from_numpy(out.astype(np.float32))


class MarianSinusoidalPositionalEmbedding(nn.Module):
    def __init__(self, n_pos, dim):
        super().__init__()
        self.weight = nn.Parameter(sinusoids(n_pos, dim), requires_grad=False)  # [P, d]

    def forward(self, offset, s):
        return self.weight[offset:offset + s]


class MarianAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.k_proj = nn.Linear(d, d)
        self.v_proj = nn.Linear(d, d)
        self.q_proj = nn.Linear(d, d)
        self.out_proj = nn.Linear(d, d)

    def forward(self, x, allowed, kv=None, cache=None, layer=0):
        """Self-attention when kv is None (with an optional cache), else cross-attention with
        K/V from kv = (k, v) precomputed on the encoder output."""
        q = split_heads(self.q_proj(x) * (1.0 / math.sqrt(x.shape[-1] // self.heads)), self.heads)
        if kv is None:
            k = split_heads(self.k_proj(x), self.heads)
            v = split_heads(self.v_proj(x), self.heads)
            if cache is not None:
                k, v = cache.append(layer, k, v)
        else:
            k, v = kv
        return self.out_proj(merge_heads(attention(q, k, v, allowed)))

    def cross_kv(self, enc):
        return split_heads(self.k_proj(enc), self.heads), split_heads(self.v_proj(enc), self.heads)


class MarianEncoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["d_model"]
        self.self_attn = MarianAttention(d, c["encoder_attention_heads"])
        self.self_attn_layer_norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, c["encoder_ffn_dim"])
        self.fc2 = nn.Linear(c["encoder_ffn_dim"], d)
        self.final_layer_norm = nn.LayerNorm(d)
        self.act = ACTIVATIONS[c["activation_function"]]

    def forward(self, x, allowed):
        x = self.self_attn_layer_norm(x + self.self_attn(x, allowed))
        return self.final_layer_norm(x + self.fc2(self.act(self.fc1(x))))


class MarianDecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["d_model"]
        self.self_attn = MarianAttention(d, c["decoder_attention_heads"])
        self.self_attn_layer_norm = nn.LayerNorm(d)
        self.encoder_attn = MarianAttention(d, c["decoder_attention_heads"])
        self.encoder_attn_layer_norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, c["decoder_ffn_dim"])
        self.fc2 = nn.Linear(c["decoder_ffn_dim"], d)
        self.final_layer_norm = nn.LayerNorm(d)
        self.act = ACTIVATIONS[c["activation_function"]]

    def forward(self, x, self_allowed, cross_kv, cross_allowed, cache, layer):
        x = self.self_attn_layer_norm(x + self.self_attn(x, self_allowed, cache=cache, layer=layer))
        x = self.encoder_attn_layer_norm(x + self.encoder_attn(x, cross_allowed, kv=cross_kv))
        return self.final_layer_norm(x + self.fc2(self.act(self.fc1(x))))


class MarianEncoder(nn.Module):
    def __init__(self, c, shared):
        super().__init__()
        self.embed_tokens = shared
        self.embed_positions = MarianSinusoidalPositionalEmbedding(c["max_position_embeddings"],
                                                                   c["d_model"])
        self.layers = nn.ModuleList(MarianEncoderLayer(c) for _ in range(c["encoder_layers"]))


class MarianDecoder(nn.Module):
    def __init__(self, c, shared):
        super().__init__()
        self.embed_tokens = shared
        self.embed_positions = MarianSinusoidalPositionalEmbedding(c["max_position_embeddings"],
                                                                   c["d_model"])
        self.layers = nn.ModuleList(MarianDecoderLayer(c) for _ in range(c["decoder_layers"]))


class MarianModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.shared = nn.Embedding(c["vocab_size"], c["d_model"])  # [V, d]
        self.encoder = MarianEncoder(c, self.shared)
        self.decoder = MarianDecoder(c, self.shared)


class MarianMTModel(nn.Module):
    kind = "encoder-decoder"

    def __init__(self, c):
        super().__init__()
        if c.get("normalize_before", False) or not c.get("scale_embedding", False):
            raise ValueError("the goldens cover post-norm Marian with scaled embeddings")
        self.model = MarianModel(c)
        self.register_buffer("final_logits_bias", torch.zeros(1, c["vocab_size"]))  # [1, V]
        self.embed_scale = math.sqrt(c["d_model"])

    def new_cache(self):
        return KVCache(len(self.model.decoder.layers))

    def encode(self, ids, valid):
        """ids: long [B, S]; valid: bool [B, S]. Returns the encoder output [B, S, d]."""
        enc = self.model.encoder
        x = enc.embed_tokens(ids) * self.embed_scale + enc.embed_positions(0, ids.shape[1])[None]
        allowed = attention_mask(valid, ids.shape[1])
        for layer in enc.layers:
            x = layer(x, allowed)
        return x

    def decode(self, dec_ids, dec_valid, enc_out, enc_valid, cache=None, cross=None):
        """Teacher-forced decoder: dec_ids long [B, T] (starting with decoder_start_token_id);
        dec_valid bool [B, T] (cached + new keys with a cache). `cross` holds the cross-attention
        K/V per layer, computed once per source. Returns logits [B, T, V]."""
        dec = self.model.decoder
        offset = cache.length() if cache is not None else 0
        t = dec_ids.shape[1]
        if cross is None:
            cross = self.cross_kv(enc_out)
        x = dec.embed_tokens(dec_ids) * self.embed_scale + dec.embed_positions(offset, t)[None]
        self_allowed = attention_mask(dec_valid, t, offset=offset, causal=True)
        cross_allowed = attention_mask(enc_valid, t)
        for i, layer in enumerate(dec.layers):
            x = layer(x, self_allowed, cross[i], cross_allowed, cache, i)
        return F.linear(x, self.model.shared.weight) + self.final_logits_bias

    def cross_kv(self, enc_out):
        return [layer.encoder_attn.cross_kv(enc_out) for layer in self.model.decoder.layers]
