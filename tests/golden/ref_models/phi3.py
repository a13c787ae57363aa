"""Phi-3 decoders (Phi3ForCausalLM): Hugging Face names, as in modeling_phi3.py.

Llama-shaped (pre-RMSNorm blocks, SiLU-gated MLP, RoPE rotate-half, GQA) with fused projections:
self_attn.qkv_proj [(H + 2 Hkv) D, h] whose output rows are Q (H D), then K (Hkv D), then V;
mlp.gate_up_proj [2 I, h] whose output is chunked in two: gate (first half) and up, and
mlp = down_proj(up * silu(gate)). No biases. partial_rotary_factor rotates the first
int(D * factor) dimensions of each head (rotate-half within them) and passes the rest.
sliding_window, when set, applies to every layer (a query sees itself and the W - 1 keys before).

rope_scaling "longrope" (or the older "su"): inverse frequencies 1 / (ext[i] * theta^(2i/d)) with
ext the short factors, or the long ones when the run covers more than
original_max_position_embeddings positions; cos and sin multiplied by attention_factor (the
config's, else sqrt(1 + ln(s) / ln(original)) with s = max_position_embeddings / original, 1 when
s <= 1). Hugging Face picks the factors from the largest position of each forward call; here a
cached run (KV cache) keeps the factors of its planned length (cache.planned), as octet's sessions
do, so that cached and full runs of the same sequence agree.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from .common import (KVCache, RMSNorm, apply_rope, attention, attention_mask, merge_heads,
                     rope_cos_sin, split_heads)


def head_dim(c):
    return c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]


def rotary_dim(c):
    return int(head_dim(c) * c.get("partial_rotary_factor", 1.0))


class LongRope:
    """The frequencies of a config; short/long choice by the number of positions covered."""

    def __init__(self, c):
        d = rotary_dim(c)
        theta = float(c.get("rope_theta", 10000.0))
        base = theta ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d)  # [d/2]
        scaling = c.get("rope_scaling")
        self.attention_factor = 1.0
        self.original = None
        if not scaling:
            self.short = self.long = 1.0 / base
            return
        kind = scaling.get("rope_type", scaling.get("type"))
        if kind not in ("su", "longrope"):
            raise ValueError(f"unsupported rope_scaling {scaling}")
        self.original = c.get("original_max_position_embeddings", c["max_position_embeddings"])
        self.short = 1.0 / (torch.tensor(scaling["short_factor"], dtype=torch.float32) * base)
        self.long = 1.0 / (torch.tensor(scaling["long_factor"], dtype=torch.float32) * base)
        factor = c["max_position_embeddings"] / self.original
        self.attention_factor = scaling.get("attention_factor") or (
            1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(self.original)))

    def inv_freq(self, positions):
        if self.original is not None and positions > self.original:
            return self.long
        return self.short


class Phi3Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, d = c["hidden_size"], head_dim(c)
        self.heads, self.kv_heads = c["num_attention_heads"], c["num_key_value_heads"]
        self.d, self.rot = d, rotary_dim(c)
        self.qkv_proj = nn.Linear(h, (self.heads + 2 * self.kv_heads) * d, bias=False)
        self.o_proj = nn.Linear(self.heads * d, h, bias=False)

    def rope(self, x, cos, sin):
        r = self.rot
        return torch.cat((apply_rope(x[..., :r], cos, sin), x[..., r:]), dim=-1)

    def forward(self, x, cos, sin, allowed, cache, layer):
        qkv = self.qkv_proj(x)
        nq, nkv = self.heads * self.d, self.kv_heads * self.d
        q = self.rope(split_heads(qkv[..., :nq], self.heads), cos, sin)  # [B, H, S, D]
        k = self.rope(split_heads(qkv[..., nq:nq + nkv], self.kv_heads), cos, sin)
        v = split_heads(qkv[..., nq + nkv:], self.kv_heads)
        if cache is not None:
            k, v = cache.append(layer, k, v)
        out = attention(q, k, v, allowed, scale=1.0 / math.sqrt(self.d))
        return self.o_proj(merge_heads(out))


class Phi3MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, i = c["hidden_size"], c["intermediate_size"]
        if c.get("hidden_act", "silu") != "silu":
            raise ValueError("hidden_act must be silu")
        self.gate_up_proj = nn.Linear(h, 2 * i, bias=False)
        self.down_proj = nn.Linear(i, h, bias=False)

    def forward(self, x):
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(up * F.silu(gate))


class Phi3DecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self_attn = Phi3Attention(c)
        self.mlp = Phi3MLP(c)
        self.input_layernorm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.post_attention_layernorm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])

    def forward(self, x, cos, sin, allowed, cache, layer):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, allowed, cache, layer)
        return x + self.mlp(self.post_attention_layernorm(x))


class Phi3Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])  # [V, h]
        self.layers = nn.ModuleList(Phi3DecoderLayer(c) for _ in range(c["num_hidden_layers"]))
        self.norm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])


class Phi3ForCausalLM(nn.Module):
    kind = "decoder"

    def __init__(self, c):
        super().__init__()
        self.model = Phi3Model(c)
        self.tied = c.get("tie_word_embeddings", False)
        if not self.tied:
            self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)  # [V, h]
        self.window = c.get("sliding_window")
        self.rope = LongRope(c)

    def new_cache(self):
        return KVCache(len(self.model.layers))

    def forward(self, ids, valid, cache=None):
        """Logits [B, S, V]; positions offset..offset+S-1 (offset: the cached length)."""
        offset = cache.length() if cache is not None else 0
        s = ids.shape[1]
        planned = getattr(cache, "planned", None) or offset + s
        inv_freq = self.rope.inv_freq(planned)
        cos, sin = rope_cos_sin(torch.arange(offset, offset + s), inv_freq)  # [S, rot]
        cos, sin = cos * self.rope.attention_factor, sin * self.rope.attention_factor
        allowed = attention_mask(valid, s, offset=offset, causal=True, window=self.window)
        x = self.model.embed_tokens(ids)
        for i, layer in enumerate(self.model.layers):
            x = layer(x, cos, sin, allowed, cache, i)
        x = self.model.norm(x)
        head = self.model.embed_tokens.weight if self.tied else self.lm_head.weight
        return F.linear(x, head)
