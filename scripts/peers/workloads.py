"""The two benchmark workloads of scripts/bench-peers.sh: shapes, weights, torch definitions.

W1  BERT-base shape: 12 layers, d 768, 12 heads of 64, FFN 3072, GELU (erf), post-LayerNorm
    (eps 1e-12), Q/K/V/O with bias; batch 1, seq 128. octet runs the whole BertModel (ids ->
    embeddings -> layers); the peers run the 12 layers on the embedding output (hidden states
    [1, 128, 768]). The layer weights are the same tensors everywhere.
W2  Llama shape: 12 layers, d 768, 12 heads (MHA, head 64), FFN 2048 SwiGLU, RMSNorm (eps 1e-5),
    RoPE base 10000 (Hugging Face rotate-half layout; the GGUF gets the Q/K row permutation that
    llama.cpp's converter applies), vocab 32000, untied head.
W4  ModernBERT-base shape (answerdotai/ModernBERT-base): 22 pre-norm layers, d 768, 12 heads of
    64, fused Wqkv [2304, 768], GeGLU FFN (Wi [2 x 1152, 768]: exact-erf gelu(first half) x second
    half), LayerNorms without bias (eps 1e-5), no biases anywhere; layer i global when i % 3 == 0
    (RoPE theta 160000), else local (keys with |i - j| <= 64, theta 10000); embeddings =
    LayerNorm(token table), no norm before layer 0's attention, final_norm; vocab 50368. Every
    engine runs the whole model, ids -> last hidden state, batch 1, at 512 and 8192 tokens.
W3  Qwen3.5-0.8B text shape (Qwen3_5ForCausalLM): 24 pre-norm layers, d 1024, in threes of Gated
    DeltaNet (16 key and 16 value heads of 128, a causal depthwise conv of 4 taps) then one gated
    full-attention layer (8 query heads of 256 with an output gate, 2 K/V heads, Q/K norms, RoPE on
    the first 64 dimensions, theta 1e7); SwiGLU MLP 3584, zero-centred RMSNorms (eps 1e-6), head
    tied to the embeddings, vocab 248320. Opt-in (3 GB of fp32 weights): prefill at 512 and 8192
    tokens then single-token decode steps; its correctness is every position's logits on 130 ids.
    The torch model is the repo's restatement tests/golden/ref_models/qwen3_5.py.

The weights are made once (numpy, fixed seeds) by make_workloads.py and stored as Hugging Face
checkpoints (config.json + model.safetensors, float32); every other format and every benchmark
reads them from there. Needs Debian's python3 with python3-numpy (+ python3-torch for the models).
"""
import json
import math
import os
import struct

import numpy as np

W1 = dict(layers=12, d=768, heads=12, ff=3072, eps=1e-12, vocab=30522, max_pos=512, types=2,
          seq=128, seed=4321)
W2 = dict(layers=12, d=768, heads=12, ff=2048, eps=1e-5, vocab=32000, rope_base=10000.0,
          max_pos=4096, seed=1234, n_prompt=128, n_gen=128)
W4 = dict(layers=22, d=768, heads=12, ff=1152, eps=1e-5, vocab=50368, max_pos=8192,
          global_every=3, window=128, global_theta=160000.0, local_theta=10000.0,
          unk=50280, cls=50281, sep=50282, pad=50283, mask=50284, seqs=(512, 8192), check_seq=512,
          seed=2468)
W3 = dict(layers=24, d=1024, ff=3584, heads=8, kv_heads=2, head_dim=256, lin_heads=16, lin_dk=128,
          lin_dv=128, conv=4, full_every=4, eps=1e-6, vocab=248320, max_pos=262144, rope_theta=1e7,
          rotary=0.25, mrope=[11, 11, 10], qk_corr=0.9, n_check=130, n_split=100, n_gen=16,
          seqs=(512, 8192), decode=64, seed=3579)

# Multiply-adds of the weight GEMMs per token: 4 d^2 (Q, K, V, O) + the FFN, per layer.
W1_MACS_PER_TOKEN = W1["layers"] * (4 * W1["d"] ** 2 + 2 * W1["d"] * W1["ff"])  # 7.08 M x 12
W2_MACS_PER_TOKEN = W2["layers"] * (4 * W2["d"] ** 2 + 3 * W2["d"] * W2["ff"])  # same, + head
W4_MACS_PER_TOKEN = W4["layers"] * (4 * W4["d"] ** 2 + 3 * W4["d"] * W4["ff"])  # 110.3 M


def w3_layer_kinds(layers=None):
    """"linear_attention" or "full_attention" per layer: every full_every-th is full (from 1)."""
    n = W3["layers"] if layers is None else layers
    return ["full_attention" if (i + 1) % W3["full_every"] == 0 else "linear_attention"
            for i in range(n)]


def w3_macs_per_token(layers=None):
    """Multiply-adds of W3's weight GEMMs a token, the head left out (497.6 M at 24 layers)."""
    c = W3
    d, key, value = c["d"], c["lin_heads"] * c["lin_dk"], c["lin_heads"] * c["lin_dv"]
    mlp = 3 * d * c["ff"]
    linear = d * (2 * key + value) + d * value + 2 * d * c["lin_heads"] + value * d + mlp
    qd, kvd = c["heads"] * c["head_dim"], c["kv_heads"] * c["head_dim"]
    full = d * 2 * qd + 2 * d * kvd + qd * d + mlp
    return sum(linear if k == "linear_attention" else full for k in w3_layer_kinds(layers))


def w3_attention_macs(seq, layers=None):
    """Q.K^T and P.V of W3's full-attention layers over a causal prefill of seq tokens."""
    n_full = w3_layer_kinds(layers).count("full_attention")
    return n_full * 2 * W3["heads"] * W3["head_dim"] * seq * (seq + 1) // 2


def w4_is_global(i):
    return i % W4["global_every"] == 0


def w4_attention_macs(seq):
    """Multiply-adds of Q.K^T and P.V over a forward, counting only the keys each query may see
    (the band of the local layers: up to 2 x 64 + 1 keys)."""
    half, total = W4["window"] // 2, 0
    seen_local = sum(min(seq - 1, i + half) - max(0, i - half) + 1 for i in range(seq))
    for i in range(W4["layers"]):
        total += 2 * W4["d"] * (seq * seq if w4_is_global(i) else seen_local)
    return total


def w1_ids():
    """The 128 token ids of W1 (CLS first, then fixed pseudo-random ids)."""
    return [101] + [1000 + (i * 7919 + 1237) % 29000 for i in range(1, W1["seq"])]


def w4_ids(seq):
    """W4's token ids: [CLS], fixed pseudo-random ids below the special tokens, [SEP]."""
    return [W4["cls"]] + [(i * 7919 + 1237) % W4["unk"] for i in range(1, seq - 1)] + [W4["sep"]]


def w3_ids(n, vocab=None):
    """W3's token ids: fixed pseudo-random ids over the whole vocabulary."""
    v = W3["vocab"] if vocab is None else vocab
    return [(i * 48271 + 1237) % v for i in range(n)]


def w2_prompt():
    """The 128-token W2 prompt: BOS then fixed pseudo-random ids (as the peers' scripts use)."""
    return [1] + [259 + (i * 7919 + 1237) % 31741 for i in range(1, W2["n_prompt"])]


# ---- weights ------------------------------------------------------------------------------

def _normal(rng, shape, std):
    return (rng.standard_normal(shape, dtype=np.float32) * np.float32(std)).astype(np.float32)


def make_w1_weights():
    """Hugging Face BertModel names -> float32 arrays ([out, in] for linear weights)."""
    c, rng = W1, np.random.default_rng(W1["seed"])
    d, ff = c["d"], c["ff"]
    w = {
        "embeddings.word_embeddings.weight": _normal(rng, (c["vocab"], d), 0.02),
        "embeddings.position_embeddings.weight": _normal(rng, (c["max_pos"], d), 0.02),
        "embeddings.token_type_embeddings.weight": _normal(rng, (c["types"], d), 0.02),
        "embeddings.LayerNorm.weight": 1.0 + _normal(rng, (d,), 0.1),
        "embeddings.LayerNorm.bias": _normal(rng, (d,), 0.02),
    }
    for i in range(c["layers"]):
        p = f"encoder.layer.{i}."
        for name, (o, n) in (("attention.self.query", (d, d)), ("attention.self.key", (d, d)),
                             ("attention.self.value", (d, d)), ("attention.output.dense", (d, d)),
                             ("intermediate.dense", (ff, d)), ("output.dense", (d, ff))):
            w[p + name + ".weight"] = _normal(rng, (o, n), 0.02)
            w[p + name + ".bias"] = _normal(rng, (o,), 0.02)
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[p + name + ".weight"] = 1.0 + _normal(rng, (d,), 0.1)
            w[p + name + ".bias"] = _normal(rng, (d,), 0.02)
    return w


def w1_config():
    c = W1
    return {"architectures": ["BertModel"], "model_type": "bert", "vocab_size": c["vocab"],
            "hidden_size": c["d"], "num_hidden_layers": c["layers"],
            "num_attention_heads": c["heads"], "intermediate_size": c["ff"], "hidden_act": "gelu",
            "layer_norm_eps": c["eps"], "max_position_embeddings": c["max_pos"],
            "type_vocab_size": c["types"], "position_embedding_type": "absolute",
            "pad_token_id": 0, "torch_dtype": "float32"}


def make_w2_weights():
    """Hugging Face LlamaForCausalLM names -> float32 arrays."""
    c, rng = W2, np.random.default_rng(W2["seed"])
    d, ff = c["d"], c["ff"]
    w = {"model.embed_tokens.weight": _normal(rng, (c["vocab"], d), 1.0)}
    for i in range(c["layers"]):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = 1.0 + _normal(rng, (d,), 0.1)
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            w[p + "self_attn." + name + ".weight"] = _normal(rng, (d, d), 0.02)
        w[p + "post_attention_layernorm.weight"] = 1.0 + _normal(rng, (d,), 0.1)
        w[p + "mlp.gate_proj.weight"] = _normal(rng, (ff, d), 0.02)
        w[p + "mlp.up_proj.weight"] = _normal(rng, (ff, d), 0.02)
        w[p + "mlp.down_proj.weight"] = _normal(rng, (d, ff), 0.02)
    w["model.norm.weight"] = 1.0 + _normal(rng, (d,), 0.1)
    w["lm_head.weight"] = _normal(rng, (c["vocab"], d), 0.02)
    return w


def w2_config():
    c = W2
    # No eos_token_id: greedy generation must not stop early (the checks compare 16 tokens).
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": c["vocab"],
            "hidden_size": c["d"], "num_hidden_layers": c["layers"],
            "num_attention_heads": c["heads"], "num_key_value_heads": c["heads"],
            "intermediate_size": c["ff"], "hidden_act": "silu", "rms_norm_eps": c["eps"],
            "rope_theta": c["rope_base"], "max_position_embeddings": c["max_pos"],
            "tie_word_embeddings": False, "attention_bias": False, "bos_token_id": 1,
            "torch_dtype": "float32"}


def make_w4_weights():
    """Hugging Face ModernBertModel names -> float32 arrays (no biases; layer 0 has no attn_norm)."""
    c, rng = W4, np.random.default_rng(W4["seed"])
    d, ff = c["d"], c["ff"]
    w = {"model.embeddings.tok_embeddings.weight": _normal(rng, (c["vocab"], d), 0.02),
         "model.embeddings.norm.weight": 1.0 + _normal(rng, (d,), 0.1)}
    for i in range(c["layers"]):
        p = f"model.layers.{i}."
        if i > 0:
            w[p + "attn_norm.weight"] = 1.0 + _normal(rng, (d,), 0.1)
        w[p + "attn.Wqkv.weight"] = _normal(rng, (3 * d, d), 0.02)
        w[p + "attn.Wo.weight"] = _normal(rng, (d, d), 0.02)
        w[p + "mlp_norm.weight"] = 1.0 + _normal(rng, (d,), 0.1)
        w[p + "mlp.Wi.weight"] = _normal(rng, (2 * ff, d), 0.02)
        w[p + "mlp.Wo.weight"] = _normal(rng, (d, ff), 0.02)
    w["model.final_norm.weight"] = 1.0 + _normal(rng, (d,), 0.1)
    return w


def w4_config():
    c = W4
    return {"architectures": ["ModernBertModel"], "model_type": "modernbert",
            "vocab_size": c["vocab"], "hidden_size": c["d"], "num_hidden_layers": c["layers"],
            "num_attention_heads": c["heads"], "intermediate_size": c["ff"],
            "hidden_activation": "gelu", "max_position_embeddings": c["max_pos"],
            "norm_eps": c["eps"], "norm_bias": False, "attention_bias": False, "mlp_bias": False,
            "global_attn_every_n_layers": c["global_every"], "local_attention": c["window"],
            "global_rope_theta": c["global_theta"], "local_rope_theta": c["local_theta"],
            "pad_token_id": c["pad"], "cls_token_id": c["cls"], "sep_token_id": c["sep"],
            "bos_token_id": c["cls"], "eos_token_id": c["sep"], "torch_dtype": "float32"}


def make_w3_weights(layers=None, vocab=None):
    """Hugging Face Qwen3_5ForCausalLM names -> float32 arrays, drawn in this order from one
    generator. Projections reading the residual stream have std 1 / sqrt(d); the ones writing it
    back 0.5 / sqrt(fan-in) (out_proj, down_proj), o_proj 2.5 / sqrt(fan-in) (its input is an
    average over the keys, halved by the sigmoid gate, and would barely weigh otherwise).
    The key rows of in_proj_qkv and of the conv are 0.9 x the query rows + sqrt(0.19) x their own
    draw: a token's key and query point the same way, so the delta rule's reads find what its
    writes stored (independent random q and k would read ~noise). A = exp(A_log) uniform in
    [1, 16] and dt_bias 1 (transformers' initialisation); the zero-centred norms 0.1 x N(0, 1),
    the gated norm (its weight used as stored) 1 + 0.1 x N(0, 1); conv taps N(0, 0.5^2)."""
    c, rng = W3, np.random.default_rng(W3["seed"])
    n_layers = c["layers"] if layers is None else layers
    d, ff, v = c["d"], c["ff"], c["vocab"] if vocab is None else vocab
    key, value, hv = c["lin_heads"] * c["lin_dk"], c["lin_heads"] * c["lin_dv"], c["lin_heads"]
    qd, kvd = c["heads"] * c["head_dim"], c["kv_heads"] * c["head_dim"]
    r = c["qk_corr"]

    def correlate_keys(a):  # rows [key, 2 key): the keys
        a[key:2 * key] = r * a[:key] + math.sqrt(1 - r * r) * a[key:2 * key]
        return a

    w = {"model.embed_tokens.weight": _normal(rng, (v, d), 0.08)}
    for i, kind in enumerate(w3_layer_kinds(n_layers)):
        p = f"model.layers.{i}."
        w[p + "input_layernorm.weight"] = _normal(rng, (d,), 0.1)
        if kind == "linear_attention":
            a = p + "linear_attn."
            w[a + "in_proj_qkv.weight"] = correlate_keys(_normal(rng, (2 * key + value, d), 1 / math.sqrt(d)))
            w[a + "in_proj_z.weight"] = _normal(rng, (value, d), 1 / math.sqrt(d))
            w[a + "in_proj_b.weight"] = _normal(rng, (hv, d), 1 / math.sqrt(d))
            w[a + "in_proj_a.weight"] = _normal(rng, (hv, d), 1 / math.sqrt(d))
            w[a + "conv1d.weight"] = correlate_keys(_normal(rng, (2 * key + value, 1, c["conv"]), 0.5))
            w[a + "dt_bias"] = np.ones(hv, dtype=np.float32)
            w[a + "A_log"] = np.log(rng.uniform(1.0, 16.0, hv)).astype(np.float32)
            w[a + "norm.weight"] = 1.0 + _normal(rng, (c["lin_dv"],), 0.1)
            w[a + "out_proj.weight"] = _normal(rng, (d, value), 0.5 / math.sqrt(value))
        else:
            a = p + "self_attn."
            w[a + "q_proj.weight"] = _normal(rng, (2 * qd, d), 1 / math.sqrt(d))  # query, gate per head
            w[a + "k_proj.weight"] = _normal(rng, (kvd, d), 1 / math.sqrt(d))
            w[a + "v_proj.weight"] = _normal(rng, (kvd, d), 1 / math.sqrt(d))
            w[a + "o_proj.weight"] = _normal(rng, (d, qd), 2.5 / math.sqrt(qd))
            w[a + "q_norm.weight"] = _normal(rng, (c["head_dim"],), 0.1)
            w[a + "k_norm.weight"] = _normal(rng, (c["head_dim"],), 0.1)
        w[p + "post_attention_layernorm.weight"] = _normal(rng, (d,), 0.1)
        w[p + "mlp.gate_proj.weight"] = _normal(rng, (ff, d), 1 / math.sqrt(d))
        w[p + "mlp.up_proj.weight"] = _normal(rng, (ff, d), 1 / math.sqrt(d))
        w[p + "mlp.down_proj.weight"] = _normal(rng, (d, ff), 0.5 / math.sqrt(ff))
    w["model.norm.weight"] = _normal(rng, (d,), 0.1)
    return w


def w3_config(layers=None, vocab=None):
    c = W3
    n_layers = c["layers"] if layers is None else layers
    # No eos_token_id: greedy generation must not stop early (the checks compare 16 tokens).
    return {"architectures": ["Qwen3_5ForCausalLM"], "model_type": "qwen3_5_text",
            "vocab_size": c["vocab"] if vocab is None else vocab, "hidden_size": c["d"],
            "intermediate_size": c["ff"], "num_hidden_layers": n_layers,
            "num_attention_heads": c["heads"], "num_key_value_heads": c["kv_heads"],
            "head_dim": c["head_dim"], "hidden_act": "silu", "rms_norm_eps": c["eps"],
            "max_position_embeddings": c["max_pos"], "layer_types": w3_layer_kinds(n_layers),
            "full_attention_interval": c["full_every"], "linear_conv_kernel_dim": c["conv"],
            "linear_key_head_dim": c["lin_dk"], "linear_value_head_dim": c["lin_dv"],
            "linear_num_key_heads": c["lin_heads"], "linear_num_value_heads": c["lin_heads"],
            "attn_output_gate": True, "attention_bias": False, "tie_word_embeddings": True,
            "rope_parameters": {"rope_type": "default", "rope_theta": c["rope_theta"],
                                "partial_rotary_factor": c["rotary"], "mrope_section": c["mrope"],
                                "mrope_interleaved": True},
            "torch_dtype": "float32"}


# ---- safetensors (float32 only) -------------------------------------------------------------

def save_checkpoint(folder, config, tensors):
    os.makedirs(folder, exist_ok=True)
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for name, a in tensors.items():
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        off += a.nbytes
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((-len(h)) % 8)
    tmp = os.path.join(folder, "model.safetensors.tmp")
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for a in tensors.values():
            f.write(np.ascontiguousarray(a, dtype="<f4").tobytes())
    os.replace(tmp, os.path.join(folder, "model.safetensors"))
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)


def load_checkpoint(folder, mapped=True):
    """name -> float32 array: read-only views of a memory map, or (mapped=False) arrays read from
    the file, so that a peak-RSS figure does not count the file's pages besides the model's copy."""
    path = os.path.join(folder, "model.safetensors")
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    raw = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n) if mapped else None
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        assert t["dtype"] == "F32", (name, t["dtype"])
        b, e = t["data_offsets"]
        if mapped:
            out[name] = raw[b:e].view("<f4").reshape(t["shape"])
        else:
            out[name] = np.fromfile(path, "<f4", (e - b) // 4, offset=8 + n + b).reshape(t["shape"])
    return out


# ---- torch definitions (Debian's python3-torch 1.13; no transformers) -----------------------

def torch_modules():
    """Imported lazily so that numpy-only users (the GGUF writer) do not need torch."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def linear(w, b=None):
        m = nn.Linear(w.shape[1], w.shape[0], bias=b is not None)
        with torch.no_grad():
            m.weight.copy_(torch.from_numpy(np.array(w)))
            if b is not None:
                m.bias.copy_(torch.from_numpy(np.array(b)))
        return m

    def layernorm(w, b, eps):
        m = nn.LayerNorm(w.shape[0], eps=eps)
        with torch.no_grad():
            m.weight.copy_(torch.from_numpy(np.array(w)))
            m.bias.copy_(torch.from_numpy(np.array(b)))
        return m

    class BertLayer(nn.Module):
        def __init__(self, w, p):
            super().__init__()
            lin = lambda n: linear(w[p + n + ".weight"], w[p + n + ".bias"])  # noqa: E731
            self.h, self.hd = W1["heads"], W1["d"] // W1["heads"]
            self.q, self.k, self.v = (lin("attention.self.query"), lin("attention.self.key"),
                                      lin("attention.self.value"))
            self.o = lin("attention.output.dense")
            self.ln1 = layernorm(w[p + "attention.output.LayerNorm.weight"],
                                 w[p + "attention.output.LayerNorm.bias"], W1["eps"])
            self.up, self.down = lin("intermediate.dense"), lin("output.dense")
            self.ln2 = layernorm(w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"],
                                 W1["eps"])

        def forward(self, x):
            B, T, D = x.shape
            split = lambda t: t.view(B, T, self.h, self.hd).transpose(1, 2)  # noqa: E731
            q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
            s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.hd)
            a = torch.matmul(torch.softmax(s, dim=-1), v).transpose(1, 2).reshape(B, T, D)
            x = self.ln1(x + self.o(a))
            return self.ln2(x + self.down(F.gelu(self.up(x))))

    class BertEncoder(nn.Module):
        """W1 as the peers run it: hidden states in, last hidden state out."""

        def __init__(self, w):
            super().__init__()
            self.layers = nn.ModuleList(BertLayer(w, f"encoder.layer.{i}.")
                                        for i in range(W1["layers"]))

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    def bert_embed(w, ids):
        """BertEmbeddings (token type 0 everywhere): ids -> hidden states [1, T, d]."""
        ids = torch.tensor([ids])
        t = ids.shape[1]
        x = (torch.from_numpy(np.array(w["embeddings.word_embeddings.weight"]))[ids]
             + torch.from_numpy(np.array(w["embeddings.position_embeddings.weight"][:t]))[None]
             + torch.from_numpy(np.array(w["embeddings.token_type_embeddings.weight"][0])))
        ln = layernorm(w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], W1["eps"])
        with torch.no_grad():
            return ln(x)

    class RMSNorm(nn.Module):
        def __init__(self, weight):
            super().__init__()
            self.weight = nn.Parameter(torch.from_numpy(np.array(weight)))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + W2["eps"]) * self.weight

    def rotate_half(x):
        h = x.shape[-1] // 2
        return torch.cat((-x[..., h:], x[..., :h]), dim=-1)

    class LlamaBlock(nn.Module):
        def __init__(self, w, p):
            super().__init__()
            self.h, self.hd = W2["heads"], W2["d"] // W2["heads"]
            self.attn_norm = RMSNorm(w[p + "input_layernorm.weight"])
            self.q, self.k, self.v, self.o = (linear(w[p + f"self_attn.{n}_proj.weight"])
                                              for n in "qkvo")
            self.ffn_norm = RMSNorm(w[p + "post_attention_layernorm.weight"])
            self.gate, self.up, self.down = (linear(w[p + f"mlp.{n}_proj.weight"])
                                             for n in ("gate", "up", "down"))

        def forward(self, x, pos, cos, sin, kc, vc):
            B, T, D = x.shape
            a = self.attn_norm(x)
            q = self.q(a).view(B, T, self.h, self.hd).transpose(1, 2)  # [B, H, T, hd]
            k = self.k(a).view(B, T, self.h, self.hd).transpose(1, 2)
            v = self.v(a).view(B, T, self.h, self.hd).transpose(1, 2)
            q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
            kc[:, :, pos:pos + T], vc[:, :, pos:pos + T] = k, v
            K, V = kc[:, :, :pos + T], vc[:, :, :pos + T]
            s = torch.matmul(q, K.transpose(-1, -2)) * (1.0 / math.sqrt(self.hd))
            if T > 1:
                s = s.masked_fill(torch.ones(T, pos + T, dtype=torch.bool).triu_(pos + 1),
                                  float("-inf"))
            o = torch.matmul(torch.softmax(s, dim=-1), V).transpose(1, 2).reshape(B, T, D)
            x = x + self.o(o)
            f = self.ffn_norm(x)
            return x + self.down(F.silu(self.gate(f)) * self.up(f))

    class Llama(nn.Module):
        """W2 with a preallocated KV cache; forward returns the last token's logits."""

        def __init__(self, w, max_ctx=W2["n_prompt"] + W2["n_gen"]):
            super().__init__()
            self.max_ctx = max_ctx
            self.embed = torch.from_numpy(np.array(w["model.embed_tokens.weight"]))
            self.layers = nn.ModuleList(LlamaBlock(w, f"model.layers.{i}.")
                                        for i in range(W2["layers"]))
            self.norm = RMSNorm(w["model.norm.weight"])
            self.head = linear(w["lm_head.weight"])
            hd = W2["d"] // W2["heads"]
            inv = 1.0 / (W2["rope_base"] ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
            ang = torch.outer(torch.arange(max_ctx, dtype=torch.float64), inv)
            ang = torch.cat((ang, ang), dim=-1)
            self.cos, self.sin = torch.cos(ang).float(), torch.sin(ang).float()

        def new_cache(self):
            shape = (1, W2["heads"], self.max_ctx, W2["d"] // W2["heads"])
            return [(torch.zeros(shape), torch.zeros(shape)) for _ in self.layers]

        def forward(self, ids, pos, cache):
            T = ids.shape[1]
            x = self.embed[ids]
            cos, sin = self.cos[pos:pos + T], self.sin[pos:pos + T]
            for layer, (kc, vc) in zip(self.layers, cache):
                x = layer(x, pos, cos, sin, kc, vc)
            return self.head(self.norm(x[:, -1:]))[0, -1]

    def greedy(model, prompt, n):
        """Prefill then greedy steps: n ids, and each step's top-1 minus top-2 logit."""
        cache, out, margins = model.new_cache(), [], []
        with torch.inference_mode():
            logits = model(torch.tensor([prompt]), 0, cache)
            for pos in range(len(prompt), len(prompt) + n):
                top = torch.topk(logits, 2)
                out.append(int(top.indices[0]))
                margins.append(float(top.values[0] - top.values[1]))
                if len(out) < n:
                    logits = model(torch.tensor([[out[-1]]]), pos, cache)
        return out, margins

    class ModernBert(nn.Module):
        """W4, ids -> last hidden state [1, T, d], as transformers' ModernBertModel computes it
        without flash-attn: the local layers' band is a mask on dense [T, T] scores (torch 1.13
        has no sliding-window or fused attention). The scores are made for as many heads at once
        as fit in 256 MiB (all 12 at 512 tokens, one at a time at 8192).

        variant (for the checks only: how far a wrong model lands from the right one):
          "all_global", "all_local", "band_63" (|i - j| <= 63), "thetas_swapped",
          "glu_halves_swapped", "tanh_gelu".
        """

        def __init__(self, w, variant=None):
            super().__init__()
            c, self.variant = W4, variant
            self.h, self.hd = c["heads"], c["d"] // c["heads"]
            t = lambda n: torch.from_numpy(np.array(w["model." + n + ".weight"]))  # noqa: E731
            self.embed, self.embed_norm = t("embeddings.tok_embeddings"), t("embeddings.norm")
            self.layers = []
            for i in range(c["layers"]):
                p = f"layers.{i}."
                glob = w4_is_global(i)
                if variant in ("all_global", "all_local"):
                    glob = variant == "all_global"
                self.layers.append(dict(
                    attn_norm=t(p + "attn_norm") if i > 0 else None, glob=glob,
                    qkv=linear(w[f"model.{p}attn.Wqkv.weight"]), o=linear(w[f"model.{p}attn.Wo.weight"]),
                    mlp_norm=t(p + "mlp_norm"), wi=linear(w[f"model.{p}mlp.Wi.weight"]),
                    wo=linear(w[f"model.{p}mlp.Wo.weight"])))
            self.final_norm = t("final_norm")
            thetas = (c["global_theta"], c["local_theta"])
            if variant == "thetas_swapped":
                thetas = thetas[::-1]
            # HF's default RoPE: inv[i] = 1 / theta^(2i / hd) in float32, rotate-half pairs
            self.inv = {g: 1.0 / (th ** (torch.arange(0, self.hd, 2).float() / self.hd))
                        for g, th in zip((True, False), thetas)}

        def norm(self, x, weight):
            return F.layer_norm(x, (W4["d"],), weight, None, W4["eps"])

        def attention(self, q, k, v, band):
            """q, k, v [H, T, hd]; band: bool [T, T] (True = may attend) or None -> [H, T, hd]."""
            T = q.shape[1]
            group = max(1, min(self.h, (64 << 20) // (T * T)))  # heads whose scores fit 256 MiB
            out = torch.empty_like(q)
            for h0 in range(0, self.h, group):
                s = torch.matmul(q[h0:h0 + group], k[h0:h0 + group].transpose(-1, -2))
                s.mul_(self.hd ** -0.5)  # [g, T, T]
                if band is not None:
                    s.masked_fill_(~band, float("-inf"))
                out[h0:h0 + group] = torch.matmul(torch.softmax(s, dim=-1), v[h0:h0 + group])
            return out

        def forward(self, ids):
            T, half = ids.shape[1], W4["window"] // 2 - (self.variant == "band_63")
            x = self.norm(self.embed[ids], self.embed_norm)  # [1, T, d]
            pos = torch.arange(T)
            band = (pos[:, None] - pos[None, :]).abs() <= half  # [T, T]
            rope = {}
            for g, inv in self.inv.items():
                ang = pos.float()[:, None] * inv[None, :]
                ang = torch.cat((ang, ang), dim=-1)  # [T, hd]
                rope[g] = (ang.cos(), ang.sin())
            for L in self.layers:
                a = x if L["attn_norm"] is None else self.norm(x, L["attn_norm"])
                q, k, v = (u.view(T, self.h, self.hd).transpose(0, 1)  # [H, T, hd]
                           for u in L["qkv"](a)[0].split(W4["d"], dim=-1))
                cos, sin = rope[L["glob"]]
                q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
                o = self.attention(q, k, v, None if L["glob"] else band)
                x = x + L["o"](o.transpose(0, 1).reshape(1, T, W4["d"]))
                inp, gate = L["wi"](self.norm(x, L["mlp_norm"])).chunk(2, dim=-1)
                if self.variant == "glu_halves_swapped":
                    inp, gate = gate, inp
                act = F.gelu(inp, approximate="tanh" if self.variant == "tanh_gelu" else "none")
                x = x + L["wo"](act * gate)
            return self.norm(x, self.final_norm)

    return dict(BertEncoder=BertEncoder, bert_embed=bert_embed, Llama=Llama, greedy=greedy,
                ModernBert=ModernBert)


# ---- W3 in torch: the repo's restatement of Qwen3.5 (tests/golden/ref_models/qwen3_5.py) ------

# Deliberately wrong W3 models (make_workloads.py's w3-variants.json): how far a mistake in a
# converter or an engine lands from the right logits, what a check's error is read against.
W3_VARIANTS = {
    "norms_as_stored": "the norms without their +1",
    "ssm_norm_plus1": "the gated norm with one",
    "gate_blocked": "query and gate not interleaved",
    "rope_adjacent": "adjacent-pair RoPE",
    "conv_reversed": "conv taps reversed",
    "decay_not_exp": "A_log taken for A (its exp missing)",
    "read_before_write": "the state read before the write",
}


def _ref_qwen3_5():
    """tests/golden/ref_models/qwen3_5.py, imported from the repo (no copy of it here)."""
    import sys
    golden = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "golden")
    if golden not in sys.path:
        sys.path.insert(0, golden)
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    from ref_models import qwen3_5
    return qwen3_5


class W3Torch:
    """W3 in fp32 torch: Qwen3_5ForCausalLM of the restatement with the checkpoint's weights.

    variant: None, or a key of W3_VARIANTS. Most are the weights changed before loading
    (norms_as_stored: the zero-centred norms' weights minus 1, so that x (1 + w) is x w;
    ssm_norm_plus1: the gated norm's plus 1; gate_blocked: q_proj's rows reordered so that the
    model reads query = the first half, gate = the second; conv_reversed: taps flipped;
    decay_not_exp: A_log replaced by log(A_log), so that exp() of it gives A_log); two swap a
    function of the restatement while this model runs (rope_adjacent: pairs (2i, 2i + 1)
    instead of (i, i + 64 / 2); read_before_write: the delta rule's output read from the state
    after its decay, before the step's write, token by token)."""

    def __init__(self, weights, config, variant=None):
        import torch
        self.torch, self.q, self.variant = torch, _ref_qwen3_5(), variant
        if variant is not None and variant not in W3_VARIANTS:
            raise ValueError(f"unknown W3 variant {variant}")
        c = config
        with _no_init(torch):
            self.model = self.q.Qwen3_5ForCausalLM(c).eval()
        sd = {}
        for name, a in weights.items():
            t = torch.from_numpy(a if isinstance(a, np.ndarray) and a.flags.writeable and
                                 not isinstance(a, np.memmap) else np.array(a))  # no second copy
            if variant == "norms_as_stored" and name.endswith(
                    ("layernorm.weight", "model.norm.weight", "q_norm.weight", "k_norm.weight")):
                t = t - 1.0
            elif variant == "ssm_norm_plus1" and name.endswith("linear_attn.norm.weight"):
                t = t + 1.0
            elif variant == "gate_blocked" and name.endswith("q_proj.weight"):
                t = t.view(2, c["num_attention_heads"], c["head_dim"], -1).transpose(0, 1).reshape(t.shape)
            elif variant == "conv_reversed" and name.endswith("conv1d.weight"):
                t = t.flip(-1)
            elif variant == "decay_not_exp" and name.endswith("A_log"):
                t = t.log()
            sd[name] = t.contiguous()
        self.model.load_state_dict(sd, strict=True)

    def _patched(self):
        """The restatement's functions this variant swaps, while the model runs."""
        torch, q = self.torch, self.q
        swaps = {}
        if self.variant == "rope_adjacent":
            def adjacent(x, cos, sin):
                h = x.shape[-1] // 2
                a, b = x[..., 0::2], x[..., 1::2]
                c, s = cos[..., :h], sin[..., :h]
                return torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)
            swaps["apply_rope"] = adjacent
        elif self.variant == "read_before_write":
            def read_first(qq, k, v, g, beta, S):
                outs = []
                for t in range(qq.shape[2]):
                    S = S * g[:, :, t].exp()[..., None, None]
                    outs.append(torch.einsum("bhkv,bhk->bhv", S, qq[:, :, t]))
                    kt = k[:, :, t]
                    delta = (v[:, :, t] - torch.einsum("bhkv,bhk->bhv", S, kt)) * beta[:, :, t, None]
                    S = S + kt[..., :, None] * delta[..., None, :]
                return torch.stack(outs, dim=2), S
            swaps["chunked_rule"] = swaps["recurrent_rule"] = read_first
        return _Swap(q, swaps)

    def logits(self, ids):
        """Every position's logits, float32 [len(ids), vocab], one pass (chunks of 64)."""
        torch = self.torch
        x = torch.tensor([ids])
        with torch.inference_mode(), self._patched():
            return self.model(x, torch.ones_like(x, dtype=torch.bool))[0]

    def new_cache(self):
        return self.model.new_cache()

    def step(self, ids, cache, last_only=True):
        """Run ids after what the cache holds; logits of the last position [vocab] (last_only:
        the final norm and the head on that position only), else of every position."""
        torch = self.torch
        x = torch.tensor([ids])
        valid = torch.ones(1, cache.length() + len(ids), dtype=torch.bool)
        norm = self.model.model.norm
        if last_only:
            self.model.model.norm = _LastPosition(norm)
        try:
            with torch.inference_mode(), self._patched():
                out = self.model(x, valid, cache)[0]
        finally:
            self.model.model.norm = norm
        return out[-1] if last_only else out

    def greedy(self, ids, n):
        """Prefill ids, then greedy steps: n ids, and each step's top-1 minus top-2 logit."""
        torch = self.torch
        cache, out, margins = self.new_cache(), [], []
        logits = self.step(ids, cache)
        while True:
            top = torch.topk(logits, 2)
            out.append(int(top.indices[0]))
            margins.append(float(top.values[0] - top.values[1]))
            if len(out) == n:
                return out, margins
            logits = self.step([out[-1]], cache)


class _Swap:
    """Context manager: module attributes replaced, then restored."""

    def __init__(self, module, swaps):
        self.module, self.swaps, self.saved = module, swaps, {}

    def __enter__(self):
        for k, f in self.swaps.items():
            self.saved[k] = getattr(self.module, k)
            setattr(self.module, k, f)

    def __exit__(self, *exc):
        for k, f in self.saved.items():
            setattr(self.module, k, f)


class _no_init:
    """No random initialisation while a model is built (its weights are loaded right after):
    seconds saved on W3's 750 M parameters."""

    def __init__(self, torch):
        self.init, self.saved = torch.nn.init, {}

    def __enter__(self):
        for k in ("kaiming_uniform_", "uniform_", "normal_", "zeros_", "ones_"):
            self.saved[k] = getattr(self.init, k)
            setattr(self.init, k, lambda t, *a, **kw: t)

    def __exit__(self, *exc):
        for k, f in self.saved.items():
            setattr(self.init, k, f)


def _LastPosition(norm):
    import torch.nn as nn

    class LastPosition(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x[:, -1:])

    return LastPosition(norm)


def quantize_dynamic(model):
    """torch dynamic int8 on every nn.Linear. Debian's torch has no fbgemm: onednn (uses VNNI)."""
    import torch
    torch.backends.quantized.engine = "onednn"
    return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
