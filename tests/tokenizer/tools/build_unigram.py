#!/usr/bin/python3
"""Trains a T5-style SentencePiece Unigram model and writes it as a Hugging Face tokenizer.json.

No npm package ships a real Unigram tokenizer (T5, ALBERT, XLM-R, Marian), so this one is made with
Debian's python3-sentencepiece (the trainer T5's spiece.model came from), with T5's settings: nmt_nfkc
normalization (its precompiled charsmap goes into the tokenizer.json as T5's does), pad=0, eos=1,
unk=2, no bos, and sentinel tokens <extra_id_N> appended in T5's order. The tokenizer.json follows
the layout HF's T5 converter writes: Precompiled + Replace(" {2,}"), WhitespaceSplit + Metaspace,
"$A </s>" template, Metaspace decoder. An ALBERT-style variant (lowercase, [CLS]/[SEP], `` and ''
replaced) is written from the same model.

Training text: the six Austen novels plus the multilingual corpus, so every script in the corpus
has pieces. Run with Debian's interpreter (/usr/bin/python3), which has sentencepiece.
usage: build_unigram.py AUSTEN_TEXT CORPUS_JSONL OUT_DIR
"""
import base64
import json
import os
import sys

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb

VOCAB = 8000
EXTRA_IDS = 8


def train(austen, corpus, prefix):
    texts = []
    with open(austen, encoding="utf-8") as f:
        texts += [p for p in f.read().split("\n\n") if p.strip()]
    with open(corpus, encoding="utf-8") as f:
        texts += [json.loads(line) for line in f if line.strip()] * 20
    inp = prefix + ".train.txt"
    with open(inp, "w", encoding="utf-8") as f:
        for t in texts:
            t = " ".join(t.split())
            if t:
                f.write(t + "\n")
    spm.SentencePieceTrainer.train(
        input=inp, model_prefix=prefix, vocab_size=VOCAB, model_type="unigram",
        character_coverage=0.9995, normalization_rule_name="nmt_nfkc", pad_id=0, eos_id=1, unk_id=2,
        bos_id=-1, num_threads=1, seed_sentencepiece_size=200000, input_sentence_size=0,
        shuffle_input_sentence=False, minloglevel=2)
    m = pb.ModelProto()
    with open(prefix + ".model", "rb") as f:
        m.ParseFromString(f.read())
    # The trainer records where it ran; keep the shipped model free of this machine's paths.
    del m.trainer_spec.input[:]
    m.trainer_spec.model_prefix = "spiece"
    with open(prefix + ".model", "wb") as f:
        f.write(m.SerializeToString())
    return m


def piece_list(m):
    pieces = [[p.piece, float(p.score)] for p in m.pieces]
    n = len(pieces)
    # T5 appends the sentinels after the SentencePiece vocabulary, <extra_id_0> last.
    sentinels = [f"<extra_id_{i}>" for i in range(EXTRA_IDS)]
    for i in range(EXTRA_IDS):
        pieces.append([sentinels[EXTRA_IDS - 1 - i], 0.0])
    return pieces, n


def added(content, id_, special=True):
    return {"id": id_, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": special}


def template(single, pair, specials):
    def seq(items):
        out = []
        for it, type_id in items:
            if it in ("A", "B"):
                out.append({"Sequence": {"id": it, "type_id": type_id}})
            else:
                out.append({"SpecialToken": {"id": it, "type_id": type_id}})
        return out
    return {"type": "TemplateProcessing", "single": seq(single), "pair": seq(pair),
            "special_tokens": {t: {"id": t, "ids": [i], "tokens": [t]} for t, i in specials}}


def metaspace():
    return {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}


def t5_json(m):
    pieces, n = piece_list(m)
    charsmap = base64.b64encode(m.normalizer_spec.precompiled_charsmap).decode()
    adds = [added("<pad>", 0), added("</s>", 1), added("<unk>", 2)]
    adds += [added(pieces[i][0], i) for i in range(n, len(pieces))]
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": adds,
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": charsmap},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
                                                                metaspace()]},
        "post_processor": template([("A", 0), ("</s>", 0)], [("A", 0), ("</s>", 0), ("B", 0), ("</s>", 0)],
                                   [("</s>", 1)]),
        "decoder": metaspace(),
        "model": {"type": "Unigram", "unk_id": 2, "vocab": pieces, "byte_fallback": False},
    }, n


def albert_json(m):
    """ALBERT's converter: `` and '' become ", then NFKD, strip accents, lowercase, charsmap."""
    pieces = [[p.piece, float(p.score)] for p in m.pieces]
    # ALBERT's special tokens are pieces of its own vocabulary; ours are appended after it.
    n = len(pieces)
    extra = ["[CLS]", "[SEP]", "[MASK]"]
    pieces += [[t, 0.0] for t in extra]
    cls, sep, mask = n, n + 1, n + 2
    charsmap = base64.b64encode(m.normalizer_spec.precompiled_charsmap).decode()
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [added("<pad>", 0), added("</s>", 1), added("<unk>", 2), added("[CLS]", cls),
                         added("[SEP]", sep), added("[MASK]", mask)],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Replace", "pattern": {"String": "``"}, "content": "\""},
            {"type": "Replace", "pattern": {"String": "''"}, "content": "\""},
            {"type": "NFKD"}, {"type": "StripAccents"}, {"type": "Lowercase"},
            {"type": "Precompiled", "precompiled_charsmap": charsmap},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
                                                                metaspace()]},
        "post_processor": template([("[CLS]", 0), ("A", 0), ("[SEP]", 0)],
                                   [("[CLS]", 0), ("A", 0), ("[SEP]", 0), ("B", 1), ("[SEP]", 1)],
                                   [("[CLS]", cls), ("[SEP]", sep)]),
        "decoder": metaspace(),
        "model": {"type": "Unigram", "unk_id": 2, "vocab": pieces, "byte_fallback": False},
    }


def write(dirname, tok, config):
    os.makedirs(dirname, exist_ok=True)
    with open(os.path.join(dirname, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False, indent=1)
        f.write("\n")
    with open(os.path.join(dirname, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2)
        f.write("\n")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    austen, corpus, out = sys.argv[1:]
    os.makedirs(out, exist_ok=True)
    prefix = os.path.join(out, "spiece")
    m = train(austen, corpus, prefix)
    t5, n = t5_json(m)
    write(os.path.join(out, "t5_unigram"), t5,
          {"tokenizer_class": "T5Tokenizer", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>",
           "extra_ids": EXTRA_IDS, "model_max_length": 512})
    write(os.path.join(out, "albert_unigram"), albert_json(m),
          {"tokenizer_class": "AlbertTokenizer", "do_lower_case": True, "remove_space": True,
           "keep_accents": False, "bos_token": "[CLS]", "eos_token": "[SEP]", "unk_token": "<unk>",
           "sep_token": "[SEP]", "pad_token": "<pad>", "cls_token": "[CLS]", "mask_token": "[MASK]"})
    for d in ("t5_unigram", "albert_unigram"):
        with open(prefix + ".model", "rb") as src, open(os.path.join(out, d, "spiece.model"), "wb") as dst:
            dst.write(src.read())
    print(f"unigram: {n} pieces + {EXTRA_IDS} sentinels -> {out}")


if __name__ == "__main__":
    main()
