"""RWKV-4 decoders (RwkvForCausalLM): Hugging Face names, as in modeling_rwkv.py.

Restated from transformers' src/transformers/models/rwkv/modeling_rwkv.py (commit 058a04a3) and
configuration_rwkv.py (commit 053f59ef), read from the huggingface/transformers repository
(SOURCES below; gen_goldens.py writes them into each case's provenance).

Pre-norm blocks with LayerNorms (eps layer_norm_epsilon); block 0 first norms the embeddings
(pre_ln). Block i:
    x = x + attention(ln1(x));  x = x + feed_forward(ln2(x))
Both read s[t] = their input at t - 1 (nn.ZeroPad2d((0, 0, 1, -1)): zeros before the first
position; a cached call's first row takes the row the cache kept), mixed per channel:
    attention:    xk = x * time_mix_key + s * (1 - time_mix_key)  (value, receptance alike)
                  k = key(xk), v = value(xv), r = sigmoid(receptance(xr))
                  wkv = rwkv_linear_attention_cpu(time_decay, time_first, k, v) (below)
                  out = output(r * wkv)
    feed_forward: xk, xr alike with its own time_mix_key, time_mix_receptance
                  out = sigmoid(receptance(xr)) * value(relu(key(xk))^2)
ln_out (nn.LayerNorm's default eps 1e-5, not layer_norm_epsilon), then head (untied unless
tie_word_embeddings). intermediate_size null = 4 * hidden_size.

Inference rescaling (RwkvModel._rescale_layers, eval mode): with R = rescale_every > 0, block i's
attention.output and feed_forward.value weights are divided by 2^(i // R) and the stream is
halved after every block i with (i + 1) % R == 0. form "rescaled" computes that (what
transformers returns); form "eps" the unscaled weights and stream with block i's norms at
eps * 4^(i // R) and ln_out's at 1e-5 * 4^(L // R), the form octet converts to (the same
numbers: LayerNorm(x / s, eps) = LayerNorm(x, eps * s^2)); form "plain" the unscaled model
with the configured epsilons (it differs: the generator checks that the eps change matters).
"""
import torch
import torch.nn.functional as F
from torch import nn

SOURCES = {
    "src/transformers/models/rwkv/modeling_rwkv.py": "058a04a3e543f8fb897de7df0cef78839311f2c1",
    "src/transformers/models/rwkv/configuration_rwkv.py":
        "053f59efe493c4f815f39f836494a1f2f73fbe0b",
}


def intermediate(c):
    n = c.get("intermediate_size")
    return 4 * c["hidden_size"] if n is None else n


def rwkv_linear_attention_cpu(time_decay, time_first, key, value, state=None):
    """transformers' CPU loop: running sums kept as multiples of exp(max), float32.
    state: (num, den, max) [B, H] or None (0, 0, -1e38). Returns (wkv [B, S, H], state)."""
    _, seq, _ = key.shape
    out = torch.zeros_like(key)
    if state is None:
        num = torch.zeros_like(key[:, 0])
        den = torch.zeros_like(key[:, 0])
        mx = torch.zeros_like(key[:, 0]) - 1e38
    else:
        num, den, mx = state
    w = -torch.exp(time_decay)
    for t in range(seq):
        k, v = key[:, t], value[:, t]
        q = torch.maximum(mx, k + time_first)
        e1, e2 = torch.exp(mx - q), torch.exp(k + time_first - q)
        out[:, t] = (e1 * num + e2 * v) / (e1 * den + e2)
        q = torch.maximum(mx + w, k)
        e1, e2 = torch.exp(mx + w - q), torch.exp(k - q)
        num, den, mx = e1 * num + e2 * v, e1 * den + e2, q
    return out, (num, den, mx)


# What RwkvSelfAttention calls without a cache: "loop", transformers' CPU loop (above), or
# "chunked", the same sums CHUNK positions at a time (below; models/austen/train.py trains with
# it: autograd through a 256-step loop of small ops is slow).
WKV = "loop"
CHUNK = 8


def rwkv_linear_attention_chunked(time_decay, time_first, key, value):
    """rwkv_linear_attention_cpu from the zero state, in chunks of CHUNK positions. With
    w = exp(time_decay), u = time_first, output t is
        (sum_{i<t} e^(k_i - (t-1-i) w) v_i + e^(u + k_t) v_t) / (the same with v = 1).
    Every chunk at once: its own terms ([B, chunks, C, C, H] exponents) and its sums after its
    last position; then the sums carried from chunk to chunk (the only loop, over chunks), which
    enter position a of the next chunk times e^(-a w). Each sum is kept as a multiple of
    e^(its largest exponent), as the loop keeps them, and the shifts are constants to autograd
    (they cancel). The same numbers as the loop up to float rounding. Returns wkv [B, S, H]."""
    b, seq, h = key.shape
    n = min(CHUNK, seq)
    pad = -seq % n
    if pad:  # trailing positions that nothing before them reads
        key = F.pad(key, (0, 0, 0, pad))
        value = F.pad(value, (0, 0, 0, pad))
    chunks = (seq + pad) // n
    k = key.reshape(b, chunks, n, h)
    v = value.reshape(b, chunks, n, h)
    w = torch.exp(time_decay)
    pos = torch.arange(n, dtype=key.dtype)
    back = pos[:, None] - 1 - pos[None, :]  # t - 1 - i
    # [t, i, H]: -(t-1-i) w below the diagonal, u on it, -inf above.
    bias = torch.where((back == -1)[:, :, None], time_first, -back[:, :, None] * w)
    bias = bias.masked_fill((back < -1)[:, :, None], float("-inf"))
    ex = k[:, :, None, :, :] + bias  # [B, chunks, t, i, H]
    top = ex.amax(dim=3).detach()
    e = torch.exp(ex - top[:, :, :, None, :])
    inner_num, inner_den = (e * v[:, :, None, :, :]).sum(dim=3), e.sum(dim=3)
    # Each chunk's sums after its last position.
    last = k - (n - 1 - pos)[:, None] * w
    last_max = last.amax(dim=2).detach()
    e = torch.exp(last - last_max[:, :, None, :])
    sum_num, sum_den = (e * v).sum(dim=2), e.sum(dim=2)
    # The sums before each chunk: zero (as multiples of e^-1e38) before the first.
    num = torch.zeros_like(k[:, 0, 0])
    den = torch.zeros_like(num)
    mx = torch.full_like(num, -1e38)
    before = []
    for c in range(chunks):
        before.append((num, den, mx))
        decayed = mx - n * w
        new_mx = torch.maximum(decayed, last_max[:, c]).detach()
        old, fresh = torch.exp(decayed - new_mx), torch.exp(last_max[:, c] - new_mx)
        num = old * num + fresh * sum_num[:, c]
        den = old * den + fresh * sum_den[:, c]
        mx = new_mx
    num, den, mx = (torch.stack(t, dim=1) for t in zip(*before))  # [B, chunks, H]
    carried = mx[:, :, None, :] - pos[:, None] * w  # [B, chunks, t, H]
    shift = torch.maximum(top, carried).detach()
    a, c = torch.exp(top - shift), torch.exp(carried - shift)
    out = (a * inner_num + c * num[:, :, None, :]) / (a * inner_den + c * den[:, :, None, :])
    return out.reshape(b, chunks * n, h)[:, :seq]


def shift(x, before):
    """s[t] = x[t - 1]; s[0] = before (the cached row) or 0."""
    s = F.pad(x, (0, 0, 1, -1))
    if before is not None:
        s[:, 0] = before
    return s


class RwkvCache:
    """Per layer: the last ln1 row, the WKV sums, the last ln2 row; length() counts positions."""

    def __init__(self, layers):
        self.att_x = [None] * layers
        self.att = [None] * layers
        self.ffn_x = [None] * layers
        self.seen = 0

    def length(self):
        return self.seen


class RwkvSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden_size"]
        self.time_decay = nn.Parameter(torch.zeros(h))
        self.time_first = nn.Parameter(torch.zeros(h))
        self.time_mix_key = nn.Parameter(torch.zeros(1, 1, h))
        self.time_mix_value = nn.Parameter(torch.zeros(1, 1, h))
        self.time_mix_receptance = nn.Parameter(torch.zeros(1, 1, h))
        self.key = nn.Linear(h, h, bias=False)
        self.value = nn.Linear(h, h, bias=False)
        self.receptance = nn.Linear(h, h, bias=False)
        self.output = nn.Linear(h, h, bias=False)

    def forward(self, x, cache, layer, out_scale):
        s = shift(x, cache.att_x[layer] if cache is not None else None)
        k = self.key(x * self.time_mix_key + s * (1 - self.time_mix_key))
        v = self.value(x * self.time_mix_value + s * (1 - self.time_mix_value))
        r = torch.sigmoid(self.receptance(x * self.time_mix_receptance +
                                          s * (1 - self.time_mix_receptance)))
        state = cache.att[layer] if cache is not None else None
        if WKV == "chunked" and cache is None:
            wkv = rwkv_linear_attention_chunked(self.time_decay, self.time_first, k, v)
        else:
            wkv, state = rwkv_linear_attention_cpu(self.time_decay, self.time_first, k, v, state)
        if cache is not None:
            cache.att_x[layer], cache.att[layer] = x[:, -1].clone(), state
        return F.linear(r * wkv, self.output.weight / out_scale)


class RwkvFeedForward(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, f = c["hidden_size"], intermediate(c)
        self.time_mix_key = nn.Parameter(torch.zeros(1, 1, h))
        self.time_mix_receptance = nn.Parameter(torch.zeros(1, 1, h))
        self.key = nn.Linear(h, f, bias=False)
        self.receptance = nn.Linear(h, h, bias=False)
        self.value = nn.Linear(f, h, bias=False)

    def forward(self, x, cache, layer, out_scale):
        s = shift(x, cache.ffn_x[layer] if cache is not None else None)
        k = torch.square(torch.relu(self.key(x * self.time_mix_key + s * (1 - self.time_mix_key))))
        v = F.linear(k, self.value.weight / out_scale)
        r = torch.sigmoid(self.receptance(x * self.time_mix_receptance +
                                          s * (1 - self.time_mix_receptance)))
        if cache is not None:
            cache.ffn_x[layer] = x[:, -1].clone()
        return r * v


class RwkvBlock(nn.Module):
    def __init__(self, c, layer):
        super().__init__()
        h = c["hidden_size"]
        self.layer = layer
        if layer == 0:
            self.pre_ln = nn.LayerNorm(h)
        self.ln1 = nn.LayerNorm(h)
        self.ln2 = nn.LayerNorm(h)
        self.attention = RwkvSelfAttention(c)
        self.feed_forward = RwkvFeedForward(c)

    def forward(self, x, cache, eps, pre_eps, out_scale):
        if self.layer == 0:
            x = F.layer_norm(x, x.shape[-1:], self.pre_ln.weight, self.pre_ln.bias, pre_eps)
        ln1 = F.layer_norm(x, x.shape[-1:], self.ln1.weight, self.ln1.bias, eps)
        x = x + self.attention(ln1, cache, self.layer, out_scale)
        ln2 = F.layer_norm(x, x.shape[-1:], self.ln2.weight, self.ln2.bias, eps)
        return x + self.feed_forward(ln2, cache, self.layer, out_scale)


class RwkvModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.blocks = nn.ModuleList(RwkvBlock(c, i) for i in range(c["num_hidden_layers"]))
        self.ln_out = nn.LayerNorm(c["hidden_size"])


class RwkvForCausalLM(nn.Module):
    kind = "decoder"

    def __init__(self, c):
        super().__init__()
        self.rwkv = RwkvModel(c)
        self.tied = c.get("tie_word_embeddings", False)
        if not self.tied:
            self.head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        self.eps = c.get("layer_norm_epsilon", 1e-5)
        self.rescale = c.get("rescale_every", 6)
        self.form = "rescaled"

    def new_cache(self):
        return RwkvCache(len(self.rwkv.blocks))

    def forward(self, ids, valid, cache=None):
        """Logits [B, S, V] (valid: unused, as transformers ignores attention_mask)."""
        del valid
        r, form = self.rescale, self.form
        layers = len(self.rwkv.blocks)
        x = self.rwkv.embeddings(ids)
        for i, block in enumerate(self.rwkv.blocks):
            step = i // r if r > 0 else 0
            eps = self.eps * 4.0 ** step if form == "eps" else self.eps
            out_scale = 2.0 ** step if form == "rescaled" else 1.0
            x = block(x, cache, eps, self.eps, out_scale)
            if form == "rescaled" and r > 0 and (i + 1) % r == 0:
                x = x / 2
        if cache is not None:
            cache.seen += ids.shape[1]
        final_eps = 1e-5 * (4.0 ** (layers // r) if form == "eps" and r > 0 else 1.0)
        ln = self.rwkv.ln_out
        x = F.layer_norm(x, x.shape[-1:], ln.weight, ln.bias, final_eps)
        head = self.rwkv.embeddings.weight if self.tied else self.head.weight
        return F.linear(x, head)
