"""Gemma decoders (Gemma Team 2024): Hugging Face `GemmaForCausalLM` (model_type "gemma") and
`Gemma2ForCausalLM` ("gemma2") names, from modeling_gemma.py and modeling_gemma2.py.

Llama's block with: RMSNorm scaling by (1 + weight) in float32; embeddings multiplied by
sqrt(hidden_size) (as a float32 tensor); a GeGLU feed-forward down(gelu_tanh(gate(x)) * up(x));
head_dim from the config (256 by default); the head tied to the (unscaled) embedding by default.
Gemma 2 adds:
  - sandwich norms: h += post_attention_layernorm(Attn(input_layernorm(h)));
    h += post_feedforward_layernorm(MLP(pre_feedforward_layernorm(h)));
  - logits scaled by query_pre_attn_scalar^-0.5, then cap * tanh(logits / cap)
    (attn_logit_softcapping) before the mask;
  - final logits cap * tanh(logits / cap) (final_logit_softcapping);
  - sliding-window layers (window as Mistral's: a query sees itself and the W - 1 keys before it)
    where layer_types says "sliding_attention", by default the even layers (i + 1) % 2 == 1.
"""
import torch
from torch import nn

from .common import (ACTIVATIONS, KVCache, apply_rope, attention, attention_mask, merge_heads,
                     rope_cos_sin, rope_inv_freq, split_heads)


def head_dim(c):
    return c.get("head_dim", 256)


def activation_name(c):
    """hidden_activation when set; else hidden_act for gemma (transformers' later Gemma 1 code);
    else the tanh GELU (transformers 4.x's fallback)."""
    if c.get("hidden_activation") is not None:
        return c["hidden_activation"]
    if c["model_type"] == "gemma" and c.get("hidden_act") is not None:
        return c["hidden_act"]
    return "gelu_pytorch_tanh"


def softcap_value(c, key, default):
    return c[key] if key in c else default


def sliding_layers(c):
    """Per layer: True where the layer uses the sliding window (gemma2 only)."""
    n = c["num_hidden_layers"]
    if c["model_type"] != "gemma2" or c.get("sliding_window", 4096) is None:
        return [False] * n
    if c.get("layer_types") is not None:
        return [t == "sliding_attention" for t in c["layer_types"]]
    return [bool((i + 1) % 2) for i in range(n)]


class GemmaRMSNorm(nn.Module):
    """y = x / sqrt(mean(x^2) + eps) * (1 + weight), in float32; the weight starts at 0."""

    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))  # [dim]
        self.eps = eps

    def forward(self, x):
        out = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)
        return out * (1.0 + self.weight.float())


class GemmaAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, d = c["hidden_size"], head_dim(c)
        self.heads, self.kv_heads = c["num_attention_heads"], c["num_key_value_heads"]
        bias = c.get("attention_bias", False)
        self.q_proj = nn.Linear(h, self.heads * d, bias=bias)
        self.k_proj = nn.Linear(h, self.kv_heads * d, bias=bias)
        self.v_proj = nn.Linear(h, self.kv_heads * d, bias=bias)
        self.o_proj = nn.Linear(self.heads * d, h, bias=bias)
        if c["model_type"] == "gemma2":
            self.scale = c.get("query_pre_attn_scalar", 256) ** -0.5
            self.softcap = softcap_value(c, "attn_logit_softcapping", 50.0)
        else:
            self.scale = d ** -0.5
            self.softcap = None

    def forward(self, x, cos, sin, allowed, cache, layer):
        q = apply_rope(split_heads(self.q_proj(x), self.heads), cos, sin)  # [B, H, S, D]
        k = apply_rope(split_heads(self.k_proj(x), self.kv_heads), cos, sin)  # [B, Hkv, S, D]
        v = split_heads(self.v_proj(x), self.kv_heads)
        if cache is not None:
            k, v = cache.append(layer, k, v)
        out = attention(q, k, v, allowed, scale=self.scale, softcap=self.softcap)
        return self.o_proj(merge_heads(out))


class GemmaMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, i = c["hidden_size"], c["intermediate_size"]
        self.act = ACTIVATIONS[activation_name(c)]
        self.gate_proj = nn.Linear(h, i, bias=False)
        self.up_proj = nn.Linear(h, i, bias=False)
        self.down_proj = nn.Linear(i, h, bias=False)

    def forward(self, x):
        return self.down_proj(self.act(self.gate_proj(x)) * self.up_proj(x))


class GemmaDecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, eps = c["hidden_size"], c.get("rms_norm_eps", 1e-6)
        self.sandwich = c["model_type"] == "gemma2"
        self.self_attn = GemmaAttention(c)
        self.mlp = GemmaMLP(c)
        self.input_layernorm = GemmaRMSNorm(h, eps)
        self.post_attention_layernorm = GemmaRMSNorm(h, eps)
        if self.sandwich:
            self.pre_feedforward_layernorm = GemmaRMSNorm(h, eps)
            self.post_feedforward_layernorm = GemmaRMSNorm(h, eps)

    def forward(self, x, cos, sin, allowed, cache, layer):
        a = self.self_attn(self.input_layernorm(x), cos, sin, allowed, cache, layer)
        if not self.sandwich:
            x = x + a
            return x + self.mlp(self.post_attention_layernorm(x))
        x = x + self.post_attention_layernorm(a)
        return x + self.post_feedforward_layernorm(self.mlp(self.pre_feedforward_layernorm(x)))


class GemmaModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])  # [V, h]
        self.layers = nn.ModuleList(GemmaDecoderLayer(c) for _ in range(c["num_hidden_layers"]))
        self.norm = GemmaRMSNorm(c["hidden_size"], c.get("rms_norm_eps", 1e-6))


class GemmaForCausalLM(nn.Module):
    kind = "decoder"

    def __init__(self, c):
        super().__init__()
        self.model = GemmaModel(c)
        self.tied = c.get("tie_word_embeddings", True)
        if not self.tied:
            self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)  # [V, h]
        self.normalizer = torch.tensor(c["hidden_size"] ** 0.5, dtype=torch.float32)
        self.sliding = sliding_layers(c)
        w = c.get("sliding_window", 4096)
        # check_receptive_field's window: only when every layer slides.
        self.window = w if self.sliding and all(self.sliding) else None
        self.layer_window = [w if s else None for s in self.sliding]
        self.final_softcap = (softcap_value(c, "final_logit_softcapping", 30.0)
                              if c["model_type"] == "gemma2" else None)
        self.inv_freq = rope_inv_freq(head_dim(c), float(c.get("rope_theta", 10000.0)),
                                      c.get("rope_scaling"))  # [D/2]

    def new_cache(self):
        return KVCache(len(self.model.layers))

    def forward(self, ids, valid, cache=None):
        """As LlamaForCausalLM.forward: logits [B, S, V]; positions offset..offset+S-1."""
        offset = cache.length() if cache is not None else 0
        s = ids.shape[1]
        cos, sin = rope_cos_sin(torch.arange(offset, offset + s), self.inv_freq)  # [S, D]
        x = self.model.embed_tokens(ids) * self.normalizer
        for i, layer in enumerate(self.model.layers):
            allowed = attention_mask(valid, s, offset=offset, causal=True,
                                     window=self.layer_window[i])
            x = layer(x, cos, sin, allowed, cache, i)
        x = self.model.norm(x)
        head = self.model.embed_tokens.weight if self.tied else self.lm_head.weight
        logits = torch.nn.functional.linear(x, head)
        if self.final_softcap is not None:
            logits = torch.tanh(logits / self.final_softcap) * self.final_softcap
        return logits

