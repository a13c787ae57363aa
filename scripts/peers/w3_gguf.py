"""W3 as a GGUF v3 file for llama.cpp's `qwen35` architecture, numpy only (the writer of
w2_gguf.py: the same header, metadata and Q8_0 blocks), streamed tensor by tensor.

write_w3_gguf(path, weights, config, kind) with kind f32 (checked only) or q8_0 (timed: every
matrix, the token table included; the norms, the conv taps, ssm_a and ssm_dt stay F32). What
llama.cpp's Qwen3.5 reads (src/models/qwen35.cpp, src/llama-model.cpp and conversion/qwen.py's
Qwen3_5TextModel / Qwen3NextModel in the llama.cpp that node-llama-cpp 3.21.1 bundles):
  - tensors token_embd, output_norm (no output: the head is tied to token_embd), then per layer
    attn_norm, post_attention_norm, ffn_{gate,up,down} and
      linear-attention layers: attn_qkv (in_proj_qkv, rows q, k, v as in HF), attn_gate
        (in_proj_z), ssm_beta (in_proj_b), ssm_alpha (in_proj_a), ssm_conv1d (conv1d squeezed to
        [channels, taps]: ne = [4, channels], tap 3 on the current token as in HF), ssm_dt.bias
        (dt_bias), ssm_a (= -exp(A_log), computed in float64: llama.cpp multiplies softplus(alpha
        + dt) by it directly), ssm_norm (the gated norm's weight as stored), ssm_out (out_proj);
        with as many value heads as key heads there is no head reordering;
      full-attention layers: attn_q (q_proj as stored: per head 256 query rows then 256 gate
        rows, which qwen35.cpp views interleaved), attn_k, attn_v, attn_output, attn_q_norm,
        attn_k_norm.
  - the zero-centred norms (input, post-attention, final, Q/K) are written as 1 + weight:
    llama.cpp's RMS norm multiplies by the stored weight; the gated norm is not shifted.
  - RoPE: rope.dimension_count 64 (head_dim x partial_rotary_factor), rope.dimension_sections
    [11, 11, 10, 0] (interleaved M-RoPE: with text positions every section sees the same
    position, so it is plain rotate-half RoPE, as in HF); full_attention_interval 4 marks the
    recurrent layers; ssm.{conv_kernel, state_size (key head dim), group_count (key heads),
    time_step_rank (value heads), inner_size (value heads x value head dim)}.
  - the vocabulary is synthetic: GPT-2 style BPE (pre-tokenizer "qwen35") with the 256 byte
    tokens, made-up pieces, <|endoftext|> last (bos = eos = padding, not added) and no merges:
    only the ids matter here.
"""
import os
import struct

import numpy as np

from w2_gguf import ALIGN, ARR, BOOL, F32, FILE_TYPE, GGML_F32, GGML_Q8_0, I32, STR, U32, _kv, _str, q8_0
from w4_gguf import _byte_chars

ARCH = "qwen35"
NORMAL, CONTROL = 1, 3  # llama_token_type
ROWS_PER_CHUNK = 16384  # rows quantized at a time (the token table is 248320 x 1024)


def _vocab(n):
    tokens = _byte_chars()
    tokens += ["\u0120w%d" % i for i in range(n - 1 - len(tokens))]
    tokens.append("<|endoftext|>")
    return tokens, [NORMAL] * (n - 1) + [CONTROL]


def tensors(weights, config):
    """(GGUF name, function returning the float32 array) in llama.cpp's qwen35 layout and order."""
    m = lambda n: (lambda: weights["model." + n])  # noqa: E731
    plus1 = lambda n: (lambda: weights["model." + n] + np.float32(1))  # noqa: E731
    out = [("token_embd.weight", m("embed_tokens.weight")), ("output_norm.weight", plus1("norm.weight"))]
    for i, kind in enumerate(config["layer_types"]):
        p, b = f"layers.{i}.", f"blk.{i}."
        out.append((b + "attn_norm.weight", plus1(p + "input_layernorm.weight")))
        if kind == "linear_attention":
            a = p + "linear_attn."
            out += [(b + "attn_qkv.weight", m(a + "in_proj_qkv.weight")),
                    (b + "attn_gate.weight", m(a + "in_proj_z.weight")),
                    (b + "ssm_beta.weight", m(a + "in_proj_b.weight")),
                    (b + "ssm_alpha.weight", m(a + "in_proj_a.weight")),
                    (b + "ssm_conv1d.weight", lambda a=a: weights["model." + a + "conv1d.weight"][:, 0, :]),
                    (b + "ssm_dt.bias", m(a + "dt_bias")),
                    (b + "ssm_a", lambda a=a: (-np.exp(np.asarray(weights["model." + a + "A_log"], np.float64)))
                     .astype(np.float32)),
                    (b + "ssm_norm.weight", m(a + "norm.weight")),
                    (b + "ssm_out.weight", m(a + "out_proj.weight"))]
        else:
            a = p + "self_attn."
            out += [(b + "attn_q.weight", m(a + "q_proj.weight")),
                    (b + "attn_k.weight", m(a + "k_proj.weight")),
                    (b + "attn_v.weight", m(a + "v_proj.weight")),
                    (b + "attn_output.weight", m(a + "o_proj.weight")),
                    (b + "attn_q_norm.weight", plus1(a + "q_norm.weight")),
                    (b + "attn_k_norm.weight", plus1(a + "k_norm.weight"))]
        out += [(b + "post_attention_norm.weight", plus1(p + "post_attention_layernorm.weight")),
                (b + "ffn_gate.weight", m(p + "mlp.gate_proj.weight")),
                (b + "ffn_up.weight", m(p + "mlp.up_proj.weight")),
                (b + "ffn_down.weight", m(p + "mlp.down_proj.weight"))]
    return out


def write_w3_gguf(path, weights, config, kind="q8_0"):
    c = config
    eot = c["vocab_size"] - 1
    tokens, types = _vocab(c["vocab_size"])
    a = lambda k: f"{ARCH}.{k}"  # noqa: E731
    rope = c["rope_parameters"]
    meta = [
        _kv("general.architecture", STR, ARCH),
        _kv("general.name", STR, "octet-bench-w3"),
        _kv("general.file_type", U32, FILE_TYPE[kind]),
        _kv("general.quantization_version", U32, 2),
        _kv("general.alignment", U32, ALIGN),
        _kv(a("context_length"), U32, c["max_position_embeddings"]),
        _kv(a("embedding_length"), U32, c["hidden_size"]),
        _kv(a("block_count"), U32, c["num_hidden_layers"]),
        _kv(a("feed_forward_length"), U32, c["intermediate_size"]),
        _kv(a("attention.head_count"), U32, c["num_attention_heads"]),
        _kv(a("attention.head_count_kv"), U32, c["num_key_value_heads"]),
        _kv(a("attention.key_length"), U32, c["head_dim"]),
        _kv(a("attention.value_length"), U32, c["head_dim"]),
        _kv(a("attention.layer_norm_rms_epsilon"), F32, c["rms_norm_eps"]),
        _kv(a("rope.freq_base"), F32, rope["rope_theta"]),
        _kv(a("rope.dimension_count"), U32, int(c["head_dim"] * rope["partial_rotary_factor"])),
        _kv(a("rope.dimension_sections"), ARR, (I32, list(rope["mrope_section"]) + [0])),
        _kv(a("ssm.conv_kernel"), U32, c["linear_conv_kernel_dim"]),
        _kv(a("ssm.state_size"), U32, c["linear_key_head_dim"]),
        _kv(a("ssm.group_count"), U32, c["linear_num_key_heads"]),
        _kv(a("ssm.time_step_rank"), U32, c["linear_num_value_heads"]),
        _kv(a("ssm.inner_size"), U32, c["linear_value_head_dim"] * c["linear_num_value_heads"]),
        _kv(a("full_attention_interval"), U32, c["full_attention_interval"]),
        _kv(a("vocab_size"), U32, c["vocab_size"]),
        _kv("tokenizer.ggml.model", STR, "gpt2"),
        _kv("tokenizer.ggml.pre", STR, ARCH),
        _kv("tokenizer.ggml.tokens", ARR, (STR, tokens)),
        _kv("tokenizer.ggml.token_type", ARR, (I32, types)),
        _kv("tokenizer.ggml.merges", ARR, (STR, [])),
        _kv("tokenizer.ggml.bos_token_id", U32, eot),
        _kv("tokenizer.ggml.eos_token_id", U32, eot),
        _kv("tokenizer.ggml.padding_token_id", U32, eot),
        _kv("tokenizer.ggml.add_bos_token", BOOL, False),
    ]
    # Pass 1: names, shapes, types and offsets (from the arrays' shapes: nothing converted yet).
    tl = tensors(weights, config)
    infos, plan, off = [], [], 0
    for name, get in tl:
        shape = get().shape  # views or small arrays: cheap
        quant = kind == "q8_0" and len(shape) == 2 and shape[1] % 32 == 0
        n = int(np.prod(shape))
        nbytes = n // 32 * 34 if quant else 4 * n
        dims = list(reversed(shape))  # ggml ne[0] is the innermost dimension
        infos.append(_str(name) + struct.pack("<I", len(dims)) +
                     b"".join(struct.pack("<Q", d) for d in dims) +
                     struct.pack("<IQ", GGML_Q8_0 if quant else GGML_F32, off))
        plan.append((get, quant, nbytes))
        off += nbytes + (-nbytes) % ALIGN
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tl), len(meta)) + b"".join(meta) + b"".join(infos)
    head += b"\0" * ((-len(head)) % ALIGN)
    # Pass 2: the data, a tensor (or ROWS_PER_CHUNK rows of it) at a time.
    with open(path + ".tmp", "wb") as f:
        f.write(head)
        for get, quant, nbytes in plan:
            arr = get()
            for r in range(0, arr.shape[0], ROWS_PER_CHUNK) if arr.ndim == 2 else [None]:
                part = arr if r is None else arr[r:r + ROWS_PER_CHUNK]
                part = np.ascontiguousarray(part, dtype=np.float32)
                f.write(q8_0(part) if quant else part.tobytes())
            f.write(b"\0" * ((-nbytes) % ALIGN))
    os.replace(path + ".tmp", path)
