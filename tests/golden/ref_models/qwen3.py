"""Qwen3 decoders (Qwen3ForCausalLM): Hugging Face names, as in modeling_qwen3.py.

Llama-shaped (pre-RMSNorm blocks, SwiGLU, RoPE in the rotate-half layout, GQA) with one change in
the attention: after the projections and before RoPE, each head's vector of Q and of K goes
through its own RMSNorm (self_attn.q_norm, self_attn.k_norm: weight [head_dim], eps rms_norm_eps,
y = w * x / sqrt(mean(x^2) + eps)). The K/V cache therefore holds normed, rotated keys.
head_dim is explicit in the config (Qwen3Config's default 128); attention_bias (default false)
puts biases on q/k/v/o_proj; tie_word_embeddings either way.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from .common import (KVCache, RMSNorm, apply_rope, attention, attention_mask, merge_heads,
                     rope_cos_sin, rope_inv_freq, split_heads)
from .llama import LlamaMLP


def head_dim(c):
    return c.get("head_dim", 128)


class Qwen3Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, d = c["hidden_size"], head_dim(c)
        self.heads, self.kv_heads = c["num_attention_heads"], c["num_key_value_heads"]
        bias = c.get("attention_bias", False)
        self.q_proj = nn.Linear(h, self.heads * d, bias=bias)
        self.k_proj = nn.Linear(h, self.kv_heads * d, bias=bias)
        self.v_proj = nn.Linear(h, self.kv_heads * d, bias=bias)
        self.o_proj = nn.Linear(self.heads * d, h, bias=bias)
        self.q_norm = RMSNorm(d, c["rms_norm_eps"])  # over each head's D values
        self.k_norm = RMSNorm(d, c["rms_norm_eps"])

    def forward(self, x, cos, sin, allowed, cache, layer):
        q = self.q_norm(split_heads(self.q_proj(x), self.heads))  # [B, H, S, D]
        k = self.k_norm(split_heads(self.k_proj(x), self.kv_heads))  # [B, Hkv, S, D]
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        v = split_heads(self.v_proj(x), self.kv_heads)
        if cache is not None:
            k, v = cache.append(layer, k, v)
        out = attention(q, k, v, allowed, scale=1.0 / math.sqrt(q.shape[-1]))
        return self.o_proj(merge_heads(out))


class Qwen3DecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self_attn = Qwen3Attention(c)
        self.mlp = LlamaMLP(c)
        self.input_layernorm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.post_attention_layernorm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])

    def forward(self, x, cos, sin, allowed, cache, layer):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, allowed, cache, layer)
        return x + self.mlp(self.post_attention_layernorm(x))


class Qwen3Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])  # [V, h]
        self.layers = nn.ModuleList(Qwen3DecoderLayer(c) for _ in range(c["num_hidden_layers"]))
        self.norm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])


class Qwen3ForCausalLM(nn.Module):
    kind = "decoder"

    def __init__(self, c):
        super().__init__()
        if c.get("use_sliding_window", False):
            raise ValueError("qwen3 use_sliding_window is not covered by the goldens")
        self.model = Qwen3Model(c)
        self.tied = c.get("tie_word_embeddings", False)
        if not self.tied:
            self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)  # [V, h]
        self.window = None
        self.inv_freq = rope_inv_freq(head_dim(c), float(c.get("rope_theta", 10000.0)),
                                      c.get("rope_scaling"))  # [D/2]

    def new_cache(self):
        return KVCache(len(self.model.layers))

    def forward(self, ids, valid, cache=None):
        """Logits [B, S, V]; positions offset..offset+S-1 (offset: the cached length)."""
        offset = cache.length() if cache is not None else 0
        s = ids.shape[1]
        cos, sin = rope_cos_sin(torch.arange(offset, offset + s), self.inv_freq)  # [S, D]
        allowed = attention_mask(valid, s, offset=offset, causal=True, window=self.window)
        x = self.model.embed_tokens(ids)
        for i, layer in enumerate(self.model.layers):
            x = layer(x, cos, sin, allowed, cache, i)
        x = self.model.norm(x)
        head = self.model.embed_tokens.weight if self.tied else self.lm_head.weight
        return F.linear(x, head)
