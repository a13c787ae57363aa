"""Calibration ids for octet-convert's quantization report (--calibration): token ids of text the
model was trained on (never the held-out text), 8 windows of 256 ids, one per line, taken from
the start of the training part of each novel in turn.

    /usr/bin/python3 models/austen/calibration.py [--work build/austen-work] [--model DIR]

Needs the novels exported by train.py (WORK/raw) and the model's tokenizer.json (--model: default
models/austen; models/austen-tiny for the tiny preset)."""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bpe  # noqa: E402
import data  # noqa: E402

WINDOWS, SEQ = 8, 256


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", default=os.path.join(HERE, "..", "..", "build", "austen-work"))
    ap.add_argument("--model", default=HERE)
    args = ap.parse_args()
    raw = os.path.join(args.work, "raw")
    if not os.path.isdir(raw):
        data.export_novels(raw)
    tok = bpe.Tokenizer.load(os.path.join(args.model, "tokenizer.json"))
    novels = data.load(raw)
    lines = []
    names = list(novels)
    for w in range(WINDOWS):
        train_text = novels[names[w % len(names)]][0]
        # Window w // len(names) of that novel's training text.
        ids = tok.encode(train_text[: 4 * SEQ * 8 * (w // len(names) + 1)])
        start = (w // len(names)) * SEQ
        lines.append(ids[start:start + SEQ])
    out = os.path.join(args.model, "calibration_ids.txt")
    with open(out, "w") as f:
        for ids in lines:
            assert len(ids) == SEQ
            f.write(" ".join(map(str, ids)) + "\n")
    print(f"wrote {len(lines)} windows of {SEQ} ids to {os.path.relpath(out)}")


if __name__ == "__main__":
    main()
