"""Gemma decoders (Gemma Team 2024, 2025): Hugging Face `GemmaForCausalLM` (model_type "gemma"),
`Gemma2ForCausalLM` ("gemma2") and `Gemma3ForCausalLM` ("gemma3_text") names, from
modeling_gemma.py, modeling_gemma2.py and modeling_gemma3.py.

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
Gemma 3 (text) keeps Gemma 2's layer and adds:
  - q_norm, k_norm: (1 + w) RMSNorm over each head of Q and K, before RoPE;
  - no soft-capping unless the config sets it;
  - sliding layers where (i + 1) % sliding_window_pattern != 0 (or layer_types), rotated with
    their own base rope_local_base_freq (unscaled); global layers use rope_theta (default 1e6)
    with rope_scaling.
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


def sandwich(c):
    return c["model_type"] in ("gemma2", "gemma3_text")


def softcap_value(c, key):
    """Gemma2Config's defaults (50, 30) when the key is absent; Gemma 3's are None."""
    default = {"attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0}[key]
    if c["model_type"] == "gemma3_text":
        default = None
    return c[key] if key in c else default


def sliding_layers(c):
    """Per layer: True where the layer uses the sliding window (gemma2 only)."""
    n = c["num_hidden_layers"]
    if not sandwich(c) or c.get("sliding_window", 4096) is None:
        return [False] * n
    if c.get("layer_types") is not None:
        return [t == "sliding_attention" for t in c["layer_types"]]
    pattern = c.get("sliding_window_pattern", 6) if c["model_type"] == "gemma3_text" else 2
    return [bool((i + 1) % pattern) for i in range(n)]


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
        self.qk_norm = c["model_type"] == "gemma3_text"
        if self.qk_norm:
            self.q_norm = GemmaRMSNorm(d, c.get("rms_norm_eps", 1e-6))
            self.k_norm = GemmaRMSNorm(d, c.get("rms_norm_eps", 1e-6))
        if sandwich(c):
            self.scale = c.get("query_pre_attn_scalar", 256) ** -0.5
            self.softcap = softcap_value(c, "attn_logit_softcapping")
        else:
            self.scale = d ** -0.5
            self.softcap = None

    def forward(self, x, cos, sin, allowed, cache, layer):
        q = split_heads(self.q_proj(x), self.heads)  # [B, H, S, D]
        k = split_heads(self.k_proj(x), self.kv_heads)  # [B, Hkv, S, D]
        if self.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
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
        self.sandwich = sandwich(c)
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
        self.final_softcap = softcap_value(c, "final_logit_softcapping") if sandwich(c) else None
        gemma3 = c["model_type"] == "gemma3_text"
        self.inv_freq = rope_inv_freq(head_dim(c),
                                      float(c.get("rope_theta", 1e6 if gemma3 else 10000.0)),
                                      c.get("rope_scaling"))  # [D/2]
        # Gemma 3's sliding layers: their own base, unscaled.
        self.local_inv_freq = (rope_inv_freq(head_dim(c), float(c.get("rope_local_base_freq",
                                                                      10000.0)))
                               if gemma3 else self.inv_freq)  # [D/2]

    def new_cache(self):
        return KVCache(len(self.model.layers))

    def forward(self, ids, valid, cache=None):
        """As LlamaForCausalLM.forward: logits [B, S, V]; positions offset..offset+S-1."""
        offset = cache.length() if cache is not None else 0
        s = ids.shape[1]
        positions = torch.arange(offset, offset + s)
        rope = {False: rope_cos_sin(positions, self.inv_freq),  # [S, D] each
                True: rope_cos_sin(positions, self.local_inv_freq)}
        x = self.model.embed_tokens(ids) * self.normalizer
        for i, layer in enumerate(self.model.layers):
            allowed = attention_mask(valid, s, offset=offset, causal=True,
                                     window=self.layer_window[i])
            cos, sin = rope[self.sliding[i]]
            x = layer(x, cos, sin, allowed, cache, i)
        x = self.model.norm(x)
        head = self.model.embed_tokens.weight if self.tied else self.lm_head.weight
        logits = torch.nn.functional.linear(x, head)
        if self.final_softcap is not None:
            logits = torch.tanh(logits / self.final_softcap) * self.final_softcap
        return logits

