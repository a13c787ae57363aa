#!/usr/bin/python3
"""Run one benchmark command and append its JSON output to a results file, with labels.

usage: record.py RESULTS.jsonl KEY=VALUE ... -- COMMAND [ARG ...]

Every JSON object the command prints (one document, or lines starting with '{') gets the
KEY=VALUE labels (values parsed as JSON when they can be: threads=1 is a number), the wall time,
and foreign_cpu_pct: the CPU time OTHER processes used during the run, as a percentage of the
machine (/proc/stat busy time minus the command's own user+sys). The machine may be shared, and
that number says how disturbed a figure is. A failing command, or one still running after
PEERS_TIMEOUT_S seconds (default 1200), is recorded as {"error": ...}.
Prints one short progress line. Exit status: the command's.
"""
import json
import os
import resource
import subprocess
import sys
import time


def cpu_ticks():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v[:8]), v[3] + v[4]  # all, idle (+iowait)


def main():
    sep = sys.argv.index("--")
    out, labels, cmd = sys.argv[1], {}, sys.argv[sep + 1:]
    for kv in sys.argv[2:sep]:
        k, v = kv.split("=", 1)
        try:
            labels[k] = json.loads(v)
        except ValueError:
            labels[k] = v
    hz, ncpu = os.sysconf("SC_CLK_TCK"), os.cpu_count() or 1
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0, i0 = cpu_ticks()
    w0 = time.time()
    limit = float(os.environ.get("PEERS_TIMEOUT_S", "1200"))
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        p = subprocess.CompletedProcess(cmd, 124, "", f"timed out after {limit:.0f} s (PEERS_TIMEOUT_S)")
    wall = time.time() - w0
    t1, i1 = cpu_ticks()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    own = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    busy = ((t1 - t0) - (i1 - i0)) / hz
    foreign = round(100.0 * max(0.0, busy - own) / (max(wall, 1e-9) * ncpu), 1)
    extra = dict(wall_s=round(wall, 1), foreign_cpu_pct=foreign)
    tag = " ".join(f"{k}={v}" for k, v in labels.items())
    if p.returncode != 0:
        sys.stderr.write(p.stderr[-3000:])
        objs = [{"error": (p.stderr.strip().splitlines() or ["exit status %d" % p.returncode])[-1][:300],
                 "rc": p.returncode}]
    else:
        try:
            objs = [json.loads(p.stdout)]
        except ValueError:
            objs = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    with open(out, "a") as f:
        for o in objs:
            o.update(labels)
            o.update(extra)
            f.write(json.dumps(o) + "\n")
    keys = ("ms_per_forward", "prefill_ms", "prefill_tok_s", "prefill_tokens_per_s", "decode_tok_s",
            "decode_tokens_per_s", "prefill_tok_s_512", "prefill_tok_s_2048", "vnni_zmm_gops_best",
            "mem_read_gbps", "error")
    for o in objs:
        shown = " ".join(f"{k}={o[k]}" for k in keys if k in o and o[k] is not None)
        print(f"  [{tag}] {shown} ({wall:.0f} s, other CPU {foreign}%)", flush=True)
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
