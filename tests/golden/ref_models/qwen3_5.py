"""Qwen3.5 text decoders (Qwen3_5ForCausalLM, the language model of
Qwen3_5ForConditionalGeneration) and Qwen3-Next's dense layout: Hugging Face names.

Restated from transformers' src/transformers/models/qwen3_5/modeling_qwen3_5.py (commits 009e78d6
and d8c1e284), modular_qwen3_5.py (8940358a), configuration_qwen3_5.py (008e5743, 8116e632) and
src/transformers/models/qwen3_next/modeling_qwen3_next.py (01cdc608, 7515843b), read from the
huggingface/transformers repository.

Pre-norm blocks with zero-centred RMSNorms (y = x / rms(x) * (1 + w), w starting at 0: the input,
post-attention, final and Q/K norms) and a dense SwiGLU MLP. Layer i is "linear_attention" (a Gated
DeltaNet) or "full_attention" (layer_types, else every full_attention_interval-th layer, counted
from 1). No projection has a bias.

Full attention: q_proj gives 2 * head_dim per head, the query then the output gate (interleaved per
head); zero-centred RMSNorm over each head of q and k before a partial RoPE (the first
head_dim * partial_rotary_factor dimensions, rotate-half; text-only M-RoPE is plain RoPE); GQA;
causal softmax(q k^T / sqrt(head_dim)) v; o_proj(out * sigmoid(gate)).

Gated DeltaNet (per value head h of Hv, key head h // (Hv / Hk)):
  qkv = in_proj_qkv(x) (channels q of Hk * dk, k of Hk * dk, v of Hv * dv), z = in_proj_z(x),
  b = in_proj_b(x), a = in_proj_a(x);
  qkv = silu(causal depthwise conv1d over time, K = linear_conv_kernel_dim taps, tap K - 1 on the
  current position, the last K - 1 pre-conv inputs carried as the conv state);
  q, k = l2norm (x / sqrt(sum x^2 + 1e-6)) per head, q *= dk^-0.5; beta = sigmoid(b);
  g = -exp(A_log) * softplus(a + dt_bias) (the log of the decay);
  the gated delta rule, per value head with state S [dk, dv]:
      S = exp(g_t) S;  S += k_t (beta_t (v_t - S^T k_t))^T;  o_t = S^T q_t
  in chunks of 64 for a pass over several tokens (the UT transform: transformers'
  torch_chunk_gated_delta_rule), token by token through the cache;
  y = RMSNorm(o) * norm.weight (as stored) * silu(z) per head (eps rms_norm_eps); out_proj(y).
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from .common import (KVCache, RMSNorm, apply_rope, attention, attention_mask, merge_heads,
                     rope_cos_sin, rope_inv_freq, split_heads)
from .gemma import GemmaRMSNorm
from .llama import LlamaMLP

CHUNK = 64
# How chunked_rule inverts (I + strict lower part): "substitution", row by row as transformers
# does, or "triangular" (torch.linalg.solve_triangular, the same matrix; autograd can follow it,
# models/austen/train.py trains with it).
SOLVE = "substitution"


def text_config(c):
    """The language model's keys: text_config when the checkpoint is the multimodal wrapper."""
    return c.get("text_config", c)


def layer_kinds(c):
    if c.get("layer_types") is not None:
        return list(c["layer_types"])
    every = c.get("full_attention_interval", 4)
    return ["full_attention" if (i + 1) % every == 0 else "linear_attention"
            for i in range(c["num_hidden_layers"])]


def rope_settings(c):
    params = c.get("rope_parameters") or {}
    theta = params.get("rope_theta", c.get("rope_theta", 10000.0))
    factor = params.get("partial_rotary_factor", c.get("partial_rotary_factor", 0.25))
    return float(theta), float(factor)


def l2norm(x, eps=1e-6):
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + eps)


class GatedRMSNorm(RMSNorm):
    """RMSNorm over dv with the weight as stored (starting at 1), times silu(z)."""

    def forward(self, x, z):
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * y * F.silu(z)


def recurrent_rule(q, k, v, g, beta, S):
    """q, k [B, H, T, dk]; v [B, H, T, dv]; g, beta [B, H, T]; S [B, H, dk, dv] (updated)."""
    outs = []
    for t in range(q.shape[2]):
        S = S * g[:, :, t].exp()[..., None, None]
        kt = k[:, :, t]
        delta = (v[:, :, t] - torch.einsum("bhkv,bhk->bhv", S, kt)) * beta[:, :, t, None]
        S = S + kt[..., :, None] * delta[..., None, :]
        outs.append(torch.einsum("bhkv,bhk->bhv", S, q[:, :, t]))
    return torch.stack(outs, dim=2), S


def chunked_rule(q, k, v, g, beta, S):
    """The same rule in chunks of CHUNK (zero-padded at the end: no write, no decay)."""
    b, h, t, dk = k.shape
    pad = (CHUNK - t % CHUNK) % CHUNK
    if pad:
        q, k, v = (F.pad(x, (0, 0, 0, pad)) for x in (q, k, v))
        g, beta = (F.pad(x, (0, pad)) for x in (g, beta))
    n = (t + pad) // CHUNK
    q, k, v = (x.reshape(b, h, n, CHUNK, x.shape[-1]) for x in (q, k, v))
    g, beta = (x.reshape(b, h, n, CHUNK) for x in (g, beta))
    G = g.cumsum(-1)
    upper = torch.ones(CHUNK, CHUNK, dtype=torch.bool).triu(1)
    D = (G[..., :, None] - G[..., None, :]).masked_fill(upper, float("-inf")).exp()
    kb, vb = k * beta[..., None], v * beta[..., None]
    strict = (kb @ k.transpose(-1, -2)) * D
    # (I + strict lower part) U = vb and W = kb exp(G), by forward substitution.
    lower = strict.masked_fill(~torch.ones(CHUNK, CHUNK, dtype=torch.bool).tril(-1), 0.0)
    if SOLVE == "triangular":
        eye = torch.eye(CHUNK).expand(lower.shape)
        T = torch.linalg.solve_triangular(lower + eye, eye, upper=False, unitriangular=True)
    else:
        T = -lower
        for i in range(1, CHUNK):
            row = T[..., i, :i].clone()
            T[..., i, :i] = row + (row[..., :, None] * T[..., :i, :i]).sum(-2)
        T = T + torch.eye(CHUNK)
    U, W = T @ vb, T @ (kb * G.exp()[..., None])
    inner = (q @ k.transpose(-1, -2)) * D
    qg = q * G.exp()[..., None]
    kd = k * (G[..., -1:] - G).exp()[..., None]
    last = G[..., -1].exp()
    out = torch.empty(b, h, n, CHUNK, v.shape[-1])
    for c in range(n):
        u = U[:, :, c] - W[:, :, c] @ S
        out[:, :, c] = qg[:, :, c] @ S + inner[:, :, c] @ u
        S = S * last[:, :, c, None, None] + kd[:, :, c].transpose(-1, -2) @ u
    return out.reshape(b, h, n * CHUNK, -1)[:, :, :t], S


class Qwen3_5GatedDeltaNet(nn.Module):
    def __init__(self, c, layer):
        super().__init__()
        h = c["hidden_size"]
        self.hk, self.hv = c["linear_num_key_heads"], c["linear_num_value_heads"]
        self.dk, self.dv = c["linear_key_head_dim"], c["linear_value_head_dim"]
        self.taps = c.get("linear_conv_kernel_dim", 4)
        self.key_dim, self.value_dim = self.hk * self.dk, self.hv * self.dv
        conv_dim = 2 * self.key_dim + self.value_dim
        self.in_proj_qkv = nn.Linear(h, conv_dim, bias=False)
        self.in_proj_z = nn.Linear(h, self.value_dim, bias=False)
        self.in_proj_b = nn.Linear(h, self.hv, bias=False)
        self.in_proj_a = nn.Linear(h, self.hv, bias=False)
        self.conv1d = nn.Conv1d(conv_dim, conv_dim, self.taps, groups=conv_dim, bias=False,
                                padding=self.taps - 1)
        # Decays from slow to fast over the heads, as trained models spread them
        # (A = exp(A_log) in [0.02, 2]; dt_bias around 0), varied per layer.
        ramp = torch.linspace(0.0, 1.0, self.hv)
        self.A_log = nn.Parameter((math.log(0.02) + ramp * math.log(100.0)) + 0.1 * layer)
        self.dt_bias = nn.Parameter(torch.linspace(-1.0, 0.5, self.hv) - 0.2 * layer)
        self.norm = GatedRMSNorm(self.dv, c["rms_norm_eps"])
        self.out_proj = nn.Linear(self.value_dim, h, bias=False)

    def forward(self, x, cache, layer):
        bsz, s, _ = x.shape
        qkv = self.in_proj_qkv(x).transpose(1, 2)  # [B, C, S]
        before = cache.conv[layer] if cache is not None else None
        if before is None:
            mixed = self.conv1d(qkv)[..., :s]
            hist = F.pad(qkv, (self.taps - 1, 0))
        else:
            hist = torch.cat((before, qkv), dim=-1)
            mixed = F.conv1d(hist, self.conv1d.weight, None, groups=hist.shape[1])
        if cache is not None:
            cache.conv[layer] = hist[..., hist.shape[-1] - (self.taps - 1):]
        mixed = F.silu(mixed).transpose(1, 2)  # [B, S, C]
        q, k, v = mixed.split([self.key_dim, self.key_dim, self.value_dim], dim=-1)
        q = l2norm(q.reshape(bsz, s, self.hk, self.dk))
        k = l2norm(k.reshape(bsz, s, self.hk, self.dk))
        v = v.reshape(bsz, s, self.hv, self.dv)
        rep = self.hv // self.hk
        if rep > 1:
            q, k = q.repeat_interleave(rep, dim=2), k.repeat_interleave(rep, dim=2)
        q = q * self.dk ** -0.5
        beta = torch.sigmoid(self.in_proj_b(x))  # [B, S, Hv]
        g = -self.A_log.exp() * F.softplus(self.in_proj_a(x) + self.dt_bias)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # [B, Hv, S, d]
        g, beta = g.transpose(1, 2), beta.transpose(1, 2)  # [B, Hv, S]
        S = cache.rec[layer] if cache is not None and cache.rec[layer] is not None else \
            torch.zeros(bsz, self.hv, self.dk, self.dv)
        if cache is not None and s == 1:
            o, S = recurrent_rule(q, k, v, g, beta, S)
        else:
            o, S = chunked_rule(q, k, v, g, beta, S)
        if cache is not None:
            cache.rec[layer] = S
        o = o.transpose(1, 2)  # [B, S, Hv, dv]
        z = self.in_proj_z(x).reshape(bsz, s, self.hv, self.dv)
        y = self.norm(o, z).reshape(bsz, s, self.value_dim)
        return self.out_proj(y)


class Qwen3_5Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, d = c["hidden_size"], c["head_dim"]
        self.heads, self.kv_heads, self.d = c["num_attention_heads"], c["num_key_value_heads"], d
        self.q_proj = nn.Linear(h, self.heads * d * 2, bias=False)
        self.k_proj = nn.Linear(h, self.kv_heads * d, bias=False)
        self.v_proj = nn.Linear(h, self.kv_heads * d, bias=False)
        self.o_proj = nn.Linear(self.heads * d, h, bias=False)
        self.q_norm = GemmaRMSNorm(d, c["rms_norm_eps"])
        self.k_norm = GemmaRMSNorm(d, c["rms_norm_eps"])
        self.rot = int(d * rope_settings(c)[1])

    def forward(self, x, cos, sin, allowed, cache, layer):
        b, s, _ = x.shape
        qg = self.q_proj(x).view(b, s, self.heads, 2 * self.d)
        q, gate = qg[..., :self.d], qg[..., self.d:].reshape(b, s, self.heads * self.d)
        q = self.q_norm(q).transpose(1, 2)  # [B, H, S, D]
        k = self.k_norm(self.k_proj(x).view(b, s, self.kv_heads, self.d)).transpose(1, 2)
        r = self.rot
        q = torch.cat((apply_rope(q[..., :r], cos, sin), q[..., r:]), dim=-1)
        k = torch.cat((apply_rope(k[..., :r], cos, sin), k[..., r:]), dim=-1)
        v = split_heads(self.v_proj(x), self.kv_heads)
        if cache is not None:
            k, v = cache.append(layer, k, v)
        out = attention(q, k, v, allowed, scale=1.0 / math.sqrt(self.d))
        return self.o_proj(merge_heads(out) * torch.sigmoid(gate))


class Qwen3_5DecoderLayer(nn.Module):
    def __init__(self, c, kind, layer):
        super().__init__()
        self.linear = kind == "linear_attention"
        if self.linear:
            self.linear_attn = Qwen3_5GatedDeltaNet(c, layer)
        else:
            self.self_attn = Qwen3_5Attention(c)
        self.mlp = LlamaMLP(c)
        self.input_layernorm = GemmaRMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.post_attention_layernorm = GemmaRMSNorm(c["hidden_size"], c["rms_norm_eps"])

    def forward(self, x, cos, sin, allowed, cache, layer):
        h = self.input_layernorm(x)
        if self.linear:
            x = x + self.linear_attn(h, cache, layer)
        else:
            x = x + self.self_attn(h, cos, sin, allowed, cache, layer)
        return x + self.mlp(self.post_attention_layernorm(x))


class Qwen3_5Cache(KVCache):
    """KV rows of the full-attention layers, conv tails [B, C, K - 1] and states [B, Hv, dk, dv]
    of the linear ones; length() counts the positions seen."""

    def __init__(self, layers):
        super().__init__(layers)
        self.conv = [None] * layers
        self.rec = [None] * layers
        self.seen = 0

    def length(self):
        return self.seen


class Qwen3_5TextModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList(Qwen3_5DecoderLayer(c, kind, i)
                                    for i, kind in enumerate(layer_kinds(c)))
        self.norm = GemmaRMSNorm(c["hidden_size"], c["rms_norm_eps"])


class Qwen3_5ForCausalLM(nn.Module):
    kind = "decoder"

    def __init__(self, config):
        super().__init__()
        c = text_config(config)
        self.model = Qwen3_5TextModel(c)
        self.tied = config.get("tie_word_embeddings", c.get("tie_word_embeddings", False))
        if not self.tied:
            self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        theta, factor = rope_settings(c)
        self.inv_freq = rope_inv_freq(int(c["head_dim"] * factor), theta, None)

    def new_cache(self):
        return Qwen3_5Cache(len(self.model.layers))

    def forward(self, ids, valid, cache=None):
        offset = cache.length() if cache is not None else 0
        s = ids.shape[1]
        cos, sin = rope_cos_sin(torch.arange(offset, offset + s), self.inv_freq)
        allowed = attention_mask(valid, s, offset=offset, causal=True, window=None)
        x = self.model.embed_tokens(ids)
        for i, layer in enumerate(self.model.layers):
            x = layer(x, cos, sin, allowed, cache, i)
        if cache is not None:
            cache.seen += s
        x = self.model.norm(x)
        head = self.model.embed_tokens.weight if self.tied else self.lm_head.weight
        return F.linear(x, head)
