#!/usr/bin/python3
"""Correctness of octet on the benchmark workloads, against torch fp32 (make_workloads.py's refs).

usage: /usr/bin/python3 check_octet.py OCTET_BINARY MODELS_DIR [WORKLOADS="w1 w2 w4"] (w3 too when named)
  W1: `octet run w1-{int8,fp32}.octet --ids <w1 ids> --dump`: cosine and relative L2 error of the
      last hidden state [128, 768] against torch's (the whole BertModel, embeddings included).
  W2: `octet run w2-{int8,fp32}.octet --ids <prompt> --generate 16 --temperature 0`: how many of
      the 16 greedy tokens equal torch fp32's, and torch's top-1 minus top-2 logit at the first
      difference (a small margin = a near tie, where any rounding can pick the other token).
  W4: `octet run w4-{int8,fp32}.octet --ids <w4 ids> --dump`: as W1, on the 512 check ids
      (last hidden state [512, 768]), + the lowest per-token cosine.
  W3: `octet run w3-{int8,fp32}.octet --ids <w3 ids> --dump`: every position's logits [130, vocab]
      against torch's (w3-ref.bin): relative L2 error, cosine, lowest per-position cosine, share
      of positions with torch's top-1; and `--generate 16 --temperature 0` after the 130 ids
      against torch fp32's greedy tokens (w3-ref.json), as W2; with the nearest deliberately
      wrong model's error (w3-variants.json) to read the error against.
Prints one JSON line per check.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def main():
    octet, models = sys.argv[1], sys.argv[2]
    workloads = (sys.argv[3] if len(sys.argv) > 3 else "w1 w2 w4").split()
    read = lambda f: open(os.path.join(models, f)).read().strip()  # noqa: E731
    if "w2" in workloads:
        ref2 = json.loads(read("w2-ref.json"))
        print(json.dumps({"check": "w2-ref", "engine": "torch-fp32", "tokens": ref2["greedy_first16"]}))
    for dtype in ("int8", "fp32"):
        if "w1" in workloads:
            check_w1(octet, models, dtype, read("w1-ids.txt"))
        if "w2" in workloads:
            check_w2(octet, models, dtype, read("w2-prompt.txt"), ref2)
        if "w4" in workloads:
            check_w4(octet, models, dtype, read("w4-ids.txt"))
        if "w3" in workloads:
            check_w3(octet, models, dtype, read("w3-ids.txt"))


def dump(octet, model, ids):
    """`octet run MODEL --ids IDS --dump`: the last hidden state, float64, [tokens, d]."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.npy")
        subprocess.run([octet, "run", model, "--ids", ids, "--dump", out], check=True, stdout=subprocess.DEVNULL)
        y = np.load(out).astype(np.float64)
    return y.reshape(-1, y.shape[-1])


def check_w4(octet, models, dtype, ids):
    y = dump(octet, os.path.join(models, f"w4-{dtype}.octet"), ids)
    ref = np.fromfile(os.path.join(models, "w4-ref.bin"), "<f4").astype(np.float64).reshape(y.shape)
    per_token = (y * ref).sum(1) / np.linalg.norm(y, axis=1) / np.linalg.norm(ref, axis=1)
    print(json.dumps({"check": "w4", "engine": f"octet-{dtype}", "seq": y.shape[0],
                      "cosine": float(f"{(y * ref).sum() / np.linalg.norm(y) / np.linalg.norm(ref):.6f}"),
                      "min_token_cosine": float(f"{per_token.min():.6f}"),
                      "rel_err_vs_torch_fp32": float(f"{np.linalg.norm(y - ref) / np.linalg.norm(ref):.3g}")}))


def greedy(octet, model, ids, n):
    """`octet run MODEL --ids IDS --generate n --temperature 0`: the generated ids."""
    p = subprocess.run([octet, "run", model, "--ids", ids, "--generate", str(n), "--temperature", "0"],
                       check=True, stdout=subprocess.PIPE, text=True)
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("sequence 0:")][0]
    return [int(t) for t in line.split("->")[1].split(",")]


def check_w3(octet, models, dtype, ids):
    model = os.path.join(models, f"w3-{dtype}.octet")
    y = dump(octet, model, ids)
    ref = np.fromfile(os.path.join(models, "w3-ref.bin"), "<f4").astype(np.float64).reshape(y.shape)
    ref3 = json.loads(open(os.path.join(models, "w3-ref.json")).read())
    wrong = {k: v["rel_err"] for k, v in json.loads(open(os.path.join(models, "w3-variants.json")).read()).items()}
    per_pos = (y * ref).sum(1) / np.linalg.norm(y, axis=1) / np.linalg.norm(ref, axis=1)
    want = ref3["greedy_first16"]
    toks = greedy(octet, model, ids, len(want))
    out = {"check": "w3", "engine": f"octet-{dtype}", "seq": y.shape[0],
           "rel_err_vs_torch_fp32": float(f"{np.linalg.norm(y - ref) / np.linalg.norm(ref):.3g}"),
           "cosine": float(f"{(y * ref).sum() / np.linalg.norm(y) / np.linalg.norm(ref):.6f}"),
           "min_position_cosine": float(f"{per_pos.min():.6f}"),
           "top1_equal": round(float((y.argmax(1) == ref.argmax(1)).mean()), 4),
           "greedy_equal": sum(a == b for a, b in zip(toks, want)), "greedy_of": len(want), "tokens": toks}
    first = next((i for i, (a, b) in enumerate(zip(toks, want)) if a != b), None)
    if first is not None:
        out.update(first_difference=first + 1, torch_top2_margin_there=ref3["top2_margins"][first])
    out.update(smallest_wrong_model_rel_err=min(wrong.values()), nearest_wrong_model=min(wrong, key=wrong.get))
    print(json.dumps(out), flush=True)


def check_w1(octet, models, dtype, ids):
    y = dump(octet, os.path.join(models, f"w1-{dtype}.octet"), ids).ravel()
    ref1 = np.fromfile(os.path.join(models, "w1-ref.bin"), "<f4").astype(np.float64)
    print(json.dumps({"check": "w1", "engine": f"octet-{dtype}",
                      "cosine": float(f"{y @ ref1 / np.linalg.norm(y) / np.linalg.norm(ref1):.6f}"),
                      "rel_err_vs_torch_fp32": float(f"{np.linalg.norm(y - ref1) / np.linalg.norm(ref1):.3g}")}))


def check_w2(octet, models, dtype, prompt, ref2):
    want = ref2["greedy_first16"]
    toks = greedy(octet, os.path.join(models, f"w2-{dtype}.octet"), prompt, 16)
    same = sum(a == b for a, b in zip(toks, want))
    first = next((i for i, (a, b) in enumerate(zip(toks, want)) if a != b), None)
    out = {"check": "w2", "engine": f"octet-{dtype}", "greedy_equal": same, "greedy_of": len(want),
           "tokens": toks}
    if first is not None:
        out.update(first_difference=first + 1, torch_top2_margin_there=ref2["top2_margins"][first])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
