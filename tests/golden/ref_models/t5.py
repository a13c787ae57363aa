"""T5 (Raffel et al. 2020), Hugging Face `T5ForConditionalGeneration` names; v1.0 (ReLU FFN, head
tied to `shared` and applied to dec * d_model^-0.5) and v1.1 (gated-GELU FFN, untied lm_head).

Pre-norm blocks with T5's LayerNorm (RMS, no mean, no bias): h += SelfAttn(LN(h));
[decoder: h += CrossAttn(LN(h), enc)]; h += FFN(LN(h)); final LN per stack. Attention has no
1/sqrt(d) scale and no biases; inner width num_heads * d_kv may differ from d_model. Self-attention
adds a learned bias per (bucket, head) from block 0's relative_attention_bias, shared by every
layer of that stack; cross-attention has no position bias. Embeddings are not scaled.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from .common import (ACTIVATIONS, KVCache, RMSNorm, attention, attention_mask, merge_heads,
                     split_heads)

# Hugging Face T5Config defaults for keys that older configs (t5-small, ...) leave out.
DEFAULTS = {
    "relative_attention_num_buckets": 32,
    "relative_attention_max_distance": 128,
    "feed_forward_proj": "relu",
    "tie_word_embeddings": True,
    "layer_norm_epsilon": 1e-6,
}


def config_value(c, key):
    if key == "num_decoder_layers":
        return c.get(key) if c.get(key) is not None else c["num_layers"]
    return c.get(key, DEFAULTS.get(key))


def relative_position_bucket(relative_position, bidirectional, num_buckets, max_distance):
    """Bucket of key_pos - query_pos (Mesh TensorFlow's definition, computed in float32 as
    Hugging Face does).

    Bidirectional: half the buckets for keys after the query (offset num_buckets/2), half for keys
    before; causal: all buckets for keys before, keys after map to 0. Within a half of n buckets,
    distances below n/2 are exact; larger ones are log-spaced up to max_distance, then clamped to
    bucket n - 1.
    """
    buckets = torch.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        buckets += (relative_position > 0).long() * num_buckets
        n = relative_position.abs()
    else:
        n = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = n < max_exact
    large = max_exact + (torch.log(n.float() / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).long()
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return buckets + torch.where(is_small, n, large)


class T5Attention(nn.Module):
    def __init__(self, c, has_relative_bias, bidirectional):
        super().__init__()
        d, inner = c["d_model"], c["num_heads"] * c["d_kv"]
        self.heads = c["num_heads"]
        self.q = nn.Linear(d, inner, bias=False)
        self.k = nn.Linear(d, inner, bias=False)
        self.v = nn.Linear(d, inner, bias=False)
        self.o = nn.Linear(inner, d, bias=False)
        self.bidirectional = bidirectional
        self.num_buckets = config_value(c, "relative_attention_num_buckets")
        self.max_distance = config_value(c, "relative_attention_max_distance")
        if has_relative_bias:
            # [buckets, H]
            self.relative_attention_bias = nn.Embedding(self.num_buckets, self.heads)

    def position_bias(self, q_len, k_len, offset=0):
        """[1, H, Sq, Sk] for queries at offset..offset+Sq-1 and keys at 0..Sk-1."""
        rel = torch.arange(k_len)[None, :] - (torch.arange(q_len)[:, None] + offset)
        b = relative_position_bucket(rel, self.bidirectional, self.num_buckets, self.max_distance)
        return self.relative_attention_bias(b).permute(2, 0, 1)[None]

    def forward(self, x, allowed, bias=None, kv=None, cache=None, layer=0):
        q = split_heads(self.q(x), self.heads)  # [B, H, S, d_kv]
        if kv is None:
            k = split_heads(self.k(x), self.heads)
            v = split_heads(self.v(x), self.heads)
            if cache is not None:
                k, v = cache.append(layer, k, v)
        else:
            k, v = kv
        return self.o(merge_heads(attention(q, k, v, allowed, bias=bias)))

    def cross_kv(self, enc):
        return split_heads(self.k(enc), self.heads), split_heads(self.v(enc), self.heads)


class T5LayerSelfAttention(nn.Module):
    def __init__(self, c, has_relative_bias, bidirectional):
        super().__init__()
        self.SelfAttention = T5Attention(c, has_relative_bias, bidirectional)
        self.layer_norm = RMSNorm(c["d_model"], config_value(c, "layer_norm_epsilon"))

    def forward(self, x, allowed, bias, cache=None, layer=0):
        out = self.SelfAttention(self.layer_norm(x), allowed, bias=bias, cache=cache, layer=layer)
        return x + out


class T5LayerCrossAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.EncDecAttention = T5Attention(c, False, True)
        self.layer_norm = RMSNorm(c["d_model"], config_value(c, "layer_norm_epsilon"))

    def forward(self, x, allowed, kv):
        return x + self.EncDecAttention(self.layer_norm(x), allowed, kv=kv)


class T5DenseActDense(nn.Module):
    def __init__(self, c, act):
        super().__init__()
        self.wi = nn.Linear(c["d_model"], c["d_ff"], bias=False)
        self.wo = nn.Linear(c["d_ff"], c["d_model"], bias=False)
        self.act = act

    def forward(self, x):
        return self.wo(self.act(self.wi(x)))


class T5DenseGatedActDense(nn.Module):
    def __init__(self, c, act):
        super().__init__()
        self.wi_0 = nn.Linear(c["d_model"], c["d_ff"], bias=False)
        self.wi_1 = nn.Linear(c["d_model"], c["d_ff"], bias=False)
        self.wo = nn.Linear(c["d_ff"], c["d_model"], bias=False)
        self.act = act

    def forward(self, x):
        return self.wo(self.act(self.wi_0(x)) * self.wi_1(x))


class T5LayerFF(nn.Module):
    def __init__(self, c):
        super().__init__()
        proj = config_value(c, "feed_forward_proj")
        gated = proj.startswith("gated-")
        name = proj[len("gated-"):] if gated else proj
        # Hugging Face maps "gated-gelu" to the tanh GELU ("gelu_new").
        act = ACTIVATIONS["gelu_new" if name == "gelu" else name]
        self.DenseReluDense = (T5DenseGatedActDense if gated else T5DenseActDense)(c, act)
        self.layer_norm = RMSNorm(c["d_model"], config_value(c, "layer_norm_epsilon"))

    def forward(self, x):
        return x + self.DenseReluDense(self.layer_norm(x))


class T5Block(nn.Module):
    def __init__(self, c, first, decoder):
        super().__init__()
        layers = [T5LayerSelfAttention(c, first, not decoder)]
        if decoder:
            layers.append(T5LayerCrossAttention(c))
        layers.append(T5LayerFF(c))
        self.layer = nn.ModuleList(layers)


class T5Stack(nn.Module):
    def __init__(self, c, shared, decoder):
        super().__init__()
        n = config_value(c, "num_decoder_layers") if decoder else c["num_layers"]
        self.embed_tokens = shared
        self.block = nn.ModuleList(T5Block(c, i == 0, decoder) for i in range(n))
        self.final_layer_norm = RMSNorm(c["d_model"], config_value(c, "layer_norm_epsilon"))

    def self_bias(self, q_len, k_len, offset=0):
        return self.block[0].layer[0].SelfAttention.position_bias(q_len, k_len, offset)


class T5ForConditionalGeneration(nn.Module):
    kind = "encoder-decoder"

    def __init__(self, c):
        super().__init__()
        self.shared = nn.Embedding(c["vocab_size"], c["d_model"])  # [V, d]
        self.encoder = T5Stack(c, self.shared, decoder=False)
        self.decoder = T5Stack(c, self.shared, decoder=True)
        self.tied = config_value(c, "tie_word_embeddings")
        if not self.tied:
            self.lm_head = nn.Linear(c["d_model"], c["vocab_size"], bias=False)  # [V, d]
        self.d_model = c["d_model"]

    def new_cache(self):
        return KVCache(len(self.decoder.block))

    def encode(self, ids, valid):
        s = ids.shape[1]
        x = self.encoder.embed_tokens(ids)
        allowed = attention_mask(valid, s)
        bias = self.encoder.self_bias(s, s)
        for block in self.encoder.block:
            x = block.layer[1](block.layer[0](x, allowed, bias))
        return self.encoder.final_layer_norm(x)

    def decode(self, dec_ids, dec_valid, enc_out, enc_valid, cache=None, cross=None):
        """As MarianMTModel.decode: logits [B, T, V]."""
        offset = cache.length() if cache is not None else 0
        t = dec_ids.shape[1]
        if cross is None:
            cross = self.cross_kv(enc_out)
        x = self.decoder.embed_tokens(dec_ids)
        self_allowed = attention_mask(dec_valid, t, offset=offset, causal=True)
        cross_allowed = attention_mask(enc_valid, t)
        bias = self.decoder.self_bias(t, offset + t, offset)
        for i, block in enumerate(self.decoder.block):
            x = block.layer[0](x, self_allowed, bias, cache, i)
            x = block.layer[1](x, cross_allowed, cross[i])
            x = block.layer[2](x)
        x = self.decoder.final_layer_norm(x)
        if self.tied:
            return F.linear(x * self.d_model ** -0.5, self.shared.weight)
        return F.linear(x, self.lm_head.weight)

    def cross_kv(self, enc_out):
        return [b.layer[1].EncDecAttention.cross_kv(enc_out) for b in self.decoder.block]
