#!/usr/bin/python3
"""bench-peers.sh's results (JSON lines from record.py and check_octet.py) -> one markdown report.

usage: python3 report.py RESULTS.jsonl [TITLE]
Each figure is the median over the rounds of each process's own median. Standard library only.
"""
import collections
import json
import math
import statistics
import sys

import workloads as wl

W1_OPS = 2 * wl.W1["seq"] * wl.W1_MACS_PER_TOKEN        # 21.7 G ops a forward (weight GEMMs)
W2_OPS_PER_TOKEN = 2 * wl.W2_MACS_PER_TOKEN              # 170 M ops a token in the layers
EMBED_PARAMS = wl.W2["vocab"] * wl.W2["d"]

# (row label, workload as recorded, unit, how to read it from a line of each kind)
ROWS = [
    ("W1 ms / forward", "w1", "ms", ("ms_per_forward", "prefill_ms")),
    ("W2 prefill 128, tok/s", "w2", "tok/s", ("prefill_tok_s", "prefill_tokens_per_s")),
    ("W2 decode 128, tok/s", "w2", "tok/s", ("decode_tok_s", "decode_tokens_per_s")),
    ("W2 prefill 512, tok/s", "w2-pp512", "tok/s", ("prefill_tok_s_512", "prefill_tokens_per_s")),
    ("W2 prefill 2048, tok/s", "w2-pp2048", "tok/s", ("prefill_tok_s_2048", "prefill_tokens_per_s")),
]
W4_ENGINES = [("octet int8", "octet-int8"), ("octet fp32", "octet-fp32"), ("torch fp32", "torch-fp32"),
              ("llama.cpp Q8_0", "llamacpp-q8_0")]
PEERS = [("ORT int8", "ort-int8", "octet-int8"), ("torch int8", "torch-int8", "octet-int8"),
         ("torch fp32", "torch-fp32", "octet-fp32"), ("llama.cpp Q8_0", "llamacpp-q8_0", "octet-int8")]


def w4_seqs(lines):
    """W4's sequence lengths in the results (workload labels w4-SEQ), ascending."""
    return sorted({int(d["workload"][3:]) for d in lines if str(d.get("workload", "")).startswith("w4-")})


def w4_floor_ms(seq, peak_gops):
    """W4's int8 floor: the weight GEMMs and the attention products (in-band keys only) at the peak."""
    return 2 * (seq * wl.W4_MACS_PER_TOKEN + wl.w4_attention_macs(seq)) / (peak_gops * 1e9) * 1e3


W3_ENGINES = [("octet int8", "octet-int8"), ("octet fp32", "octet-fp32"), ("torch fp32", "torch-fp32"),
              ("llama.cpp Q8_0", "llamacpp-q8_0")]


def w3_seqs(lines):
    """W3's sequence lengths in the timed results (workload labels w3-SEQ), ascending."""
    return sorted({int(d["workload"][3:]) for d in lines if str(d.get("workload", "")).startswith("w3-")})


def w3_section(lines, timed, metric, mach, thread_counts):
    """W3's tables: speed with the machine's limits, octet's profile, peak RSS, the logits check."""
    meta = next((d for d in lines if d.get("engine") == "meta"), {})
    shape = meta.get("w3") or {}
    layers, vocab = shape.get("layers", wl.W3["layers"]), shape.get("vocab", wl.W3["vocab"])
    kinds = wl.w3_layer_kinds(layers)
    n_full, n_lin = kinds.count("full_attention"), kinds.count("linear_attention")
    macs = wl.w3_macs_per_token(layers)
    full = (layers, vocab) == (wl.W3["layers"], wl.W3["vocab"])
    name = "W3 (Qwen3.5-0.8B shape" + ("" if full else f", reduced: {layers} layers, vocab {vocab}") + ")"
    out = []
    seqs = w3_seqs(timed)
    pre_keys, dec_keys = ("ms_per_forward", "prefill_ms"), ("decode_tok_s", "decode_tokens_per_s")
    if seqs:
        out.append(f"| {name} | thr | octet int8 | octet fp32 | torch fp32 | llama.cpp Q8_0 "
                   "| octet int8 ÷ llama.cpp | octet fp32 ÷ torch | machine limit |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for s in seqs:
            for label, keys in ((f"prefill {s} tokens, ms", pre_keys), (f"decode after {s}, tok/s", dec_keys)):
                for t in thread_counts:
                    cells = {e: metric(e, f"w3-{s}", t, keys) for _, e in W3_ENGINES}
                    if not any(cells.values()):
                        continue
                    val = lambda e: cells[e][0] if cells[e] else None  # noqa: E731
                    ratio = lambda a, b: fmt(val(a) / val(b), "ratio") if val(a) and val(b) else "–"  # noqa: E731
                    row = [label, str(t)] + [fmt(val(e)) for _, e in W3_ENGINES]
                    row += [ratio("octet-int8", "llamacpp-q8_0"), ratio("octet-fp32", "torch-fp32")]
                    o, limit = val("octet-int8"), "–"
                    peak, bw = mach(t, "vnni_zmm_gops_best"), mach(t, "mem_read_gbps")
                    if keys is pre_keys and peak:
                        ops = 2 * (s * macs + wl.w3_attention_macs(s, layers) + wl.W3["d"] * vocab)
                        floor = ops / (peak * 1e9) * 1e3
                        limit = f"floor {floor:.0f} ms" + (f" (octet int8 at {100 * floor / o:.0f} %)" if o else "")
                    elif keys is dec_keys and bw:
                        wb = [d["decode_weight_bytes_per_step"] for d in timed if d["engine"] == "octet-int8"
                              and d.get("workload") == f"w3-{s}" and d.get("decode_weight_bytes_per_step")]
                        if wb:
                            limit = (f"{wb[0] / 1e6:.0f} MB of weights a token: ceiling {bw * 1e9 / wb[0]:.0f} tok/s "
                                     f"at {bw:.0f} GB/s")
                    out.append("| " + " | ".join(row + [limit]) + " |")
        out.append("")
        out.append("Ratios: of prefill times (below 1: octet faster) and of decode tokens/s (above 1: octet faster). "
                   "Decode: tokens/s of single-token steps after the prompt (llama.cpp: "
                   "`llama-bench -p 0 -n N -d SEQ`, the prompt run once untimed; octet: `octet bench --decode N` "
                   "after each timed prefill; torch: greedy steps through its cache). Prefill floor: the layers' "
                   f"weight GEMMs ({macs // 10**6} M multiply-adds a token), the causal attention products of the "
                   f"{layers_of(n_full, 'full-attention')} and the head of the last position at the int8 peak; "
                   "decode ceiling: octet's int8 weights read per step (decode_weight_bytes_per_step) at the measured "
                   "read bandwidth.")
        out.append("")

        # octet's profile: median over the rounds of each kind's time
        prof = []
        for s in seqs:
            for t in thread_counts:
                ds = [d for d in timed if d["engine"] == "octet-int8" and d.get("workload") == f"w3-{s}"
                      and d["threads"] == t and isinstance(d.get("profile"), dict)]
                if not ds:
                    continue
                def med(part, k):
                    return statistics.median(d["profile"].get(part, {}).get(k) or 0 for d in ds)
                total = statistics.median(d["prefill_ms"] for d in ds)
                la = med("prefill_ms", "linear_attention")
                row = [f"{s} tokens, {t} thr", f"{total:.0f}",
                       f"{la:.0f} ({1e3 * la / s:.0f}; {100 * la / total:.0f} %)"]
                row += [f"{med('prefill_ms', k):.0f}" for k in ("convolution", "attention", "linear", "head")]
                row += [f"{med('decode_ms', k):.2f}"
                        for k in ("linear_attention", "convolution", "attention", "linear")]
                prof.append("| " + " | ".join(row) + " |")
        if prof:
            out.append("| W3 octet int8 --profile | prefill ms | linear attention, ms (per token, µs) | conv, ms "
                       "| full attention, ms | linear layers, ms | head, ms | decode ms / step: linear attention "
                       "| conv | full attention | linear layers |")
            out.append("|---|---|---|---|---|---|---|---|---|---|---|")
            out += prof
            out.append("")
            out.append("octet's profile (`octet bench --profile`, R more runs timed per operation kind): linear "
                       f"attention = the {layers_of(n_lin, 'Gated DeltaNet')}' delta rule (chunks of 64 in a prefill, "
                       "the recurrence in a decode step) and gated norm; conv = their causal depthwise conv; full "
                       f"attention = the {layers_of(n_full, 'softmax')}; linear layers = every weight GEMM but the "
                       "head.")
            out.append("")

        cols = [(s, t) for s in seqs for t in thread_counts]
        rss = []
        for label, eng in W3_ENGINES:
            cells = []
            for s, t in cols:
                vs = [d["peak_rss_bytes"] for d in timed if d["engine"] == eng and d.get("workload") == f"w3-{s}"
                      and d["threads"] == t and d.get("peak_rss_bytes")]
                cells.append(f"{statistics.median(vs) / 2**20:.0f}" if vs else "–")
            if any(c != "–" for c in cells):
                rss.append(f"| {label} | " + " | ".join(cells) + " |")
        if rss:
            out.append("| W3 peak RSS, MiB | " + " | ".join(f"{s} tok, {t} thr" for s, t in cols) + " |")
            out.append("|---|" + "---|" * len(cols))
            out += rss
            params = sum(math.prod(v) for v in w3_shapes(layers, vocab))
            out.append("")
            out.append("Peak RSS of the whole process (prefill and decode): octet `octet bench` peak_rss_bytes; "
                       "llama.cpp the larger of its two llama-bench processes (the mapped model file, compute "
                       "buffers, KV cache and states); torch the peak while running, reset after the model was "
                       f"built (its fp32 weights, {4 * params / 2**30:.1f} GiB, included).")
            out.append("")

    checks = {d["engine"]: d for d in lines if d.get("check") == "w3"}
    if checks:
        n = next(iter(checks.values())).get("seq", wl.W3["n_check"])
        out.append(f"| W3 check: logits of every position on {n} ids against torch fp32 | rel L2 err | cosine "
                   "| lowest position cosine | top-1 equal | greedy 16 equal | passes |")
        out.append("|---|---|---|---|---|---|---|")
        split = checks.get("llamacpp-f32-split", {})
        rows = [("octet int8", "octet-int8"), ("octet fp32", "octet-fp32"),
                ("llama.cpp f32 GGUF, one batch", "llamacpp-f32"),
                (f"llama.cpp f32 GGUF, {split.get('n_first')} in a batch + {n - (split.get('n_first') or 0)} "
                 "single steps", "llamacpp-f32-split"),
                ("llama.cpp Q8_0 GGUF (the timed one)", "llamacpp-q8_0")]
        for label, eng in rows:
            d = checks.get(eng)
            if d is None:
                continue
            g = "–"
            if "greedy_equal" in d:
                g = f"{d['greedy_equal']}/{d['greedy_of']}"
                if "first_difference" in d:
                    g += (f" (first difference at {d['first_difference']}, "
                          f"torch's top-2 margin {d['torch_top2_margin_there']})")
            ok = {True: "yes", False: "**no**"}.get(d.get("ok"), "–")
            out.append(f"| {label} | {d['rel_err_vs_torch_fp32']} | {d['cosine']} "
                       f"| {d.get('min_position_cosine', '–')} | {d.get('top1_equal', '–')} | {g} | {ok} |")
        ref = next((d for d in checks.values() if d.get("nearest_wrong_model")), None)
        if ref:
            out.append("")
            nearest, worst = ref["nearest_wrong_model"], ref["smallest_wrong_model_rel_err"]
            others = ", ".join(v for k, v in wl.W3_VARIANTS.items() if k != nearest)
            text = (f"Deliberately wrong torch models land at relative error {worst} and more (nearest: {nearest}; "
                    f"also {others}).")
            f32 = checks.get("llamacpp-f32")
            if f32:
                text += (f" llama.cpp's f32 runs pass below {f32['pass_below']} and half the nearest wrong model, its "
                         "Q8_0 below half the nearest; llama.cpp keeps the KV cache in F16 (its default).")
            out.append(text)
            quant = [(label, checks[e]["rel_err_vs_torch_fp32"]) for label, e in
                     (("llama.cpp Q8_0 GGUF (the timed one)", "llamacpp-q8_0"), ("octet int8", "octet-int8"))
                     if e in checks]
            if quant:
                text = "Quantized engines: " + ", ".join(
                    f"{label} {v} ({v / worst:.2f} x the nearest wrong model)" for label, v in quant) + "."
                if full:  # measured on the full shape: noise of 1 % of the embeddings' norm, 130 ids
                    text += (" W3's random weights amplify quantization noise through the layers (a 1 % input "
                             "perturbation is ~7 % at the last layer): its int8 errors are large next to a trained "
                             "model's, and read best against each other.")
                out.append(text)
        out.append("")
    return out


def layers_of(n, kind):
    """"6 full-attention layers", "1 softmax layer"."""
    return f"{n} {kind} layer" + ("s" if n != 1 else "")


def w3_shapes(layers, vocab):
    """The shapes of W3's tensors (numbers only: no weights drawn)."""
    c = wl.W3
    d, key, value = c["d"], c["lin_heads"] * c["lin_dk"], c["lin_heads"] * c["lin_dv"]
    qd, kvd = c["heads"] * c["head_dim"], c["kv_heads"] * c["head_dim"]
    shapes = [(vocab, d), (d,)]
    for kind in wl.w3_layer_kinds(layers):
        shapes += [(d,), (d,), (c["ff"], d), (c["ff"], d), (d, c["ff"])]
        if kind == "linear_attention":
            shapes += [(2 * key + value, d), (value, d), (c["lin_heads"], d), (c["lin_heads"], d),
                       (2 * key + value, c["conv"]), (c["lin_heads"],), (c["lin_heads"],), (c["lin_dv"],), (d, value)]
        else:
            shapes += [(2 * qd, d), (kvd, d), (kvd, d), (d, qd), (c["head_dim"],), (c["head_dim"],)]
    return shapes


def fmt(v, unit=None):
    if v is None:
        return "–"
    if unit == "ratio":
        return f"{v:.2f}"
    return f"{v:.1f}" if v < 1000 else f"{v:.0f}"


def main():
    lines = [json.loads(x) for x in open(sys.argv[1]) if x.strip()]
    title = sys.argv[2] if len(sys.argv) > 2 else "octet against the peers"
    timed = [d for d in lines if "check" not in d and "error" not in d
             and d.get("engine") not in (None, "meta") and isinstance(d.get("threads"), int)]
    errors = [d for d in lines if "error" in d]

    # values[(engine, workload, threads)][form] -> list over rounds
    values = collections.defaultdict(lambda: collections.defaultdict(list))
    extra = collections.defaultdict(list)  # (engine, workload, threads, key) -> values
    for d in timed:
        wlabel = d.get("workload")
        if d["engine"] == "llamacpp-q8_0" and wlabel == "w2-long":
            for n in (512, 2048):
                if f"prefill_tok_s_{n}" in d:
                    values[(d["engine"], f"w2-pp{n}", d["threads"])]["-"].append(d)
            continue
        values[(d["engine"], wlabel, d["threads"])][d.get("form", "-")].append(d)
        if d["engine"].startswith("octet") and "weights_bytes" in d:
            extra[(d["engine"], wlabel, "weights_bytes")].append(d["weights_bytes"])

    def metric(engine, workload, threads, keys):
        """Median over rounds; for several forms (ORT) the best form's. Returns (value, form)."""
        forms = values.get((engine, workload, threads), {})
        best = None
        for form, ds in forms.items():
            vs = [next(d[k] for k in keys if d.get(k) is not None) for d in ds
                  if any(d.get(k) is not None for k in keys)]
            if not vs:
                continue
            v = statistics.median(vs)
            spread = (max(vs) - min(vs)) / v if v else 0
            lower_better = keys[0] == "ms_per_forward"
            if best is None or (v < best[0] if lower_better else v > best[0]):
                best = (v, form, spread)
        return best

    machine = {}
    for d in timed:
        if d["engine"] == "machine":
            machine.setdefault(d["threads"], []).append(d)

    def mach(threads, key, pick=max):
        vs = [d[key] for d in machine.get(threads, []) if d.get(key) is not None]
        return pick(vs) if vs else None

    thread_counts = sorted({d["threads"] for d in timed if isinstance(d.get("threads"), int)})
    rounds = sorted({d.get("round") for d in timed if d.get("round") is not None})
    out = [f"## {title}", ""]
    meta = next((d for d in lines if d.get("engine") == "meta"), {})
    if meta:
        out.append(f"{meta.get('date', '')}; CPU: {meta.get('cpu', '?')}, {meta.get('cores', '?')} cores; "
                   f"octet {meta.get('octet', '?')}; {len(rounds)} interleaved round(s), each figure the "
                   f"median over the rounds of each process's median.")
        out.append("")

    # ---- the machine ----
    if machine:
        out.append("| machine (int8_peak.c, best over the rounds) | " +
                   " | ".join(f"{t} thread{'s' if t > 1 else ''}" for t in thread_counts) + " |")
        out.append("|---|" + "---|" * len(thread_counts))
        for label, key in (("int8 peak, vpdpbusd zmm, GOPS", "vnni_zmm_gops_best"),
                           ("memory read, 1 GiB a thread, GB/s", "mem_read_gbps"),
                           ("read over 128 MiB in all, GB/s", "read_128mib_gbps")):
            out.append(f"| {label} | " + " | ".join(fmt(mach(t, key)) for t in thread_counts) + " |")
        clocks = [mach(t, "clock_ghz", statistics.median) for t in thread_counts]
        out.append("| clock seen by an add chain, GHz (median) | " +
                   " | ".join(f"{c:.2f}" if c else "–" for c in clocks) + " |")
        out.append("")

    # ---- the table ----
    head = ["workload", "thr", "octet int8", "octet fp32"]
    for name, _, base in PEERS:
        head += [name, "fp32 ratio" if base == "octet-fp32" else "ratio"]
    head.append("machine limit")
    table = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    spreads = []
    rows = ROWS + [(f"W4 {s} tokens, ms / forward", f"w4-{s}", "ms", ("ms_per_forward", "prefill_ms"))
                   for s in w4_seqs(lines)]
    for label, workload, unit, keys in rows:
        for t in thread_counts:
            if workload in ("w2-pp512", "w2-pp2048") and t != 1:
                continue
            cells = {}
            for eng in ("octet-int8", "octet-fp32") + tuple(p[1] for p in PEERS):
                cells[eng] = metric(eng, workload, t, keys)
                if cells[eng]:
                    spreads.append(cells[eng][2])
            if not any(cells.values()):
                continue
            val = lambda e: cells[e][0] if cells[e] else None  # noqa: E731
            row = [label, str(t), fmt(val("octet-int8")), fmt(val("octet-fp32"))]
            for name, eng, base in PEERS:
                v, o = val(eng), val(base)
                cell = fmt(v)
                if eng == "ort-int8" and cells[eng]:
                    cell += f" ({cells[eng][1].replace('w1-int8-', '').replace('.onnx', '')})"
                row += [cell, fmt(o / v, "ratio") if v and o else "–"]
            peak = mach(t, "vnni_zmm_gops_best")
            limit = "–"
            o = val("octet-int8")
            if workload == "w1" and peak:
                floor = W1_OPS / (peak * 1e9) * 1e3
                limit = f"floor {floor:.1f} ms" + (f" (octet int8 at {100 * floor / o:.0f} %)" if o else "")
            elif workload.startswith("w4-") and peak:
                floor = w4_floor_ms(int(workload[3:]), peak)
                limit = f"floor {floor:.0f} ms" + (f" (octet int8 at {100 * floor / o:.0f} %)" if o else "")
            elif workload.startswith("w2") and "prefill" in label and peak:
                ceil = peak * 1e9 / W2_OPS_PER_TOKEN
                limit = f"GEMM ceiling {ceil:.0f} tok/s" + (f" (octet int8 at {100 * o / ceil:.0f} %)" if o else "")
            elif "decode" in label:
                bw = mach(t, "mem_read_gbps")
                wb = extra.get(("octet-int8", "w2", "weights_bytes"))
                if bw and wb:
                    per_tok = wb[0] - EMBED_PARAMS * 1 - wl.W2["vocab"] * 4  # int8 table + its scales
                    limit = f"{per_tok / 1e6:.0f} MB a token: ceiling {bw * 1e9 / per_tok:.0f} tok/s at {bw:.0f} GB/s"
                    if o:
                        limit += f"; octet int8 {o * per_tok / 1e9:.1f} GB/s ({100 * o * per_tok / 1e9 / bw:.0f} %)"
            row.append(limit)
            table.append("| " + " | ".join(row) + " |")
    if len(table) > 2:  # a row of W1, W2 or W4
        out += table + [""]
        out.append("ratio = octet int8 ÷ peer (fp32 ratio: octet fp32 ÷ torch fp32): of times for W1 and W4 "
                   "(below 1: octet faster), of tokens/s for W2 (above 1: octet faster). "
                   "ORT: the faster of its two int8 forms (mmi = DynamicQuantizeLinear + MatMulInteger, "
                   "fused = QAttention + DynamicQuantizeMatMul + SkipLayerNorm), named in brackets. "
                   "W1 floor = 21.7 G ops of weight GEMMs at the int8 peak; W2 prefill ceiling = 170 M ops a "
                   "token at the peak (GEMMs only); W2 decode: the int8 weights read per token (all but the "
                   "embedding table, from `octet bench` weights_bytes) against the measured read bandwidth. "
                   "W4 floor = the weight GEMMs (110 M multiply-adds a token) and the attention products "
                   "(every key in the 8 global layers, the 129-key band in the 14 local ones) at the int8 peak.")
        out.append("")

    # ---- W4 peak RSS ----
    seqs = w4_seqs(timed)
    if seqs:
        cols = [(s, t) for s in seqs for t in thread_counts]
        out.append("| W4 peak RSS, MiB | " + " | ".join(f"{s} tok, {t} thr" for s, t in cols) + " |")
        out.append("|---|" + "---|" * len(cols))
        for name, eng in W4_ENGINES:
            cells = []
            for s, t in cols:
                vs = [d["peak_rss_bytes"] for d in timed if d["engine"] == eng and d.get("workload") == f"w4-{s}"
                      and d["threads"] == t and d.get("peak_rss_bytes")]
                cells.append(f"{statistics.median(vs) / 2**20:.0f}" if vs else "–")
            if any(c != "–" for c in cells):
                out.append(f"| {name} | " + " | ".join(cells) + " |")
        out.append("")
        out.append("Peak RSS: octet `octet bench` peak_rss_bytes and llama-bench's (getrusage of the process: "
                   "the model file's mapped pages, the compute buffers, all runs); torch: the peak while the "
                   "forwards ran, reset after the model was built (its weights as fp32 tensors, 570 MiB).")
        out.append("")

    # ---- checks ----
    checks = [d for d in lines if "check" in d]
    if any(d.get("check") in ("w1", "w2") for d in checks) or any(d.get("workload") in ("w1", "w2") for d in timed):
        out.append("| check against torch fp32 | octet int8 | octet fp32 | ORT int8 | torch int8 |")
        out.append("|---|---|---|---|---|")
        c1 = {d["engine"]: d for d in checks if d["check"] == "w1"}
        c2 = {d["engine"]: d for d in checks if d["check"] == "w2"}

        def peer_err(engine, workload):
            vs = {d.get("form", "-"): d["rel_err_vs_torch_fp32"] for d in timed
                  if d["engine"] == engine and d.get("workload") == workload and "rel_err_vs_torch_fp32" in d}
            return ", ".join(f"{v}" + (f" ({k.replace('w1-int8-', '').replace('.onnx', '')})" if k != "-" else "")
                             for k, v in sorted(vs.items())) or "–"

        w1 = lambda e: (f"cos {c1[e]['cosine']}, rel err {c1[e]['rel_err_vs_torch_fp32']}"  # noqa: E731
                        if e in c1 else "–")
        out.append(f"| W1 last hidden state | {w1('octet-int8')} | {w1('octet-fp32')} | "
                   f"rel err {peer_err('ort-int8', 'w1')} | rel err {peer_err('torch-int8', 'w1')} |")

        def w2(e):
            if e not in c2:
                return "–"
            d = c2[e]
            s = f"{d['greedy_equal']}/{d['greedy_of']}"
            if "first_difference" in d:
                s += f" (first difference: token {d['first_difference']}, where torch's top-2 logits differ by {d['torch_top2_margin_there']})"
            return s

        t8 = sorted({d["greedy_equal_torch_fp32"] for d in timed
                     if d["engine"] == "torch-int8" and "greedy_equal_torch_fp32" in d})
        t8s = ", ".join(f"{n}/16" for n in t8) or "–"
        out.append(f"| W2 greedy tokens equal to torch fp32's | {w2('octet-int8')} | {w2('octet-fp32')} | – | {t8s} |")
        out.append("")

    w4c = {d["engine"]: d for d in checks if d.get("check") == "w4"}
    if w4c:
        out.append(f"| W4 check: last hidden state on {next(iter(w4c.values())).get('seq', 512)} ids against torch fp32 "
                   "| rel L2 err | cosine | lowest token cosine | mean-pooled cosine | passes |")
        out.append("|---|---|---|---|---|---|")
        for name, eng in (("octet int8", "octet-int8"), ("octet fp32", "octet-fp32"),
                          ("llama.cpp Q8_0 GGUF (the timed one)", "llamacpp-q8_0"),
                          ("llama.cpp f32 GGUF (same layout, unquantized)", "llamacpp-f32")):
            if eng in w4c:
                d = w4c[eng]
                ok = {True: "yes", False: "**no**"}.get(d.get("ok"), "–")
                out.append(f"| {name} | {d['rel_err_vs_torch_fp32']} | {d['cosine']} | {d.get('min_token_cosine', '–')} "
                           f"| {d.get('pooled_mean_cosine', '–')} | {ok} |")
        ll = w4c.get("llamacpp-f32") or w4c.get("llamacpp-q8_0")
        if ll:
            out.append("")
            out.append(f"Deliberately wrong torch models land at relative error {ll['smallest_wrong_model_rel_err']} "
                       f"and more (nearest: {ll['nearest_wrong_model']}; also all layers global or local, RoPE thetas "
                       f"swapped, GeGLU halves swapped); llama.cpp's tanh GELU alone makes {ll['tanh_gelu_rel_err']}. "
                       "The f32 GGUF passes below half the nearest wrong model; the Q8_0 one below 0.05 "
                       "(quantization noise, as octet int8's).")
        out.append("")

    # ---- W3 ----
    out += w3_section(lines, timed, metric, mach, thread_counts)

    # ---- notes ----
    notes = []
    if any(d.get("workload") == "w1" for d in timed):
        notes.append("W1: octet runs the whole BertModel from the 128 token ids (embedding lookup and embedding "
                     "LayerNorm included, a small part); the peers run the 12 layers on the embedding output "
                     "(hidden states [1, 128, 768]). The layer weights are the same tensors.")
    if any(str(d.get("workload", "")).startswith("w2") for d in timed):
        notes.append("llama.cpp: llama-bench pp/tg; its tg128 decodes from an empty context, the others after "
                     "the 128-token prompt.")
    if w4_seqs(timed):
        notes.append("W4: every engine runs the whole model, ids -> last hidden state (llama.cpp adds its mean "
                     "pooling, `llama-bench -embd 1`, the whole sequence in one ubatch, flash attention as "
                     "`-fa auto` picks it: on). torch fp32 computes dense [T, T] scores and masks the local "
                     "layers' band (transformers' way without flash-attn; torch 1.13 has no fused or windowed "
                     "attention); octet and llama.cpp's flash attention work in tiles (octet skips the tiles "
                     "outside the band).")
    octet_notes = sorted({n for d in timed if d["engine"].startswith("octet") for n in d.get("notes", [])
                          if "encoder-only" not in n})
    if octet_notes:
        notes.append("octet bench says: " + "; ".join(octet_notes) + ".")
    fc = [d["foreign_cpu_pct"] for d in timed if "foreign_cpu_pct" in d]
    if fc:
        notes.append(f"Other processes used {statistics.median(fc):.0f} % of the CPU during the median "
                     f"run and {max(fc):.0f} % at most: figures from a busy machine are low and noisy.")
    if spreads and len(rounds) > 1:
        notes.append(f"Spread over the rounds (max - min) / median: median {100 * statistics.median(spreads):.0f} %, "
                     f"at most {100 * max(spreads):.0f} %.")
    for d in errors:
        notes.append(f"FAILED: {d.get('engine')} {d.get('workload')} threads {d.get('threads')}: {d['error']}")
    out += [f"- {n}" for n in notes]
    print("\n".join(out))


if __name__ == "__main__":
    main()
