#!/usr/bin/env python3
"""Writes converter/quantize/calibration_text.inc: the built-in calibration
text of octet-convert (models that cannot write their own: encoders and
encoder-decoders), public-domain prose in six languages taken from Debian
packages, with its provenance.

    scripts/make-calibration-text.py [OUT]      # needs apt-get download and dpkg-deb

Sources (Debian 12 "bookworm", main):
  golang-golang-x-text-dev  encoding/testdata/*-utf-8.txt, texts derived from
                            Project Gutenberg: French (Voltaire, Candide, 1759;
                            ebook 4650), Japanese (Akutagawa, Rashomon, 1915;
                            ebook 1982), Chinese (Sunzi, The Art of War; ebook
                            23864, traditional characters), Korean (Hyun
                            Jin-geon, A Lucky Day, 1924; the story only, not the
                            modern introduction before it)
  sword-text-kjv            the King James Version (English), SWORD zText module
  sword-text-sparv          the Reina-Valera 1909 (Spanish), SWORD zText module;
                            both packages' copyright files: public domain
Each language gives PARAGRAPHS passages of at least MIN_BYTES bytes, from the
start of the text; the first CALIBRATION of each are the calibration, the rest
are held out for measuring (octet-convert never measures on what it tuned on).
The output is deterministic for the same package versions (they are recorded).
"""

import glob
import os
import re
import struct
import subprocess
import sys
import tempfile
import zlib

PARAGRAPHS = 5
CALIBRATION = 3
MIN_BYTES = 420

PACKAGES = ["golang-golang-x-text-dev", "sword-text-kjv", "sword-text-sparv"]


def fetch(work):
    """Downloads and unpacks the packages into work/root; returns their versions."""
    versions = {}
    root = os.path.join(work, "root")
    os.makedirs(root, exist_ok=True)
    for p in PACKAGES:
        subprocess.run(["apt-get", "download", p], cwd=work, check=True,
                       stdout=subprocess.DEVNULL)
        deb = sorted(glob.glob(os.path.join(work, p + "_*.deb")))[-1]
        versions[p] = subprocess.run(["dpkg-deb", "-f", deb, "Version"], check=True,
                                     capture_output=True, text=True).stdout.strip()
        subprocess.run(["dpkg-deb", "-x", deb, root], check=True)
    return root, versions


def gutenberg_paragraphs(path, skip_lines, cjk):
    """The text after the file's header (and skip_lines more), as paragraphs
    (blank-line separated, lines joined with spaces), or for Chinese and
    Japanese (lines wrapped anywhere, no spaces) as sentences (ending in
    。！？), stopping before Gutenberg's licence."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")[3 + skip_lines:]
    paragraphs, current = [], []
    for line in lines:
        if "End of the Project Gutenberg" in line or "End of Project Gutenberg" in line:
            break
        line = line.strip()
        if cjk:
            current.append(line)
            continue
        if not line:
            if current:
                paragraphs.append(("" if cjk else " ").join(current))
                current = []
            continue
        current.append(line)
    if cjk:
        return [t for t in re.split(r"(?<=[。！？])", "".join(current)) if t]
    if current:
        paragraphs.append(" ".join(current))
    # Editors' footnotes ("[1] ...") are not the author's prose.
    return [p for p in paragraphs if not p.startswith("[")]


def ztext_verses(module_dir, testament):
    """Every verse of one testament of a SWORD zText module, in order, as
    plain text (OSIS markup and notes removed); empty entries skipped."""
    def read(ext):
        with open(os.path.join(module_dir, testament + "." + ext), "rb") as f:
            return f.read()
    blocks_index, blocks, verses_index = read("bzs"), read("bzz"), read("bzv")
    cache = {}
    out = []
    for i in range(len(verses_index) // 10):
        block, offset, size = struct.unpack_from("<IIH", verses_index, i * 10)
        if size == 0:
            continue
        if block not in cache:
            start, length, _ = struct.unpack_from("<III", blocks_index, block * 12)
            cache[block] = zlib.decompress(blocks[start:start + length])
        text = cache[block][offset:offset + size].decode("utf-8")
        text = re.sub(r"<note\b.*?</note>", "", text, flags=re.S)
        text = re.sub(r"<[^>]+>", "", text)
        text = re.sub(r"\s+", " ", text).strip()
        if text and text[-1] in ".;:,!?":  # verses, not the books' titles
            out.append(text)
    return out


def module(sword, key):
    """The module directory whose name holds `key` (any case)."""
    for name in sorted(os.listdir(sword)):
        if key in name.lower():
            return os.path.join(sword, name)
    sys.exit(f"no SWORD module like {key} in {sword}")


def passages(pieces, joiner, count):
    """Consecutive pieces joined until each passage has MIN_BYTES bytes."""
    out, current = [], []
    for p in pieces:
        current.append(p)
        text = joiner.join(current)
        if len(text.encode("utf-8")) >= MIN_BYTES:
            out.append(text)
            current = []
            if len(out) == count:
                break
    if len(out) < count:
        sys.exit(f"not enough text for {count} passages")
    return out


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "converter", "quantize",
        "calibration_text.inc")
    with tempfile.TemporaryDirectory() as work:
        root, versions = fetch(work)
        data = os.path.join(root, "usr/share/gocode/src/golang.org/x/text/encoding/testdata")
        sword = os.path.join(root, "usr/share/sword/modules/texts/ztext")
        languages = [
            ("en", "English: the King James Version, Genesis", "sword-text-kjv",
             passages(ztext_verses(module(sword, "kjv"), "ot"), " ", PARAGRAPHS)),
            ("es", "Spanish: the Reina-Valera 1909, Genesis", "sword-text-sparv",
             passages(ztext_verses(module(sword, "rv1909"), "ot"), " ", PARAGRAPHS)),
            ("fr", "French: Voltaire, Candide (1759), Project Gutenberg ebook 4650, from chapter 1",
             "golang-golang-x-text-dev",
             passages(gutenberg_paragraphs(os.path.join(data, "candide-utf-8.txt"), 26, False),
                      " ", PARAGRAPHS)),
            ("ja", "Japanese: Akutagawa Ryunosuke, Rashomon (1915), Project Gutenberg ebook 1982, "
                   "after the title",
             "golang-golang-x-text-dev",
             passages(gutenberg_paragraphs(os.path.join(data, "rashomon-utf-8.txt"), 4, True),
                      "", PARAGRAPHS)),
            ("zh", "Chinese: Sunzi, The Art of War (traditional characters), Project Gutenberg "
                   "ebook 23864", "golang-golang-x-text-dev",
             passages(gutenberg_paragraphs(
                 os.path.join(data, "sunzi-bingfa-traditional-utf-8.txt"), 0, True),
                 "", PARAGRAPHS)),
            ("ko", "Korean: Hyun Jin-geon, A Lucky Day (1924), the story from its line 12",
             "golang-golang-x-text-dev",
             passages(gutenberg_paragraphs(os.path.join(data, "unsu-joh-eun-nal-utf-8.txt"), 8,
                                           False), " ", PARAGRAPHS)),
        ]
    lines = [
        "// Generated by scripts/make-calibration-text.py; do not edit. The built-in",
        "// calibration text of octet-convert: public-domain prose, " + str(PARAGRAPHS) +
        " passages per language,",
        "// the first " + str(CALIBRATION) + " to calibrate on, the others held out to measure.",
        "// Sources (Debian 12 packages, main):",
    ]
    for p in PACKAGES:
        lines.append(f"//   {p} {versions[p]}")
    for code, what, package, _ in languages:
        lines.append(f"//   {code}: {what} ({package})")
    lines.append("// Each entry: {language, passage, held out}.")
    for code, _, _, texts in languages:
        for i, t in enumerate(texts):
            if ")octet\"" in t:
                sys.exit("a passage holds the raw string's delimiter")
            held = "true" if i >= CALIBRATION else "false"
            lines.append(f'{{"{code}", R"octet({t})octet", {held}}},')
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {out_path}: {sum(len(t) for *_, ts in languages for t in ts)} characters")


if __name__ == "__main__":
    main()
