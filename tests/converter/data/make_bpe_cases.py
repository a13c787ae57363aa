#!/usr/bin/python3
"""Writes austen_bpe_cases.json beside this file: test strings and the token ids that Hugging Face
tokenizers would give for them with models/austen/tokenizer.json (encode without special tokens).
tests/converter/calibration_text_test.cc checks the converter's calibration text encoder (the
runtime's compiled tokenizer) against them.

    /usr/bin/python3 tests/converter/data/make_bpe_cases.py

Standard library only. The reference is models/austen/bpe.py, with two checks on it:

1. Its pre-tokenizer writes GPT-2's \\p{L} as [^\\W\\d_] and \\p{N} as \\d with Python's `re`. That is
   exact for ASCII and for letters and decimal digits of every script, but not for
   - numbers that are not decimal digits (categories No and Nl: "²", "½", "Ⅻ", "①"), which
     Python's \\w counts as alphanumeric, so bpe.py reads them as letters, and
   - U+001C..U+001F, which Python's \\s counts as whitespace and Oniguruma (tokenizers' regex
     engine) does not.
   So the expected pre-tokens come from GPT-2's pattern itself, with \\p{L}, \\p{N} and \\s spelled
   out as character sets from unicodedata, run by `re`.
   The cases where bpe.py splits differently are listed in BPE_PY_DIFFERS; the script checks that
   the list is exactly those, and a case's "note" says so.
2. Its Tokenizer._bpe merges every occurrence of the lowest-ranked pair in one pass (GPT-2's
   encoder.py), where tokenizers merges one pair at a time by (rank, position). The two agree when
   every merge comes after the merges that make its two parts, which is checked below for the
   Austen merges.

The Austen vocabulary has no merge that involves a byte of a non-ASCII character, nor one between
two whitespace bytes, so its ids cannot show how a non-ASCII character is classed: bpe.py's
different pre-tokens give the same ids here (the expected ids are still made from the exact
pattern). The runtime's tokenizer tests check the classes against Hugging Face's own goldens.

When the Debian package python3-regex is installed, the expected pre-tokens are also compared with
the `regex` module running the original pattern.
"""
import hashlib
import json
import os
import platform
import re
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
TOKENIZER = os.path.join(ROOT, "models", "austen", "tokenizer.json")
OUT = os.path.join(HERE, "austen_bpe_cases.json")
sys.path.insert(0, os.path.join(ROOT, "models", "austen"))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import bpe  # noqa: E402

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

CASES = [
    # English prose, punctuation, quotes.
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, "
    "must be in want of a wife.",
    '"My dear Mr. Bennet," said his lady to him one day, "have you heard that Netherfield Park '
    'is let at last?"',
    "\u201cOh! single, my dear, to be sure!\u201d \u2014 said she; \u2018what a fine thing for our "
    "girls!\u2019",
    "Mr.Darcy's e-mail (snake_case_name) [x=1+2*3] {C++17}; 50% & #hash @at ~tilde `tick` | pipe \\",
    # Apostrophes: the contractions are lowercase ASCII only.
    "She's here; it's true. They're sure we've met. I'm glad you'll stay, he'd say.",
    "Don't! Can't? Won't... SHE'S WE'VE I'M YOU'LL HE'D 'tis 'twas rock 'n' roll ''s 's '",
    "Elizabeth\u2019s sister \u2019s curly apostrophes ' s 'S 'Re 'LL",
    # Numbers.
    "In 1811, \u00a35,000 a year; 10000 pounds, 3.14159 and the 2nd of the 12th, 007.",
    "\u00a3 sign: \u00a310 and \u00a3 20 and 20\u00a3",
    # Whitespace: runs, newlines, tabs, leading and trailing.
    "a  b   c    d     e",
    "   leading spaces",
    "trailing spaces   ",
    "tab\there\t\tand\t",
    "line one\nline two\n\nline four\r\nline five\n",
    "\n\n\n",
    " ",
    "  ",
    "\t",
    "x \ty\t z \n w",
    "end with newline and spaces  \n  ",
    "no\u00a0break\u2003em\u3000ideographic\u2028line",
    # Non-ASCII letters, other scripts, emoji.
    "caf\u00e9 na\u00efve fa\u00e7ade Stra\u00dfe \u03a9MEGA \u03a9 \u00c5ngstr\u00f6m",
    "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8\u3001\u6f22\u5b57\u3002",
    "\u039a\u03b1\u03bb\u03b7\u03bc\u03ad\u03c1\u03b1 \u03ba\u03cc\u03c3\u03bc\u03b5!",
    "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440! \u0401\u043b\u043a\u0430 "
    "\u0438 \u0431\u0435\u0440\u0451\u0437\u0430.",
    "emoji \U0001f600\U0001f44d\U0001f3fd family \U0001f468\u200d\U0001f469\u200d\U0001f467 "
    "flag \U0001f1ec\U0001f1e7",
    "decomposed e\u0301 and composed \u00e9; Hangul \ud55c\uad6d\uc5b4; Thai \u0e20\u0e32\u0e29\u0e32",
    # Decimal digits of other scripts (Nd): Arabic-Indic, Devanagari, Thai, fullwidth.
    "digits \u0663\u0664\u0665 \u096a\u0968 \u0e53 \uff11\uff12",
    "\u0627\u0644\u0639\u0631\u0628\u064a\u0629 \u0663 \u05e2\u05d1\u05e8\u05d9\u05ea",
    # Numbers that are not decimal digits, and information separators: see BPE_PY_DIFFERS.
    "x\u00b2 + y\u00b3, \u00bd cup, chapter \u216b, \u2460\u2461",
    "a\u00b2b",
    "field\u001fseparator \u001cfile",
    "a  \u001cb",
    "a  \u00a0b and a \u3000\u3000 c",
    # Long words and runs.
    "Antidisestablishmentarianism and incomprehensibilities",
    "aaaaaaaaaaaaaaaa eeeeeeeeee !!!!!!! ---------- ...... ,,,, '''' \"\"\"\"",
    "",
]

# The cases whose pre-tokens bpe.py gets wrong (see the docstring).
BPE_PY_DIFFERS = {
    "x\u00b2 + y\u00b3, \u00bd cup, chapter \u216b, \u2460\u2461",
    "a\u00b2b",
    "field\u001fseparator \u001cfile",
    "a  \u001cb",
}


def char_set(predicate):
    """A `re` character set body for the code points where predicate(cp) holds."""
    parts, start = [], None
    for cp in range(0x110001):
        inside = cp < 0x110000 and predicate(cp)
        if inside and start is None:
            start = cp
        elif not inside and start is not None:
            parts.append(re.escape(chr(start)) if start == cp - 1 else
                         f"{re.escape(chr(start))}-{re.escape(chr(cp - 1))}")
            start = None
    return "".join(parts)


def exact_pattern():
    """GPT-2's pattern with its classes spelled out (Unicode of this Python's unicodedata)."""
    letter = char_set(lambda cp: unicodedata.category(chr(cp)) in ("Lu", "Ll", "Lt", "Lm", "Lo"))
    number = char_set(lambda cp: unicodedata.category(chr(cp)) in ("Nd", "Nl", "No"))
    space = char_set(lambda cp: chr(cp).isspace() and not 0x1C <= cp <= 0x1F)  # White_Space
    p = (GPT2_PATTERN.replace(r"[^\s\p{L}\p{N}]", f"[^{space}{letter}{number}]")
         .replace(r"\p{L}", f"[{letter}]").replace(r"\p{N}", f"[{number}]")
         .replace(r"(?!\S)", f"(?![^{space}])").replace(r"\s", f"[{space}]"))
    return re.compile(p)


def check_merge_order(tok):
    """Every merge comes after the merges that make its parts (so one-pass and one-at-a-time
    merging agree)."""
    made_at = {}
    for rank, (left, right) in enumerate(tok.merges):
        for part in (left, right):
            if len(part) > 1 and made_at.get(part, rank) >= rank:
                sys.exit(f"merge {rank} uses {part!r} before a merge makes it")
        if left + right in made_at:
            sys.exit(f"merge {rank} makes {left + right!r} a second time")
        made_at[left + right] = rank


def main():
    tok = bpe.Tokenizer.load(TOKENIZER)
    check_merge_order(tok)
    pattern = exact_pattern()
    try:
        import regex
        original = regex.compile(GPT2_PATTERN)
    except ImportError:
        original = None
        print("python3-regex is not installed: pre-tokens not compared with the regex module")

    cases = []
    for text in CASES:
        pieces = pattern.findall(text)
        assert "".join(pieces) == text, text
        if original is not None and original.findall(text) != pieces:
            sys.exit(f"regex module disagrees on {text!r}: {original.findall(text)} vs {pieces}")
        byte_pieces = ["".join(bpe.BYTE_CHAR[b] for b in p.encode("utf-8")) for p in pieces]
        ids = [tok.vocab[s] for piece in byte_pieces for s in tok._bpe(piece)]
        case = {"text": text, "ids": ids}
        differs = bpe.PATTERN.findall(text) != pieces
        if differs != (text in BPE_PY_DIFFERS):
            sys.exit(f"BPE_PY_DIFFERS is wrong about {text!r}")
        if differs:
            case["note"] = ("bpe.py pre-tokenizes this differently; ids from the exact GPT-2 "
                            "pattern and bpe.py's merges")
        else:
            assert ids == tok.encode(text), text
        cases.append(case)

    with open(TOKENIZER, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    header = {
        "generated_by": "tests/converter/data/make_bpe_cases.py",
        "python": platform.python_version(),
        "unicode": unicodedata.unidata_version,
        "tokenizer": "models/austen/tokenizer.json",
        "tokenizer_sha256": digest,
    }
    lines = ["{"]
    lines += [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in header.items()]
    lines.append(' "cases": [')
    lines.append(",\n".join("  " + json.dumps(c) for c in cases))
    lines += [" ]", "}", ""]
    with open(OUT, "w", encoding="ascii") as f:
        f.write("\n".join(lines))
    print(f"{OUT}: {len(cases)} cases, {sum(len(c['ids']) for c in cases)} ids")


if __name__ == "__main__":
    main()
