#!/usr/bin/python3
"""Make the benchmark workloads of scripts/bench-peers.sh in one folder (about a minute).

usage: /usr/bin/python3 make_workloads.py OUTDIR

Weights are drawn once (workloads.py, fixed seeds) and written as Hugging Face checkpoints; every
other file is derived from those same tensors:
  w1-hf/, w2-hf/                   config.json + model.safetensors (float32): octet-convert's input
  w1-ids.txt                       W1's 128 token ids (octet's input)
  w1-input.bin                     float32 [1, 128, 768]: BertEmbeddings(ids), the peers' W1 input
  w1-ref.bin                       float32 [1, 128, 768]: torch fp32 last hidden state
  w1-int8-mmi.onnx, w1-int8-fused.onnx   ONNX Runtime models (w1_onnx.py)
  w2-q8_0.gguf                     llama.cpp model (w2_gguf.py)
  w2-prompt.txt, w2-ref.json       W2's 128-token prompt and torch fp32's first 16 greedy tokens
                                   (+ each step's top-1 minus top-2 logit)
  w4-hf/                           W4 (ModernBERT-base shape) checkpoint
  w4-q8_0.gguf, w4-f32.gguf        llama.cpp models (w4_gguf.py): Q8_0 is timed, f32 only checked
  w4-ids.txt, w4-ref.bin           W4's 512 check ids and torch fp32's last hidden state
                                   float32 [512, 768] on them
  w4-variants.json                 how far deliberately wrong torch models land from w4-ref.bin
                                   (relative L2 error, cosine): what a check's error is measured
                                   against
"""
import json
import os
import sys
import time

import numpy as np
import onnx
import torch

import w1_onnx
import w2_gguf
import w4_gguf
import workloads as wl


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    t0 = time.time()
    torch.set_num_threads(os.cpu_count() or 1)

    w1 = wl.make_w1_weights()
    wl.save_checkpoint(os.path.join(out, "w1-hf"), wl.w1_config(), w1)
    tm = wl.torch_modules()
    ids = wl.w1_ids()
    x = tm["bert_embed"](w1, ids)
    with torch.inference_mode():
        y = tm["BertEncoder"](w1)(x)
    with open(os.path.join(out, "w1-ids.txt"), "w") as f:
        f.write(",".join(map(str, ids)) + "\n")
    x.numpy().astype("<f4").tofile(os.path.join(out, "w1-input.bin"))
    y.numpy().astype("<f4").tofile(os.path.join(out, "w1-ref.bin"))
    onnx.save(w1_onnx.build_mmi(w1), os.path.join(out, "w1-int8-mmi.onnx"))
    onnx.save(w1_onnx.build_fused(w1), os.path.join(out, "w1-int8-fused.onnx"))
    print(f"W1: checkpoint, reference and ONNX models in {time.time() - t0:.0f} s", flush=True)

    t1 = time.time()
    w2 = wl.make_w2_weights()
    wl.save_checkpoint(os.path.join(out, "w2-hf"), wl.w2_config(), w2)
    w2_gguf.check_rope_permutation(w2)
    w2_gguf.write_w2_gguf(os.path.join(out, "w2-q8_0.gguf"), w2, "q8_0")
    prompt = wl.w2_prompt()
    ref, margins = tm["greedy"](tm["Llama"](w2), prompt, 16)
    with open(os.path.join(out, "w2-prompt.txt"), "w") as f:
        f.write(",".join(map(str, prompt)) + "\n")
    with open(os.path.join(out, "w2-ref.json"), "w") as f:
        json.dump({"greedy_first16": ref, "top2_margins": [round(m, 4) for m in margins]}, f)
    print(f"W2: checkpoint, GGUF and reference tokens in {time.time() - t1:.0f} s "
          f"(torch fp32 greedy: {ref})", flush=True)

    t2 = time.time()
    w4 = wl.make_w4_weights()
    wl.save_checkpoint(os.path.join(out, "w4-hf"), wl.w4_config(), w4)
    for kind in ("q8_0", "f32"):
        w4_gguf.write_w4_gguf(os.path.join(out, f"w4-{kind}.gguf"), w4, kind)
    ids = wl.w4_ids(wl.W4["check_seq"])
    with torch.inference_mode():
        ref = tm["ModernBert"](w4)(torch.tensor([ids]))[0].double()
        variants = {}
        for v in ("all_global", "all_local", "band_63", "thetas_swapped", "glu_halves_swapped",
                  "tanh_gelu"):
            y = tm["ModernBert"](w4, v)(torch.tensor([ids]))[0].double()
            variants[v] = {"rel_err": round(float((y - ref).norm() / ref.norm()), 5),
                           "cosine": round(float((y * ref).sum() / y.norm() / ref.norm()), 6)}
    with open(os.path.join(out, "w4-ids.txt"), "w") as f:
        f.write(",".join(map(str, ids)) + "\n")
    ref.float().numpy().astype("<f4").tofile(os.path.join(out, "w4-ref.bin"))
    with open(os.path.join(out, "w4-variants.json"), "w") as f:
        json.dump(variants, f)
    print(f"W4: checkpoint, GGUFs and reference in {time.time() - t2:.0f} s "
          f"(wrong models' relative error: {variants})", flush=True)


if __name__ == "__main__":
    main()
