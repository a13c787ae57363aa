"""W4 as a GGUF v3 file for llama.cpp's `modern-bert` architecture, numpy only.

write_w4_gguf(path, weights, kind) with kind q8_0 (default: every matrix, the token table included,
as llama.cpp's converter quantizes them) or f32; norms stay F32. What llama.cpp's ModernBERT reads
(src/models/modern-bert.cpp, src/llama-model.cpp, conversion/bert.py of the llama.cpp that
node-llama-cpp 3.21.1 bundles):
  - tensors token_embd, token_embd_norm, blk.N.{attn_norm (absent for N = 0), attn_qkv,
    attn_output, ffn_norm, ffn_up, ffn_down}, output_norm. Wqkv and Wi are stored whole: llama.cpp
    splits Q/K/V by rows in HF's order, and its GeGLU takes gelu(first half) x second half, as HF's
    Wi(x).chunk(2) does. No RoPE permutation: the architecture uses NEOX (rotate-half) RoPE.
  - modern-bert.attention.sliding_window = 128 (local_attention; llama.cpp masks |i - j| > 64,
    "symmetric" SWA), .sliding_window_pattern = 3 (layer i global when i % 3 == 0), rope.freq_base
    = 160000 (global layers), rope.freq_base_swa = 10000 (local layers), attention.causal = false,
    hidden_activation = "gelu" (GeGLU; llama.cpp's gelu is the tanh form, through an fp16 table),
    pooling_type = 1 (mean: one vector a sequence; the check asks for every token instead).
  - the vocabulary is synthetic: GPT-2 style BPE (tokenizer.ggml.model "gpt2", pre-tokenizer
    "modern-bert") with the 256 byte tokens, made-up pieces, ModernBERT's special ids
    ([UNK] 50280, [CLS] 50281, [SEP] 50282, [PAD] 50283, [MASK] 50284) and no merges: only the
    ids matter here.
"""
import os
import struct

import numpy as np

from w2_gguf import ALIGN, ARR, BOOL, F32, FILE_TYPE, GGML_F32, GGML_Q8_0, I32, STR, U32, _kv, _str, q8_0
from workloads import W4

ARCH = "modern-bert"
NORMAL, CONTROL = 1, 3  # llama_token_type


def _byte_chars():
    """GPT-2's byte-level alphabet: printable Latin-1 bytes stand for themselves, the other 68
    bytes for U+0100 onwards, in byte order."""
    keep = set(range(0x21, 0x7F)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
    out, extra = [], 0
    for b in range(256):
        if b in keep:
            out.append(chr(b))
        else:
            out.append(chr(0x100 + extra))
            extra += 1
    return out


def _vocab():
    c = W4
    tokens = _byte_chars()
    tokens += ["\u0120w%d" % i for i in range(c["unk"] - len(tokens))]
    tokens += ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
    tokens += ["[unused%d]" % i for i in range(c["vocab"] - len(tokens))]
    types = [NORMAL] * c["unk"] + [CONTROL] * (c["vocab"] - c["unk"])
    assert len(tokens) == c["vocab"] and tokens[c["cls"]] == "[CLS]" and tokens[c["mask"]] == "[MASK]"
    return tokens, types


def tensors(weights):
    """(GGUF name, float32 [rows, cols] or [n]) in llama.cpp's modern-bert layout."""
    m = lambda n: weights["model." + n + ".weight"]  # noqa: E731
    out = [("token_embd.weight", m("embeddings.tok_embeddings")),
           ("token_embd_norm.weight", m("embeddings.norm"))]
    for i in range(W4["layers"]):
        p, b = f"layers.{i}.", f"blk.{i}."
        if i > 0:
            out.append((b + "attn_norm.weight", m(p + "attn_norm")))
        out += [(b + "attn_qkv.weight", m(p + "attn.Wqkv")),
                (b + "attn_output.weight", m(p + "attn.Wo")),
                (b + "ffn_norm.weight", m(p + "mlp_norm")),
                (b + "ffn_up.weight", m(p + "mlp.Wi")),
                (b + "ffn_down.weight", m(p + "mlp.Wo"))]
    return out + [("output_norm.weight", m("final_norm"))]


def write_w4_gguf(path, weights, kind="q8_0"):
    c = W4
    tokens, types = _vocab()
    a = lambda k: f"{ARCH}.{k}"  # noqa: E731
    meta = [
        _kv("general.architecture", STR, ARCH),
        _kv("general.name", STR, "octet-bench-w4"),
        _kv("general.file_type", U32, FILE_TYPE[kind]),
        _kv("general.quantization_version", U32, 2),
        _kv("general.alignment", U32, ALIGN),
        _kv(a("context_length"), U32, c["max_pos"]),
        _kv(a("embedding_length"), U32, c["d"]),
        _kv(a("block_count"), U32, c["layers"]),
        _kv(a("feed_forward_length"), U32, c["ff"]),
        _kv(a("attention.head_count"), U32, c["heads"]),
        _kv(a("attention.layer_norm_epsilon"), F32, c["eps"]),
        _kv(a("attention.causal"), BOOL, False),
        _kv(a("attention.sliding_window"), U32, c["window"]),
        _kv(a("attention.sliding_window_pattern"), U32, c["global_every"]),
        _kv(a("rope.freq_base"), F32, c["global_theta"]),
        _kv(a("rope.freq_base_swa"), F32, c["local_theta"]),
        _kv(a("rope.scaling.type"), STR, "none"),
        _kv(a("pooling_type"), U32, 1),
        _kv(a("hidden_activation"), STR, "gelu"),
        _kv(a("vocab_size"), U32, c["vocab"]),
        _kv("tokenizer.ggml.model", STR, "gpt2"),
        _kv("tokenizer.ggml.pre", STR, "modern-bert"),
        _kv("tokenizer.ggml.tokens", ARR, (STR, tokens)),
        _kv("tokenizer.ggml.token_type", ARR, (I32, types)),
        _kv("tokenizer.ggml.merges", ARR, (STR, [])),
        _kv("tokenizer.ggml.bos_token_id", U32, c["cls"]),
        _kv("tokenizer.ggml.eos_token_id", U32, c["sep"]),
        _kv("tokenizer.ggml.seperator_token_id", U32, c["sep"]),  # llama.cpp's spelling
        _kv("tokenizer.ggml.cls_token_id", U32, c["cls"]),
        _kv("tokenizer.ggml.padding_token_id", U32, c["pad"]),
        _kv("tokenizer.ggml.unknown_token_id", U32, c["unk"]),
        _kv("tokenizer.ggml.mask_token_id", U32, c["mask"]),
        _kv("tokenizer.ggml.add_bos_token", BOOL, True),
        _kv("tokenizer.ggml.add_eos_token", BOOL, True),
        _kv("tokenizer.ggml.add_sep_token", BOOL, True),
    ]
    infos, blobs, off = [], [], 0
    tl = tensors(weights)
    for name, arr in tl:
        arr = np.ascontiguousarray(arr, dtype=np.float32)
        if arr.ndim == 1 or kind == "f32":
            t, data = GGML_F32, arr.tobytes()
        else:
            t, data = GGML_Q8_0, q8_0(arr)
        dims = list(reversed(arr.shape))  # ggml ne[0] is the innermost dimension
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
