// Added tokens split out of the text as tokenizers' AddedVocabulary does: the
// tokens of one matcher (normalized or not) are found leftmost-longest and
// without overlap; a match that is skipped (a special token when
// split_special_tokens, a single_word token inside a word) still consumes its
// bytes; lstrip / rstrip take the whitespace around a match with it.
#include <algorithm>
#include <cstring>

#include "text/tokenizer_impl.h"
#include "text/unicode.h"
#include "core/utf8.h"

namespace octet {
namespace text {
namespace {

bool IsWordChar(uint32_t c) {
  return c == '_' || IsAlphanumeric(c);
}

// The code point that ends s[0, n) (n > 0, valid UTF-8).
uint32_t LastChar(const uint8_t* s, size_t n) {
  size_t i = n - 1;
  while (i > 0 && Utf8IsContinuation(s[i])) --i;
  size_t j = i;
  return Utf8Decode(reinterpret_cast<const char*>(s), &j);
}

}  // namespace

Status AddedTokenMatcher::Build(const fb::TokenizerSpec& spec, bool normalized) {
  tokens_.Clear();
  for (uint32_t& f : first_) f = 0;
  if (spec.added_tokens() == nullptr) return Status::Ok();
  for (const fb::AddedToken* a : *spec.added_tokens()) {
    if (a->normalized() != normalized) continue;
    const flatbuffers::String* content =
        normalized && a->normalized_content() ? a->normalized_content() : a->content();
    if (content->size() == 0) continue;
    const Entry e{reinterpret_cast<const uint8_t*>(content->data()), content->size(), a->id(),
                  static_cast<uint32_t>(tokens_.size()), a->special(), a->single_word(),
                  a->lstrip(), a->rstrip()};
    if (!tokens_.Push(e)) return TokenizerOutOfMemory("added tokens");
  }
  // Stable by `order` (std::stable_sort would allocate on its own).
  std::sort(tokens_.begin(), tokens_.end(), [](const Entry& x, const Entry& y) {
    if (x.bytes[0] != y.bytes[0]) return x.bytes[0] < y.bytes[0];
    if (x.size != y.size) return x.size > y.size;
    return x.order < y.order;
  });
  size_t k = 0;
  for (uint32_t b = 0; b <= 256; ++b) {
    while (k < tokens_.size() && tokens_[k].bytes[0] < b) ++k;
    first_[b] = static_cast<uint32_t>(k);
  }
  return Status::Ok();
}

bool AddedTokenMatcher::Next(const uint8_t* s, size_t n, size_t from, size_t start_offset,
                             bool split_special, size_t* begin, size_t* end, int32_t* id,
                             size_t* resume) const {
  size_t i = from;
  while (i < n) {
    const uint8_t b = s[i];
    const Entry* match = nullptr;
    for (uint32_t k = first_[b]; k < first_[b + 1]; ++k) {
      const Entry& e = tokens_[k];
      if (e.size <= n - i && std::memcmp(s + i, e.bytes, e.size) == 0) {
        match = &e;
        break;  // longest first
      }
    }
    if (match == nullptr) {
      ++i;
      continue;
    }
    const size_t mbegin = i, mend = i + match->size;
    i = mend;  // a skipped match still consumes its bytes
    if (split_special && match->special) continue;
    if (match->single_word) {
      const bool start_ok = mbegin == 0 || !IsWordChar(LastChar(s, mbegin));
      size_t j = mend;
      const bool stop_ok =
          mend == n || !IsWordChar(Utf8Decode(reinterpret_cast<const char*>(s), &j));
      if (!start_ok || !stop_ok) continue;
    }
    size_t b0 = mbegin, e0 = mend;
    if (match->lstrip) {
      size_t k = mbegin;
      while (k > 0) {
        size_t p = k - 1;
        while (p > 0 && Utf8IsContinuation(s[p])) --p;
        size_t q = p;
        if (!IsWhiteSpace(Utf8Decode(reinterpret_cast<const char*>(s), &q))) break;
        k = p;
      }
      b0 = std::max(k, start_offset);
    }
    if (match->rstrip) {
      size_t k = mend;
      while (k < n) {
        size_t q = k;
        if (!IsWhiteSpace(Utf8Decode(reinterpret_cast<const char*>(s), &q))) break;
        k = q;
      }
      e0 = k;
    }
    *begin = b0;
    *end = e0;
    *id = match->id;
    *resume = mend;
    return true;
  }
  return false;
}

}  // namespace text
}  // namespace octet
