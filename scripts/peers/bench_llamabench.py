#!/usr/bin/python3
"""W2 on llama.cpp's own llama-bench (Q8_0 GGUF), in the JSON fields of the other benchmarks.

usage: python3 bench_llamabench.py LLAMA_BENCH MODEL.gguf THREADS {decode|long} [REPS=5]
  decode: -p 128 -n 128  -> prefill_tok_s (pp128), decode_tok_s (tg128: 128 single-token steps
          from an empty context; the others decode after the 128-token prompt)
  long:   -p 512,2048 -n 0 -> prefill_tok_s_512, prefill_tok_s_2048
Prints one JSON line (medians of llama-bench's samples).
"""
import json
import statistics
import subprocess
import sys


def main():
    exe, model, threads, kind = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    reps = sys.argv[5] if len(sys.argv) > 5 else "5"
    args = [exe, "-m", model, "-t", str(threads), "-r", reps, "-o", "jsonl"]
    args += ["-p", "128", "-n", "128"] if kind == "decode" else ["-p", "512,2048", "-n", "0"]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"llama-bench failed ({p.returncode}): {p.stderr[-2000:]}")
    tests = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    out = {"engine": "llamacpp-q8_0", "peer": f"llama.cpp llama-bench (build {tests[0]['build_commit']})",
           "workload": "w2", "threads": threads}
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
