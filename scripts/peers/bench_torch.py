#!/usr/bin/python3
"""Time W1, W2, W4 or W3 on Debian's PyTorch 1.13: fp32, or dynamic int8 (quantize_dynamic, onednn).

usage: OMP_NUM_THREADS=T OPENBLAS_CORETYPE=SkylakeX /usr/bin/python3 bench_torch.py MODELS {w1|w2|w4-SEQ|w3-SEQ} \
       {fp32|int8} T [REPS]
One thread count per process (torch starts with 1 thread here; OMP_NUM_THREADS should match).
W1: the 12 layers on MODELS/w1-input.bin; REPS (default 15) forwards after 3 warm-ups.
W2: prefill the 128-token prompt (logits of the last token only), then 128 greedy decode steps
    through the KV cache; REPS (default 3) rounds after 1 warm-up round.
W4: fp32 only; the whole ModernBERT-shaped model (ids -> last hidden state) on SEQ tokens
    (w4-512, w4-8192); REPS (default 5) forwards after 1 warm-up; from 4096 tokens REPS (default 1)
    forwards and no warm-up (one forward takes minutes there: dense scores). The local
    layers' band is a mask on dense scores (workloads.py). peak_rss_bytes: the process's peak
    while the forwards ran (the peak is reset once the model is built, so the checkpoint's
    copy read while building is not counted); rss_after_load_bytes: before the first forward.
W3: fp32 only; the Qwen3.5-shaped model of tests/golden/ref_models/qwen3_5.py (workloads.W3Torch):
    prefill SEQ tokens through its cache (the delta rule in chunks of 64, dense causal scores in
    the full-attention layers; the final norm and the head on the last position only), then
    W3["decode"] greedy single-token steps through the cache (KV rows, conv tails, states);
    REPS (default 3) rounds after 1 warm-up round; from 4096 tokens 1 round and no warm-up.
    Peak RSS as W4's (the fp32 weights, 2.8 GiB at full size, included).
Prints one JSON line with medians (and every run).
"""
import json
import os
import statistics
import sys
import time

import numpy as np
import torch

import workloads as wl


def rss_bytes(field):
    """VmRSS or VmHWM (peak) of this process, in bytes."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))


def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:  # "5": reset the peak RSS to the current RSS
            f.write("5")
        return "peak while running (reset after loading)"
    except OSError:
        return "peak over the process's life (loading included)"


def bench_w4(models, tm, mode, seq, reps):
    if mode != "fp32":
        raise SystemExit("W4 runs in fp32 only")
    long = seq >= 4096
    reps, warm = reps or (1 if long else 5), 0 if long else 1
    model = tm["ModernBert"](wl.load_checkpoint(os.path.join(models, "w4-hf"), mapped=False))
    ids = torch.tensor([wl.w4_ids(seq)])
    after_load = rss_bytes("VmRSS")
    peak_note = reset_peak()
    times = []
    with torch.inference_mode():
        for r in range(warm + reps):
            t = time.perf_counter()
            model(ids)
            if r >= warm:
                times.append((time.perf_counter() - t) * 1e3)
    return dict(ms_per_forward=round(statistics.median(times), 1), runs_ms=[round(t, 1) for t in times],
                seq=seq, peak_rss_bytes=rss_bytes("VmHWM"), rss_after_load_bytes=after_load,
                peak_rss_is=peak_note,
                attention="dense [T, T] scores, the local layers' band as a mask (as transformers without flash-attn)")


def bench_w3(models, mode, seq, reps):
    if mode != "fp32":
        raise SystemExit("W3 runs in fp32 only")
    long = seq >= 4096
    reps, warm = reps or (1 if long else 3), 0 if long else 1
    folder = os.path.join(models, "w3-hf")
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    weights = wl.load_checkpoint(folder, mapped=False)
    model = wl.W3Torch(weights, config)
    del weights
    ids, n_dec = wl.w3_ids(seq, config["vocab_size"]), wl.W3["decode"]
    after_load = rss_bytes("VmRSS")
    peak_note = reset_peak()
    pre, dec = [], []
    for r in range(warm + reps):
        cache = model.new_cache()
        t0 = time.perf_counter()
        tok = int(model.step(ids, cache).argmax())
        t1 = time.perf_counter()
        for _ in range(n_dec):
            tok = int(model.step([tok], cache).argmax())
        t2 = time.perf_counter()
        if r >= warm:
            pre.append((t1 - t0) * 1e3)
            dec.append(n_dec / (t2 - t1))
    return dict(workload=f"w3-{seq}", seq=seq, decode=n_dec, ms_per_forward=round(statistics.median(pre), 1),
                runs_ms=[round(t, 1) for t in pre], prefill_tok_s=round(seq / statistics.median(pre) * 1e3, 1),
                decode_tok_s=round(statistics.median(dec), 2), decode_runs=[round(v, 2) for v in dec],
                peak_rss_bytes=rss_bytes("VmHWM"), rss_after_load_bytes=after_load, peak_rss_is=peak_note)


def main():
    models, workload, mode, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    reps = int(sys.argv[5]) if len(sys.argv) > 5 else (15 if workload == "w1" else 3)
    torch.set_num_threads(threads)
    tm = wl.torch_modules()
    out = {"engine": f"torch-{mode}", "peer": f"PyTorch {torch.__version__} {mode}", "threads": threads,
           "torch_threads": torch.get_num_threads()}
    if workload.startswith("w3-"):
        out.update(bench_w3(models, mode, int(workload[3:]), reps if len(sys.argv) > 5 else None))
    elif workload.startswith("w4-"):
        out.update(bench_w4(models, tm, mode, int(workload[3:]), reps if len(sys.argv) > 5 else None))
    elif workload == "w1":
        w = wl.load_checkpoint(os.path.join(models, "w1-hf"))
        model = tm["BertEncoder"](w).eval()
        if mode == "int8":
            model = wl.quantize_dynamic(model)
        x = torch.from_numpy(np.fromfile(os.path.join(models, "w1-input.bin"), "<f4")
                             .reshape(1, wl.W1["seq"], wl.W1["d"]))
        ref = np.fromfile(os.path.join(models, "w1-ref.bin"), "<f4")
        times = []
        with torch.inference_mode():
            for r in range(3 + reps):
                t = time.perf_counter()
                y = model(x)
                if r >= 3:
                    times.append((time.perf_counter() - t) * 1e3)
        y = y.numpy().ravel()
        out.update(workload="w1", ms_per_forward=round(statistics.median(times), 2),
                   runs_ms=[round(t, 2) for t in times],
                   rel_err_vs_torch_fp32=round(float(np.linalg.norm(y - ref) / np.linalg.norm(ref)), 5))
    else:
        w = wl.load_checkpoint(os.path.join(models, "w2-hf"))
        model = tm["Llama"](w).eval()
        if mode == "int8":
            model = wl.quantize_dynamic(model)
        prompt = torch.tensor([wl.w2_prompt()])
        n_prompt, n_gen = wl.W2["n_prompt"], wl.W2["n_gen"]
        pre, dec, first16 = [], [], None
        with torch.inference_mode():
            for r in range(1 + reps):
                cache = model.new_cache()
                t0 = time.perf_counter()
                tok = int(model(prompt, 0, cache).argmax())
                t1 = time.perf_counter()
                toks = [tok]
                for pos in range(n_prompt, n_prompt + n_gen):
                    tok = int(model(torch.tensor([[tok]]), pos, cache).argmax())
                    toks.append(tok)
                t2 = time.perf_counter()
                if r == 0:
                    first16 = toks[:16]
                    continue
                pre.append(n_prompt / (t1 - t0))
                dec.append(n_gen / (t2 - t1))
        with open(os.path.join(models, "w2-ref.json")) as f:
            want = json.load(f)["greedy_first16"]
        out.update(workload="w2", prefill_tok_s=round(statistics.median(pre), 1),
                   decode_tok_s=round(statistics.median(dec), 2),
                   prefill_runs=[round(v, 1) for v in pre], decode_runs=[round(v, 2) for v in dec],
                   greedy_first16=first16, greedy_equal_torch_fp32=sum(a == b for a, b in zip(first16, want)))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
