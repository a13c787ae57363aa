#!/usr/bin/python3
"""Make the benchmark workloads of scripts/bench-peers.sh in one folder (W1, W2, W4: about a
minute; W3: 10 to 25 minutes and 7 GB).

usage: /usr/bin/python3 make_workloads.py OUTDIR [--workloads w1,w2,w4] [--w3-layers N] [--w3-vocab N]
  --workloads   which to make (default w1,w2,w4; W3 is opt-in: --workloads w3)
  --w3-layers, --w3-vocab   a reduced W3 (default 24 layers, vocab 248320): the same recipe with
                fewer layers (the pattern of three linear-attention layers then a full one kept)
                or a smaller vocabulary; the weights differ from the full W3's beyond the shape
                (one generator draws them all in order)

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
  w3-hf/                           W3 (Qwen3.5-0.8B text shape) checkpoint
  w3-f32.gguf, w3-q8_0.gguf        llama.cpp models (w3_gguf.py): Q8_0 is timed, f32 only checked
  w3-ids.txt                       W3's 130 check ids
  w3-ref.bin                       float32 [130, vocab]: torch fp32 logits of every position
                                   (tests/golden/ref_models/qwen3_5.py, one pass, chunks of 64)
  w3-ref.json                      torch fp32's 16 greedy tokens after the 130 ids through its
                                   cache (+ each step's top-1 minus top-2 logit), layers, vocab
  w3-variants.json                 how far deliberately wrong torch models land from w3-ref.bin
                                   (relative L2 error, cosine, share of positions whose top-1
                                   is the same): what a check's error is read against
W3's files are made when missing, each from w3-hf/ (kept when its config.json is the one asked
for; when it is not, every w3-* file, octet's included, is removed and made again).
"""
import argparse
import glob
import json
import os
import shutil
import time

import numpy as np
import onnx
import torch

import w1_onnx
import w2_gguf
import w3_gguf
import w4_gguf
import workloads as wl


def main():
    ap = argparse.ArgumentParser(description="Make bench-peers.sh's workloads in OUTDIR.")
    ap.add_argument("out", metavar="OUTDIR")
    ap.add_argument("--workloads", default="w1,w2,w4", help="comma-separated subset of w1,w2,w3,w4")
    ap.add_argument("--w3-layers", type=int, default=wl.W3["layers"])
    ap.add_argument("--w3-vocab", type=int, default=wl.W3["vocab"])
    args = ap.parse_args()
    todo = set(args.workloads.replace(" ", ",").split(",")) - {""}
    if todo - {"w1", "w2", "w3", "w4"}:
        ap.error(f"unknown workloads {sorted(todo - {'w1', 'w2', 'w3', 'w4'})}")
    out = args.out
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(os.cpu_count() or 1)
    if todo & {"w1", "w2", "w4"}:
        make_w1_w2_w4(out, todo)
    if "w3" in todo:
        make_w3(out, args.w3_layers, args.w3_vocab)


def make_w1_w2_w4(out, todo):
    if not {"w1", "w2", "w4"} <= todo:
        raise SystemExit("W1, W2 and W4 are made together (one recipe)")
    t0 = time.time()

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


def _write(path, write):
    """write(tmp_path), then the file takes its name: no half-written file on an interrupt."""
    write(path + ".tmp")
    os.replace(path + ".tmp", path)


def make_w3(out, layers, vocab):
    if layers < 1 or not 257 < vocab <= wl.W3["vocab"]:
        raise SystemExit("--w3-layers must be >= 1 and --w3-vocab 258 to 248320")
    t0 = time.time()
    hf, config = os.path.join(out, "w3-hf"), wl.w3_config(layers, vocab)
    want = json.dumps(config, indent=2)
    cfg = os.path.join(hf, "config.json")
    if os.path.exists(cfg) and open(cfg).read() != want:
        print(f"W3: {cfg} is another shape: removing the W3 files", flush=True)
        shutil.rmtree(hf)
        for f in glob.glob(os.path.join(out, "w3-*")):
            os.remove(f)
    if not os.path.exists(os.path.join(hf, "model.safetensors")):
        for f in glob.glob(os.path.join(out, "w3-*")):  # everything else comes from the checkpoint
            if f != hf:
                os.remove(f)
        wl.save_checkpoint(hf, config, wl.make_w3_weights(layers, vocab))
        print(f"W3: checkpoint ({layers} layers, vocab {vocab}) in {time.time() - t0:.0f} s", flush=True)
    w = wl.load_checkpoint(hf)
    for kind in ("f32", "q8_0"):
        path = os.path.join(out, f"w3-{kind}.gguf")
        if not os.path.exists(path):
            t = time.time()
            w3_gguf.write_w3_gguf(path, w, config, kind)
            print(f"W3: {os.path.basename(path)} in {time.time() - t:.0f} s", flush=True)
    names = ("w3-ids.txt", "w3-ref.bin", "w3-ref.json", "w3-variants.json")
    if all(os.path.exists(os.path.join(out, n)) for n in names):
        return
    t = time.time()
    ids = wl.w3_ids(wl.W3["n_check"], vocab)
    model = wl.W3Torch(w, config)
    ref = model.logits(ids).double()
    tokens, margins = model.greedy(ids, wl.W3["n_gen"])
    del model
    top1 = ref.argmax(-1)
    variants = {}
    for v in wl.W3_VARIANTS:
        y = wl.W3Torch(w, config, v).logits(ids).double()
        variants[v] = {"rel_err": round(float((y - ref).norm() / ref.norm()), 5),
                       "cosine": round(float((y * ref).sum() / y.norm() / ref.norm()), 6),
                       "top1_equal": round(float((y.argmax(-1) == top1).double().mean()), 4)}
        print(f"W3: wrong model {v}: {variants[v]}", flush=True)
    _write(os.path.join(out, "w3-ref.bin"), lambda p: ref.float().numpy().astype("<f4").tofile(p))
    with open(os.path.join(out, "w3-ref.json"), "w") as f:
        json.dump({"greedy_first16": tokens, "top2_margins": [round(m, 4) for m in margins],
                   "layers": layers, "vocab": vocab}, f)
    with open(os.path.join(out, "w3-variants.json"), "w") as f:
        json.dump(variants, f)
    with open(os.path.join(out, "w3-ids.txt"), "w") as f:
        f.write(",".join(map(str, ids)) + "\n")
    print(f"W3: reference logits, greedy tokens and wrong models in {time.time() - t:.0f} s "
          f"(torch fp32 greedy: {tokens})", flush=True)


if __name__ == "__main__":
    main()
