// UTF-8 validation, decoding and encoding with Rust `str` rules: shortest
// form only, no surrogates (U+D800..U+DFFF), nothing above U+10FFFF. The
// tokenizers compare id-for-id with Hugging Face's Rust code, which only ever
// sees valid `str`, so text is validated once at the edge (Utf8ValidPrefix)
// and the inner loops decode with the unchecked Utf8Decode.
#pragma once

#include <cstddef>
#include <cstdint>

namespace octet::text {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;
constexpr uint32_t kReplacementChar = 0xFFFD;
constexpr size_t kMaxUtf8Bytes = 4;

// Length of the longest valid UTF-8 prefix of s[0, n): n when all of it is
// valid, else the byte offset where the first invalid (or truncated)
// sequence starts. Scans 8 bytes at a time while the text is ASCII.
size_t Utf8ValidPrefix(const char* s, size_t n);

inline bool Utf8IsValid(const char* s, size_t n) { return Utf8ValidPrefix(s, n) == n; }

// Bytes of the sequence that `lead` starts (1..4), or 0 when `lead` cannot
// start a valid sequence (a continuation byte, 0xC0, 0xC1, 0xF5..0xFF).
inline size_t Utf8SequenceLength(uint8_t lead) {
  if (lead < 0x80) return 1;
  if (lead < 0xC2) return 0;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  if (lead < 0xF5) return 4;
  return 0;
}

// Bytes that Utf8Encode writes for `cp` (cp must be a scalar value).
inline size_t Utf8EncodedLength(uint32_t cp) {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

// Decodes the code point at s[*i] and advances *i past it. Precondition: the
// text at *i is valid UTF-8 (checked by Utf8ValidPrefix); no bounds checks.
inline uint32_t Utf8Decode(const char* s, size_t* i) {
  const auto* p = reinterpret_cast<const uint8_t*>(s) + *i;
  const uint32_t b0 = p[0];
  if (b0 < 0x80) {
    *i += 1;
    return b0;
  }
  if (b0 < 0xE0) {
    *i += 2;
    return ((b0 & 0x1F) << 6) | (p[1] & 0x3F);
  }
  if (b0 < 0xF0) {
    *i += 3;
    return ((b0 & 0x0F) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3F);
  }
  *i += 4;
  return ((b0 & 0x07) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) | (p[3] & 0x3F);
}

// Decodes the code point at s[*i] of untrusted text s[0, n) (*i < n). A valid
// sequence advances *i past it and returns its code point; anything else
// (truncated, overlong, surrogate, > U+10FFFF, stray continuation byte)
// advances *i by one byte and returns kReplacementChar with *valid = false.
uint32_t Utf8DecodeChecked(const char* s, size_t n, size_t* i, bool* valid);

// Writes the 1..4 byte encoding of the scalar value `cp` to out (which must
// have room for kMaxUtf8Bytes) and returns the byte count.
inline size_t Utf8Encode(uint32_t cp, char* out) {
  auto* o = reinterpret_cast<uint8_t*>(out);
  if (cp < 0x80) {
    o[0] = static_cast<uint8_t>(cp);
    return 1;
  }
  if (cp < 0x800) {
    o[0] = static_cast<uint8_t>(0xC0 | (cp >> 6));
    o[1] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = static_cast<uint8_t>(0xE0 | (cp >> 12));
    o[1] = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F));
    o[2] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = static_cast<uint8_t>(0xF0 | (cp >> 18));
  o[1] = static_cast<uint8_t>(0x80 | ((cp >> 12) & 0x3F));
  o[2] = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F));
  o[3] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
  return 4;
}

}  // namespace octet::text
