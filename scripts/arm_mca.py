#!/usr/bin/env python3
"""arm_mca.py: a static (llvm-mca) speed model of the NEON kernels. Called by
scripts/arm-mca.sh, which configures the ARM presets for their compile commands.

For each configuration (target, CPU model):
  1. Compiles every kernel file in runtime/kernels/neon/ with that preset's own
     compile command (compile_commands.json), but to assembly (-S).
  2. Finds the hot loop of each file: among the innermost loops (a label and a
     backward branch to it, with no other such loop inside), the one with the
     most multiply-accumulate lanes (sdot, smmla, smull/smlal, mla, fmla, ...);
     where no loop has any, the innermost loop with the most vector instructions.
  3. Runs llvm-mca on that loop body and reports cycles per iteration, MACs per
     iteration, MACs per cycle and that against the core's peak, which is itself
     measured with llvm-mca on a block of independent multiply instructions.

This is a model of the out-of-order core (LLVM's scheduling model), with every
load hitting L1; it is not a measurement. Branches inside the loop body are
treated as straight-line code (all paths taken).

Only Debian's python3 standard library; the compilers and llvm-mca are called
as programs.
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

# ----------------------------------------------------------------------------
# Configurations: what runs on a Pi 4 and a Pi 5.

# LLVM maps -mcpu=cortex-a72 to its Cortex-A57 scheduling model (the A72 is an
# A57 derivative; LLVM has no A72 model of its own). For cortex-a76, LLVM (14 and
# 19 alike) also falls back to the A57 model, which is wrong for the A76 (4-wide,
# two 128-bit ASIMD pipes that both run sdot). LLVM 17+ has a Neoverse N1 model;
# the N1 is the server core built on the Cortex-A76 microarchitecture, with the
# same execution pipelines, so it stands in for the Pi 5's A76.
CONFIGS = [
    # name, preset arch, board, llvm-mca triple, cpu, files (ISA groups), note
    {"name": "pi4-a64", "arch": "a64", "board": "Pi 4 (Cortex-A72, 64-bit OS)",
     "triple": "aarch64-linux-gnu", "cpu": "cortex-a72", "groups": ["neon"]},
    {"name": "pi5-a64", "arch": "a64", "board": "Pi 5 (Cortex-A76, 64-bit OS)",
     "triple": "aarch64-linux-gnu", "cpu": "neoverse-n1", "groups": ["neon", "neondot"]},
    {"name": "pi4-a32", "arch": "a32", "board": "Pi 4 (Cortex-A72, 32-bit OS)",
     "triple": "thumbv8a-linux-gnueabihf", "cpu": "cortex-a72", "groups": ["neon"]},
]

# Files whose variant a Pi never runs (no i8mm on the A72 or A76).
def isa_group(path):
    base = os.path.basename(path)
    if "__neoni8mm" in base:
        return "i8mm"
    if "__neondot" in base:
        return "neondot"
    return "neon"


# ----------------------------------------------------------------------------
# Multiply-accumulate lanes of one instruction: (lanes, kind) or None.
# kind: "i8" (int8 x int8 products), "i16" (int16 x int16), "f32", "f64".

A64_LANES = {"16b": 16, "8b": 8, "8h": 8, "4h": 4, "4s": 4, "2s": 2, "2d": 2, "1d": 1}


def a64_macs(mn, ops):
    mn = mn.lower()
    dest = ops[0].lower() if ops else ""
    m = re.match(r"v\d+\.(\w+)$", dest)
    arr = m.group(1) if m else None
    if mn in ("sdot", "udot", "usdot", "sudot"):
        return (16 if arr == "4s" else 8, "i8")
    if mn in ("smmla", "ummla", "usmmla"):
        return (32, "i8")
    if re.match(r"^[su]m(ull|lal|lsl)2?$", mn) and arr:
        lanes = A64_LANES[arr]
        return (lanes, "i8" if arr == "8h" else "i16" if arr == "4s" else "i32")
    if mn in ("mla", "mls") and arr:
        return (A64_LANES[arr], {"16b": "i8", "8b": "i8", "8h": "i16", "4h": "i16"}.get(arr, "i32"))
    if mn in ("fmla", "fmls") and arr:
        return (A64_LANES[arr], "f64" if arr in ("2d", "1d") else "f32")
    if mn in ("fmadd", "fmsub", "fnmadd", "fnmsub") and dest:
        return (1, "f64" if dest.startswith("d") else "f32")
    return None


def a32_macs(mn, ops):
    mn = mn.lower()
    m = re.match(r"^(v\w+?)\.([suif])(8|16|32|64)$", mn)
    if not m:
        return None
    base, typ, bits = m.group(1), m.group(2), int(m.group(3))
    dest = ops[0].lower() if ops else ""
    q = dest.startswith("q")
    if base in ("vsdot", "vudot", "vusdot", "vsudot"):
        return (16 if q else 8, "i8")
    if base in ("vsmmla", "vummla", "vusmmla"):
        return (32, "i8")
    if base in ("vmull", "vmlal", "vmlsl"):  # long: the destination is a q register
        lanes = 64 // bits
        return (lanes, {8: "i8", 16: "i16"}.get(bits, "i32"))
    if base in ("vmla", "vmls", "vfma", "vfms"):
        lanes = (128 if q else 64) // bits
        if typ == "f":
            return (lanes, "f32")
        return (lanes, {8: "i8", 16: "i16"}.get(bits, "i32"))
    return None


# Accumulate-only instructions that belong to a MAC idiom (for loop choice only).
ACCUM_RE = re.compile(r"^(v?[su]adalp|v?padal)", re.I)

# ----------------------------------------------------------------------------
# Assembly parsing.

LABEL_RE = re.compile(r"^([.$\w]+):")
# GCC writes conditional branches as b<cond> (bne), LLVM as b.<cond> (b.ne).
A64_BRANCH = re.compile(r"^(b\.?(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al)?|cbn?z|tbn?z)$",
                        re.I)
A32_BRANCH = re.compile(r"^(b(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al)?|cbn?z)(\.[nw])?$",
                        re.I)


def strip_comment(line, arch):
    for marker in (["//"] if arch == "a64" else ["@"]):
        i = line.find(marker)
        if i >= 0:
            line = line[:i]
    return line.rstrip()


def split_operands(text):
    ops, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            ops.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        ops.append(cur.strip())
    return ops


def parse_asm(text, arch):
    """[(kind, payload)] with kind 'label' (name, is_function), 'insn' (mn, ops, line)."""
    out = []
    for raw in text.splitlines():
        line = strip_comment(raw, arch)
        if not line.strip():
            continue
        m = LABEL_RE.match(line)
        if m:
            name = m.group(1)
            out.append(("label", (name, not name.startswith(".L"))))
            continue
        s = line.strip()
        if s.startswith("."):
            continue  # directive
        parts = s.split(None, 1)
        mn = parts[0]
        ops = split_operands(parts[1]) if len(parts) > 1 else []
        out.append(("insn", (mn, ops, s)))
    return out


def find_loops(items, arch):
    """Innermost loops: dicts with label, function, body (instruction lines)."""
    branch_re = A64_BRANCH if arch == "a64" else A32_BRANCH
    label_at = {}
    func_of = {}
    func = None
    for i, (kind, payload) in enumerate(items):
        if kind == "label":
            name, is_func = payload
            if is_func:
                func = name
            label_at[name] = i
            func_of[name] = func
    loops = []
    for j, (kind, payload) in enumerate(items):
        if kind != "insn":
            continue
        mn, ops, _ = payload
        if not branch_re.match(mn) or not ops:
            continue
        target = ops[-1]
        i = label_at.get(target)
        if i is None or i >= j:
            continue
        loops.append((i, j, target))
    inner = []
    for (i, j, target) in loops:
        if any(i < i2 and j2 <= j and (i2, j2) != (i, j) for (i2, j2, _) in loops):
            continue  # another loop inside
        body = [p for (k, p) in items[i + 1:j + 1] if k == "insn"]
        inner.append({"label": target, "function": func_of.get(target), "body": body,
                      "labels_inside": [p[0] for (k, p) in items[i + 1:j] if k == "label"]})
    return inner


def loop_stats(loop, arch):
    macs = {}
    accum = 0
    vector = 0
    spills = 0
    branches = 0
    ld_bytes = 0
    st_bytes = 0
    branch_re = A64_BRANCH if arch == "a64" else A32_BRANCH
    for (mn, ops, line) in loop["body"]:
        r = a64_macs(mn, ops) if arch == "a64" else a32_macs(mn, ops)
        if r:
            macs[r[1]] = macs.get(r[1], 0) + r[0]
        if ACCUM_RE.match(mn):
            accum += 1
        if (arch == "a64" and re.search(r"\bv\d+\.", line)) or (
                arch == "a32" and (mn.lower().startswith("v") or re.search(r"\b[qd]\d+\b", line))):
            vector += 1
        if re.search(r"\[(sp|r13)\b", line) and (re.search(r"\b[qd]\d+\b", line) or "v" in line):
            spills += 1
        if branch_re.match(mn):
            branches += 1
        b = mem_bytes(mn, ops, line, arch)
        if b:
            if b > 0:
                ld_bytes += b
            else:
                st_bytes += -b
    return {"macs": macs, "accum": accum, "vector": vector, "spills": spills,
            "branches_inside": branches - 1, "load_bytes": ld_bytes, "store_bytes": st_bytes}


REG_BYTES_A64 = {"q": 16, "d": 8, "s": 4, "h": 2, "b": 1, "x": 8, "w": 4}


def mem_bytes(mn, ops, line, arch):
    """Bytes a load (+) or store (-) moves; 0 if not a memory access."""
    mn = mn.lower()
    if arch == "a64":
        if re.match(r"^(ldr|ldur|ldp|ldnp|ld1r?|ld[234]r?|str|stur|stp|stnp|st[1234])\w*$", mn) is None:
            return 0
        sign = 1 if mn.startswith("ld") else -1
        if mn.startswith(("ld1", "ld2", "ld3", "ld4", "st1", "st2", "st3", "st4")):
            regs = re.findall(r"v\d+\.(\d+)([bhsd])", ops[0])
            if mn.endswith("r"):  # replicate: one element per register
                return sign * sum({"b": 1, "h": 2, "s": 4, "d": 8}[t] for _, t in regs)
            if "[" in ops[0].split("}")[-1]:  # single lane
                return sign * sum({"b": 1, "h": 2, "s": 4, "d": 8}[t] for _, t in regs)
            return sign * sum(int(n) * {"b": 1, "h": 2, "s": 4, "d": 8}[t] for n, t in regs)
        nregs = 2 if mn.startswith(("ldp", "stp", "ldnp", "stnp")) else 1
        reg = ops[0].lower()
        size = REG_BYTES_A64.get(reg[0], 0)
        if mn in ("ldrb", "ldrsb", "strb"):
            size = 1
        elif mn in ("ldrh", "ldrsh", "strh"):
            size = 2
        elif mn == "ldrsw":
            size = 4
        return sign * nregs * size
    # AArch32
    if mn.startswith(("vld", "vst")):
        sign = 1 if mn.startswith("vld") else -1
        regs = ops[0]
        count = 0
        for a, b in re.findall(r"d(\d+)(?:-d(\d+))?", regs):
            count += (int(b) - int(a) + 1) if b else 1
        count += 2 * len(re.findall(r"\bq\d+\b", regs))
        if "[" in regs:  # lanes
            m = re.search(r"\.(8|16|32|64)", mn)
            return sign * count * (int(m.group(1)) // 8 if m else 4)
        return sign * count * 8
    if re.match(r"^(ldr|str)", mn):
        sign = 1 if mn.startswith("ldr") else -1
        if mn.startswith(("ldrb", "ldrsb", "strb")):
            return sign
        if mn.startswith(("ldrh", "ldrsh", "strh")):
            return sign * 2
        if mn.startswith(("ldrd", "strd")):
            return sign * 8
        return sign * 4
    return 0


def pick_hot_loop(loops, arch):
    best, best_key = None, None
    for lp in loops:
        st = loop_stats(lp, arch)
        lp["stats"] = st
        total_macs = sum(st["macs"].values())
        key = (total_macs, st["accum"], st["vector"], -len(lp["body"]))
        if best_key is None or key > best_key:
            best, best_key = lp, key
    return best


# ----------------------------------------------------------------------------
# llvm-mca.

def run_mca(mca, triple, cpu, mattr, body_lines, label, iterations=500):
    text = "%s:\n%s\n" % (label, "\n".join("\t" + l for l in body_lines))
    args = [mca, "-mtriple=" + triple, "-mcpu=" + cpu, "-iterations=%d" % iterations]
    if mattr:
        args.append("-mattr=" + mattr)
    p = subprocess.run(args, input=text, capture_output=True, text=True)
    if p.returncode != 0:
        # Drop what this LLVM cannot assemble, and say so.
        args.append("-skip-unsupported-instructions=parse-failure")
        p2 = subprocess.run(args, input=text, capture_output=True, text=True)
        if p2.returncode != 0:
            raise RuntimeError("llvm-mca failed: %s" % (p.stderr.strip().splitlines() or ["?"])[0])
        p = p2
    out = p.stdout
    total = int(re.search(r"Total Cycles:\s+(\d+)", out).group(1))
    iters = int(re.search(r"Iterations:\s+(\d+)", out).group(1))
    rthr = float(re.search(r"Block RThroughput:\s+([\d.]+)", out).group(1))
    # The busiest resource per iteration.
    busiest = None
    m = re.search(r"Resources:\n(.*?)\n\n\nResource pressure per iteration:\n(.*?)\n(.*?)\n", out, re.S)
    if m:
        names = {}
        for line in m.group(1).splitlines():
            mm = re.match(r"\[([\d.]+)\]\s+-\s+(\S+)", line.strip())
            if mm:
                names[mm.group(1)] = mm.group(2)
        cols = re.findall(r"\[([\d.]+)\]", m.group(2))
        vals = m.group(3).split()
        pressure = {}
        for c, v in zip(cols, vals):
            pressure[names.get(c, c)] = pressure.get(names.get(c, c), 0) + (0 if v == "-" else float(v))
        # Per unit: a group of n units shares its pressure.
        counts = {}
        for c in cols:
            counts[names.get(c, c)] = counts.get(names.get(c, c), 0) + 1
        per_unit = {k: pressure[k] / counts[k] for k in pressure}
        k = max(per_unit, key=per_unit.get)
        busiest = (k, per_unit[k])
    return {"cycles": total / iters, "rthroughput": rthr, "busiest": busiest}


def peak_blocks(arch):
    """Synthetic blocks of independent instructions: kind -> (lines, lanes each, mattr)."""
    if arch == "a64":
        acc = ["v%d" % i for i in range(8, 24)]
        return {
            "i8": [("smull", ["smull %s.8h, v0.8b, v1.8b" % a for a in acc], 8, ""),
                   ("smlal", ["smlal %s.8h, v0.8b, v1.8b" % a for a in acc], 8, ""),
                   ("sdot", ["sdot %s.4s, v0.16b, v1.16b" % a for a in acc], 16, "+dotprod")],
            "i16": [("smlal.4s", ["smlal %s.4s, v0.4h, v1.h[0]" % a for a in acc], 4, "")],
            "f32": [("fmla.4s", ["fmla %s.4s, v0.4s, v1.4s" % a for a in acc], 4, "")],
        }
    acc = ["q%d" % i for i in range(4, 16)]
    return {
        "i8": [("vmull.s8", ["vmull.s8 %s, d0, d1" % a for a in acc], 8, ""),
               ("vmlal.s8", ["vmlal.s8 %s, d0, d1" % a for a in acc], 8, ""),
               ("vsdot.s8", ["vsdot.s8 %s, q0, q1" % a for a in acc], 16, "+dotprod")],
        "i16": [("vmlal.s16", ["vmlal.s16 %s, d0, d1[0]" % a for a in acc], 4, "")],
        "f32": [("vfma.f32", ["vfma.f32 %s, q0, q1" % a for a in acc], 4, "")],
    }


def core_peaks(mca, cfg, has_dotprod):
    arch = cfg["arch"]
    peaks = {}
    for kind, blocks in peak_blocks(arch).items():
        best = None
        for (name, lines, lanes, mattr) in blocks:
            if mattr == "+dotprod" and not has_dotprod:
                continue
            r = run_mca(mca, cfg["triple"], cfg["cpu"], mattr, lines, ".Lpeak", 200)
            v = lanes * len(lines) / r["cycles"]
            if best is None or v > best[1]:
                best = (name, v)
        peaks[kind] = best
    return peaks


# ----------------------------------------------------------------------------

def compile_to_asm(entry, out_path):
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    res = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a == "-c":
            continue
        res.append(a)
    res += ["-S", "-o", out_path]
    p = subprocess.run(res, cwd=entry["directory"], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("compile failed: %s\n%s" % (" ".join(res), p.stderr))


def demangle(names):
    try:
        p = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
        return p.stdout.splitlines()
    except OSError:
        return names


def short_function(name):
    if not name:
        return "?"
    d = demangle([name])[0]
    d = re.sub(r"\(.*$", "", d)
    return d.replace("octet::", "").replace("(anonymous namespace)::", "")


def measure_loop(cfg, mca, mattr, loop, peaks):
    """llvm-mca's numbers for one loop, as a table row (without the kernel name)."""
    body = [line for (_, _, line) in loop["body"]]
    st = loop["stats"] if "stats" in loop else loop_stats(loop, cfg["arch"])
    mca_res = run_mca(mca, cfg["triple"], cfg["cpu"], mattr, body, loop["label"])
    macs = st["macs"]
    kind = max(macs, key=macs.get) if macs else None
    total = sum(macs.values())
    cyc = mca_res["cycles"]
    row = {
        "function": short_function(loop["function"]), "label": loop["label"],
        "instructions": len(body), "cycles": round(cyc, 2),
        "rthroughput": mca_res["rthroughput"], "busiest": mca_res["busiest"],
        "macs": macs, "mac_kind": kind, "macs_per_iter": total,
        "macs_per_cycle": round(total / cyc, 2) if total else None,
        "load_bytes": st["load_bytes"], "store_bytes": st["store_bytes"],
        "spills": st["spills"], "branches_inside": st["branches_inside"],
    }
    # int8 and int16 products against the core's int8 peak (its best int8
    # instruction), float ones against its fp32 FMA peak.
    if kind in ("i8", "i16"):
        row["peak"] = peaks["i8"]
    elif kind == "f32":
        row["peak"] = peaks["f32"]
    if total and row.get("peak"):
        row["fraction_of_peak"] = round(total / cyc / row["peak"][1], 3)
    return row


def analyse(cfg, db, mca, asm_dir, only, all_loops):
    entries = [e for e in db if "/runtime/kernels/neon/" in e["file"].replace("\\", "/")
               and e["file"].endswith(".cc")]
    entries.sort(key=lambda e: os.path.basename(e["file"]))
    rows = []
    has_dotprod = "neondot" in cfg["groups"]
    peaks = core_peaks(mca, cfg, has_dotprod)
    for e in entries:
        group = isa_group(e["file"])
        if group not in cfg["groups"]:
            continue
        base = os.path.basename(e["file"])[:-3]
        if only and not re.search(only, base):
            continue
        asm_path = os.path.join(asm_dir, "%s.%s.s" % (base, cfg["name"]))
        compile_to_asm(e, asm_path)
        with open(asm_path) as f:
            items = parse_asm(f.read(), cfg["arch"])
        loops = find_loops(items, cfg["arch"])
        hot = pick_hot_loop(loops, cfg["arch"])
        if hot is None:
            rows.append({"kernel": base, "error": "no loop found"})
            continue
        mattr = {"neondot": "+dotprod", "i8mm": "+i8mm"}.get(group, "")
        row = {"kernel": base, "loops": len(loops), "asm": os.path.relpath(asm_path)}
        row.update(measure_loop(cfg, mca, mattr, hot, peaks))
        rows.append(row)
        if all_loops:
            # Every other loop with multiply-accumulates (edge tiles, tails).
            for lp in loops:
                if lp is hot or not sum(lp["stats"]["macs"].values()):
                    continue
                other = {"kernel": base + " (other)", "asm": row["asm"]}
                other.update(measure_loop(cfg, mca, mattr, lp, peaks))
                rows.append(other)
    return {"config": cfg, "peaks": peaks, "kernels": rows}


def fmt_table(result, mca_name):
    cfg = result["config"]
    pk = result["peaks"]
    lines = []
    lines.append("### %s  (llvm-mca -mcpu=%s, %s)" % (cfg["board"], cfg["cpu"], mca_name))
    lines.append("")
    lines.append("Peaks from the model (independent instructions): int8 %.1f MACs/cycle (%s), "
                 "int16 %.1f (%s), fp32 %.1f FMAs/cycle (%s)." %
                 (pk["i8"][1], pk["i8"][0], pk["i16"][1], pk["i16"][0], pk["f32"][1], pk["f32"][0]))
    lines.append("")
    lines.append("| kernel | hot loop | instr | cycles/iter | bound | MACs/iter | MACs/cycle | "
                 "of peak | L1 B/iter ld+st | notes |")
    lines.append("|---|---|---:|---:|---|---:|---:|---:|---:|---|")
    for r in result["kernels"]:
        if "error" in r:
            lines.append("| %s | %s | | | | | | | | |" % (r["kernel"], r["error"]))
            continue
        bound = "latency" if r["cycles"] > 1.15 * r["rthroughput"] else (
            "%s %.1f" % r["busiest"] if r["busiest"] else "resources")
        macs = ", ".join("%d %s" % (v, k) for k, v in sorted(r["macs"].items())) or "-"
        mpc = "%.2f" % r["macs_per_cycle"] if r["macs_per_cycle"] else "-"
        frac = "%.0f%%" % (100 * r["fraction_of_peak"]) if r.get("fraction_of_peak") else "-"
        notes = []
        if r["spills"]:
            notes.append("%d stack access%s" % (r["spills"], "es" if r["spills"] > 1 else ""))
        if r["branches_inside"] > 0:
            notes.append("%d branch%s inside" % (r["branches_inside"],
                                                 "es" if r["branches_inside"] > 1 else ""))
        lines.append("| %s | %s %s | %d | %.2f | %s | %s | %s | %s | %d+%d | %s |" % (
            r["kernel"], r["function"], r["label"], r["instructions"], r["cycles"], bound,
            macs, mpc, frac, r["load_bytes"], r["store_bytes"], "; ".join(notes)))
    return "\n".join(lines)


# ----------------------------------------------------------------------------
# W2 (Llama: 12 layers, d 768, 12 heads of 64, SwiGLU FFN 2048, vocab 32000,
# untied head) on a Pi 4 and a Pi 5, from the modelled kernels plus the
# assumptions below. A prediction, not a measurement.

W2 = {"layers": 12, "d": 768, "heads": 12, "head_dim": 64, "ffn": 2048, "vocab": 32000,
      "prefill": 128, "decode": 128}

BOARDS = {
    # config: clock (GHz), read bandwidth (GB/s) at 1 and 4 threads, the share of
    # prefill time outside the GEMMs, the non-GEMM time of one decode step (ms).
    # Sources and reasoning: README.md, "ARM performance model".
    "pi4-a64": {"board": "Pi 4 (4x A72 @ 1.8 GHz), 64-bit", "ghz": 1.8, "bw": {1: 4.5, 4: 5.5},
                "other_share": 0.10, "other_decode_ms": 1.5, "packed": "qs8_packed_gemm_4x8c4__neon",
                "qk": "qs8_gemm_4x4c16__neon", "pv": "qu8s8_pv_4x8__neon"},
    "pi4-a32": {"board": "Pi 4 (4x A72 @ 1.8 GHz), 32-bit", "ghz": 1.8, "bw": {1: 4.5, 4: 5.5},
                "other_share": 0.10, "other_decode_ms": 1.5, "packed": "qs8_packed_gemm_4x8c4__neon",
                "qk": "qs8_gemm_4x4c16__neon", "pv": "qu8s8_pv_4x8__neon"},
    "pi5-a64": {"board": "Pi 5 (4x A76 @ 2.4 GHz), 64-bit", "ghz": 2.4, "bw": {1: 8.0, 4: 10.0},
                "other_share": 0.15, "other_decode_ms": 0.7,
                "packed": "qs8_packed_gemm_4x16c4__neondot",
                "qk": "qs8_gemm_4x4c16__neondot", "pv": "qu8s8_pv_4x8__neon"},
}
EFFICIENCY = 0.8      # whole linear layer vs its GEMM hot loop in llvm-mca (see README)
PARALLEL = 0.9        # 4-thread GEMM speed-up = 4 x this
OTHER_SPEEDUP_4T = 2  # the non-GEMM ops at 4 threads (small, partly serial)


def w2_counts():
    m = W2
    d, f, L = m["d"], m["ffn"], m["layers"]
    layer_macs = 4 * d * d + 3 * d * f          # q, k, v, o + gate, up, down
    head_macs = d * m["vocab"]
    T = m["prefill"]
    attn = L * m["heads"] * T * T * m["head_dim"]  # Q.K^T, and as many for P.V (full T x T)
    pos = T + m["decode"] / 2                    # mean decode position
    return {"layer_macs": layer_macs * L, "head_macs": head_macs, "attn_prefill": attn,
            "weight_bytes": layer_macs * L + head_macs,
            "kv_bytes": L * 2 * d * pos}         # int8 K and V read per decode step


def find_row(result, kernel, rows="hot"):
    rs = [r for r in result["kernels"] if r["kernel"].startswith(kernel) and r.get("macs_per_iter")]
    if not rs:
        return None
    if rows == "hot":
        return rs[0]
    return min(rs, key=lambda r: r["macs_per_iter"])  # the 1-row edge tile (M = 1)


def predict_w2(results):
    c = w2_counts()
    out = []
    for res in results:
        b = BOARDS.get(res["config"]["name"])
        if not b:
            continue
        hot = find_row(res, b["packed"])
        one = find_row(res, b["packed"], "min")
        qk = find_row(res, b["qk"])
        pv = find_row(res, b["pv"])
        if not (hot and one and qk and pv):
            continue
        hz = b["ghz"] * 1e9
        gemm = c["layer_macs"] * W2["prefill"] / (hot["macs_per_cycle"] * EFFICIENCY) / hz
        attn = (c["attn_prefill"] / qk["macs_per_cycle"] + c["attn_prefill"] / pv["macs_per_cycle"]) \
            / EFFICIENCY / hz
        row = {"board": b["board"], "gemm_mpc": hot["macs_per_cycle"],
               "gemm_m1_mpc": one["macs_per_cycle"]}
        for t in (1, 4):
            par = 1 if t == 1 else 4 * PARALLEL
            compute = (gemm + attn) / par
            other1 = (gemm + attn) * b["other_share"] / (1 - b["other_share"])
            other = other1 if t == 1 else other1 / OTHER_SPEEDUP_4T
            row["prefill_%dt" % t] = W2["prefill"] / (compute + other)
            mem = (c["weight_bytes"] + c["kv_bytes"]) / (b["bw"][t] * 1e9)
            comp = (c["layer_macs"] + c["head_macs"]) / (one["macs_per_cycle"] * EFFICIENCY) / hz / par
            step = max(mem, comp) + b["other_decode_ms"] / 1e3
            row["decode_%dt" % t] = 1 / step
            row["decode_bound_%dt" % t] = "memory" if mem >= comp else "compute"
        out.append(row)
    return c, out


def fmt_prediction(c, rows):
    lines = ["### W2 prediction (a model, not a measurement)", ""]
    lines.append("W2: %.1f M int8 multiply-adds per token in the layers, %.1f M in the head; "
                 "decode reads %.1f MB of int8 weights + %.1f MB of KV cache per token." % (
                     c["layer_macs"] / 1e6, c["head_macs"] / 1e6, c["weight_bytes"] / 1e6,
                     c["kv_bytes"] / 1e6))
    lines.append("")
    lines.append("| board | GEMM MACs/cycle (M>=4 / M=1) | prefill tok/s 1T | 4T | "
                 "decode tok/s 1T | 4T |")
    lines.append("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        lines.append("| %s | %.1f / %.1f | %.0f | %.0f | %.0f (%s) | %.0f (%s) |" % (
            r["board"], r["gemm_mpc"], r["gemm_m1_mpc"], r["prefill_1t"], r["prefill_4t"],
            r["decode_1t"], r["decode_bound_1t"], r["decode_4t"], r["decode_bound_4t"]))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", action="append", required=True,
                    help="ARCH=compile_commands.json (ARCH a64 or a32), repeatable")
    ap.add_argument("--mca", required=True, help="the llvm-mca program")
    ap.add_argument("--asm-dir", required=True, help="where the .s files go")
    ap.add_argument("--config", action="append", help="only these configurations (pi4-a64, ...)")
    ap.add_argument("--only", help="regular expression: only kernels whose name matches")
    ap.add_argument("--json", help="also write the results as JSON to this file")
    ap.add_argument("--all-loops", action="store_true",
                    help="also every other loop with multiply-accumulates (edge tiles)")
    ap.add_argument("--predict", action="store_true",
                    help="also predict W2 tokens/s on the boards (needs --all-loops)")
    ap.add_argument("--show-loop", action="store_true", help="print where each hot loop is")
    args = ap.parse_args()

    dbs = {}
    for d in args.db:
        arch, path = d.split("=", 1)
        with open(path) as f:
            dbs[arch] = json.load(f)
    args.asm_dir = os.path.abspath(args.asm_dir)
    os.makedirs(args.asm_dir, exist_ok=True)

    version = subprocess.run([args.mca, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"LLVM version (\d+)", version)
    major = int(m.group(1)) if m else 0
    mca_name = "LLVM %d" % major if major else os.path.basename(args.mca)

    results = []
    for cfg in CONFIGS:
        cfg = dict(cfg)
        if args.config and cfg["name"] not in args.config:
            continue
        if cfg["arch"] not in dbs:
            print("(%s: no compile database for %s; skipped)" % (cfg["name"], cfg["arch"]))
            continue
        if cfg["cpu"] == "neoverse-n1" and major < 17:
            # No N1 model before LLVM 17: cortex-a76 then means the A57 model.
            cfg["cpu"] = "cortex-a76"
            cfg["board"] += " [WARNING: LLVM %d models cortex-a76 as a Cortex-A57]" % major
        res = analyse(cfg, dbs[cfg["arch"]], args.mca, args.asm_dir, args.only, args.all_loops)
        results.append(res)
        print(fmt_table(res, mca_name))
        print()
        if args.show_loop:
            for r in res["kernels"]:
                if "asm" in r:
                    print("--- %s: %s %s (%s)" % (r["kernel"], r["function"], r["label"], r["asm"]))
    if args.predict:
        counts, rows = predict_w2(results)
        print(fmt_prediction(counts, rows))
        print()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
