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


if __name__ == "__main__":
    main()
