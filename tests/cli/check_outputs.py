"""Host-only checks of the CLI's machine-readable output, standard library only.

Usage: check_outputs.py WORK_DIR
WORK_DIR holds what cli_test.cmake (case python_checks) wrote: inspect_{llama,bert,t5}.json,
bench.json, llama.npy and bert.npy. Exits non-zero with a message on the first mismatch.
"""
import array
import ast
import json
import math
import os
import sys


def fail(message):
    sys.exit("check_outputs.py: " + message)


def load_json(path):
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")  # must be valid UTF-8
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        fail(f"{path}: not valid JSON: {e}")


def check_inspect(path, family):
    report = load_json(path)
    for key in ("file", "architecture", "tensors", "weights", "tokenizer", "provenance",
                "memory_plan", "session_plan", "cpu"):
        if key not in report:
            fail(f"{path}: no '{key}'")
    arch = report["architecture"]
    if arch["family"] != family:
        fail(f"{path}: family {arch['family']}, expected {family}")
    for key in ("num_heads", "num_kv_heads", "head_dim", "scale", "sliding_window",
                "relative_buckets", "relative_max_distance", "qkv_bias", "out_bias"):
        if key not in arch["attention"]:
            fail(f"{path}: architecture.attention has no '{key}'")
    total = 0
    for t in report["tensors"]:
        size = 4 if t["dtype"] == "F32" else 1
        if t["bytes"] != size * math.prod(t["shape"]):
            fail(f"{path}: tensor {t['name']}: {t['bytes']} bytes for shape {t['shape']}")
        if t["offset"] % 64 != 0:
            fail(f"{path}: tensor {t['name']}: offset {t['offset']} not 64-byte aligned")
        q = t["quantization"]
        if t["dtype"] == "I8" and (q is None or q["num_scales"] < 1 or not q["min_scale"] > 0):
            fail(f"{path}: tensor {t['name']}: int8 without scales")
        total += t["bytes"]
    if report["weights"]["total_bytes"] != total:
        fail(f"{path}: weights.total_bytes {report['weights']['total_bytes']} != {total}")
    if sum(report["weights"]["bytes_by_dtype"].values()) != total:
        fail(f"{path}: weights.bytes_by_dtype does not add up")
    plan = report["session_plan"]
    if "error" not in plan and plan["total_bytes"] != (
            plan["activation_bytes"] + plan["scratch_bytes"] + plan["kv_cache_bytes"]):
        fail(f"{path}: session_plan.total_bytes does not add up")


def check_bench(path):
    report = load_json(path)
    for key in ("prefill_ms", "prefill_tokens_per_s", "decode_tokens_per_s", "arena_bytes",
                "weights_bytes", "peak_rss_bytes", "heap_allocs_during_run", "notes"):
        if key not in report:
            fail(f"{path}: no '{key}'")
    if report["heap_allocs_during_run"] != 0:
        fail(f"{path}: heap_allocs_during_run is {report['heap_allocs_during_run']}")
    if not report["prefill_ms"] >= 0 or not report["prefill_tokens_per_s"] > 0:
        fail(f"{path}: bad prefill timing")
    if report["peak_rss_bytes"] <= 0 or report["weights_bytes"] <= 0:
        fail(f"{path}: bad memory numbers")


def check_npy(path, shape):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x93NUMPY\x01\x00":
        fail(f"{path}: bad magic")
    header_length = int.from_bytes(data[8:10], "little")
    header = ast.literal_eval(data[10:10 + header_length].decode("latin1"))
    if header != {"descr": "<f4", "fortran_order": False, "shape": shape}:
        fail(f"{path}: header {header}, expected shape {shape}")
    if (10 + header_length) % 64 != 0:
        fail(f"{path}: data not 64-byte aligned")
    values = array.array("f")
    values.frombytes(data[10 + header_length:])
    if sys.byteorder != "little":
        values.byteswap()
    if len(values) != math.prod(shape):
        fail(f"{path}: {len(values)} values, expected {math.prod(shape)}")
    if not all(math.isfinite(v) for v in values):
        fail(f"{path}: non-finite values")


def main():
    work = sys.argv[1]
    check_inspect(os.path.join(work, "inspect_llama.json"), "Llama")
    check_inspect(os.path.join(work, "inspect_bert.json"), "Bert")
    check_inspect(os.path.join(work, "inspect_t5.json"), "T5")
    check_bench(os.path.join(work, "bench.json"))
    check_npy(os.path.join(work, "llama.npy"), (2, 3, 32))
    check_npy(os.path.join(work, "bert.npy"), (2, 3, 16))


if __name__ == "__main__":
    main()
