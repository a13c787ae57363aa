#!/usr/bin/python3
"""Marian's reference tokenizer speed on one text, one thread: SentencePiece (Debian's
python3-sentencepiece, the C++ library transformers' MarianTokenizer calls) on source.spm, then
the pieces mapped to vocab.json ids, as MarianTokenizer does (gen_marian_goldens.py). Hugging Face
has no fast (Rust) Marian tokenizer, so this is what a Marian user runs today. Special-token
splitting and language codes are left out (the text has neither), which only favours this side.

FILE holds paragraphs separated by one blank line; each is encoded on its own, without special
tokens. bytes_per_s = UTF-8 bytes of all paragraphs / the best wall time of ROUNDS rounds (default 3).
usage: bench_marian_ref.py TOKENIZER_DIR FILE   (prints one JSON line, as bench_hf.js does)
"""
import json
import os
import sys
import time

import sentencepiece as spm


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: bench_marian_ref.py TOKENIZER_DIR FILE")
    where, path = sys.argv[1:]
    sp = spm.SentencePieceProcessor(model_file=os.path.join(where, "source.spm"))
    with open(os.path.join(where, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    unk = vocab["<unk>"]
    with open(path, encoding="utf-8") as f:
        paragraphs = [p for p in f.read().split("\n\n") if p]
    total = sum(len(p.encode("utf-8")) for p in paragraphs)
    rounds = int(os.environ.get("ROUNDS", "3"))

    def encode(p):
        return [vocab.get(piece, unk) for piece in sp.encode(p, out_type=str)]

    for p in paragraphs[:64]:
        encode(p)
    best, cpu_per_wall, tokens = float("inf"), 0.0, 0
    for _ in range(rounds):
        c0, t0 = time.process_time(), time.perf_counter()
        n = sum(len(encode(p)) for p in paragraphs)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        tokens = n
        if wall < best:
            best, cpu_per_wall = wall, cpu / wall
    print(json.dumps({"bytes_per_s": total / best, "bytes": total, "paragraphs": len(paragraphs),
                      "tokens": tokens, "best_s": best, "cpu_per_wall": cpu_per_wall,
                      "reference": "python3-sentencepiece " + spm.__version__ + " + vocab.json"}))


if __name__ == "__main__":
    main()
