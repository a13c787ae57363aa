#!/usr/bin/env python3
"""convert.peak_memory: octet-convert's peak resident set on a checkpoint of
real proportions stays within the bound the converter promises:

    int8: peak RSS <= the int8 file + 2 x the largest fp32 tensor + 512 MiB
    fp32: peak RSS <= 2 x the largest fp32 tensor + 512 MiB, and under half the
          checkpoint (its pages are released as they are read)

The checkpoint (scripts/make-synthetic-checkpoint.py: Llama-shaped, random
F32 weights, ~84 M parameters, 336 MB) is made larger than what the converter
keeps packed for its fp32 twin, so the report's sessions stream layers; the
calibration is given (2 x 32 ids). int8 runs twice: with tuning off, and with
every tuning step forced (an unreachable target, held-out ids given, fp32
products bounded by --max-size): the layer-by-layer pass and the escalation
hold to the same bound. The peak is the child's ru_maxrss. Before the streaming
converter this checkpoint took ~1.5 GB (int8) and the whole checkpoint (fp32).
Host builds without sanitizers only (their shadow memory is not the converter's).
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys


def peak_rss_of(cmd):
    """Runs cmd; returns the peak resident set of that child, in bytes."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if run.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited with {run.returncode}:\n{run.stdout}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # RUSAGE_CHILDREN's ru_maxrss is the largest of the waited-for children: a new
    # peak only shows when this child is the largest so far, so each run is
    # measured in a fresh interpreter (see main).
    return max(before, after) * 1024


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--convert", required=True)
    p.add_argument("--make", required=True, help="scripts/make-synthetic-checkpoint.py")
    p.add_argument("--work", required=True)
    p.add_argument("--measure", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.measure:  # a fresh interpreter per measured child
        print(peak_rss_of(a.measure))
        return
    try:
        import numpy  # noqa: F401  (the checkpoint script needs it)
    except ImportError:
        print("SKIPPED: python3-numpy is missing, so the synthetic checkpoint cannot be made "
              "(scripts/setup.sh installs it)")
        sys.exit(77)

    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    ckpt = os.path.join(a.work, "checkpoint")
    shape = dict(hidden=512, layers=24, intermediate=1536, heads=8, kv_heads=4, vocab=8000)
    subprocess.run([sys.executable, a.make, ckpt, "--dtype", "F32", "--seed", "7",
                    "--hidden", str(shape["hidden"]), "--layers", str(shape["layers"]),
                    "--intermediate", str(shape["intermediate"]), "--heads", str(shape["heads"]),
                    "--kv-heads", str(shape["kv_heads"]), "--vocab", str(shape["vocab"])],
                   check=True)
    with open(os.path.join(ckpt, "model.safetensors"), "rb") as f:
        header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
    largest = 0
    for name, t in header.items():
        if name == "__metadata__":
            continue
        n = 4
        for d in t["shape"]:
            n *= d
        largest = max(largest, n)
    checkpoint_bytes = os.path.getsize(os.path.join(ckpt, "model.safetensors"))
    calibration = os.path.join(a.work, "calibration.txt")
    heldout = os.path.join(a.work, "heldout.txt")
    for path, first in ((calibration, 0), (heldout, 2)):
        with open(path, "w") as f:
            for s in range(first, first + 2):
                f.write(" ".join(str((s * 7919 + i * 104729) % shape["vocab"]) for i in range(32)))
                f.write("\n")

    mib = 1 << 20
    failures = 0
    for run in ("int8", "int8-tuned", "fp32"):
        dtype = "fp32" if run == "fp32" else "int8"
        out = os.path.join(a.work, f"model-{run}.octet")
        cmd = [a.convert, ckpt, "-o", out, "--dtype", dtype, "--quiet"]
        if run == "int8":
            cmd += ["--calibration", calibration, "--no-tune"]
        elif run == "int8-tuned":
            cmd += ["--calibration", calibration, "--heldout", heldout,
                    "--target-ppl-ratio", "0.5", "--max-size", "5%"]
        peak = int(subprocess.run([sys.executable, __file__, "--convert", a.convert, "--make",
                                   a.make, "--work", a.work, "--measure"] + cmd,
                                  check=True, stdout=subprocess.PIPE, text=True).stdout)
        size = os.path.getsize(out)
        bound = (size if dtype == "int8" else 0) + 2 * largest + 512 * mib
        ok = peak <= bound
        if dtype == "fp32" and peak * 2 > checkpoint_bytes:
            print(f"FAIL: fp32: peak RSS {peak / mib:.0f} MiB is over half the checkpoint "
                  f"({checkpoint_bytes / mib:.0f} MiB): its pages stay resident")
            ok = False
        failures += not ok
        print(f"{run}: peak RSS {peak / mib:.0f} MiB, bound {bound / mib:.0f} MiB "
              f"({'int8 file %.0f MiB + ' % (size / mib) if dtype == 'int8' else ''}"
              f"2 x largest fp32 tensor {largest / mib:.1f} MiB + 512 MiB): "
              f"{'ok' if ok else 'FAIL'}")
        leftovers = [n for n in os.listdir(a.work) if ".partial-" in n or ".fp32-twin-" in n]
        if leftovers:
            print(f"FAIL: temporary files left behind: {leftovers}")
            failures += 1
        os.remove(out)
    shutil.rmtree(a.work, ignore_errors=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
