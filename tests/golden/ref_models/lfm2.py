"""LFM2 decoders (Lfm2ForCausalLM): Hugging Face names, as in modeling_lfm2.py.

Restated from transformers' src/transformers/models/lfm2/modeling_lfm2.py (commits 0096ba4f and
1d6b6ca6, the same arithmetic), modular_lfm2.py (1505215d, 02f41779) and configuration_lfm2.py
(05cd1ec1, 4f7e1d46), read from the huggingface/transformers repository.

Pre-norm blocks (operator_norm before the token mixer, ffn_norm before the SwiGLU feed-forward
w2(silu(w1 x) * w3 x)), RMSNorm y = weight * x / sqrt(mean(x^2) + norm_eps) with the weight as
stored; no norm after the embedding: embedding_norm is the final norm, after the last layer.
A layer's token mixer is either
  - attention ("full_attention"): q, k, v projections without bias, an RMSNorm over each head of
    q (q_layernorm) and of k (k_layernorm) before RoPE (rotate-half over the whole head, base
    rope_theta, default 1e6), GQA, causal softmax(q k^T / sqrt(head_dim)) v, out_proj; or
  - a gated short convolution ("conv"): B, C, x = in_proj(h).chunk(3) (in that order), Bx = B * x,
    a causal depthwise Conv1d over Bx (conv.weight [H, 1, L], L = conv_L_cache taps, zero padding
    before the first position, tap L - 1 on the current position), y = C * conv(Bx), out_proj(y).
    conv_bias puts biases on in_proj, conv and out_proj.
The layer kinds come from layer_types, else full_attn_idxs (attention layers), else every layer
is attention. The feed-forward width: intermediate_size (block_ff_dim wins), then with
block_auto_adjust_ff_dim int(2 F / 3), and with block_ffn_dim_multiplier int(m F) rounded up to
block_multiple_of. The head is tied unless tie_embedding (or tie_word_embeddings) is false.

The cache keeps each attention layer's keys and values and each convolution layer's last L - 1
values of Bx (the state transformers' CUDA path keeps; its slow path loses Bx of a one-token
prompt's first step, a quirk not restated here: the goldens' prompts are longer).
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from .common import (KVCache, RMSNorm, apply_rope, attention, attention_mask, merge_heads,
                     rope_cos_sin, rope_inv_freq, split_heads)


def head_dim(c):
    return c.get("head_dim", c["hidden_size"] // c["num_attention_heads"])


def ffn_width(c):
    f = c.get("block_ff_dim", c["intermediate_size"])
    if c.get("block_auto_adjust_ff_dim", True):
        f = int(2 * f / 3)
        m = c.get("block_ffn_dim_multiplier", 1.0)
        if m is not None:
            f = int(m * f)
            multiple = c.get("block_multiple_of", 256)
            f = multiple * ((f + multiple - 1) // multiple)
    return f


def layer_kinds(c):
    n = c["num_hidden_layers"]
    if c.get("layer_types") is not None:
        return list(c["layer_types"])
    idxs = c.get("full_attn_idxs")
    if idxs is None:
        idxs = list(range(n))
    return ["full_attention" if i in idxs else "conv" for i in range(n)]


def rope_theta(c):
    params = c.get("rope_parameters") or {}
    if "rope_theta" in params:
        return float(params["rope_theta"])
    return float(c.get("theta", c.get("rope_theta", 1000000.0)))


class Lfm2Cache(KVCache):
    """KV rows of the attention layers and the last L - 1 Bx columns [B, H, L - 1] of the
    convolution layers; length() counts the positions seen."""

    def __init__(self, layers):
        super().__init__(layers)
        self.conv = [None] * layers
        self.seen = 0

    def length(self):
        return self.seen


class Lfm2Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, d = c["hidden_size"], head_dim(c)
        self.heads, self.kv_heads = c["num_attention_heads"], c["num_key_value_heads"]
        self.q_proj = nn.Linear(h, self.heads * d, bias=False)
        self.k_proj = nn.Linear(h, self.kv_heads * d, bias=False)
        self.v_proj = nn.Linear(h, self.kv_heads * d, bias=False)
        self.out_proj = nn.Linear(self.heads * d, h, bias=False)
        self.q_layernorm = RMSNorm(d, c["norm_eps"])
        self.k_layernorm = RMSNorm(d, c["norm_eps"])

    def forward(self, x, cos, sin, allowed, cache, layer):
        q = self.q_layernorm(split_heads(self.q_proj(x), self.heads))  # [B, H, S, D]
        k = self.k_layernorm(split_heads(self.k_proj(x), self.kv_heads))
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        v = split_heads(self.v_proj(x), self.kv_heads)
        if cache is not None:
            k, v = cache.append(layer, k, v)
        out = attention(q, k, v, allowed, scale=1.0 / math.sqrt(q.shape[-1]))
        return self.out_proj(merge_heads(out))


class Lfm2ShortConv(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, self.taps = c["hidden_size"], c.get("conv_L_cache", 3)
        bias = c.get("conv_bias", False)
        self.in_proj = nn.Linear(h, 3 * h, bias=bias)
        self.conv = nn.Conv1d(h, h, kernel_size=self.taps, groups=h, padding=self.taps - 1,
                              bias=bias)
        self.out_proj = nn.Linear(h, h, bias=bias)

    def forward(self, x, cache, layer):
        s = x.shape[1]
        bcx = self.in_proj(x).transpose(-1, -2)  # [B, 3H, S]
        b, c, xx = bcx.chunk(3, dim=-2)
        bx = b * xx  # [B, H, S]
        before = cache.conv[layer] if cache is not None and cache.conv[layer] is not None else None
        if before is None:
            conv = self.conv(bx)[..., :s]  # zero padding before the first position
        else:  # continue from the cached Bx columns
            full = torch.cat((before, bx), dim=-1)  # [B, H, L - 1 + S]
            conv = F.conv1d(full, self.conv.weight, self.conv.bias, groups=full.shape[1])
        if cache is not None:
            hist = bx if before is None else torch.cat((before, bx), dim=-1)
            pad = self.taps - 1 - hist.shape[-1]
            cache.conv[layer] = (F.pad(hist, (pad, 0)) if pad > 0
                                 else hist[..., hist.shape[-1] - (self.taps - 1):])
        y = c * conv
        return self.out_proj(y.transpose(-1, -2))


class Lfm2MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, f = c["hidden_size"], ffn_width(c)
        self.w1 = nn.Linear(h, f, bias=False)
        self.w3 = nn.Linear(h, f, bias=False)
        self.w2 = nn.Linear(f, h, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Lfm2DecoderLayer(nn.Module):
    def __init__(self, c, kind):
        super().__init__()
        self.is_attention = kind == "full_attention"
        if self.is_attention:
            self.self_attn = Lfm2Attention(c)
        else:
            self.conv = Lfm2ShortConv(c)
        self.feed_forward = Lfm2MLP(c)
        self.operator_norm = RMSNorm(c["hidden_size"], c["norm_eps"])
        self.ffn_norm = RMSNorm(c["hidden_size"], c["norm_eps"])

    def forward(self, x, cos, sin, allowed, cache, layer):
        h = self.operator_norm(x)
        if self.is_attention:
            x = x + self.self_attn(h, cos, sin, allowed, cache, layer)
        else:
            x = x + self.conv(h, cache, layer)
        return x + self.feed_forward(self.ffn_norm(x))


class Lfm2Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])  # [V, h]
        self.layers = nn.ModuleList(Lfm2DecoderLayer(c, kind) for kind in layer_kinds(c))
        self.embedding_norm = RMSNorm(c["hidden_size"], c["norm_eps"])  # the final norm


class Lfm2ForCausalLM(nn.Module):
    kind = "decoder"

    def __init__(self, c):
        super().__init__()
        self.model = Lfm2Model(c)
        self.tied = c.get("tie_embedding", c.get("tie_word_embeddings", True))
        if not self.tied:
            self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)  # [V, h]
        self.inv_freq = rope_inv_freq(head_dim(c), rope_theta(c), None)  # [D/2]

    def new_cache(self):
        return Lfm2Cache(len(self.model.layers))

    def forward(self, ids, valid, cache=None):
        """Logits [B, S, V]; positions offset..offset+S-1 (offset: the cached length)."""
        offset = cache.length() if cache is not None else 0
        s = ids.shape[1]
        cos, sin = rope_cos_sin(torch.arange(offset, offset + s), self.inv_freq)  # [S, D]
        allowed = attention_mask(valid, s, offset=offset, causal=True, window=None)
        x = self.model.embed_tokens(ids)
        for i, layer in enumerate(self.model.layers):
            x = layer(x, cos, sin, allowed, cache, i)
        if cache is not None:
            cache.seen += s
        x = self.model.embedding_norm(x)
        head = self.model.embed_tokens.weight if self.tied else self.lm_head.weight
        return F.linear(x, head)
