#!/usr/bin/python3
"""Correctness of llama.cpp on W4 and W3 (the GGUFs of w4_gguf.py, w3_gguf.py) against torch fp32
(make_workloads.py).

usage: /usr/bin/python3 check_llamacpp.py w4 LLAMA_EMBD MODELS_DIR [THREADS=2]
       /usr/bin/python3 check_llamacpp.py w3 LLAMA_LOGITS MODELS_DIR [THREADS=2]
LLAMA_EMBD and LLAMA_LOGITS are llama_embd.cpp and llama_logits.cpp built against the llama.cpp
library that llama-bench is built from.

W4: on its 512 check ids (w4-ids.txt), for w4-q8_0.gguf (the timed one) and w4-f32.gguf:
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

W3: every position's logits [130, vocab] on w3-ids.txt against torch's (w3-ref.bin): relative L2
error, cosine of the whole, lowest per-position cosine, share of positions whose top-1 id is
torch's; for w3-f32.gguf in one batch ("llamacpp-f32") and with the first W3["n_split"] ids in a
batch then one llama_decode per id through llama.cpp's KV cache and recurrent states
("llamacpp-f32-split"), for w3-q8_0.gguf (the timed one) in one batch. Read against
w3-variants.json (the norms without their +1, the gated norm with one, query and gate not
interleaved, adjacent-pair RoPE, conv taps reversed, A_log taken for A, the state read before
the write): the f32 runs pass below F32_BOUND and half the nearest wrong model, Q8_0 below half
the nearest (W3's random weights amplify quantization noise: a bound like W4's would not hold).
Prints one JSON line per run; exit status 1 when one does not pass.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

QUANT_BOUND = 0.05  # relative L2 error; Q8_0 and octet int8 are near 0.01-0.02 on W4
F32_BOUND = 0.01  # W3's f32 GGUF: llama.cpp's F16 KV cache and its own kernels, ~3e-4 seen


def run(exe, gguf, ids_path, threads, pooling, tmp):
    out = os.path.join(tmp, f"out-{pooling}.bin")
    subprocess.run([exe, gguf, ids_path, out, str(threads), pooling], check=True, stdout=subprocess.DEVNULL)
    return np.fromfile(out, "<f4").astype(np.float64)


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("w3", "w4"):
        sys.exit(__doc__.split("\n\n")[1])
    exe, models = sys.argv[2], sys.argv[3]
    threads = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    return check_w3(exe, models, threads) if sys.argv[1] == "w3" else check_w4(exe, models, threads)


def compare_logits(y, ref):
    """Relative L2 error, cosine, lowest per-position cosine, top-1 agreement of [n, vocab]."""
    per_pos = (y * ref).sum(1) / np.linalg.norm(y, axis=1) / np.linalg.norm(ref, axis=1)
    return {"rel_err_vs_torch_fp32": float(f"{np.linalg.norm(y - ref) / np.linalg.norm(ref):.3g}"),
            "cosine": float(f"{(y * ref).sum() / np.linalg.norm(y) / np.linalg.norm(ref):.6f}"),
            "min_position_cosine": float(f"{per_pos.min():.6f}"),
            "top1_equal": round(float((y.argmax(1) == ref.argmax(1)).mean()), 4)}


def check_w3(exe, models, threads):
    import workloads as wl
    ids_path = os.path.join(models, "w3-ids.txt")
    n = len(open(ids_path).read().strip().split(","))
    ref = np.fromfile(os.path.join(models, "w3-ref.bin"), "<f4").astype(np.float64).reshape(n, -1)
    wrong = {k: v["rel_err"] for k, v in json.load(open(os.path.join(models, "w3-variants.json"))).items()}
    nearest = min(wrong, key=wrong.get)
    failed = False
    for engine, kind, n_first in (("llamacpp-f32", "f32", n), ("llamacpp-f32-split", "f32", min(wl.W3["n_split"], n)),
                                  ("llamacpp-q8_0", "q8_0", n)):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "logits.bin")
            cmd = [exe, os.path.join(models, f"w3-{kind}.gguf"), ids_path, out, str(threads), str(n_first)]
            p = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True)
            y = np.fromfile(out, "<f4").astype(np.float64).reshape(n, -1)
        timing = json.loads(p.stdout.strip().splitlines()[-1])
        bound = 0.5 * wrong[nearest] if kind == "q8_0" else min(F32_BOUND, 0.5 * wrong[nearest])
        d = {"check": "w3", "engine": engine, "seq": n, "n_first": n_first, **compare_logits(y, ref),
             "pass_below": float(f"{bound:.3g}"), "smallest_wrong_model_rel_err": wrong[nearest],
             "nearest_wrong_model": nearest}
        d["ok"] = d["rel_err_vs_torch_fp32"] < bound
        d.update(prefill_ms=timing["prefill_ms"], decode_ms=timing["decode_ms"])
        failed |= not d["ok"]
        print(json.dumps(d), flush=True)
    return 1 if failed else 0


def check_w4(exe, models, threads):
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
