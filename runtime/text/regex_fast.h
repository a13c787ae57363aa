// Hand-written matchers for the byte-level BPE split patterns that dominate
// tokenization (GPT-2's, and the Llama 3 / Qwen2 family's). Regex::Compile
// recognizes these exact pattern strings and Find then runs the matcher
// instead of the VM; tests/text/regex_test.cc checks both give the same
// matches on large random multilingual text, and the golden file checks the
// matchers against the reference. Internal to runtime/text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include "core/vector.h"
#include "core/utf8.h"

namespace octet::text::regex_fast {

// The character at s[i] (i < n) as both regex engines (the VM and these
// matchers) see text that may not be valid UTF-8: code point and byte length
// of a lenient-form sequence (core/utf8.h), and any byte that does not start
// one is a U+FFFD of length 1, so every read stays in bounds and every walk
// advances.
inline uint32_t CharAt(const uint8_t* s, size_t n, size_t i, size_t* len) {
  const Utf8Char c = Utf8DecodeAt(reinterpret_cast<const char*>(s), n, i, Utf8Form::kLenient);
  *len = c.valid ? c.length : 1;
  return c.code_point;
}

enum class Kind : uint8_t {
  kNone,
  kGpt2,    // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  kLlama3,  // (?i:'s|..)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  kQwen2,   // the same with \p{N} for \p{N}{1,3}
};

Kind Recognize(std::string_view pattern);

// Character kinds the matchers need, for every BMP code point (2 bits each).
class CharKinds {
 public:
  enum : uint8_t { kOther = 0, kLetter = 1, kNumber = 2, kSpace = 3 };  // \p{L}, \p{N}, \s
  [[nodiscard]] bool Build();  // load time: 64K lookups; false when out of memory
  uint8_t Of(uint32_t cp) const {
    if (cp < 0x80) return ascii_[cp];
    if (cp < 0x10000) return (bmp_[cp >> 2] >> ((cp & 3) * 2)) & 3;
    return Slow(cp);
  }
  uint8_t OfAscii(uint8_t b) const { return ascii_[b]; }  // b < 0x80

 private:
  static uint8_t Slow(uint32_t cp);
  uint8_t ascii_[128] = {};
  Vector<uint8_t> bmp_;  // [16384]
};

// End of the match that starts at p (p < n; these patterns match at every
// position of non-empty text, so the leftmost match always starts there).
size_t MatchGpt2(const CharKinds& kinds, const uint8_t* s, size_t n, size_t p);
size_t MatchLlama3(const CharKinds& kinds, const uint8_t* s, size_t n, size_t p,
                   uint32_t max_digits);

}  // namespace octet::text::regex_fast
