"""The King James Version from Debian's sword-text-kjv, as plain text, and the split: a corpus
unlike the novels (archaic English, verse structure, names), for a model the converter was not
tuned against.

The SWORD zText module is read by scripts/make-calibration-text.py's reader (the same verses,
notes and markup removed). Consecutive verses are joined into passages of at least PASSAGE
characters; every HELDOUT_EVERY-th passage of each testament is held out (2%), so the held-out
text comes from every part of the book, and the tokenizer and the model never see it.
"""
import importlib.util
import os
import subprocess

PARTS = ["ot", "nt"]  # the two testaments, as the module stores them
PASSAGE = 500
HELDOUT_EVERY = 50
HELDOUT_FRACTION = 1 / HELDOUT_EVERY
PACKAGE = "sword-text-kjv"
SWORD = "/usr/share/sword/modules/texts/ztext"

_HERE = os.path.dirname(os.path.abspath(__file__))
_READER = os.path.join(os.path.dirname(os.path.dirname(_HERE)), "scripts",
                       "make-calibration-text.py")


def _reader():
    spec = importlib.util.spec_from_file_location("make_calibration_text", _READER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def version():
    try:
        return subprocess.run(["dpkg-query", "-W", "-f", "${Version}", PACKAGE], check=True,
                              capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit(f"{PACKAGE} is not installed ({e}); install it with: "
                         f"apt-get install -y {PACKAGE}") from e


def passages(verses):
    out, cur = [], []
    for v in verses:
        cur.append(v)
        if sum(len(c) + 1 for c in cur) >= PASSAGE:
            out.append(" ".join(cur))
            cur = []
    if cur:
        out.append(" ".join(cur))
    return out


def load():
    """{testament: (train text, held-out text)}, passages separated by a blank line."""
    reader = _reader()
    module = reader.module(SWORD, "kjv")
    out = {}
    for part in PARTS:
        ps = passages(reader.ztext_verses(module, part))
        held = [p for i, p in enumerate(ps) if i % HELDOUT_EVERY == HELDOUT_EVERY - 1]
        train = [p for i, p in enumerate(ps) if i % HELDOUT_EVERY != HELDOUT_EVERY - 1]
        out[part] = ("\n\n".join(train), "\n\n".join(held))
    return out
