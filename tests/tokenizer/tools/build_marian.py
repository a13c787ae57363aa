#!/usr/bin/python3
"""Trains a Marian-style tokenizer (opus-mt layout: source.spm + target.spm + vocab.json).

Hugging Face has Marian's tokenizer only as a slow Python tokenizer (no tokenizer.json) and no real
opus-mt files are to be had offline, so this one is trained here with Debian's python3-sentencepiece,
with the layout MarianTokenizer reads:
- source.spm: Unigram, nmt_nfkc, SentencePiece's default ids (<unk>=0, <s>=1, </s>=2, no pad),
  trained on the Austen novels + only the mostly-Latin corpus lines, so other scripts (CJK, Arabic,
  emoji...) are unknown characters to it, as they are to an opus-mt en-* source model.
- target.spm: the same settings on the Austen novels + the whole corpus, so it has pieces for every
  script, among them multi-character pieces without a leading U+2581 (CJK).
- vocab.json: Marian's shared vocabulary, whose ids are not the SentencePiece ids: </s>=0, <unk>=1,
  the source pieces in SentencePiece order minus a deterministic ~1% (real opus-mt vocabularies lack
  rare source pieces, which MarianTokenizer then maps to <unk>; those pieces are left out of the whole
  vocabulary, not re-added from target.spm), the target pieces not yet present, three language
  codes (>>fra<< ...), and <pad> last.
- tokenizer_config.json and config.json with MarianTokenizer's and MarianConfig's fields.

Run with Debian's interpreter (/usr/bin/python3), which has sentencepiece.
usage: build_marian.py AUSTEN_TEXT CORPUS_JSONL OUT_DIR   (writes OUT_DIR/marian/)
"""
import json
import os
import sys
import unicodedata

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb

VOCAB = 4000
# Every DROP_EVERY-th normal source piece after the first DROP_AFTER is missing from vocab.json.
DROP_AFTER = 300
DROP_EVERY = 97
LANGUAGE_CODES = [">>fra<<", ">>deu<<", ">>zho<<"]
NORMAL = pb.ModelProto.SentencePiece.NORMAL


def mostly_latin(text):
    """More than half of the letters are Latin (full-width Latin counts); a text without letters
    counts only if it is ASCII, so emoji and other scripts' digits stay out."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return all(ord(c) < 128 for c in text)
    latin = sum("LATIN" in unicodedata.name(c, "") for c in letters)
    return 2 * latin > len(letters)


def train(texts, prefix, name):
    inp = prefix + ".train.txt"
    with open(inp, "w", encoding="utf-8") as f:
        for t in texts:
            t = " ".join(t.split())
            if t:
                f.write(t + "\n")
    spm.SentencePieceTrainer.train(
        input=inp, model_prefix=prefix, vocab_size=VOCAB, model_type="unigram",
        character_coverage=0.9995, normalization_rule_name="nmt_nfkc", num_threads=1,
        seed_sentencepiece_size=200000, input_sentence_size=0, shuffle_input_sentence=False,
        minloglevel=2)
    m = pb.ModelProto()
    with open(prefix + ".model", "rb") as f:
        m.ParseFromString(f.read())
    # The trainer records where it ran; keep the shipped model free of this machine's paths.
    del m.trainer_spec.input[:]
    m.trainer_spec.model_prefix = name
    return m


def marian_vocab(source, target):
    """(vocab as {piece: id}, dropped source pieces, number of target-only pieces)."""
    vocab = {"</s>": 0, "<unk>": 1}
    normal = [p.piece for p in source.pieces if p.type == NORMAL]
    dropped = [p for k, p in enumerate(normal)
               if k >= DROP_AFTER and (k - DROP_AFTER) % DROP_EVERY == DROP_EVERY - 1]
    skip = set(dropped)
    for p in normal:
        if p not in skip:
            vocab[p] = len(vocab)
    n_source = len(vocab)
    for p in target.pieces:
        if p.type == NORMAL and p.piece not in vocab and p.piece not in skip:
            vocab[p.piece] = len(vocab)
    n_target_only = len(vocab) - n_source
    for code in LANGUAGE_CODES + ["<pad>"]:
        assert code not in vocab, code
        vocab[code] = len(vocab)
    assert sorted(vocab.values()) == list(range(len(vocab)))
    return vocab, dropped, n_target_only


def write_json(path, obj, **kw):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, **kw)
        f.write("\n")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    austen, corpus, out = sys.argv[1:]
    os.makedirs(out, exist_ok=True)
    with open(austen, encoding="utf-8") as f:
        novels = [p for p in f.read().split("\n\n") if p.strip()]
    with open(corpus, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    latin = [t for t in lines if mostly_latin(t)]
    source = train(novels + latin, os.path.join(out, "source"), "source")
    target = train(novels + lines * 20, os.path.join(out, "target"), "target")
    vocab, dropped, n_target_only = marian_vocab(source, target)

    d = os.path.join(out, "marian")
    os.makedirs(d, exist_ok=True)
    for name, m in (("source.spm", source), ("target.spm", target)):
        with open(os.path.join(d, name), "wb") as f:
            f.write(m.SerializeToString())
    write_json(os.path.join(d, "vocab.json"), vocab, ensure_ascii=False)
    write_json(os.path.join(d, "tokenizer_config.json"), {
        "source_lang": "en", "target_lang": "mul", "unk_token": "<unk>", "eos_token": "</s>",
        "pad_token": "<pad>", "model_max_length": 512, "separate_vocabs": False,
        "tokenizer_class": "MarianTokenizer"})
    n = len(vocab)
    write_json(os.path.join(d, "config.json"), {
        "model_type": "marian", "vocab_size": n, "eos_token_id": 0, "pad_token_id": n - 1,
        "decoder_start_token_id": n - 1})
    print(f"marian: source.spm {len(source.pieces)} pieces ({len(latin)} of {len(lines)} corpus lines), "
          f"target.spm {len(target.pieces)} pieces; vocab.json {n} ids: {len(dropped)} source pieces "
          f"dropped, {n_target_only} target-only pieces, {len(LANGUAGE_CODES)} language codes, "
          f"<pad>={n - 1} -> {d}")
    print("dropped: " + " ".join(dropped))


if __name__ == "__main__":
    main()
