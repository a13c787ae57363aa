// The tokenizer's pipeline (see tokenizer.h): binding to the spec, the
// workspace, encode's order of steps, the template, and the vocabulary lookup.
#include "text/tokenizer.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>

#include "core/checked_math.h"
#include "text/tok_tables.h"
#include "text/tokenizer_impl.h"
#include "core/utf8.h"

namespace octet {
namespace text {
namespace {

constexpr StatusCode kArg = StatusCode::kInvalidArgument;

size_t AlignUp(size_t n) { return (n + 15) & ~static_cast<size_t>(15); }

// Tags for WordCache: one per Init, so no two live tokenizers share one.
std::atomic<uint32_t> g_next_cache_tag{1};

// The word cache's hash (never stored in a file, so byte order does not matter).
uint32_t WordHash(const uint8_t* p, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
  }
  if (i < n) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, n - i);
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
  }
  h ^= h >> 29;
  h *= 0xFF51AFD7ED558CCDull;
  return static_cast<uint32_t>(h >> 32);
}

}  // namespace

Status TokenizerOutOfMemory(const char* what) {
  return Status::Error(StatusCode::kOutOfMemory, "tokenizer: out of memory for the %s", what);
}

Status OutgrewWorkspace(const char* stage) {
  return Status::Error(StatusCode::kOutOfMemory,
                       "the text grows past the tokenizer workspace in the %s (create the "
                       "workspace for longer texts)", stage);
}

const ByteLevelMap& GetByteLevelMap() {
  static const ByteLevelMap map = [] {
    ByteLevelMap m{};
    for (auto& b : m.byte_of) b = -1;
    uint32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      const uint32_t c = printable ? static_cast<uint32_t>(b) : next++;
      char utf8[4];
      const size_t len = Utf8Encode(c, utf8);
      m.utf8_len[b] = static_cast<uint8_t>(len);
      std::memcpy(m.utf8[b], utf8, len);
      m.byte_of[c] = static_cast<int16_t>(b);
    }
    return m;
  }();
  return map;
}

TokenizerImpl::Layout TokenizerImpl::LayoutFor(size_t max_text_bytes, size_t max_decode_ids) const {
  Layout l{};
  // Growth is bounded per step, but the product of worst cases (NFKD's 11x
  // times a charsmap's longest replacement...) is far from real text: each
  // stage gets at most 4x its input, and a text that outgrows it is refused
  // (kOutOfMemory) rather than planned for.
  l.piece = std::min(NormBound(max_text_bytes), 4 * max_text_bytes) + 64;
  l.pre = std::min(pre_growth.Apply(l.piece), 4 * l.piece) + 64;
  l.spans = 2 * l.pre + 4;  // pieces and matches, empty matches included
  l.symbols = l.pre + 2;
  l.heap = 3 * l.symbols + 4;
  l.dec_spans = max_decode_ids + 2;
  l.dec_bytes = Growth{decoder_growth, 1, 0}.Apply((static_cast<size_t>(max_token_bytes) + 4) * (max_decode_ids + 1));
  size_t regex = 0;
  for (const NormalizerOp& op : normalizers) {
    if (op.regex) regex = std::max(regex, op.regex->ScratchBytes(l.piece));
  }
  for (const PreTokenizerOp& op : pre_tokenizers) {
    if (op.regex) regex = std::max(regex, op.regex->ScratchBytes(l.pre));
  }
  for (const DecoderOp& op : decoders) {
    if (op.regex) regex = std::max(regex, op.regex->ScratchBytes(l.dec_bytes));
  }
  l.regex = regex;
  size_t off = 0;
  const auto take = [&](size_t bytes) {
    const size_t at = off;
    off += AlignUp(bytes);
    return at;
  };
  l.cache = max_text_bytes >= WordCache::kMinTextBytes;
  l.off_cache = take(l.cache ? sizeof(WordCache) : 0);
  l.off_norm_a = take(l.piece);
  l.off_norm_b = take(l.piece);
  l.off_pre_a = take(l.pre);
  l.off_pre_b = take(l.pre);
  l.off_spans_a = take(l.spans * sizeof(Span));
  l.off_spans_b = take(l.spans * sizeof(Span));
  l.off_spans_c = take(l.spans * 12);  // pre_tokenizer.cc's Piece: {begin, end, match}
  l.off_symbols = take(l.symbols * 16);
  l.off_heap = take(l.heap * 20);
  l.off_dec_a = take(l.dec_bytes);
  l.off_dec_b = take(l.dec_bytes);
  l.off_dec_spans_a = take(l.dec_spans * sizeof(Span));
  l.off_dec_spans_b = take(l.dec_spans * sizeof(Span));
  l.off_regex = take(l.regex);
  l.total = off;
  return l;
}

int32_t TokenizerImpl::Lookup3(const uint8_t* a, size_t na, const uint8_t* b, size_t nb,
                               const uint8_t* c, size_t nc) const {
  const size_t n = na + nb + nc;
  if (index == nullptr || n > max_token_bytes) return -1;
  uint8_t key[512];
  if (n > sizeof(key)) return -1;
  if (na) std::memcpy(key, a, na);
  if (nb) std::memcpy(key + na, b, nb);
  if (nc) std::memcpy(key + na + nb, c, nc);
  return Lookup(key, n);
}

int32_t TokenizerImpl::Lookup(const uint8_t* key, size_t n) const {
  if (index == nullptr || n > max_token_bytes) return -1;
  const uint32_t slots = index[0];
  const uint32_t* table = index + 1;
  uint32_t i = TokHash(key, n) & (slots - 1);
  const ByteLevelMap& bl = GetByteLevelMap();
  for (uint32_t probes = 0; probes < slots; ++probes) {
    const uint32_t v = table[i];
    if (v == 0) return -1;
    const int32_t id = static_cast<int32_t>(v - 1);
    size_t tn;
    const uint8_t* t = Token(id, &tn);
    if (!byte_level) {
      if (tn == n && std::memcmp(t, key, n) == 0) return id;
    } else {
      // The token spells each raw byte with its GPT-2 character.
      size_t j = 0, k = 0;
      for (; k < n && j < tn; ++k) {
        const uint8_t len = bl.utf8_len[key[k]];
        if (j + len > tn || std::memcmp(t + j, bl.utf8[key[k]], len) != 0) break;
        j += len;
      }
      if (k == n && j == tn) return id;
    }
    i = (i + 1) & (slots - 1);
  }
  return -1;
}

int32_t TokenizerImpl::LatticeLookup(const uint8_t* key, size_t n) const {
  if (lattice == index) return Lookup(key, n);
  if (n > lattice_max_bytes) return -1;
  return LatticeLookupHashed(key, n, TokHash(key, n));
}

int32_t TokenizerImpl::LatticeLookupHashed(const uint8_t* key, size_t n, uint32_t hash) const {
  const uint32_t slots = lattice[0];
  const uint32_t* table = lattice + 1;
  uint32_t i = hash & (slots - 1);
  for (uint32_t probes = 0; probes < slots; ++probes) {
    const uint32_t v = table[i];
    if (v == 0) return -1;
    const int32_t id = static_cast<int32_t>(v - 1);
    size_t tn;
    const uint8_t* t = Token(id, &tn);
    if (tn == n && std::memcmp(t, key, n) == 0) return id;
    i = (i + 1) & (slots - 1);
  }
  return -1;
}

Status TokenizerImpl::Emit(EncodeState& st, int32_t id) const {
  if (st.n_ids >= st.max_ids) {
    return Status::Error(StatusCode::kOutOfMemory, "the text gives more than %zu ids", st.max_ids);
  }
  st.ids[st.n_ids++] = id;
  return Status::Ok();
}

Status TokenizerImpl::RunModel(EncodeState& st, const uint8_t* w, size_t n) const {
  switch (model->kind()) {
    case fb::TokModelKind::Bpe: return Bpe(st, w, n);
    case fb::TokModelKind::WordPiece: return WordPiece(st, w, n);
    case fb::TokModelKind::WordLevel: return WordLevel(st, w, n);
    case fb::TokModelKind::Unigram: return Unigram(st, w, n);
    default: return Status(StatusCode::kInternal, "tokenizer: no model");
  }
}

Status TokenizerImpl::EncodeWord(EncodeState& st, const uint8_t* w, size_t n) const {
  if (st.cache == nullptr || n > WordCache::kKeyBytes) return RunModel(st, w, n);
  const uint32_t h = WordHash(w, n);
  WordCache::Slot& slot = st.cache->slots[h & (WordCache::kSlots - 1)];
  if (slot.hash == h && slot.key_len == n && std::memcmp(slot.key, w, n) == 0) {
    if (slot.n_ids > st.max_ids - st.n_ids) {
      return Status::Error(StatusCode::kOutOfMemory, "the text gives more than %zu ids", st.max_ids);
    }
    std::memcpy(st.ids + st.n_ids, slot.ids, slot.n_ids * sizeof(int32_t));
    st.n_ids += slot.n_ids;
    return Status::Ok();
  }
  const size_t first = st.n_ids;
  OCTET_RETURN_IF_ERROR(RunModel(st, w, n));
  const size_t count = st.n_ids - first;
  if (count <= WordCache::kIds) {
    slot.hash = h;
    slot.key_len = static_cast<uint16_t>(n);
    slot.n_ids = static_cast<uint16_t>(count);
    std::memcpy(slot.key, w, n);
    std::memcpy(slot.ids, st.ids + first, count * sizeof(int32_t));
  }
  return Status::Ok();
}

Status TokenizerImpl::EncodePlainPiece(EncodeState& st, const uint8_t* s, size_t n,
                                       bool at_origin) const {
  const uint8_t* text;
  const Span* spans;
  size_t n_spans;
  OCTET_RETURN_IF_ERROR(PreTokenize(st, s, n, at_origin, &text, &spans, &n_spans));
  for (size_t i = 0; i < n_spans; ++i) {
    const uint8_t* w = text + spans[i].begin;
    const size_t wn = spans[i].end - spans[i].begin;
    if (wn == 0) continue;
    OCTET_RETURN_IF_ERROR(EncodeWord(st, w, wn));
  }
  return Status::Ok();
}

// A normalized piece: the normalized added tokens split out, the rest pre-tokenized.
Status TokenizerImpl::EncodeNormalizedPiece(EncodeState& st, const uint8_t* s, size_t n,
                                            bool split_special, bool at_origin) const {
  if (normalized_added.empty()) return EncodePlainPiece(st, s, n, at_origin);
  size_t start_offset = 0, from = 0, begin, end, resume;
  int32_t id;
  while (normalized_added.Next(s, n, from, start_offset, split_special, &begin, &end, &id,
                               &resume)) {
    if (start_offset < begin) {
      OCTET_RETURN_IF_ERROR(
          EncodePlainPiece(st, s + start_offset, begin - start_offset, at_origin && start_offset == 0));
    }
    OCTET_RETURN_IF_ERROR(Emit(st, id));
    start_offset = end;
    from = resume;
  }
  if (start_offset < n) {
    OCTET_RETURN_IF_ERROR(
        EncodePlainPiece(st, s + start_offset, n - start_offset, at_origin && start_offset == 0));
  }
  return Status::Ok();
}

Status TokenizerImpl::EncodeText(EncodeState& st, const uint8_t* text, size_t n,
                                 bool split_special) const {
  // tokenizers gives no tokens for an empty text, whatever the normalizers would add.
  if (n == 0) return Status::Ok();
  size_t start_offset = 0, from = 0, begin, end, resume;
  int32_t id;
  const auto piece = [&](const uint8_t* s, size_t len) -> Status {
    if (spec->language_code_prefix() && len >= 4 && s[0] == '>' && s[1] == '>') {
      // MarianTokenizer.remove_language_code: ">>fra<<" up to the first "<<".
      size_t k = 2;
      while (k + 1 < len && !(s[k] == '<' && s[k + 1] == '<')) ++k;
      if (k + 1 < len) {
        const size_t code = k + 2;
        const int32_t code_id = Lookup(s, code);
        if (code_id < 0 && unk_id < 0) {
          return Status(StatusCode::kInvalidArgument, "tokenizer: a language code has no token and the model has no unk");
        }
        OCTET_RETURN_IF_ERROR(Emit(st, code_id >= 0 ? code_id : unk_id));
        s += code;
        len -= code;
        if (len == 0) return Status::Ok();
      }
    }
    const uint8_t* norm;
    size_t norm_n;
    OCTET_RETURN_IF_ERROR(Normalize(st, s, len, &norm, &norm_n));
    return EncodeNormalizedPiece(st, norm, norm_n, split_special, s == text);
  };
  if (!raw_added.empty()) {
    while (raw_added.Next(text, n, from, start_offset, split_special, &begin, &end, &id, &resume)) {
      if (start_offset < begin) OCTET_RETURN_IF_ERROR(piece(text + start_offset, begin - start_offset));
      OCTET_RETURN_IF_ERROR(Emit(st, id));
      start_offset = end;
      from = resume;
    }
  }
  if (start_offset < n) OCTET_RETURN_IF_ERROR(piece(text + start_offset, n - start_offset));
  return Status::Ok();
}

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

Status Tokenizer::Init(const fb::TokenizerSpec* spec) {
  impl_.reset();
  if (spec == nullptr || spec->model() == nullptr) {
    return Status(StatusCode::kInvalidModel, "the model has no compiled tokenizer");
  }
  Owned<TokenizerImpl> t(New<TokenizerImpl>());
  if (!t) return TokenizerOutOfMemory("tokenizer state");
  t->spec = spec;
  t->model = spec->model();
  const fb::TokModel& m = *t->model;
  t->vocab_size = m.vocab_size();
  t->vocab_bytes = m.vocab_bytes() ? m.vocab_bytes()->data() : nullptr;
  t->vocab_offsets = m.vocab_offsets()->data();
  t->index = m.index() && m.index()->size() > 0 ? m.index()->data() : nullptr;
  t->merges = m.merges() && m.merges()->size() > 0 ? m.merges()->data() : nullptr;
  for (int b = 0; b < 256; ++b) {
    t->byte_ids[b] = m.byte_ids() && m.byte_ids()->size() == 256 ? m.byte_ids()->Get(b) : -1;
  }
  t->byte_level = m.byte_level();
  t->cache_tag = g_next_cache_tag.fetch_add(1, std::memory_order_relaxed);
  t->unk_id = m.unk_id();
  t->max_token_bytes = m.max_token_bytes();
  for (uint32_t i = 0; i < t->vocab_size; ++i) {
    const uint32_t len = t->vocab_offsets[i + 1] - t->vocab_offsets[i];
    if (len > t->max_token_bytes) t->max_token_bytes = len;
  }
  t->lattice = t->index;
  t->lattice_max_bytes = t->max_token_bytes;
  t->float_lattice = m.float_lattice();
  if (m.lattice_index() && m.lattice_index()->size() > 0) {
    t->lattice = m.lattice_index()->data();
    t->lattice_only = m.lattice_only();
    t->lattice_max_bytes = 0;
    const uint32_t slots = t->lattice[0];
    size_t prefixes = 0;
    for (uint32_t i = 1; i <= slots; ++i) {
      if (t->lattice[i] == 0) continue;
      const uint32_t id = t->lattice[i] - 1;
      const uint32_t len = t->vocab_offsets[id + 1] - t->vocab_offsets[id];
      if (len > t->lattice_max_bytes) t->lattice_max_bytes = len;
      prefixes += len;
    }
    size_t cap = 16;
    while (cap < 2 * prefixes) cap <<= 1;
    if (!t->lattice_prefix.Assign(cap, 0)) return TokenizerOutOfMemory("lattice prefixes");
    const uint32_t mask = static_cast<uint32_t>(cap - 1);
    for (uint32_t i = 1; i <= slots; ++i) {
      if (t->lattice[i] == 0) continue;
      size_t n;
      const uint8_t* key = t->Token(static_cast<int32_t>(t->lattice[i] - 1), &n);
      for (size_t end = 0; end < n;) {
        Utf8Decode(reinterpret_cast<const char*>(key), &end);
        if (end >= n) break;
        const uint32_t h = TokHash(key, end);
        const uint32_t k = h == 0 ? 1 : h;
        uint32_t j = k & mask;
        while (t->lattice_prefix[j] != 0 && t->lattice_prefix[j] != k) j = (j + 1) & mask;
        t->lattice_prefix[j] = k;
      }
    }
  }
  if (!t->special.Assign(t->vocab_size, 0) || !t->eos.Assign(t->vocab_size, 0)) {
    return TokenizerOutOfMemory("special and end-of-sequence marks");
  }
  if (spec->added_tokens()) {
    for (const fb::AddedToken* a : *spec->added_tokens()) {
      if (a->special()) t->special[static_cast<size_t>(a->id())] = 1;
    }
  }
  if (spec->eos_ids()) {
    for (int32_t id : *spec->eos_ids()) {
      if (static_cast<size_t>(id) >= t->eos.size() && !t->eos.Resize(static_cast<size_t>(id) + 1, 0)) {
        return TokenizerOutOfMemory("end-of-sequence marks");
      }
      t->eos[static_cast<size_t>(id)] = 1;
    }
  }
  if (m.byte_fallback() && m.byte_ids() && m.byte_ids()->size() == 256) {
    if (!t->fallback_byte.Assign(t->vocab_size, -1)) return TokenizerOutOfMemory("byte-fallback table");
    for (int b = 0; b < 256; ++b) {
      if (t->byte_ids[b] >= 0) t->fallback_byte[static_cast<size_t>(t->byte_ids[b])] = static_cast<int16_t>(b);
    }
  }
  if (t->merges != nullptr) {
    if (!t->merge_side.Assign(t->vocab_size, 0)) return TokenizerOutOfMemory("merge sides");
    const uint32_t slots = t->merges[0];
    for (uint32_t i = 0; i < slots; ++i) {
      const uint32_t* slot = t->merges + 1 + 4 * static_cast<size_t>(i);
      if (slot[0] == kTokEmptyPair || slot[0] >= t->vocab_size || slot[1] >= t->vocab_size) continue;
      t->merge_side[slot[0]] |= 1;
      t->merge_side[slot[1]] |= 2;
    }
  }
  OCTET_RETURN_IF_ERROR(t->raw_added.Build(*spec, false));
  OCTET_RETURN_IF_ERROR(t->normalized_added.Build(*spec, true));
  OCTET_RETURN_IF_ERROR(InitNormalizers(*t));
  OCTET_RETURN_IF_ERROR(InitPreTokenizers(*t));
  OCTET_RETURN_IF_ERROR(InitDecoders(*t));
  impl_ = std::move(t);
  return Status::Ok();
}

Status Tokenizer::CreateWorkspace(size_t max_text_bytes, size_t max_decode_ids,
                                  TokenizerWorkspace* ws) const {
  if (!impl_) return Status(StatusCode::kInternal, "tokenizer not initialized");
  if (max_text_bytes > (1u << 30) || max_decode_ids > (1u << 26)) {
    return Status(kArg, "tokenizer workspace: limits too large");
  }
  const TokenizerImpl::Layout l = impl_->LayoutFor(max_text_bytes, max_decode_ids);
  ws->memory_.reset(NewArray<uint8_t>(l.total + 16));
  if (!ws->memory_) return Status(StatusCode::kOutOfMemory, "tokenizer workspace: out of memory");
  if (l.cache) {
    auto* cache = reinterpret_cast<WordCache*>(ws->memory_.get() + l.off_cache);
    std::memset(cache, 0, sizeof(WordCache));
    cache->tag = impl_->cache_tag;
  }
  ws->bytes_ = l.total;
  ws->max_text_bytes_ = max_text_bytes;
  ws->max_decode_ids_ = max_decode_ids;
  return Status::Ok();
}

size_t Tokenizer::MaxIds(size_t text_bytes) const {
  if (!impl_) return 0;
  size_t templ = 0;
  if (const auto* items = impl_->spec->template_single()) {
    for (const fb::TemplateItem* item : *items) templ += item->ids() ? item->ids()->size() : 0;
  }
  // At most one id per byte of a pre-tokenized piece (byte fallback), one per added token.
  return impl_->pre_growth.Apply(impl_->NormBound(text_bytes)) + text_bytes + templ + 8;
}

size_t Tokenizer::MaxDecodedBytes(size_t n_ids) const {
  if (!impl_) return 0;
  return Growth{impl_->decoder_growth, 1, 0}.Apply((static_cast<size_t>(impl_->max_token_bytes) + 4) * (n_ids + 1));
}

Status Tokenizer::Encode(const char* text, size_t n, const EncodeOptions& options,
                         TokenizerWorkspace& ws, int32_t* ids, size_t max_ids,
                         size_t* n_ids) const {
  *n_ids = 0;
  if (!impl_) return Status(StatusCode::kInternal, "tokenizer not initialized");
  if (n > ws.max_text_bytes()) {
    return Status::Error(kArg, "the text has %zu bytes; the tokenizer workspace takes %zu", n,
                         ws.max_text_bytes());
  }
  const size_t valid = Utf8ValidPrefix(text, n);
  if (valid != n) {
    return Status::Error(kArg, "the text is not valid UTF-8: byte 0x%02X at offset %zu",
                         static_cast<unsigned>(static_cast<uint8_t>(text[valid])), valid);
  }
  TokenizerImpl::EncodeState st{&ws, impl_->LayoutFor(ws.max_text_bytes(), ws.max_decode_ids()),
                                ids, max_ids, 0, nullptr};
  if (options.word_cache && st.layout.cache && ws.memory_) {
    st.cache = reinterpret_cast<WordCache*>(ws.memory_.get() + st.layout.off_cache);
    if (st.cache->tag != impl_->cache_tag) {
      std::memset(st.cache->slots, 0, sizeof(st.cache->slots));
      st.cache->tag = impl_->cache_tag;
    }
  }
  const auto* items = impl_->spec->template_single();
  const auto* data = reinterpret_cast<const uint8_t*>(text);
  Status s;
  if (options.add_special_tokens && items != nullptr && items->size() > 0) {
    for (const fb::TemplateItem* item : *items) {
      if (item->kind() == fb::TemplateItemKind::SpecialToken) {
        if (item->ids()) {
          for (int32_t id : *item->ids()) {
            s = impl_->Emit(st, id);
            if (!s.ok()) return s;
          }
        }
      } else if (item->kind() == fb::TemplateItemKind::SequenceA) {
        s = impl_->EncodeText(st, data, n, options.split_special_tokens);
        if (!s.ok()) return s;
      }
    }
  } else {
    s = impl_->EncodeText(st, data, n, options.split_special_tokens);
    if (!s.ok()) return s;
  }
  *n_ids = st.n_ids;
  return Status::Ok();
}

Status Tokenizer::Decode(const int32_t* ids, size_t n, bool skip_special_tokens,
                         TokenizerWorkspace& ws, char* out, size_t cap, size_t* n_out) const {
  *n_out = 0;
  if (!impl_) return Status(StatusCode::kInternal, "tokenizer not initialized");
  return impl_->DecodeIds(ids, n, skip_special_tokens, ws, out, cap, n_out);
}

Status Tokenizer::Normalize(const char* text, size_t n, TokenizerWorkspace& ws, const char** out,
                            size_t* out_n) const {
  if (!impl_) return Status(StatusCode::kInternal, "tokenizer not initialized");
  if (n > ws.max_text_bytes() || !Utf8IsValid(text, n)) {
    return Status(kArg, "normalize: the text is too long or not valid UTF-8");
  }
  TokenizerImpl::EncodeState st{&ws, impl_->LayoutFor(ws.max_text_bytes(), ws.max_decode_ids()),
                                nullptr, 0, 0, nullptr};
  const uint8_t* o = nullptr;
  OCTET_RETURN_IF_ERROR(impl_->Normalize(st, reinterpret_cast<const uint8_t*>(text), n, &o, out_n));
  *out = reinterpret_cast<const char*>(o);
  return Status::Ok();
}

uint32_t Tokenizer::vocab_size() const { return impl_ ? impl_->vocab_size : 0; }

const char* Tokenizer::TokenBytes(int32_t id, size_t* size) const {
  *size = 0;
  if (!impl_ || id < 0 || static_cast<uint32_t>(id) >= impl_->vocab_size) return "";
  return reinterpret_cast<const char*>(impl_->Token(id, size));
}

size_t Tokenizer::TokenText(int32_t id, TokenizerWorkspace& ws, char* out, size_t cap) const {
  size_t n = 0;
  if (Decode(&id, 1, false, ws, out, cap, &n).ok()) {
    bool readable = n > 0 && Utf8IsValid(out, n);
    for (size_t i = 0; readable && i + 2 < n; ++i) {
      if (static_cast<uint8_t>(out[i]) == 0xEF && static_cast<uint8_t>(out[i + 1]) == 0xBF &&
          static_cast<uint8_t>(out[i + 2]) == 0xBD) {
        readable = false;
      }
    }
    if (readable) return n;
  }
  size_t size;
  const char* bytes = TokenBytes(id, &size);
  n = size < cap ? size : cap;
  std::memcpy(out, bytes, n);
  return n;
}

bool Tokenizer::IsSpecial(int32_t id) const {
  return impl_ && id >= 0 && static_cast<uint32_t>(id) < impl_->vocab_size &&
         impl_->special[static_cast<size_t>(id)] != 0;
}

bool Tokenizer::IsEos(int32_t id) const {
  return impl_ && id >= 0 && static_cast<size_t>(id) < impl_->eos.size() &&
         impl_->eos[static_cast<size_t>(id)] != 0;
}

const fb::TokenizerSpec& Tokenizer::spec() const { return *impl_->spec; }

// --- streaming ---

Status StreamDecoder::Init(const Tokenizer* tokenizer, TokenizerWorkspace* workspace,
                           bool skip_special_tokens) {
  tokenizer_ = tokenizer;
  workspace_ = workspace;
  skip_special_ = skip_special_tokens;
  if (workspace->max_decode_ids() < kWindow) {
    return Status(kArg, "stream decoder: the workspace takes fewer than 64 ids");
  }
  text_cap_ = tokenizer->MaxDecodedBytes(kWindow);
  text_.reset(NewArray<char>(text_cap_));
  prefix_.reset(NewArray<char>(text_cap_));
  if (!text_ || !prefix_) return Status(StatusCode::kOutOfMemory, "stream decoder: out of memory");
  Reset();
  return Status::Ok();
}

void StreamDecoder::Reset() {
  n_ids_ = 0;
  context_ = 0;
  prefix_bytes_ = 0;
}

Status StreamDecoder::Emit(bool final, char* out, size_t cap, size_t* n_out) {
  *n_out = 0;
  size_t n = 0;
  OCTET_RETURN_IF_ERROR(tokenizer_->Decode(ids_, n_ids_, skip_special_, *workspace_, text_.get(),
                                           text_cap_, &n));
  const bool grew = n > prefix_bytes_ && std::memcmp(text_.get(), prefix_.get(), prefix_bytes_) == 0;
  const bool pending = n >= 3 && static_cast<uint8_t>(text_[n - 3]) == 0xEF &&
                       static_cast<uint8_t>(text_[n - 2]) == 0xBF &&
                       static_cast<uint8_t>(text_[n - 1]) == 0xBD;
  if (!final && (!grew || pending) && n_ids_ < kWindow) return Status::Ok();
  if (!grew) {
    // Nothing new (an id that decodes to nothing), or the window's decode is no
    // longer an extension of what was emitted: keep the context as it stands.
    if (n_ids_ < kWindow) return Status::Ok();
  } else {
    const size_t add = n - prefix_bytes_;
    if (add > cap) return Status(StatusCode::kOutOfMemory, "stream decoder: output buffer too small");
    std::memcpy(out, text_.get() + prefix_bytes_, add);
    *n_out = add;
  }
  // Context for the next ids, so they are not "first" for the decoders: from
  // the last id that is not a byte-fallback byte (a run of bytes decodes as a
  // whole), or, for a long run, from a byte that starts a character.
  const Vector<int16_t>& fb = tokenizer_->impl_->fallback_byte;
  const auto byte_of = [&](int32_t id) { return fb.empty() ? -1 : fb[static_cast<size_t>(id)]; };
  size_t k = n_ids_ - 1;
  while (k > 0 && byte_of(ids_[k]) >= 0 && n_ids_ - k < kWindow / 2) --k;
  if (byte_of(ids_[k]) >= 0) {
    while (k + 1 < n_ids_ && Utf8IsContinuation(byte_of(ids_[k]))) ++k;
  }
  const size_t keep = n_ids_ - k;
  std::memmove(ids_, ids_ + k, keep * sizeof(int32_t));
  n_ids_ = keep;
  context_ = keep;
  OCTET_RETURN_IF_ERROR(tokenizer_->Decode(ids_, keep, skip_special_, *workspace_, prefix_.get(),
                                           text_cap_, &prefix_bytes_));
  return Status::Ok();
}

Status StreamDecoder::Push(int32_t id, char* out, size_t cap, size_t* n_out) {
  *n_out = 0;
  if (id < 0 || static_cast<uint32_t>(id) >= tokenizer_->vocab_size()) {
    return Status::Error(kArg, "token id %d is outside the vocabulary (%u)", id,
                         tokenizer_->vocab_size());
  }
  ids_[n_ids_++] = id;
  return Emit(false, out, cap, n_out);
}

Status StreamDecoder::Finish(char* out, size_t cap, size_t* n_out) {
  *n_out = 0;
  if (n_ids_ <= context_) return Status::Ok();
  return Emit(true, out, cap, n_out);
}

}  // namespace text
}  // namespace octet
