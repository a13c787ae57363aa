"""Llama-style decoders (Touvron et al. 2023): Hugging Face `LlamaForCausalLM` names, also used for
`qwen2` (q/k/v biases) and `mistral` (sliding-window attention).

Pre-RMSNorm blocks: h += o_proj(Attn(RoPE(q), RoPE(k), v)); h += down(silu(gate(x)) * up(x)) with
x = RMSNorm(h); logits = lm_head(RMSNorm(h)), lm_head = embed_tokens when tie_word_embeddings.
RoPE in the rotate-half layout (dimension d pairs with d + head_dim/2); GQA: query head h uses K/V
head h // (num_attention_heads / num_key_value_heads).
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from .common import (KVCache, RMSNorm, apply_rope, attention, attention_mask, merge_heads,
                     rope_cos_sin, rope_inv_freq, split_heads)


def head_dim(c):
    return c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]


def sliding_window(c):
    """The window a family applies: mistral uses `sliding_window` when set; qwen2 only with
    `use_sliding_window` (its configs carry `sliding_window` even when it is off); llama never."""
    if c["model_type"] == "mistral":
        return c.get("sliding_window")
    if c["model_type"] == "qwen2" and c.get("use_sliding_window", False):
        raise ValueError("qwen2 use_sliding_window is not covered by the goldens")
    return None


class LlamaAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, d = c["hidden_size"], head_dim(c)
        self.heads, self.kv_heads = c["num_attention_heads"], c["num_key_value_heads"]
        qkv_bias = c["model_type"] == "qwen2" or c.get("attention_bias", False)
        self.q_proj = nn.Linear(h, self.heads * d, bias=qkv_bias)
        self.k_proj = nn.Linear(h, self.kv_heads * d, bias=qkv_bias)
        self.v_proj = nn.Linear(h, self.kv_heads * d, bias=qkv_bias)
        self.o_proj = nn.Linear(self.heads * d, h, bias=c.get("attention_bias", False))

    def forward(self, x, cos, sin, allowed, cache, layer):
        q = apply_rope(split_heads(self.q_proj(x), self.heads), cos, sin)  # [B, H, S, D]
        k = apply_rope(split_heads(self.k_proj(x), self.kv_heads), cos, sin)  # [B, Hkv, S, D]
        v = split_heads(self.v_proj(x), self.kv_heads)
        if cache is not None:
            k, v = cache.append(layer, k, v)
        out = attention(q, k, v, allowed, scale=1.0 / math.sqrt(q.shape[-1]))
        return self.o_proj(merge_heads(out))


class LlamaMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, i = c["hidden_size"], c["intermediate_size"]
        if c.get("hidden_act", "silu") != "silu":
            raise ValueError("hidden_act must be silu")
        self.gate_proj = nn.Linear(h, i, bias=False)
        self.up_proj = nn.Linear(h, i, bias=False)
        self.down_proj = nn.Linear(i, h, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self_attn = LlamaAttention(c)
        self.mlp = LlamaMLP(c)
        self.input_layernorm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.post_attention_layernorm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])

    def forward(self, x, cos, sin, allowed, cache, layer):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, allowed, cache, layer)
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])  # [V, h]
        self.layers = nn.ModuleList(LlamaDecoderLayer(c) for _ in range(c["num_hidden_layers"]))
        self.norm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])


class LlamaForCausalLM(nn.Module):
    kind = "decoder"

    def __init__(self, c):
        super().__init__()
        self.model = LlamaModel(c)
        self.tied = c.get("tie_word_embeddings", False)
        if not self.tied:
            self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)  # [V, h]
        self.window = sliding_window(c)
        self.inv_freq = rope_inv_freq(head_dim(c), float(c.get("rope_theta", 10000.0)),
                                      c.get("rope_scaling"))  # [D/2]

    def new_cache(self):
        return KVCache(len(self.model.layers))

    def forward(self, ids, valid, cache=None):
        """As GPT2LMHeadModel.forward: logits [B, S, V]; positions offset..offset+S-1."""
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
