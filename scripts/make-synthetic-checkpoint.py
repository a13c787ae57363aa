#!/usr/bin/env python3
"""Writes a Llama-shaped Hugging Face checkpoint with random weights
(config.json + model.safetensors), to measure the converter on real sizes
without downloading one.

    scripts/make-synthetic-checkpoint.py OUT_DIR                 # ~1.1 B parameters, BF16
    scripts/make-synthetic-checkpoint.py OUT_DIR --hidden 512 --layers 8 --intermediate 1536

The default shape is TinyLlama-1.1B's (hidden 2048, 22 layers, intermediate
5632, 32 heads, 4 KV heads, vocabulary 32000, untied head). Weights are
normal(0, 0.02), norms 1 + normal(0, 0.02), from --seed; each tensor is made
and written on its own, so the script holds one tensor at a time. The
safetensors layout is written here directly (8-byte header length, JSON
header, data), so only numpy is needed.
"""

import argparse
import json
import os
import struct

import numpy as np


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--layers", type=int, default=22)
    p.add_argument("--intermediate", type=int, default=5632)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, default=4)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--positions", type=int, default=2048)
    p.add_argument("--dtype", choices=["F32", "F16", "BF16"], default="BF16")
    p.add_argument("--tied", action="store_true", help="tie the LM head to the embedding")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    if a.hidden % a.heads or a.heads % a.kv_heads:
        p.error("hidden must divide by heads, heads by kv-heads")
    head_dim = a.hidden // a.heads
    kv = a.kv_heads * head_dim

    tensors = [("model.embed_tokens.weight", (a.vocab, a.hidden), "matrix")]
    for i in range(a.layers):
        pre = f"model.layers.{i}."
        tensors += [
            (pre + "input_layernorm.weight", (a.hidden,), "norm"),
            (pre + "self_attn.q_proj.weight", (a.hidden, a.hidden), "matrix"),
            (pre + "self_attn.k_proj.weight", (kv, a.hidden), "matrix"),
            (pre + "self_attn.v_proj.weight", (kv, a.hidden), "matrix"),
            (pre + "self_attn.o_proj.weight", (a.hidden, a.hidden), "matrix"),
            (pre + "post_attention_layernorm.weight", (a.hidden,), "norm"),
            (pre + "mlp.gate_proj.weight", (a.intermediate, a.hidden), "matrix"),
            (pre + "mlp.up_proj.weight", (a.intermediate, a.hidden), "matrix"),
            (pre + "mlp.down_proj.weight", (a.hidden, a.intermediate), "matrix"),
        ]
    tensors.append(("model.norm.weight", (a.hidden,), "norm"))
    if not a.tied:
        tensors.append(("lm_head.weight", (a.vocab, a.hidden), "matrix"))

    size = {"F32": 4, "F16": 2, "BF16": 2}[a.dtype]
    header, offset, params = {}, 0, 0
    for name, shape, _ in tensors:
        n = int(np.prod(shape))
        params += n
        header[name] = {"dtype": a.dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + n * size]}
        offset += n * size
    header["__metadata__"] = {"format": "pt", "generator": "scripts/make-synthetic-checkpoint.py",
                              "seed": str(a.seed)}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)

    os.makedirs(a.out, exist_ok=True)
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": a.hidden,
        "intermediate_size": a.intermediate,
        "num_hidden_layers": a.layers,
        "num_attention_heads": a.heads,
        "num_key_value_heads": a.kv_heads,
        "vocab_size": a.vocab,
        "max_position_embeddings": a.positions,
        "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0,
        "hidden_act": "silu",
        "tie_word_embeddings": a.tied,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "torch_dtype": {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[a.dtype],
    }
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)

    rng = np.random.default_rng(a.seed)
    with open(os.path.join(a.out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for name, shape, kind in tensors:
            w = rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)
            if kind == "norm":
                w += np.float32(1)
            if a.dtype == "F16":
                data = w.astype(np.float16)
            elif a.dtype == "BF16":  # round to nearest even on the upper 16 bits
                bits = w.view(np.uint32)
                data = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
            else:
                data = w
            f.write(data.tobytes())
            del w, data
    print(f"{a.out}: {params:,} parameters, {a.dtype}, {offset:,} bytes of weights; "
          f"largest fp32 tensor {max(int(np.prod(s)) for _, s, _ in tensors) * 4:,} bytes")


if __name__ == "__main__":
    main()
