// Internals of the tokenizer (tokenizer.h), shared by the files of one concern
// each: normalizer.cc, pre_tokenizer.cc, bpe.cc, wordpiece.cc, unigram.cc,
// added_tokens.cc, decoder.cc, tokenizer.cc. Not an API.
#pragma once

#include <cstddef>
#include <cstdint>
#include "core/alloc.h"
#include "core/status.h"
#include "core/vector.h"
#include "octet_model_generated.h"
#include "text/regex.h"
#include "text/tokenizer.h"

namespace octet {
namespace text {

// A piece of a buffer: bytes [begin, end).
struct Span {
  uint32_t begin;
  uint32_t end;
};

// A growable-free byte buffer view into the workspace.
struct Buffer {
  uint8_t* data = nullptr;
  size_t cap = 0;
};

// out <= ceil(num * in / den) + add: how much a step can grow valid UTF-8.
struct Growth {
  size_t num = 1;
  size_t den = 1;
  size_t add = 0;
  // Saturates: a hostile file's bounds must not wrap to a small size.
  size_t Apply(size_t n) const {
    // 2^40 where size_t has 64 bits; a quarter of the address space on 32-bit
    // targets (armhf), where 2^40 does not fit.
    constexpr uint64_t kHuge64 = static_cast<uint64_t>(1) << 40;
    constexpr size_t kHuge =
        SIZE_MAX / 4 < kHuge64 ? SIZE_MAX / 4 : static_cast<size_t>(kHuge64);
    if (n >= kHuge || num >= kHuge || add >= kHuge || (n != 0 && num > kHuge / n)) return kHuge;
    return (num * n + den - 1) / den + add;
  }
};

// Words already encoded and their ids, kept in the workspace across Encode
// calls (tokenizers' BPE and Unigram keep such a cache too): a model's ids
// for a pre-token depend on its bytes alone, so a hit is exact. Direct-mapped;
// a word longer than kKeyBytes or with more than kIds ids is not kept.
struct WordCache {
  static constexpr size_t kMinTextBytes = 64;  // smaller workspaces have none
  static constexpr size_t kSlots = 4096;       // a power of two
  static constexpr size_t kKeyBytes = 24;
  static constexpr size_t kIds = 8;
  struct Slot {
    uint32_t hash;
    uint16_t key_len;  // 0: empty (pre-tokens are never empty)
    uint16_t n_ids;
    uint8_t key[kKeyBytes];
    int32_t ids[kIds];
  };
  // The tokenizer whose ids the slots hold (TokenizerImpl::cache_tag): a
  // workspace handed to another tokenizer starts over.
  uint64_t tag;
  uint64_t pad;
  Slot slots[kSlots];
};
static_assert(sizeof(WordCache::Slot) == 64, "one cache line a slot");

// GPT-2's byte <-> character mapping (ByteLevel pre-tokenizer and decoder).
struct ByteLevelMap {
  uint8_t utf8[256][2];  // the character of byte b, UTF-8 (1 or 2 bytes)
  uint8_t utf8_len[256];
  int16_t byte_of[0x144];  // code point -> byte, -1 when not a byte character
};
const ByteLevelMap& GetByteLevelMap();

// The added tokens, found in text as tokenizers' AddedVocabulary does
// (leftmost-longest over the set, then single_word / lstrip / rstrip).
class AddedTokenMatcher {
 public:
  // `normalized`: the matcher over normalized text (tokens with normalized =
  // true, by normalized_content), else over raw text.
  // Load time: kOutOfMemory when its table cannot be allocated.
  Status Build(const fb::TokenizerSpec& spec, bool normalized);
  bool empty() const { return tokens_.empty(); }
  // The next match in s[0, n) at or after `from`, with the flags applied;
  // `start_offset` is where the previous match ended (lstrip stops there).
  // False when none.
  bool Next(const uint8_t* s, size_t n, size_t from, size_t start_offset, bool split_special,
            size_t* begin, size_t* end, int32_t* id, size_t* resume) const;

 private:
  struct Entry {
    const uint8_t* bytes;
    uint32_t size;
    int32_t id;
    uint32_t order;  // position in the spec: ties keep it
    bool special, single_word, lstrip, rstrip;
  };
  Vector<Entry> tokens_;        // sorted by first byte, then longest first
  uint32_t first_[257] = {};         // tokens_ of first byte b: [first_[b], first_[b + 1])
};

struct NormalizerOp {
  const fb::NormalizerStep* step;
  Owned<Regex> regex;  // Replace with a regex pattern
  Growth growth;
};

struct PreTokenizerOp {
  const fb::PreTokenizerStep* step;
  Owned<Regex> regex;  // Split with a regex pattern
};

struct DecoderOp {
  const fb::DecoderStep* step;
  Owned<Regex> regex;  // Replace with a regex pattern
};

struct TokenizerImpl {
  const fb::TokenizerSpec* spec = nullptr;
  const fb::TokModel* model = nullptr;
  uint32_t vocab_size = 0;
  const uint8_t* vocab_bytes = nullptr;
  const uint32_t* vocab_offsets = nullptr;
  const uint32_t* index = nullptr;   // null when absent
  // Unigram: the table the lattice probes (TokModel.lattice_index, else `index`),
  // its longest key, and the pieces past vocab_size that only it matches (each
  // emitted as unk_id).
  const uint32_t* lattice = nullptr;
  uint32_t lattice_max_bytes = 0;
  uint32_t lattice_only = 0;
  bool float_lattice = false;
  // The TokHash of every proper prefix (at a character boundary) of the
  // lattice's keys, open-addressed (0 = empty, a hash of 0 is stored as 1):
  // the lattice stops extending a candidate no key continues. A collision
  // only costs lookups. Built at Init when there is a lattice_index (a
  // SentencePiece model runs its lattice over whole texts, no word cache).
  Vector<uint32_t> lattice_prefix;
  bool MayExtend(uint32_t hash) const {
    if (lattice_prefix.empty()) return true;
    const uint32_t mask = static_cast<uint32_t>(lattice_prefix.size() - 1);
    const uint32_t key = hash == 0 ? 1 : hash;
    for (uint32_t i = key & mask, probes = 0; probes <= mask; i = (i + 1) & mask, ++probes) {
      if (lattice_prefix[i] == key) return true;
      if (lattice_prefix[i] == 0) return false;
    }
    return true;
  }
  const uint32_t* merges = nullptr;  // null when absent
  int32_t byte_ids[256];             // -1 when absent
  bool byte_level = false;           // the model works on raw bytes (ByteLevel pre-tokenizer last)
  int32_t unk_id = -1;
  uint32_t max_token_bytes = 0;      // longest vocabulary string
  uint64_t cache_tag = 0;            // unique per Init: WordCache::tag

  Vector<NormalizerOp> normalizers;
  Vector<PreTokenizerOp> pre_tokenizers;
  Vector<DecoderOp> decoders;
  AddedTokenMatcher raw_added, normalized_added;
  Vector<uint8_t> special;  // [vocab_size] 1 = a special added token
  Vector<uint8_t> eos;      // [vocab_size]
  Vector<int16_t> fallback_byte;  // [vocab_size] byte-fallback models: the byte of <0xNN>, else -1
  // [vocab_size] bit 0: the id is the left of some merge, bit 1: the right. A
  // pair that fails either needs no probe of the (large, cache-cold) merges table.
  Vector<uint8_t> merge_side;
  bool MayMerge(uint32_t left, uint32_t right) const {
    return left < merge_side.size() && right < merge_side.size() && (merge_side[left] & 1) &&
           (merge_side[right] & 2);
  }
  Growth pre_growth;
  // The bytes a piece of n bytes can reach through the normalizers (every step's bound in turn).
  size_t NormBound(size_t n) const {
    for (const NormalizerOp& op : normalizers) n = op.growth.Apply(n);
    return n;
  }
  size_t decoder_growth = 1;      // decoded bytes per token byte, at most

  // Workspace layout for max_text_bytes N, max decode ids D.
  struct Layout {
    size_t piece;      // bytes of a normalized piece (NB)
    size_t pre;        // bytes of a pre-tokenized piece (PB)
    size_t spans;      // spans per list
    size_t symbols;    // BPE symbols / lattice nodes
    size_t heap;       // BPE heap entries
    size_t dec_bytes;  // decode buffer bytes
    size_t dec_spans;  // decode token spans
    size_t regex;      // regex scratch bytes
    bool cache;        // a WordCache at off_cache (not for tiny texts: decode-only workspaces)
    size_t off_cache;
    size_t off_norm_a, off_norm_b, off_pre_a, off_pre_b, off_spans_a, off_spans_b, off_spans_c, off_symbols,
        off_heap, off_dec_a, off_dec_b, off_dec_spans_a, off_dec_spans_b, off_regex, total;
  };
  Layout LayoutFor(size_t max_text_bytes, size_t max_decode_ids) const;

  // --- encode ---
  struct EncodeState {
    TokenizerWorkspace* ws;
    Layout layout;
    int32_t* ids;
    size_t max_ids;
    size_t n_ids;
    WordCache* cache;  // null: every word through the model
  };
  Status Emit(EncodeState& st, int32_t id) const;
  Status EncodeText(EncodeState& st, const uint8_t* text, size_t n, bool split_special) const;
  // at_origin: the piece starts at offset 0 of the text (Metaspace's prepend_scheme First).
  Status EncodeNormalizedPiece(EncodeState& st, const uint8_t* s, size_t n, bool split_special,
                               bool at_origin) const;
  Status EncodePlainPiece(EncodeState& st, const uint8_t* s, size_t n, bool at_origin) const;
  // The model on one pre-token, through the word cache when there is one.
  Status EncodeWord(EncodeState& st, const uint8_t* w, size_t n) const;
  Status RunModel(EncodeState& st, const uint8_t* w, size_t n) const;

  // normalizer.cc: normalizes s[0, n) into the workspace; *out / *out_n the result.
  Status Normalize(EncodeState& st, const uint8_t* s, size_t n, const uint8_t** out,
                   size_t* out_n) const;
  // pre_tokenizer.cc: splits s[0, n) into pre-tokens; *text the buffer they index.
  Status PreTokenize(EncodeState& st, const uint8_t* s, size_t n, bool at_origin, const uint8_t** text,
                     const Span** spans, size_t* n_spans) const;
  // The model on one pre-token: bpe.cc, wordpiece.cc (WordPiece, WordLevel), unigram.cc.
  Status Bpe(EncodeState& st, const uint8_t* s, size_t n) const;
  Status WordPiece(EncodeState& st, const uint8_t* s, size_t n) const;
  Status WordLevel(EncodeState& st, const uint8_t* s, size_t n) const;
  Status Unigram(EncodeState& st, const uint8_t* s, size_t n) const;

  // Vocabulary lookup of key[0, n) (raw bytes when byte_level): the id, or -1.
  int32_t Lookup(const uint8_t* key, size_t n) const;
  // The Unigram lattice's lookup: a lattice id (>= vocab_size: a lattice-only piece), or -1.
  int32_t LatticeLookup(const uint8_t* key, size_t n) const;
  // The same with the key's TokHash already computed (lattice_index only).
  int32_t LatticeLookupHashed(const uint8_t* key, size_t n, uint32_t hash) const;
  // Lookup of prefix + key + suffix without building it.
  int32_t Lookup3(const uint8_t* a, size_t na, const uint8_t* b, size_t nb, const uint8_t* c,
                  size_t nc) const;
  const uint8_t* Token(int32_t id, size_t* n) const {
    *n = vocab_offsets[id + 1] - vocab_offsets[id];
    return vocab_bytes + vocab_offsets[id];
  }

  // --- decode (decoder.cc) ---
  Status DecodeIds(const int32_t* ids, size_t n, bool skip_special, TokenizerWorkspace& ws,
                   char* out, size_t cap, size_t* n_out) const;
  Status DecodeSentencePiece(const fb::DecoderStep& step, const int32_t* ids, size_t n,
                             bool skip_special, uint8_t* buf, size_t bcap, char* out, size_t cap,
                             size_t* n_out) const;
};

// A stage's output outgrew the workspace (tokenizer.h: CreateWorkspace).
Status OutgrewWorkspace(const char* stage);
// Load time: `what` could not be allocated (kOutOfMemory).
Status TokenizerOutOfMemory(const char* what);

Status InitNormalizers(TokenizerImpl& t);
Status InitPreTokenizers(TokenizerImpl& t);
Status InitDecoders(TokenizerImpl& t);

}  // namespace text
}  // namespace octet
