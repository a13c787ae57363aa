"""W2 as a GGUF v3 file (llama.cpp's `llama` architecture), numpy only.

write_w2_gguf(path, weights, kind) with kind q8_0 (default) or f32. Q8_0: blocks of 32 values,
an fp16 scale d = max|x| / 127 and 32 int8 q = round(x / d): llama.cpp's reference quantizer.
Norms stay F32. Q and K rows are permuted from the Hugging Face rotate-half layout to llama.cpp's
adjacent-pair RoPE ("normal" mode), as llama.cpp's own HF converter does; check_rope_permutation()
verifies that on the real weights. The vocabulary is synthetic (SentencePiece-style: <unk>, <s>,
</s>, 256 byte tokens, then made-up pieces): only the ids matter here.
"""
import os
import struct

import numpy as np

from workloads import W2

U32, I32, F32, BOOL, STR, ARR = 4, 5, 6, 7, 8, 9          # GGUF value types
GGML_F32, GGML_Q8_0 = 0, 8                                 # ggml tensor types
FILE_TYPE = {"f32": 0, "q8_0": 7}                          # llama_ftype
ALIGN = 32


def _str(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def _kv(key, vtype, value):
    out = _str(key) + struct.pack("<I", vtype)
    if vtype == STR:
        return out + _str(value)
    if vtype == ARR:
        etype, items = value
        out += struct.pack("<IQ", etype, len(items))
        if etype == STR:
            return out + b"".join(_str(x) for x in items)
        return out + np.asarray(items, dtype={F32: "<f4", I32: "<i4"}[etype]).tobytes()
    return out + struct.pack({U32: "<I", F32: "<f", BOOL: "<?"}[vtype], value)


def _vocab(n):
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
    types = [2, 3, 3] + [6] * 256
    tokens += ["\u2581w%d" % i for i in range(n - len(tokens))]
    types += [1] * (n - len(types))
    return tokens, [0.0] * 3 + [-float(i) for i in range(3, n)], types


def q8_0(a):
    x = a.reshape(-1, 32).astype(np.float32)
    d = np.abs(x).max(axis=1) / 127.0
    inv = np.divide(1.0, d, out=np.zeros_like(d), where=d > 0)
    v = x * inv[:, None]
    q = np.clip(np.trunc(v + np.copysign(0.5, v)), -127, 127).astype(np.int8)  # roundf
    blocks = np.zeros(x.shape[0], dtype=[("d", "<f2"), ("qs", "i1", (32,))])
    blocks["d"], blocks["qs"] = d.astype(np.float16), q
    return blocks.tobytes()


def permute_qk(w, heads):
    """HF rotate-half rows (j, j + hd/2) -> llama.cpp adjacent rows (2j, 2j + 1), per head."""
    return w.reshape(heads, 2, w.shape[0] // heads // 2, w.shape[1]).swapaxes(1, 2).reshape(w.shape)


def check_rope_permutation(weights, pos=37):
    """Layer 0's Q.K scores: HF rotate-half on the HF weights == adjacent-pair RoPE on the
    permuted ones (what llama.cpp computes from the GGUF)."""
    hd, H = W2["d"] // W2["heads"], W2["heads"]
    x = np.random.default_rng(0).standard_normal((4, W2["d"])).astype(np.float64)
    inv = 1.0 / W2["rope_base"] ** (np.arange(0, hd, 2) / hd)
    cos, sin = np.cos(pos * inv), np.sin(pos * inv)

    def hf(w):
        y = (x @ np.asarray(w, np.float64).T).reshape(4, H, 2, hd // 2)
        a, b = y[:, :, 0], y[:, :, 1]
        return np.concatenate([a * cos - b * sin, b * cos + a * sin], -1)  # rotate-half

    def adjacent(w):
        y = (x @ np.asarray(w, np.float64).T).reshape(4, H, hd // 2, 2)
        a, b = y[..., 0], y[..., 1]
        return np.stack([a * cos - b * sin, a * sin + b * cos], -1).reshape(4, H, hd)

    wq = weights["model.layers.0.self_attn.q_proj.weight"]
    wk = weights["model.layers.0.self_attn.k_proj.weight"]
    s_hf = np.einsum("thd,shd->hts", hf(wq), hf(wk))
    s_gg = np.einsum("thd,shd->hts", adjacent(permute_qk(wq, H)), adjacent(permute_qk(wk, H)))
    err = np.abs(s_hf - s_gg).max() / np.abs(s_hf).max()
    assert err < 1e-9, f"RoPE permutation check failed: {err}"


def tensors(weights):
    """(GGUF name, float32 [rows, cols]) in llama.cpp's llama layout."""
    H = W2["heads"]
    out = [("token_embd.weight", weights["model.embed_tokens.weight"])]
    for i in range(W2["layers"]):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        out += [
            (b + "attn_norm.weight", weights[p + "input_layernorm.weight"]),
            (b + "attn_q.weight", permute_qk(weights[p + "self_attn.q_proj.weight"], H)),
            (b + "attn_k.weight", permute_qk(weights[p + "self_attn.k_proj.weight"], H)),
            (b + "attn_v.weight", weights[p + "self_attn.v_proj.weight"]),
            (b + "attn_output.weight", weights[p + "self_attn.o_proj.weight"]),
            (b + "ffn_norm.weight", weights[p + "post_attention_layernorm.weight"]),
            (b + "ffn_gate.weight", weights[p + "mlp.gate_proj.weight"]),
            (b + "ffn_up.weight", weights[p + "mlp.up_proj.weight"]),
            (b + "ffn_down.weight", weights[p + "mlp.down_proj.weight"]),
        ]
    return out + [("output_norm.weight", weights["model.norm.weight"]),
                  ("output.weight", weights["lm_head.weight"])]


def write_w2_gguf(path, weights, kind="q8_0"):
    c = W2
    tokens, scores, types = _vocab(c["vocab"])
    meta = [
        _kv("general.architecture", STR, "llama"),
        _kv("general.name", STR, "octet-bench-w2"),
        _kv("general.file_type", U32, FILE_TYPE[kind]),
        _kv("general.quantization_version", U32, 2),
        _kv("general.alignment", U32, ALIGN),
        _kv("llama.context_length", U32, c["max_pos"]),
        _kv("llama.embedding_length", U32, c["d"]),
        _kv("llama.block_count", U32, c["layers"]),
        _kv("llama.feed_forward_length", U32, c["ff"]),
        _kv("llama.rope.dimension_count", U32, c["d"] // c["heads"]),
        _kv("llama.attention.head_count", U32, c["heads"]),
        _kv("llama.attention.head_count_kv", U32, c["heads"]),
        _kv("llama.attention.layer_norm_rms_epsilon", F32, c["eps"]),
        _kv("llama.rope.freq_base", F32, c["rope_base"]),
        _kv("llama.vocab_size", U32, c["vocab"]),
        _kv("tokenizer.ggml.model", STR, "llama"),
        _kv("tokenizer.ggml.tokens", ARR, (STR, tokens)),
        _kv("tokenizer.ggml.scores", ARR, (F32, scores)),
        _kv("tokenizer.ggml.token_type", ARR, (I32, types)),
        _kv("tokenizer.ggml.bos_token_id", U32, 1),
        _kv("tokenizer.ggml.eos_token_id", U32, 2),
        _kv("tokenizer.ggml.unknown_token_id", U32, 0),
        _kv("tokenizer.ggml.add_bos_token", BOOL, True),
    ]
    infos, blobs, off = [], [], 0
    tl = tensors(weights)
    for name, a in tl:
        a = np.ascontiguousarray(a, dtype=np.float32)
        if a.ndim == 1 or kind == "f32":
            t, data = GGML_F32, a.tobytes()
        else:
            t, data = GGML_Q8_0, q8_0(a)
        dims = list(reversed(a.shape))  # ggml ne[0] is the innermost dimension
        infos.append(_str(name) + struct.pack("<I", len(dims)) +
                     b"".join(struct.pack("<Q", n) for n in dims) + struct.pack("<IQ", t, off))
        data += b"\0" * ((-len(data)) % ALIGN)
        blobs.append(data)
        off += len(data)
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tl), len(meta)) + b"".join(meta) + b"".join(infos)
    head += b"\0" * ((-len(head)) % ALIGN)
    with open(path + ".tmp", "wb") as f:
        f.write(head)
        for b in blobs:
            f.write(b)
    os.replace(path + ".tmp", path)
