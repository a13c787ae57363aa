"""Layers, attention, masks and rotary embeddings shared by the reference models.

Everything runs in torch.float32, the way the Hugging Face eager implementations compute.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


# --- activations ---------------------------------------------------------------------------------

def gelu_erf(x):
    """BERT's "gelu": x * Phi(x) with the exact normal CDF (erf)."""
    return F.gelu(x)


def gelu_tanh(x):
    """GPT-2's "gelu_new" (also T5 v1.1's gated-gelu): the tanh approximation of GELU."""
    inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))
    return 0.5 * x * (1.0 + torch.tanh(inner))


def silu(x):
    """"silu" (Llama family) and "swish" (Marian): x * sigmoid(x)."""
    return F.silu(x)


ACTIVATIONS = {
    "gelu": gelu_erf,
    "gelu_new": gelu_tanh,
    "gelu_pytorch_tanh": gelu_tanh,
    "silu": silu,
    "swish": silu,
    "relu": F.relu,
}


# --- layers --------------------------------------------------------------------------------------

class Conv1D(nn.Module):
    """GPT-2's "Conv1D": a linear layer whose weight is stored [in, out]; y = x @ W + b."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out))  # [in, out]
        self.bias = nn.Parameter(torch.empty(n_out))  # [out]

    def forward(self, x):
        shape = x.shape[:-1] + (self.weight.shape[1],)
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(shape)


class RMSNorm(nn.Module):
    """Root-mean-square norm without mean subtraction or bias: Llama's RMSNorm and T5's LayerNorm.

    y = weight * x / sqrt(mean(x^2) + eps)
    """

    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))  # [dim]
        self.eps = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


# --- attention -----------------------------------------------------------------------------------

def split_heads(x, heads):
    """[B, S, heads * D] -> [B, heads, S, D]."""
    b, s, _ = x.shape
    return x.view(b, s, heads, -1).transpose(1, 2)


def merge_heads(x):
    """[B, heads, S, D] -> [B, S, heads * D]."""
    b, h, s, d = x.shape
    return x.transpose(1, 2).reshape(b, s, h * d)


def attention(q, k, v, allowed, scale=None, bias=None, softcap=None):
    """Softmax attention with grouped K/V heads.

    q: [B, H, Sq, D]; k, v: [B, Hkv, Sk, D] with H a multiple of Hkv (query head h reads K/V head
    h // (H / Hkv), as Hugging Face's repeat_kv does); allowed: bool, broadcastable to
    [B, H, Sq, Sk]; bias: additive, broadcastable to [B, H, Sq, Sk] (T5's position bias);
    softcap (Gemma 2): scaled scores become softcap * tanh(scores / softcap), before bias and mask.
    Masked scores are set to the most negative float (as Hugging Face does), so a row with no
    visible key stays finite (uniform) instead of NaN.
    Returns [B, H, Sq, D].
    """
    rep = q.shape[1] // k.shape[1]
    if rep > 1:
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
    scores = torch.matmul(q, k.transpose(-1, -2))  # [B, H, Sq, Sk]
    if scale is not None:
        scores = scores * scale
    if softcap is not None:
        scores = torch.tanh(scores / softcap) * softcap
    if bias is not None:
        scores = scores + bias
    scores = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)
    probs = torch.softmax(scores, dim=-1)
    return torch.matmul(probs, v)


def attention_mask(key_valid, q_len, offset=0, causal=False, window=None):
    """Which keys each query may see, as a bool tensor [B, 1, Sq, Sk].

    key_valid: bool [B, Sk], False on padded keys. Query i of this call sits at absolute position
    offset + i; key j at absolute position j (keys 0..Sk-1 include the cached ones).
    causal: j <= i.  window (Mistral's sliding_window W): j > i - W, i.e. a query sees itself and
    the W - 1 keys before it, the convention of Hugging Face's sliding_window_overlay.
    """
    k_len = key_valid.shape[1]
    i = torch.arange(q_len)[:, None] + offset  # [Sq, 1]
    j = torch.arange(k_len)[None, :]  # [1, Sk]
    allowed = key_valid[:, None, None, :].expand(-1, 1, q_len, k_len)
    if causal:
        allowed = allowed & (j <= i)
    if window is not None:
        allowed = allowed & (j > i - window)
    return allowed


# --- rotary position embeddings (Hugging Face rotate-half layout) --------------------------------

def rope_inv_freq(head_dim, theta, scaling=None):
    """Inverse frequencies [head_dim / 2] in float32, after rope_scaling.

    Default: inv[i] = 1 / theta^(2i / head_dim).
    "linear" (key "type" or "rope_type"): inv / factor (positions divided by factor).
    "llama3": wavelengths 2*pi/inv longer than original_max_position_embeddings / low_freq_factor
    are divided by factor; shorter than original_max_position_embeddings / high_freq_factor are
    kept; in between, interpolated with s = (original_max / wavelen - low) / (high - low):
    inv' = (1 - s) * inv / factor + s * inv.
    """
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
    if not scaling:
        return inv
    kind = scaling.get("rope_type", scaling.get("type"))
    factor = float(scaling["factor"])
    if kind == "linear":
        return inv / factor
    if kind == "llama3":
        low = float(scaling["low_freq_factor"])
        high = float(scaling["high_freq_factor"])
        old_ctx = float(scaling["original_max_position_embeddings"])
        low_freq_wavelen = old_ctx / low
        high_freq_wavelen = old_ctx / high
        wavelen = 2 * math.pi / inv
        scaled = torch.where(wavelen > low_freq_wavelen, inv / factor, inv)
        smooth = (old_ctx / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
        return torch.where(medium, smoothed, scaled)
    raise ValueError(f"unsupported rope_scaling {scaling}")


def rope_cos_sin(positions, inv_freq):
    """cos, sin [S, head_dim] for integer positions [S]: angle(p, i) = p * inv[i mod D/2] (fp32)."""
    freqs = positions.float()[:, None] * inv_freq[None, :]  # [S, D/2]
    emb = torch.cat((freqs, freqs), dim=-1)  # [S, D]
    return emb.cos(), emb.sin()


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rope(x, cos, sin):
    """x: [B, H, S, D]; cos, sin: [S, D]. Pairs (d, d + D/2) rotate together."""
    return x * cos + rotate_half(x) * sin


# --- key/value cache for the incremental self-checks ---------------------------------------------

class KVCache:
    """Per-layer K/V [B, Hkv, S_cached, D], grown by concatenation (reference only)."""

    def __init__(self, layers):
        self.k = [None] * layers
        self.v = [None] * layers

    def length(self):
        return 0 if self.k[0] is None else self.k[0].shape[2]

    def append(self, layer, k, v):
        if self.k[layer] is not None:
            k = torch.cat((self.k[layer], k), dim=2)
            v = torch.cat((self.v[layer], v), dim=2)
        self.k[layer], self.v[layer] = k, v
        return k, v
