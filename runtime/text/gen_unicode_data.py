#!/usr/bin/env python3
"""Generates runtime/text/unicode_data.inc and the Unicode test data.

Every table comes from one Unicode Character Database: the files of Debian's
`unicode-data` package (15.0.0 on Debian 12; `apt-get install unicode-data`,
they land in /usr/share/unicode). Python's own unicodedata (14.0 on Debian 12)
is used only as an independent check of the general categories, written into
the test data. Run from the repository root:

  python3 runtime/text/gen_unicode_data.py [--ucd /usr/share/unicode]

Outputs (all checked in; nothing runs at build time):
  runtime/text/unicode_data.inc           tables for unicode.cc
  tests/text/data/unicode_check.inc       category hashes from Python's unicodedata
  tests/text/data/NormalizationTest.txt   deterministic subset of the UCD file
  tests/text/data/GraphemeBreakTest.txt   the UCD file, whole
"""

import argparse
import bz2
import os
import re
import sys
import unicodedata

CATEGORIES = ["Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd",
              "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc",
              "Cf", "Cs", "Co", "Cn"]
GCB = ["Other", "CR", "LF", "Control", "Extend", "ZWJ", "Regional_Indicator", "Prepend",
       "SpacingMark", "L", "V", "T", "LV", "LVT"]
NCP = 0x110000
SBASE, LBASE, VBASE, TBASE = 0xAC00, 0x1100, 0x1161, 0x11A7
LCOUNT, VCOUNT, TCOUNT = 19, 21, 28
SCOUNT = LCOUNT * VCOUNT * TCOUNT

# Bits of a property record (must match unicode.cc).
BIT_WHITE_SPACE = 1 << 9
BIT_ALPHABETIC = 1 << 10
BIT_EXT_PICT = 1 << 11
BIT_CANON_DECOMP = 1 << 12
BIT_COMPAT_DECOMP = 1 << 13
BIT_COMPOSE_SECOND = 1 << 14
BIT_LOWER = 1 << 15
BIT_FOLD = 1 << 16
# A normalization boundary sits before the code point: text on either side
# normalizes independently (its decomposition starts with a starter, and for
# the composing forms that starter cannot be the second of a pair).
BIT_BOUNDARY_NFD = 1 << 17
BIT_BOUNDARY_NFKD = 1 << 18
BIT_BOUNDARY_NFC = 1 << 19
BIT_BOUNDARY_NFKC = 1 << 20
# NFC_QC / NFKC_QC = Yes (DerivedNormalizationProps): alone, the code point is
# already in that form.
BIT_NFC_YES = 1 << 21
BIT_NFKC_YES = 1 << 22


def data_lines(path):
    opener = bz2.open if path.endswith(".bz2") else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                yield [field.strip() for field in line.split(";")]


def parse_range(text):
    if ".." in text:
        a, b = text.split("..")
        return range(int(a, 16), int(b, 16) + 1)
    return range(int(text, 16), int(text, 16) + 1)


def read_property(path, name):
    cps = set()
    for fields in data_lines(path):
        if fields[1] == name:
            cps.update(parse_range(fields[0]))
    return cps


class Ucd:
    def __init__(self, root):
        self.root = root
        self.category = ["Cn"] * NCP
        self.ccc = [0] * NCP
        self.decomp = {}  # cp -> (is_compat, [cps]) single level
        self.lower = {}
        first = None
        for fields in data_lines(self.path("UnicodeData.txt")):
            cp = int(fields[0], 16)
            name = fields[1]
            if name.endswith(", First>"):
                first = cp
                continue
            lo = first if name.endswith(", Last>") else cp
            first = None
            for c in range(lo, cp + 1):
                self.category[c] = fields[2]
                self.ccc[c] = int(fields[3])
            if fields[5]:
                parts = fields[5].split()
                compat = parts[0].startswith("<")
                if compat:
                    parts = parts[1:]
                self.decomp[cp] = (compat, [int(p, 16) for p in parts])
            if fields[13]:
                self.lower[cp] = [int(fields[13], 16)]
        for fields in data_lines(self.path("SpecialCasing.txt")):
            if len(fields) >= 5 and fields[4]:
                continue  # conditional (Final_Sigma, language): Rust ignores them
            cp = int(fields[0], 16)
            lower = [int(p, 16) for p in fields[1].split()]
            if lower != [cp]:
                self.lower[cp] = lower
        self.white_space = read_property(self.path("PropList.txt"), "White_Space")
        self.alphabetic = read_property(self.path("DerivedCoreProperties.txt"), "Alphabetic")
        self.excluded = read_property(self.path("DerivedNormalizationProps.txt"),
                                      "Full_Composition_Exclusion")
        self.nfc_qc_not_yes = set()
        self.nfkc_qc_not_yes = set()
        for fields in data_lines(self.path("DerivedNormalizationProps.txt")):
            if fields[1] == "NFC_QC":
                self.nfc_qc_not_yes.update(parse_range(fields[0]))
            elif fields[1] == "NFKC_QC":
                self.nfkc_qc_not_yes.update(parse_range(fields[0]))
        self.ext_pict = read_property(self.path("emoji/emoji-data.txt"), "Extended_Pictographic")
        self.gcb = [0] * NCP
        for fields in data_lines(self.path("auxiliary/GraphemeBreakProperty.txt")):
            for c in parse_range(fields[0]):
                self.gcb[c] = GCB.index(fields[1])
        self.fold = {}
        for fields in data_lines(self.path("CaseFolding.txt")):
            if fields[1] in ("C", "S"):
                self.fold[int(fields[0], 16)] = int(fields[2], 16)
        self.age15 = set()
        for fields in data_lines(self.path("DerivedAge.txt")):
            if fields[1] == "15.0":
                self.age15.update(parse_range(fields[0]))
        with open(self.path("ReadMe.txt"), encoding="utf-8") as f:
            m = re.search(r"Version (\d+\.\d+\.\d+)", f.read())
        self.version = m.group(1) if m else "unknown"

    def path(self, name):
        for candidate in (name, name + ".bz2"):
            p = os.path.join(self.root, candidate)
            if os.path.exists(p):
                return p
        raise SystemExit(f"missing UCD file {name} under {self.root}")

    def full_decomp(self, cp, compat):
        if SBASE <= cp < SBASE + SCOUNT:
            return [cp]  # Hangul is algorithmic in unicode.cc
        entry = self.decomp.get(cp)
        if entry is None or (entry[0] and not compat):
            return [cp]
        out = []
        for c in entry[1]:
            out.extend(self.full_decomp(c, compat))
        return out


def hangul_decomp(cp):
    s = cp - SBASE
    out = [LBASE + s // (VCOUNT * TCOUNT), VBASE + (s % (VCOUNT * TCOUNT)) // TCOUNT]
    if s % TCOUNT:
        out.append(TBASE + s % TCOUNT)
    return out


def utf8_len(cp):
    return 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4


def two_level(values, shift):
    size = 1 << shift
    blocks, index, stage1 = [], {}, []
    for start in range(0, NCP, size):
        block = tuple(values[start:start + size])
        if block not in index:
            index[block] = len(blocks)
            blocks.append(block)
        stage1.append(index[block])
    return stage1, blocks


def c_array(ctype, name, values, per_line=16, fmt="{}"):
    lines = [f"static const {ctype} {name}[{len(values)}] = {{"]
    for i in range(0, len(values), per_line):
        lines.append("  " + ", ".join(fmt.format(v) for v in values[i:i + per_line]) + ",")
    lines.append("};")
    return "\n".join(lines)


def int_type(max_value):
    return "uint8_t" if max_value < 256 else "uint16_t" if max_value < 65536 else "uint32_t"


def generate_tables(ucd, command):
    canon = {}
    compat = {}
    for cp in ucd.decomp:
        d = ucd.full_decomp(cp, False)
        if d != [cp]:
            canon[cp] = d
        k = ucd.full_decomp(cp, True)
        if k != [cp]:
            compat[cp] = k
    compose = {}
    for cp, (is_compat, parts) in ucd.decomp.items():
        if not is_compat and len(parts) == 2 and cp not in ucd.excluded:
            compose[(parts[0], parts[1])] = cp
    compose_second = {b for (_, b) in compose}
    jamo_second = set(range(VBASE, VBASE + VCOUNT)) | set(range(TBASE + 1, TBASE + TCOUNT))

    def boundary_bits(cp):
        bits = 0
        for compat_form, bit_d, bit_c in ((False, BIT_BOUNDARY_NFD, BIT_BOUNDARY_NFC),
                                          (True, BIT_BOUNDARY_NFKD, BIT_BOUNDARY_NFKC)):
            first = hangul_decomp(cp)[0] if SBASE <= cp < SBASE + SCOUNT else \
                ucd.full_decomp(cp, compat_form)[0]
            if ucd.ccc[first] == 0:
                bits |= bit_d
                if first not in compose_second and first not in jamo_second:
                    bits |= bit_c
        return bits

    # The worst output/input byte ratio of any decomposition: kMaxNormalizeGrowth.
    growth = 1.0
    for table in (canon, compat):
        for cp, d in table.items():
            growth = max(growth, sum(map(utf8_len, d)) / utf8_len(cp))
    for s in range(SBASE, SBASE + SCOUNT):
        growth = max(growth, sum(map(utf8_len, hangul_decomp(s))) / 3)
    if growth != 11.0:
        raise SystemExit(f"max normalization growth is {growth}; update unicode.h")
    multi_lower = [cp for cp, low in ucd.lower.items() if len(low) > 1]
    if multi_lower != [0x130]:
        raise SystemExit(f"multi-code-point lowercase mappings changed: {multi_lower}")
    for cp, low in ucd.lower.items():
        if sum(map(utf8_len, low)) > 1.5 * utf8_len(cp):
            raise SystemExit(f"lowercase of U+{cp:04X} grows more than 1.5x")

    orbits = {}
    for cp, f in ucd.fold.items():
        orbits.setdefault(f, {f}).add(cp)
    orbit_next = {}
    for members in orbits.values():
        ordered = sorted(members)
        for i, cp in enumerate(ordered):
            orbit_next[cp] = ordered[(i + 1) % len(ordered)]

    records, record_index, values = [], {}, []
    for cp in range(NCP):
        r = CATEGORIES.index(ucd.category[cp]) | (ucd.gcb[cp] << 5)
        if cp in ucd.white_space: r |= BIT_WHITE_SPACE
        if cp in ucd.alphabetic: r |= BIT_ALPHABETIC
        if cp in ucd.ext_pict: r |= BIT_EXT_PICT
        if cp in canon: r |= BIT_CANON_DECOMP
        if cp in compat: r |= BIT_COMPAT_DECOMP
        if cp in compose_second: r |= BIT_COMPOSE_SECOND
        if cp in ucd.lower and ucd.lower[cp] != [cp]: r |= BIT_LOWER
        if cp in orbit_next: r |= BIT_FOLD
        r |= boundary_bits(cp)
        if cp not in ucd.nfc_qc_not_yes: r |= BIT_NFC_YES
        if cp not in ucd.nfkc_qc_not_yes: r |= BIT_NFKC_YES
        r |= ucd.ccc[cp] << 24
        if r not in record_index:
            record_index[r] = len(records)
            records.append(r)
        values.append(record_index[r])
    if len(records) > 256:
        raise SystemExit(f"{len(records)} property records: widen kPropStage2 to uint16_t")

    best = None
    for shift in range(4, 11):
        stage1, blocks = two_level(values, shift)
        size = len(stage1) * (1 if len(blocks) <= 256 else 2) + (len(blocks) << shift)
        if best is None or size < best[0]:
            best = (size, shift, stage1, blocks)
    _, shift, stage1, blocks = best

    # One key list for both kinds; equal sequences (most compatibility
    # decompositions of canonically decomposable letters) are stored once.
    decomp_data, seq_offset = [], {}
    def pack(seq):
        if seq is None:
            return 0
        key = tuple(seq)
        if key not in seq_offset:
            seq_offset[key] = len(decomp_data)
            decomp_data.extend(seq)
        return (seq_offset[key] << 5) | len(seq)
    decomp_keys = sorted(set(canon) | set(compat))
    canon_vals = [pack(canon.get(cp)) for cp in decomp_keys]
    compat_vals = [pack(compat.get(cp)) for cp in decomp_keys]
    assert max(len(d) for d in compat.values()) < 32
    assert set(canon) <= set(compat)

    compose_keys = sorted(compose)
    lower_keys = sorted(cp for cp in ucd.lower if len(ucd.lower[cp]) == 1 and ucd.lower[cp] != [cp])
    fold_keys = sorted(ucd.fold)
    orbit_keys = sorted(orbit_next)

    hexfmt = "0x{:X}"
    out = [
        f"// Generated by runtime/text/gen_unicode_data.py from the Unicode Character Database "
        f"{ucd.version}",
        f"// (Debian package unicode-data). Do not edit; regenerate with:",
        f"//   {command}",
        "// Included by unicode.cc only.",
        "",
        f'#define OCTET_UNICODE_VERSION "{ucd.version}"',
        "",
        f"// Property records, two-level: kPropRecords[kPropStage2[(kPropStage1[cp >> {shift}] "
        f"<< {shift}) + (cp & {(1 << shift) - 1})]].",
        f"constexpr int kPropShift = {shift};",
        c_array(int_type(len(blocks) - 1), "kPropStage1", stage1, 24),
        c_array("uint8_t", "kPropStage2", [v for b in blocks for v in b], 24),
        c_array("uint32_t", "kPropRecords", records, 8, hexfmt),
        "",
        "// Full canonical and compatibility decompositions (Hangul syllables excluded), by sorted",
        "// key: value = offset << 5 | length into kDecompData, 0 for none.",
        c_array("uint32_t", "kDecompKeys", decomp_keys, 12, hexfmt),
        c_array("uint32_t", "kCanonVals", canon_vals, 12, hexfmt),
        c_array("uint32_t", "kCompatVals", compat_vals, 12, hexfmt),
        c_array("uint32_t", "kDecompData", decomp_data, 12, hexfmt),
        "",
        "// Primary composites: key = first << 21 | second, sorted.",
        c_array("uint64_t", "kComposeKeys", [(a << 21) | b for a, b in compose_keys], 8, hexfmt),
        c_array("uint32_t", "kComposeVals", [compose[k] for k in compose_keys], 12, hexfmt),
        "",
        "// Single-code-point lowercase mappings that change the code point (U+0130 is in code).",
        c_array("uint32_t", "kLowerKeys", lower_keys, 12, hexfmt),
        c_array("uint32_t", "kLowerVals", [ucd.lower[k][0] for k in lower_keys], 12, hexfmt),
        "",
        "// Simple case folding (CaseFolding.txt C + S) and the next member of each fold orbit.",
        c_array("uint32_t", "kFoldKeys", fold_keys, 12, hexfmt),
        c_array("uint32_t", "kFoldVals", [ucd.fold[k] for k in fold_keys], 12, hexfmt),
        c_array("uint32_t", "kOrbitKeys", orbit_keys, 12, hexfmt),
        c_array("uint32_t", "kOrbitNext", [orbit_next[k] for k in orbit_keys], 12, hexfmt),
        "",
    ]
    return "\n".join(out), len(stage1) * (1 if len(blocks) <= 256 else 2) + (len(blocks) << shift)


def fnv1a64(cps):
    h = 0xCBF29CE484222325
    for cp in cps:
        for k in range(4):
            h ^= (cp >> (8 * k)) & 0xFF
            h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def ranges_of(cps):
    out = []
    for cp in sorted(cps):
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return out


def generate_check(ucd, command):
    """Category hashes from Python's unicodedata, an independent reading of the UCD."""
    py_version = unicodedata.unidata_version
    skip = set()
    if py_version != ucd.version:
        skip = set(ucd.age15) if py_version.startswith("14.") else None
        if skip is None:
            raise SystemExit(f"no known delta between Python's Unicode {py_version} and {ucd.version}")
    by_cat = {c: [] for c in CATEGORIES}
    for cp in range(NCP):
        if cp in skip:
            continue
        py = unicodedata.category(chr(cp))
        if py != ucd.category[cp]:
            raise SystemExit(f"U+{cp:04X}: Python says {py}, UCD {ucd.version} says "
                             f"{ucd.category[cp]}, and it is not new in 15.0")
        by_cat[py].append(cp)
    lines = [
        f"// Generated by runtime/text/gen_unicode_data.py: General_Category per Python's "
        f"unicodedata {py_version},",
        f"// FNV-1a 64 over each category's code points (4 bytes little-endian, increasing).",
        f"// Code points new in Unicode {ucd.version} (DerivedAge) are skipped: Python "
        f"{py_version} has them as Cn.",
        f"//   {command}",
        "struct CategoryCheck { const char* name; uint32_t count; uint64_t hash; };",
        "static const CategoryCheck kCategoryChecks[] = {",
    ]
    for c in CATEGORIES:
        lines.append(f'  {{"{c}", {len(by_cat[c])}u, 0x{fnv1a64(by_cat[c]):016X}ull}},')
    lines.append("};")
    lines.append("// [first, last] ranges skipped by the check.")
    lines.append("static const uint32_t kCategorySkipped[][2] = {")
    rs = ranges_of(skip) or [[0x110000, 0x110000]]
    for a, b in rs:
        lines.append(f"  {{0x{a:X}, 0x{b:X}}},")
    lines.append("};")
    return "\n".join(lines) + "\n"


def normalization_subset(ucd, command):
    """All of Parts 0, 2 and 3; from Part 1 every Hangul-free line whose code
    points touch composition exclusions, Hangul jamo, singletons or
    non-starter decompositions, every 3rd other line, and every 41st
    syllable (Hangul is algorithmic, its ends and every LV/LVT shape are
    kept). Part 1's first column is kept whole as ranges in the header so
    the test can check that every other code point is left unchanged."""
    header = [
        f"# Subset of NormalizationTest.txt (Unicode {ucd.version}) made by",
        f"#   {command}",
        "# Format as in the UCD file (comments dropped). @Part1Set lines list, as ranges,",
        "# every code point of the full Part 1 (all others normalize to themselves).",
    ]
    body, part1 = [], set()
    part, n1 = None, 0
    special = set(ucd.excluded)
    for cp, (compat, parts) in ucd.decomp.items():
        if not compat and (len(parts) == 1 or ucd.ccc[parts[0]] != 0):
            special.add(cp)
    with bz2.open(ucd.path("NormalizationTest.txt"), "rt", encoding="utf-8") as f:
        for raw in f:
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("@Part"):
                part = line.split()[0]
                body.append(part)
                continue
            cols = [[int(x, 16) for x in c.split()] for c in line.split(";")[:5]]
            if part != "@Part1":
                body.append(line)
                continue
            cp = cols[0][0]
            part1.add(cp)
            every = set(x for c in cols for x in c)
            if SBASE <= cp < SBASE + SCOUNT:
                keep = cp in (SBASE, SBASE + SCOUNT - 1) or (cp - SBASE) % 41 == 0
            elif every & special or any(0x1100 <= x <= 0x11FF for x in every):
                keep = True
            else:
                n1 += 1
                keep = n1 % 3 == 0
            if keep:
                body.append(line)
    set_lines = []
    rs = ranges_of(part1)
    for i in range(0, len(rs), 8):
        set_lines.append("@Part1Set " + " ".join(f"{a:X}..{b:X}" for a, b in rs[i:i + 8]))
    return "\n".join(header + set_lines + body) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ucd", default="/usr/share/unicode", help="UCD directory (unicode-data)")
    ap.add_argument("--root", default=".", help="repository root")
    args = ap.parse_args()
    command = "python3 runtime/text/gen_unicode_data.py" + (
        "" if args.ucd == "/usr/share/unicode" else " --ucd <UCD dir>")
    ucd = Ucd(args.ucd)
    tables, table_bytes = generate_tables(ucd, command)
    with open(os.path.join(args.root, "runtime/text/unicode_data.inc"), "w") as f:
        f.write(tables)
    data_dir = os.path.join(args.root, "tests/text/data")
    os.makedirs(data_dir, exist_ok=True)
    with open(os.path.join(data_dir, "unicode_check.inc"), "w") as f:
        f.write(generate_check(ucd, command))
    with open(os.path.join(data_dir, "NormalizationTest.txt"), "w") as f:
        f.write(normalization_subset(ucd, command))
    with open(ucd.path("auxiliary/GraphemeBreakTest.txt"), encoding="utf-8") as src, \
            open(os.path.join(data_dir, "GraphemeBreakTest.txt"), "w") as dst:
        dst.write(src.read())
    print(f"Unicode {ucd.version}: property table {table_bytes} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
