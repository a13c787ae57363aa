#!/usr/bin/python3
"""Makes the Precompiled normalizer's golden data (tests/text/precompiled/).

SentencePiece's own normalization rules (nmt_nfkc: the default of T5, ALBERT,
XLM-R and Marian models; nmt_nfkc_cf: the same with case folding) are compiled
into `precompiled_charsmap` blobs by training a tiny model with Debian's
sentencepiece (python3-sentencepiece) and reading the blob back. Hugging Face
tokenizers' Precompiled normalizer (npm `tokenizers`, Rust) then normalizes
every line of CASES with each blob; the output is the golden.

Usage (Debian's interpreter: it has sentencepiece):
  /usr/bin/python3 tests/text/gen_precompiled_golden.py --node-modules DIR
DIR holds node_modules/tokenizers (`npm install tokenizers@0.23.2` there).

Writes tests/text/precompiled/charsmaps.tar.xz (<rule>.bin, the raw blobs),
golden.tsv (rule, hex input, hex output per line) and PROVENANCE.
"""
import argparse
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as model_pb2

RULES = ["nmt_nfkc", "nmt_nfkc_cf"]

# Multilingual text that exercises the charsmap and the grapheme walk.
CASES = [
    "Hello, World!",
    "plain ascii with  double  spaces and\ttabs\tand\nnewlines\r\n",
    "Ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ １２３ ！？（）",
    "ﬁnance ﬂow ﬀ ﬃ ﬄ ﬅ Ĳ ǆ",
    "e\u0301 a\u0300 o\u0308 n\u0303 — café naïve",
    "\ufb01\u0301 \u00bd\u0301 \u2460\u0308",
    "👨\u200d👩\u200d👧\u200d👦 family, 👍🏽 thumbs, 🏳️\u200d🌈 flag, 🇯🇵🇫🇷 pairs",
    "control\u0001\u0002\u0007\u001b[0m chars\u007f\u0085 end",
    "zero\u200bwidth\u200c\u200djoin\ufeffbom \u00a0nbsp\u2003em\u3000ideo",
    "中文字符，标点。「引号」 日本語のテキスト、ｶﾀｶﾅ ｶﾞｷﾞ ﾊﾟ",
    "한국어 텍스트 \u1100\u1161\u11a8 \u3131\u314f",
    "العربية ﻻ ﷺ ﷽ ٠١٢٣",
    "हिन्दी क्षि त्र ज्ञ देवनागरी",
    "ℌℍℎ ℡ ™ № ㍻ ㎏ ㎞ ① ⑳ ⅷ Ⅻ ¼ ½ ² ³ ₁ ₂",
    "“quotes” ‘single’ «guillemets» … ‥ ‐‑‒–—― ′″",
    "ÀÉÎÕÜ ÆŒß ΣΑΣ Ωmega Ǆ ǅ ǲ İstanbul ŉ",
    "long grapheme: a\u0301\u0302\u0303\u0304\u0305 z\u0301\u0301\u0301",
    "\ufe0f alone, \u0301 leading mark, \u200d lone zwj",
    "x" * 3 + "\u2028line\u2029para\u000bvt\u000cff",
    "Ｈｅｌｌｏ\u3000ｗｏｒｌｄ\uff61\uff64",
    "𝐀𝐁𝐂 𝒜𝒷𝒸 𝔸𝔹 𝟘𝟙𝟚",
    "",
]

NODE_SCRIPT = r"""
const tk = require('tokenizers');
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = {};
for (const [rule, b64] of Object.entries(input.maps)) {
  const norm = tk.precompiled(Array.from(Buffer.from(b64, 'base64')));
  out[rule] = input.cases.map((s) => norm.normalizeString(s));
}
process.stdout.write(JSON.stringify(out));
"""


def train_charsmap(rule, workdir):
    corpus = os.path.join(workdir, "corpus.txt")
    with open(corpus, "w", encoding="utf-8") as f:
        for i in range(200):
            f.write(" ".join(CASES) + f" line {i}\n")
    prefix = os.path.join(workdir, rule)
    spm.SentencePieceTrainer.train(
        input=corpus, model_prefix=prefix, vocab_size=200, model_type="unigram",
        normalization_rule_name=rule, character_coverage=1.0, minloglevel=2)
    proto = model_pb2.ModelProto()
    with open(prefix + ".model", "rb") as f:
        proto.ParseFromString(f.read())
    return proto.normalizer_spec.precompiled_charsmap


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--node-modules", required=True)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "precompiled"))
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        maps = {rule: train_charsmap(rule, tmp) for rule in RULES}
    import base64
    payload = json.dumps({"cases": CASES,
                          "maps": {r: base64.b64encode(m).decode() for r, m in maps.items()}})
    env = dict(os.environ, NODE_PATH=os.path.join(args.node_modules, "node_modules"))
    res = subprocess.run(["node", "-e", NODE_SCRIPT], input=payload.encode(), env=env,
                         capture_output=True, check=True)
    normalized = json.loads(res.stdout)
    tk_version = json.load(open(os.path.join(args.node_modules, "node_modules", "tokenizers",
                                             "package.json")))["version"]

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "golden.tsv"), "w") as f:
        f.write("# rule\tinput (UTF-8 hex)\tHF tokenizers Precompiled output (UTF-8 hex)\n")
        for rule in RULES:
            for case, got in zip(CASES, normalized[rule]):
                f.write(f"{rule}\t{case.encode().hex()}\t{got.encode().hex()}\n")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:xz") as tar:
        for rule in RULES:
            info = tarfile.TarInfo(rule + ".bin")
            info.size = len(maps[rule])
            info.mtime = 0
            tar.addfile(info, io.BytesIO(maps[rule]))
    with open(os.path.join(args.out, "charsmaps.tar.xz"), "wb") as f:
        f.write(buf.getvalue())
    with open(os.path.join(args.out, "PROVENANCE"), "w") as f:
        f.write("Made by tests/text/gen_precompiled_golden.py (no randomness).\n")
        f.write(f"charsmaps: SentencePiece {spm.__version__} (Debian python3-sentencepiece), "
                "built-in normalization rules, read from a tiny trained model\n")
        for rule in RULES:
            f.write(f"  {rule}.bin  {len(maps[rule])} bytes  "
                    f"sha256 {hashlib.sha256(maps[rule]).hexdigest()}\n")
        f.write(f"golden.tsv: npm tokenizers@{tk_version} precompiled(bytes).normalizeString()\n")


if __name__ == "__main__":
    sys.exit(main())
