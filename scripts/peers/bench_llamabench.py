#!/usr/bin/python3
"""W2, W3 and W4 on llama.cpp's own llama-bench (Q8_0 GGUF), in the JSON fields of the other benchmarks.

usage: python3 bench_llamabench.py LLAMA_BENCH MODEL.gguf THREADS {decode|long|embd|w3} [REPS=5] [SEQ] [DECODE]
  decode: -p 128 -n 128  -> prefill_tok_s (pp128), decode_tok_s (tg128: 128 single-token steps
          from an empty context; the others decode after the 128-token prompt)
  long:   -p 512,2048 -n 0 -> prefill_tok_s_512, prefill_tok_s_2048
  embd:   an encoder (W4): -embd 1 -p SEQ -n 0 -b SEQ -ub SEQ: one forward over SEQ tokens in one
          ubatch (a non-causal model needs the whole sequence in one), the GGUF's pooling
          -> ms_per_forward, prefill_tok_s; flash attention as llama.cpp picks it (-fa auto)
  w3:     a causal model's prefill then decode (W3), two llama-bench processes: -p SEQ -n 0
          (llama-bench's defaults: batch 2048, ubatch 512, its warm-up run) -> ms_per_forward,
          prefill_tok_s; then -p 0 -n DECODE -d SEQ: DECODE single-token steps after a SEQ-token
          prompt run untimed (the KV cache and the recurrent states filled) -> decode_tok_s
Also peak_rss_bytes: llama-bench's peak RSS (getrusage of the children: the larger of the
processes of this call, model loading and every repetition included). Prints one JSON line
(medians of llama-bench's samples).
"""
import json
import resource
import statistics
import subprocess
import sys


def run(args):
    """llama-bench with args: its JSON lines."""
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"llama-bench failed ({p.returncode}): {p.stderr[-2000:]}")
    return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]


def bench_w3(args, threads, seq, decode):
    pre = run(args + ["-p", str(seq), "-n", "0"])[0]
    dec = run(args + ["-p", "0", "-n", str(decode), "-d", str(seq)])[0]
    ms = [ns / 1e6 for ns in pre["samples_ns"]]
    out = {"engine": "llamacpp-q8_0", "peer": f"llama.cpp llama-bench (build {pre['build_commit']})",
           "workload": f"w3-{seq}", "threads": threads, "seq": seq, "decode": decode,
           "ms_per_forward": round(statistics.median(ms), 1), "runs_ms": [round(v, 1) for v in ms],
           "prefill_tok_s": round(statistics.median(pre["samples_ts"]), 1), "flash_attn": pre.get("flash_attn"),
           "n_batch": pre.get("n_batch"), "n_ubatch": pre.get("n_ubatch"), "type_k": pre.get("type_k"),
           "type_v": pre.get("type_v"), "prefill_warmup": True,
           "decode_tok_s": round(statistics.median(dec["samples_ts"]), 2),
           "decode_runs": [round(v, 2) for v in dec["samples_ts"]],
           "peak_rss_bytes": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}
    print(json.dumps(out))


def main():
    exe, model, threads, kind = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    reps = sys.argv[5] if len(sys.argv) > 5 else "5"
    args = [exe, "-m", model, "-t", str(threads), "-r", reps, "-o", "jsonl"]
    if kind == "embd":
        seq = sys.argv[6]
        args += ["-embd", "1", "-p", seq, "-n", "0", "-b", seq, "-ub", seq]
    else:
        args += ["-p", "128", "-n", "128"] if kind == "decode" else ["-p", "512,2048", "-n", "0"]
    if kind == "w3":
        return bench_w3(args, threads, int(sys.argv[6]), int(sys.argv[7]))
    tests = run(args)
    out = {"engine": "llamacpp-q8_0", "peer": f"llama.cpp llama-bench (build {tests[0]['build_commit']})",
           "workload": "w2", "threads": threads,
           "peak_rss_bytes": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}
    if kind == "embd":
        t = tests[0]
        ms = [ns / 1e6 for ns in t["samples_ns"]]
        out.update(workload=f"w4-{t['n_prompt']}", seq=t["n_prompt"], ms_per_forward=round(statistics.median(ms), 1),
                   runs_ms=[round(v, 1) for v in ms], prefill_tok_s=round(statistics.median(t["samples_ts"]), 1),
                   flash_attn=t.get("flash_attn"), n_ubatch=t.get("n_ubatch"))
        print(json.dumps(out))
        return
    for t in tests:
        rate = round(statistics.median(t["samples_ts"]), 1)
        if t["n_gen"] > 0:
            out["decode_tok_s"] = rate
        elif kind == "decode":
            out["prefill_tok_s"] = rate
        else:
            out[f"prefill_tok_s_{t['n_prompt']}"] = rate
    print(json.dumps(out))


if __name__ == "__main__":
    main()
