#!/usr/bin/python3
"""Writes goldens/marian.jsonl: MarianTokenizer's ids and decodes for data/marian.tar.xz.

Hugging Face has Marian's tokenizer only as a slow (Python) tokenizer: there is no tokenizer.json for
npm `tokenizers` (gen_goldens.js) to run. The reference here is the real SentencePiece library
(Debian python3-sentencepiece, the one the models were trained with) plus MarianTokenizer's own
mapping logic restated below, as transformers 4.x has it (slow tokenizer, `separate_vocabs` false,
after huggingface/transformers#39013):
- encode: split the text on the special-token strings (</s> <unk> <pad>, kept as tokens, no
  stripping around them); in each other non-empty chunk a leading ">>...<<" (up to the first "<<")
  is one token and the rest goes through source.spm; every token maps through vocab.json, anything
  missing to <unk>; add_special_tokens appends </s>. With split_special_tokens the text is one chunk.
- decode: ids -> vocab.json's tokens (an unknown id gives "<unk>"); skip_special_tokens drops the
  special ids; the runs between special tokens go through target.spm's decode_pieces, each special
  token is kept followed by a space, U+2581 becomes a space and the result is stripped.
  clean_up_tokenization_spaces is off (the config does not set it).
transformers 4.46 and earlier found the language code with the regex ">>.+<<" (re.match to pick it,
re.sub to remove every match); that differs from the above only for a second "<<" in the text or a
">>...<<" not at the start of a chunk, and the extra cases below show the rule this file follows.

Format as gen_goldens.js writes (README.md, "Goldens"), plus Marian's own encode cases after the
corpus lines: {"extra": {"case", "text", "ids", "ids_no_special", "decoded", "decoded_keep_special",
"ids_split_special"}}.

usage: /usr/bin/python3 tests/tokenizer/gen_marian_goldens.py
"""
import datetime
import hashlib
import json
import os
import platform
import shutil
import sys
import tarfile
import tempfile
import unicodedata

import sentencepiece as spm

NAME = "marian"
HERE = os.path.dirname(os.path.abspath(__file__))
WANT_SENTENCEPIECE = "0.1.97"


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def read(path):
    with open(path, "rb") as f:
        return f.read()


class Marian:
    """MarianTokenizer's slow-tokenizer logic over source.spm, target.spm and vocab.json."""

    def __init__(self, d):
        self.source = spm.SentencePieceProcessor(model_file=os.path.join(d, "source.spm"))
        self.target = spm.SentencePieceProcessor(model_file=os.path.join(d, "target.spm"))
        with open(os.path.join(d, "vocab.json"), encoding="utf-8") as f:
            self.vocab = json.load(f)
        with open(os.path.join(d, "tokenizer_config.json"), encoding="utf-8") as f:
            config = json.load(f)
        self.id_to_token = {i: t for t, i in self.vocab.items()}
        # transformers' order: eos, unk, pad.
        self.specials = [config["eos_token"], config["unk_token"], config["pad_token"]]
        self.special_ids = {self.vocab[t] for t in self.specials}
        self.unk = self.vocab[config["unk_token"]]
        self.eos = self.vocab[config["eos_token"]]

    def split_specials(self, text):
        """[(chunk, is_special)]: leftmost match, the longest one at that position."""
        out, start, i = [], 0, 0
        while i < len(text):
            hits = [t for t in self.specials if text.startswith(t, i)]
            if hits:
                tok = max(hits, key=len)
                out.append((text[start:i], False))
                out.append((tok, True))
                i += len(tok)
                start = i
            else:
                i += 1
        out.append((text[start:], False))
        return [(c, s) for c, s in out if c]

    def tokens(self, text, split_special_tokens=False):
        chunks = [(text, False)] if split_special_tokens else self.split_specials(text)
        out = []
        for chunk, special in chunks:
            if special:
                out.append(chunk)
                continue
            end = chunk.find("<<")
            if chunk.startswith(">>") and end != -1:
                out.append(chunk[:end + 2])
                chunk = chunk[end + 2:]
            out += self.source.encode(chunk, out_type=str)
        return out

    def encode(self, text, add_special_tokens, split_special_tokens=False):
        ids = [self.vocab.get(t, self.unk) for t in self.tokens(text, split_special_tokens)]
        return ids + [self.eos] if add_special_tokens else ids

    def decode(self, ids, skip_special_tokens):
        tokens = [self.id_to_token.get(i, self.specials[1]) for i in ids
                  if not (skip_special_tokens and i in self.special_ids)]
        if skip_special_tokens:
            tokens = [t for t in tokens if t not in self.specials]
        if not tokens:
            return ""
        out, cur = "", []
        for t in tokens:
            if t in self.specials:
                out += self.target.decode_pieces(cur) + t + " "
                cur = []
            else:
                cur.append(t)
        out += self.target.decode_pieces(cur)
        return out.replace("\u2581", " ").strip()

    def record(self, text):
        ids = self.encode(text, True)
        return {"text": text, "ids": ids, "ids_no_special": self.encode(text, False),
                "decoded": self.decode(ids, True), "decoded_keep_special": self.decode(ids, False),
                "ids_split_special": self.encode(text, False, split_special_tokens=True)}


def is_cjk(c):
    return unicodedata.name(c, "").startswith("CJK UNIFIED IDEOGRAPH")


def source_pieces(tok):
    return {tok.source.id_to_piece(i) for i in range(tok.source.get_piece_size())
            if not (tok.source.is_control(i) or tok.source.is_unknown(i))}


def target_pieces(tok):
    return {tok.target.id_to_piece(i) for i in range(tok.target.get_piece_size())
            if not (tok.target.is_control(i) or tok.target.is_unknown(i))}


def extra_cases(tok):
    """Marian-specific encodes, each with a check that it exercises what its name says."""
    v, unk, pad = tok.vocab, tok.unk, tok.vocab["<pad>"]
    src = source_pieces(tok)
    by_id = sorted(v.items(), key=lambda kv: kv[1])
    cases = []

    def add(case, text, check):
        r = tok.record(text)
        toks = tok.tokens(text)
        assert check(r, toks), f"extra case {case!r} does not do what it says: {toks} {r}"
        cases.append({"case": case, **r})

    fra, deu = v[">>fra<<"], v[">>deu<<"]
    add("a language code first", ">>fra<< Hello world",
        lambda r, t: r["ids_no_special"][0] == fra and t[1] == "\u2581Hello")
    add("a language code glued to the text", ">>fra<<Hello", lambda r, t: t[:2] == [">>fra<<", "\u2581Hello"])
    add("a language code not in vocab.json (-> <unk>)", ">>xyz<< unknown code",
        lambda r, t: t[0] == ">>xyz<<" and r["ids_no_special"][0] == unk)
    add("a language code in the middle is plain text", "text >>fra<< in the middle",
        lambda r, t: fra not in r["ids"] and ">>fra<<" not in t)
    add("a language code after a leading space is plain text", " >>fra<< leading space",
        lambda r, t: fra not in r["ids"])
    add("only the first of two language codes", ">>fra<< >>deu<< two codes",
        lambda r, t: r["ids"][0] == fra and deu not in r["ids"])
    add("a language code up to the first <<", ">>fra<<<< x",
        lambda r, t: t[0] == ">>fra<<" and t[1] != ">>fra<<")
    add("a language code with a space inside (-> <unk>)", ">>a b<< c", lambda r, t: t[0] == ">>a b<<")
    add("a language code after a special token", "</s>>>deu<< after a special token",
        lambda r, t: r["ids"][:2] == [tok.eos, deu] and r["ids_split_special"][:1] != [tok.eos])
    add("a language code followed by a special token", ">>fra<<</s>",
        lambda r, t: r["ids_no_special"] == [fra, tok.eos])
    add("a language code alone", ">>fra<<", lambda r, t: r["ids_no_special"] == [fra])
    add("an empty language code (-> <unk>)", ">><<",
        lambda r, t: t == [">><<"] and r["ids_no_special"] == [unk])
    add("no closing <<", ">>fra hello", lambda r, t: t[0] != ">>fra hello" and not t[0].startswith(">>fra"))
    add("a language code before text unknown to source.spm", ">>zho<< \u6211\u7231\u5317\u4eac",
        lambda r, t: r["ids"][0] == v[">>zho<<"] and unk in r["ids"])
    add("leading and trailing spaces", "  leading and trailing  ", lambda r, t: t[0] == "\u2581leading")
    add("tab, newline and a double space", "a\tb\nc  d", lambda r, t: len(t) == 4)

    # A run of characters source.spm does not know comes out as one piece; when that run is a
    # target-only piece of vocab.json, MarianTokenizer gives its id instead of <unk>.
    def unknown_run(want):
        return next(p for p, i in by_id
                    if p not in src and p not in tok.specials and not p.startswith(("\u2581", ">>"))
                    and len(p) >= 2 and want(p) and tok.source.encode(p, out_type=str) == ["\u2581", p])
    cjk_run = unknown_run(lambda p: len(p) <= 4 and all(is_cjk(c) for c in p))
    for run in (cjk_run, unknown_run(lambda p: not p.isalnum())):
        add(f"characters unknown to source.spm that spell the target-only piece {run}", run,
            lambda r, t, run=run: t == ["\u2581", run] and r["ids_no_special"][1] == v[run])
        add(f"the target-only piece {run} between words", f"Hello {run} world",
            lambda r, t, run=run: t[1:3] == ["\u2581", run] and v[run] in r["ids"])
        add(f"the target-only piece {run} glued to words", f"abc{run}def",
            lambda r, t, run=run: run in t and v[run] in r["ids"])
    add("a run of unknown characters that is no vocab.json piece (-> <unk>)",
        "\u6211\u7231\u5317\u4eac\u5929", lambda r, t: len(t) == 2 and r["ids_no_special"][1] == unk)

    # Source pieces that vocab.json lacks: source.spm still picks them; MarianTokenizer maps them to <unk>.
    dropped = [p for p in sorted(src, key=tok.source.piece_to_id) if p not in v]
    assert dropped, "vocab.json lacks no source piece"
    # One that starts a word and one inside a word.
    def pickable(want_space):
        for p in dropped:
            if p.startswith("\u2581") == want_space:
                text = ("We" + p.replace("\u2581", " ") + " here") if want_space else ("x" + p + "y")
                if p in tok.tokens(text):
                    return p, text
        raise AssertionError(f"source.spm picks no dropped piece (word start: {want_space})")
    for p, text in (pickable(True), pickable(False)):
        add(f"text that makes source.spm pick {p}, a piece vocab.json lacks (-> <unk>)", text,
            lambda r, t, p=p: p in t and r["ids_no_special"][t.index(p)] == unk)

    add("full-width forms (nmt_nfkc)",
        "\uff28\uff45\uff4c\uff4c\uff4f\u3000\uff37\uff4f\uff52\uff4c\uff44\uff01",
        lambda r, t: r["ids"] == tok.encode("Hello World!", True))
    add("e + combining acute (nmt_nfkc composes it)", "cafe\u0301 e\u0301",
        lambda r, t: r["ids"] == tok.encode("caf\u00e9 \u00e9", True))
    add("an empty string", "", lambda r, t: r["ids"] == [tok.eos] and r["ids_no_special"] == [])
    add("only spaces", "     ",
        lambda r, t: r["ids_no_special"] == [] and r["decoded_keep_special"] == "</s>")
    add("literal special tokens", "<unk> <pad>",
        lambda r, t: r["ids_no_special"] == [unk, pad] and r["ids_split_special"] != [unk, pad])
    add("special tokens glued to words", "Hello<pad>world</s>",
        lambda r, t: r["ids_no_special"][-1] == tok.eos and pad in r["ids"])
    add("a special token alone", "</s>", lambda r, t: r["ids"] == [tok.eos, tok.eos])
    return cases


def decode_cases(tok):
    """Ids whose decoding is tricky, as gen_goldens.js's list, plus Marian's own."""
    v = tok.vocab
    size = len(v)
    plain = lambda s: tok.encode(s, False)
    hello, tail = plain("Hello world"), plain(" and more text.")
    src, tgt = source_pieces(tok), target_pieces(tok)
    by_id = sorted(v.items(), key=lambda kv: kv[1])
    specials = sorted(tok.special_ids)
    cases = []
    for i in specials:
        t = tok.id_to_token[i]
        cases.append({"case": f"special token {t} alone", "ids": [i]})
        cases.append({"case": f"special token {t} mid-sequence", "ids": hello + [i] + tail})
    cases.append({"case": "all special tokens in a row", "ids": specials})
    cases.append({"case": "<pad> between two words, twice", "ids": hello + [v["<pad>"]] * 2 + tail})

    target_only = [p for p, _ in by_id if p in tgt and p not in src]
    cjk = next(p for p in target_only if 2 <= len(p) <= 4 and all(is_cjk(c) for c in p))
    spaced = next(p for p in target_only if p.startswith("\u2581") and len(p) >= 3)
    for p in (cjk, spaced):
        cases.append({"case": f"the target-only piece {p} between words", "ids": hello + [v[p]] + tail})
        cases.append({"case": f"the target-only piece {p} first", "ids": [v[p]] + tail})
        cases.append({"case": f"the target-only piece {p} after </s>", "ids": hello + [tok.eos, v[p]] + tail})

    # target.spm's decode_pieces returns a piece it does not know as it is (U+2581 included, no
    # leading-space removal); MarianTokenizer then turns U+2581 into spaces.
    source_only = [p for p, _ in by_id if p in src and p not in tgt]
    assert source_only, "every source piece is a target piece"
    spaced_src = next(p for p in source_only if p.startswith("\u2581"))
    inner_src = next(p for p in source_only if not p.startswith("\u2581"))
    for p in (spaced_src, inner_src):
        cases.append({"case": f"the source-only piece {p} (unknown to target.spm) between words",
                      "ids": hello + [v[p]] + tail})
        cases.append({"case": f"the source-only piece {p} first", "ids": [v[p]] + tail})
        cases.append({"case": f"the source-only piece {p} after </s>", "ids": hello + [tok.eos, v[p]] + tail})
    cases.append({"case": "source-only pieces in a row", "ids": [v[spaced_src], v[inner_src], v[spaced_src]]})

    for code in (">>fra<<", ">>zho<<"):
        cases.append({"case": f"the language code {code} alone", "ids": [v[code]]})
        cases.append({"case": f"the language code {code} first", "ids": [v[code]] + hello})
        cases.append({"case": f"the language code {code} between words", "ids": hello + [v[code]] + tail})

    blank = v["\u2581"]
    cases.append({"case": "the piece U+2581 alone", "ids": [blank]})
    cases.append({"case": "the piece U+2581 first, twice", "ids": [blank, blank] + hello})
    cases.append({"case": "the piece U+2581 between words", "ids": hello + [blank, blank] + tail})
    cases.append({"case": "the piece U+2581 after </s>", "ids": hello + [tok.eos, blank] + tail})
    cases.append({"case": "<unk> between words", "ids": hello + [tok.unk] + tail})

    n = min(64, size)
    cases.append({"case": "the first 64 ids", "ids": list(range(n))})
    cases.append({"case": "the last 64 ids", "ids": list(range(size - n, size))})
    cases.append({"case": "an id past the end of the vocabulary (MarianTokenizer gives <unk>)",
                  "ids": hello + [size + 7] + tail, "out_of_range": True})
    cases.append({"case": "no ids", "ids": []})
    for c in cases:
        c["decoded"] = tok.decode(c["ids"], True)
        c["decoded_keep_special"] = tok.decode(c["ids"], False)
    return cases


def main():
    if len(sys.argv) != 1:
        sys.exit(__doc__)
    if spm.__version__ != WANT_SENTENCEPIECE:
        sys.exit(f"sentencepiece {spm.__version__} found; the goldens are made with {WANT_SENTENCEPIECE}")
    with open(os.path.join(HERE, "data", "sources.json"), encoding="utf-8") as f:
        source = json.load(f)[NAME]
    archive = os.path.join(HERE, "data", f"{NAME}.tar.xz")
    corpus = read(os.path.join(HERE, "corpus.jsonl"))
    texts = [json.loads(line) for line in corpus.decode("utf-8").split("\n") if line]
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    now = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch else \
        datetime.datetime.now(datetime.timezone.utc)
    meta = {
        "reference": f"python3-sentencepiece {spm.__version__} + MarianTokenizer's logic (transformers 4.x "
                     "slow tokenizer, language codes as after huggingface/transformers#39013) restated in "
                     "tests/tokenizer/gen_marian_goldens.py",
        "sentencepiece": spm.__version__, "python": platform.python_version(),
        "date": now.strftime("%Y-%m-%d"),
        "corpus": "tests/tokenizer/corpus.jsonl", "corpus_sha256": sha256(corpus), "corpus_lines": len(texts),
        "command": "/usr/bin/python3 tests/tokenizer/gen_marian_goldens.py",
    }
    tmp = tempfile.mkdtemp(prefix="octet-marian-goldens-")
    try:
        with tarfile.open(archive, "r:xz") as tar:
            tar.extractall(tmp)
        for name, want in source["files"].items():
            got = sha256(read(os.path.join(tmp, name)))
            if got != want:
                sys.exit(f"{NAME}/{name}: sha256 {got}, sources.json says {want}")
        tok = Marian(tmp)
        prov = {**meta, "tokenizer": NAME, **source, "archive": f"tests/tokenizer/data/{NAME}.tar.xz",
                "archive_sha256": sha256(read(archive))}
        lines = [{"provenance": prov}]
        lines += [tok.record(t) for t in texts]
        lines += [{"extra": c} for c in extra_cases(tok)]
        lines += [{"decode": c} for c in decode_cases(tok)]
    finally:
        shutil.rmtree(tmp)
    text = "".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in lines)
    os.makedirs(os.path.join(HERE, "goldens"), exist_ok=True)
    with open(os.path.join(HERE, "goldens", f"{NAME}.jsonl"), "w", encoding="utf-8") as f:
        f.write(text)
    print(f"{NAME}: {len(texts)} lines -> goldens/{NAME}.jsonl ({len(text.encode())} bytes)")


if __name__ == "__main__":
    main()
