"""ModernBERT encoder, Hugging Face `ModernBertModel` names.

Restated from transformers' src/transformers/models/modernbert/modeling_modernbert.py
(commit 1ae3d1e0c46618caf8bbe15c404293d0d1f8b8ee, the original config style) and
modular_modernbert.py + configuration_modernbert.py (commit
001f85b38fb432858ace93f18622f07cec46d874: layer_types and rope_parameters per layer kind), with
masking_utils.py (commit 00c4411cbe15d4c56d54d3b56d4d171e9c289dac) for the local mask.

Pre-norm blocks: x += Wo(attn(attn_norm(x))); x += Wo(act(input) * gate) of mlp_norm(x), where
Wi(x).chunk(2) = (input, gate) and layer 0's attn_norm is the identity (the embeddings end in a
LayerNorm). Embeddings: LayerNorm(tok_embeddings[id]). Attention: Wqkv rows split Q, K, V;
rotate-half RoPE over the whole head, theta per layer kind; scale head_dim^-0.5; local layers see
the keys with |i - j| <= local_attention // 2. Output: final_norm(x), the last hidden state.
LayerNorms have a bias only with norm_bias.
"""

import torch
from torch import nn

from .common import (ACTIVATIONS, apply_rope, attention, attention_mask, merge_heads,
                     rope_cos_sin, rope_inv_freq, split_heads)


def local_layers(c):
    """Layer i is local (a band) or global: layer_types when given, else every
    global_attn_every_n_layers-th layer from 0 is global."""
    n = c["num_hidden_layers"]
    if c.get("layer_types") is not None:
        return [t == "sliding_attention" for t in c["layer_types"]]
    every = c.get("global_attn_every_n_layers", 3)
    return [i % every != 0 for i in range(n)]


def thetas(c):
    """(global theta, local theta): rope_parameters per kind, else the old keys, else defaults."""
    params = c.get("rope_parameters") or {}
    glob = params.get("full_attention", {}).get("rope_theta", c.get("global_rope_theta", 160000.0))
    if "sliding_attention" in params and "rope_theta" in params["sliding_attention"]:
        loc = params["sliding_attention"]["rope_theta"]
    elif "local_rope_theta" in c:
        loc = c["local_rope_theta"] if c["local_rope_theta"] is not None else glob
    else:
        loc = 10000.0
    return float(glob), float(loc)


def layer_norm(c):
    """nn.LayerNorm(hidden, eps=norm_eps, bias=norm_bias), for torch versions without `bias`."""
    norm = nn.LayerNorm(c["hidden_size"], eps=c.get("norm_eps", 1e-5))
    if not c.get("norm_bias", False):
        norm.register_parameter("bias", None)  # F.layer_norm takes None: no bias
    return norm


class ModernBertEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.tok_embeddings = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.norm = layer_norm(c)

    def forward(self, ids):
        return self.norm(self.tok_embeddings(ids))


class ModernBertAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden_size"]
        self.heads = c["num_attention_heads"]
        bias = c.get("attention_bias", False)
        self.Wqkv = nn.Linear(h, 3 * h, bias=bias)
        self.Wo = nn.Linear(h, h, bias=bias)

    def forward(self, x, allowed, cos, sin):
        h = x.shape[-1]
        q, k, v = self.Wqkv(x).split(h, dim=-1)  # view(S, 3, heads, hd): Q, K, V blocks
        q = apply_rope(split_heads(q, self.heads), cos, sin)  # [B, H, S, D]
        k = apply_rope(split_heads(k, self.heads), cos, sin)
        v = split_heads(v, self.heads)
        scale = q.shape[-1] ** -0.5
        return self.Wo(merge_heads(attention(q, k, v, allowed, scale=scale)))


class ModernBertMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, inter = c["hidden_size"], c["intermediate_size"]
        self.Wi = nn.Linear(h, 2 * inter, bias=c.get("mlp_bias", False))
        self.Wo = nn.Linear(inter, h, bias=c.get("mlp_bias", False))
        self.act = ACTIVATIONS[c.get("hidden_activation", "gelu")]

    def forward(self, x):
        inp, gate = self.Wi(x).chunk(2, dim=-1)
        return self.Wo(self.act(inp) * gate)


class ModernBertEncoderLayer(nn.Module):
    def __init__(self, c, index):
        super().__init__()
        self.attn_norm = nn.Identity() if index == 0 else layer_norm(c)
        self.attn = ModernBertAttention(c)
        self.mlp_norm = layer_norm(c)
        self.mlp = ModernBertMLP(c)

    def forward(self, x, allowed, cos, sin):
        x = x + self.attn(self.attn_norm(x), allowed, cos, sin)
        return x + self.mlp(self.mlp_norm(x))


class ModernBertModel(nn.Module):
    kind = "encoder"

    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embeddings = ModernBertEmbeddings(c)
        self.layers = nn.ModuleList(ModernBertEncoderLayer(c, i)
                                    for i in range(c["num_hidden_layers"]))
        self.final_norm = layer_norm(c)
        self.local = local_layers(c)
        self.half_window = c.get("local_attention", 128) // 2
        head_dim = c["hidden_size"] // c["num_attention_heads"]
        glob, loc = thetas(c)
        self.inv_freq = {False: rope_inv_freq(head_dim, glob), True: rope_inv_freq(head_dim, loc)}

    def forward(self, ids, valid):
        """ids: long [B, S]; valid: bool [B, S] (False on padding). Returns [B, S, hidden]."""
        s = ids.shape[1]
        x = self.embeddings(ids)
        full = attention_mask(valid, s)
        i = torch.arange(s)[:, None]
        j = torch.arange(s)[None, :]
        band = full & ((i - j).abs() <= self.half_window)
        positions = torch.arange(s)
        rope = {kind: rope_cos_sin(positions, inv) for kind, inv in self.inv_freq.items()}
        for layer, local in zip(self.layers, self.local):
            cos, sin = rope[local]
            x = layer(x, band if local else full, cos, sin)
        return self.final_norm(x)
