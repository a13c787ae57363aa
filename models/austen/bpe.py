"""A small byte-level BPE (GPT-2 style): trainer, encoder and Hugging Face tokenizer.json writer.

Text is split into pre-tokens with GPT-2's pattern, each pre-token's UTF-8 bytes are mapped to
GPT-2's printable byte alphabet (space -> "Ġ", newline -> "Ċ"), and merges are learned inside
pre-tokens only, most frequent pair first. The exported tokenizer.json is what the `tokenizers`
library reads: model BPE (vocab + merges), ByteLevel pre-tokenizer and decoder.

Needs only the Python standard library.
"""
import collections
import heapq
import json
import re

# GPT-2's pre-tokenizer pattern. The original uses \p{L} and \p{N} (the `regex` module); with the
# standard `re` module, [^\W\d_] is "a letter" and \d "a digit", and "neither letter, digit nor
# space" is [^\s\w] or "_". They agree on the Austen text (ASCII letters, digits and punctuation,
# plus the pound sign).
PATTERN = re.compile(
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+""")


def bytes_to_unicode():
    """GPT-2's byte alphabet: {byte: one printable character}, and the bytes in GPT-2's order
    (printable Latin-1 bytes first, then the others mapped from U+0100 on)."""
    order = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    chars = order[:]
    n = 0
    for b in range(256):
        if b not in order:
            order.append(b)
            chars.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(order, chars)}, order


BYTE_CHAR, BYTE_ORDER = bytes_to_unicode()


def pre_tokenize(text):
    """text -> pre-tokens as strings of byte characters (what the ByteLevel pre-tokenizer gives)."""
    return ["".join(BYTE_CHAR[b] for b in piece.encode("utf-8"))
            for piece in PATTERN.findall(text)]


def train(text, num_merges, log=None):
    """Learns `num_merges` merges from `text`. Returns the merges as [(left, right)] in rank order.

    Pair counts are kept incrementally: a merge only rewrites the words that contain its pair.
    Ties between equally frequent pairs go to the smaller (left, right) in string order.
    """
    counts = collections.Counter(pre_tokenize(text))
    words = [list(w) for w in counts]  # symbols of each distinct pre-token
    freq = list(counts.values())
    pair_count = collections.Counter()
    where = collections.defaultdict(set)  # pair -> indices of the words that contain it
    for i, w in enumerate(words):
        for pair in zip(w, w[1:]):
            pair_count[pair] += freq[i]
            where[pair].add(i)
    heap = [(-c, pair) for pair, c in pair_count.items()]
    heapq.heapify(heap)

    merges = []
    while len(merges) < num_merges and heap:
        neg, pair = heapq.heappop(heap)
        if pair_count.get(pair, 0) != -neg or neg == 0:
            continue  # stale entry: the count changed since it was pushed
        merges.append(pair)
        left, right = pair
        merged = left + right
        changed = set()
        for i in sorted(where.pop(pair, ())):
            w, f = words[i], freq[i]
            for p in zip(w, w[1:]):
                pair_count[p] -= f
                changed.add(p)
            out, j = [], 0
            while j < len(w):
                if j + 1 < len(w) and w[j] == left and w[j + 1] == right:
                    out.append(merged)
                    j += 2
                else:
                    out.append(w[j])
                    j += 1
            words[i] = out
            for p in zip(out, out[1:]):
                pair_count[p] += f
                where[p].add(i)
                changed.add(p)
        del pair_count[pair]
        for p in changed:
            if p == pair:
                continue
            c = pair_count.get(p, 0)
            if c > 0:
                heapq.heappush(heap, (-c, p))
            else:
                pair_count.pop(p, None)
                where.pop(p, None)
        if log and len(merges) % 250 == 0:
            log(f"bpe: {len(merges)} merges, last {left!r} + {right!r} ({-neg} times)")
    return merges


class Tokenizer:
    """Vocabulary: the special tokens first, then the 256 byte characters (GPT-2's order), then one
    token per merge in rank order."""

    def __init__(self, merges, specials):
        self.specials = list(specials)
        self.merges = [tuple(m) for m in merges]
        self.vocab = {}
        for s in self.specials:
            self.vocab[s] = len(self.vocab)
        for b in BYTE_ORDER:
            self.vocab[BYTE_CHAR[b]] = len(self.vocab)
        for left, right in self.merges:
            self.vocab[left + right] = len(self.vocab)
        self.rank = {m: r for r, m in enumerate(self.merges)}
        self.id_to_token = {i: t for t, i in self.vocab.items()}
        self.char_byte = {c: b for b, c in BYTE_CHAR.items()}
        self._cache = {}

    def _bpe(self, word):
        """One pre-token -> its symbols: repeatedly merge the adjacent pair of lowest rank."""
        if word in self._cache:
            return self._cache[word]
        w = list(word)
        while len(w) > 1:
            ranked = [(self.rank.get(p, len(self.rank)), k) for k, p in enumerate(zip(w, w[1:]))]
            best, _ = min(ranked)
            if best == len(self.rank):
                break
            left, right = self.merges[best]
            out, j = [], 0
            while j < len(w):
                if j + 1 < len(w) and w[j] == left and w[j + 1] == right:
                    out.append(left + right)
                    j += 2
                else:
                    out.append(w[j])
                    j += 1
            w = out
        self._cache[word] = w
        return w

    def encode(self, text):
        return [self.vocab[s] for word in pre_tokenize(text) for s in self._bpe(word)]

    def decode(self, ids):
        out = bytearray()
        for i in ids:
            tok = self.id_to_token[i]
            if tok in self.specials:
                continue
            out.extend(self.char_byte[c] for c in tok)
        return out.decode("utf-8", errors="replace")

    def tokenizer_json(self, bos):
        """The Hugging Face tokenizers serialization (format version 1.0). The post-processor
        puts `bos` in front of every sequence, as Llama's tokenizers do."""
        def byte_level(trim_offsets):
            return {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": trim_offsets,
                    "use_regex": True}
        added = [{"id": self.vocab[s], "content": s, "single_word": False, "lstrip": False,
                  "rstrip": False, "normalized": False, "special": True} for s in self.specials]
        bos_id = self.vocab[bos]
        template = {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": bos, "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": bos, "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": bos, "type_id": 1}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {bos: {"id": bos, "ids": [bos_id], "tokens": [bos]}},
        }
        return {
            "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": None, "pre_tokenizer": byte_level(True),
            "post_processor": {"type": "Sequence",
                               "processors": [byte_level(False), template]},
            "decoder": byte_level(True),
            "model": {"type": "BPE", "dropout": None, "unk_token": None,
                      "continuing_subword_prefix": None, "end_of_word_suffix": None,
                      "fuse_unk": False, "byte_fallback": False,
                      "vocab": self.vocab, "merges": [f"{a} {b}" for a, b in self.merges]},
        }

    def save(self, path, bos):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.tokenizer_json(bos), f, ensure_ascii=False, indent=1)
            f.write("\n")

    @classmethod
    def load(cls, path):
        """Reads back a tokenizer.json written by save()."""
        with open(path, encoding="utf-8") as f:
            tok = json.load(f)
        specials = [t["content"] for t in sorted(tok["added_tokens"], key=lambda t: t["id"])]
        merges = [tuple(m.split(" ")) for m in tok["model"]["merges"]]
        out = cls(merges, specials)
        if out.vocab != tok["model"]["vocab"]:
            raise ValueError(f"{path}: vocab does not follow specials, bytes, merges")
        return out
