"""GPT-2 (Radford et al. 2019), Hugging Face `GPT2LMHeadModel` names.

Pre-LayerNorm blocks: h += Attn(LN1(h)); h += MLP(LN2(h)); final LN; logits = LNf(h) @ wte^T
(tied head). Conv1D weights are [in, out]; c_attn packs Q, K, V along its output columns.
Learned absolute positions 0..S-1; tanh GELU ("gelu_new").
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from .common import (ACTIVATIONS, Conv1D, KVCache, attention, attention_mask, merge_heads,
                     split_heads)


class GPT2Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        e, p = c["n_embd"], c["n_positions"]
        self.heads = c["n_head"]
        self.c_attn = Conv1D(e, 3 * e)
        self.c_proj = Conv1D(e, e)
        # Buffers that GPT-2 checkpoints carry (the causal triangle and the old masking constant).
        # They are saved and then ignored: the mask below is computed.
        self.register_buffer("bias", torch.tril(torch.ones(p, p)).view(1, 1, p, p))
        self.register_buffer("masked_bias", torch.tensor(-1e4))

    def forward(self, x, allowed, cache=None, layer=0):
        e = x.shape[-1]
        q, k, v = self.c_attn(x).split(e, dim=2)
        q, k, v = (split_heads(t, self.heads) for t in (q, k, v))  # [B, H, S, D]
        if cache is not None:
            k, v = cache.append(layer, k, v)
        out = attention(q, k, v, allowed, scale=1.0 / math.sqrt(q.shape[-1]))
        return self.c_proj(merge_heads(out))


class GPT2MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        e = c["n_embd"]
        inner = c.get("n_inner") or 4 * e
        self.c_fc = Conv1D(e, inner)
        self.c_proj = Conv1D(inner, e)
        self.act = ACTIVATIONS[c.get("activation_function", "gelu_new")]

    def forward(self, x):
        return self.c_proj(self.act(self.c_fc(x)))


class GPT2Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        e, eps = c["n_embd"], c.get("layer_norm_epsilon", 1e-5)
        self.ln_1 = nn.LayerNorm(e, eps=eps)
        self.attn = GPT2Attention(c)
        self.ln_2 = nn.LayerNorm(e, eps=eps)
        self.mlp = GPT2MLP(c)

    def forward(self, x, allowed, cache, layer):
        x = x + self.attn(self.ln_1(x), allowed, cache, layer)
        return x + self.mlp(self.ln_2(x))


class GPT2Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        e = c["n_embd"]
        self.wte = nn.Embedding(c["vocab_size"], e)  # [V, e]
        self.wpe = nn.Embedding(c["n_positions"], e)  # [P, e]
        self.h = nn.ModuleList(GPT2Block(c) for _ in range(c["n_layer"]))
        self.ln_f = nn.LayerNorm(e, eps=c.get("layer_norm_epsilon", 1e-5))


class GPT2LMHeadModel(nn.Module):
    kind = "decoder"

    def __init__(self, c):
        super().__init__()
        self.transformer = GPT2Model(c)
        self.layers = c["n_layer"]

    def new_cache(self):
        return KVCache(self.layers)

    def forward(self, ids, valid, cache=None):
        """ids: long [B, S]; valid: bool [B, S] (False on right padding). With a cache, ids are the
        next tokens of one unpadded sequence and `valid` covers cached + new keys. Returns
        logits [B, S, V]."""
        t = self.transformer
        offset = cache.length() if cache is not None else 0
        s = ids.shape[1]
        x = t.wte(ids) + t.wpe(torch.arange(offset, offset + s))[None]
        allowed = attention_mask(valid, s, offset=offset, causal=True)
        for i, block in enumerate(t.h):
            x = block(x, allowed, cache, i)
        return F.linear(t.ln_f(x), t.wte.weight)  # tied head
