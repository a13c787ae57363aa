#!/usr/bin/python3
"""Correctness of llama.cpp on W4 (the GGUFs of w4_gguf.py) against torch fp32 (make_workloads.py).

usage: /usr/bin/python3 check_llamacpp.py LLAMA_EMBD MODELS_DIR [THREADS=2]
LLAMA_EMBD is llama_embd.cpp built against the llama.cpp library that llama-bench is built from.
On W4's 512 check ids (w4-ids.txt), for w4-q8_0.gguf (the timed one) and w4-f32.gguf:
  every token's final hidden state [512, 768] (pooling none) against torch's (w4-ref.bin):
  relative L2 error, cosine of the whole, lowest per-token cosine; for Q8_0 also the mean-pooled
  vector (the GGUF's own pooling, what llama-bench computes) against the mean of torch's.
The errors are read against w4-variants.json: how far deliberately wrong torch models (all layers
global, all local, a band one key narrower, RoPE thetas swapped, GeGLU halves swapped) land from
the right one. The f32 GGUF checks the file's layout and llama.cpp's reading of it: it passes
("ok") when its error is below half the smallest of those. The Q8_0 GGUF is the same file with
Q8_0 matrices; its error is quantization noise (octet int8's is of the same order), and it passes
below QUANT_BOUND. tanh_gelu (llama.cpp's own GELU form) is listed apart: a difference expected of
llama.cpp, not an error in the file.
Prints one JSON line per GGUF; exit status 1 when one does not pass.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

QUANT_BOUND = 0.05  # relative L2 error; Q8_0 and octet int8 are near 0.01-0.02 on W4


def run(exe, gguf, ids_path, threads, pooling, tmp):
    out = os.path.join(tmp, f"out-{pooling}.bin")
    subprocess.run([exe, gguf, ids_path, out, str(threads), pooling], check=True, stdout=subprocess.DEVNULL)
    return np.fromfile(out, "<f4").astype(np.float64)


def main():
    exe, models = sys.argv[1], sys.argv[2]
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    ids_path = os.path.join(models, "w4-ids.txt")
    n = len(open(ids_path).read().strip().split(","))
    ref = np.fromfile(os.path.join(models, "w4-ref.bin"), "<f4").astype(np.float64).reshape(n, -1)
    variants = json.load(open(os.path.join(models, "w4-variants.json")))
    wrong = {k: v["rel_err"] for k, v in variants.items() if k != "tanh_gelu"}
    failed = False
    for kind in ("q8_0", "f32"):
        with tempfile.TemporaryDirectory() as tmp:
            y = run(exe, os.path.join(models, f"w4-{kind}.gguf"), ids_path, threads, "none", tmp).reshape(n, -1)
            pooled = run(exe, os.path.join(models, f"w4-{kind}.gguf"), ids_path, threads, "mean", tmp) \
                if kind == "q8_0" else None
        rel = float(np.linalg.norm(y - ref) / np.linalg.norm(ref))
        per_token = (y * ref).sum(1) / np.linalg.norm(y, axis=1) / np.linalg.norm(ref, axis=1)
        out = {"check": "w4", "engine": f"llamacpp-{kind}", "seq": n, "rel_err_vs_torch_fp32": float(f"{rel:.3g}"),
               "cosine": float(f"{(y * ref).sum() / np.linalg.norm(y) / np.linalg.norm(ref):.6f}"),
               "min_token_cosine": float(f"{per_token.min():.6f}"),
               "smallest_wrong_model_rel_err": min(wrong.values()),
               "nearest_wrong_model": min(wrong, key=wrong.get),
               "tanh_gelu_rel_err": variants.get("tanh_gelu", {}).get("rel_err"),
               "ok": rel < (QUANT_BOUND if kind == "q8_0" else 0.5 * min(wrong.values()))}
        if pooled is not None:
            m = ref.mean(0)
            out["pooled_mean_cosine"] = float(f"{pooled @ m / np.linalg.norm(pooled) / np.linalg.norm(m):.6f}")
        failed |= not out["ok"]
        print(json.dumps(out), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
