// The one UTF-8 decoder and encoder of octet (runtime, converter and tools).
//
// Header-only and dependency-free: the command-line tools, which see only the
// public API, include it through the octet_utf8 target.
//
// Validity comes in two forms (Utf8Form):
//   kStrict   Unicode's well-formed UTF-8, Rust `str` rules: shortest form
//             only, no surrogates (U+D800..U+DFFF), nothing above U+10FFFF.
//             The tokenizers compare id-for-id with Hugging Face's Rust code,
//             which only ever sees valid `str`, so text is validated once at
//             the edge (Utf8ValidPrefix) and inner loops decode with the
//             unchecked Utf8Decode.
//   kLenient  the shape only: a lead byte C2..F4 and as many continuation
//             bytes as it announces. Overlong 3- and 4-byte forms, surrogates
//             and values up to U+13FFFF decode as characters. This is how the
//             regex engine and the chat templates walk bytes that may not have
//             been validated (every read in bounds, every step forward).
//
// Invalid-sequence policy: Utf8DecodeAt never reads past n and reports an
// invalid sequence as {kReplacementChar, length of its maximal subpart, not
// valid}; the maximal subpart (Unicode 3.9, what Rust's from_utf8_lossy
// replaces by one U+FFFD) is the lead byte and the continuation bytes that
// could still have begun a valid sequence, 1..3 bytes. A caller that wants
// one replacement per byte steps over one byte instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace octet {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;
constexpr uint32_t kReplacementChar = 0xFFFD;
constexpr size_t kMaxUtf8Bytes = 4;

enum class Utf8Form : uint8_t { kStrict, kLenient };

// One decoded character (see the policy above).
struct Utf8Char {
  uint32_t code_point;  // kReplacementChar when !valid
  uint32_t length;      // bytes: of the sequence, or of the maximal invalid subpart
  bool valid;
};

// True for the bytes 0x80..0xBF, which only continue a sequence.
inline bool Utf8IsContinuation(uint8_t b) { return (b & 0xC0) == 0x80; }

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

// Decodes the character at s[i] of untrusted text s[0, n) (i < n) under
// `form`; reads nothing outside s[i, n).
inline Utf8Char Utf8DecodeAt(const char* s, size_t n, size_t i, Utf8Form form) {
  const auto* p = reinterpret_cast<const uint8_t*>(s) + i;
  const uint32_t b0 = p[0];
  if (b0 < 0x80) return {b0, 1, true};
  const size_t len = Utf8SequenceLength(static_cast<uint8_t>(b0));
  if (len == 0) return {kReplacementChar, 1, false};
  // The second byte's range is what excludes overlongs (E0, F0), surrogates
  // (ED) and values above U+10FFFF (F4) in the strict form.
  uint8_t lo = 0x80, hi = 0xBF;
  if (form == Utf8Form::kStrict) {
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  }
  const size_t avail = n - i;
  uint32_t cp = b0 & (0x7Fu >> len);
  for (size_t k = 1; k < len; ++k) {
    if (k >= avail || p[k] < lo || p[k] > hi) {
      return {kReplacementChar, static_cast<uint32_t>(k), false};
    }
    cp = (cp << 6) | (p[k] & 0x3Fu);
    lo = 0x80;
    hi = 0xBF;
  }
  return {cp, static_cast<uint32_t>(len), true};
}

// Length of the longest valid (strict) UTF-8 prefix of s[0, n): n when all of
// it is valid, else the byte offset where the first invalid (or truncated)
// sequence starts. Scans 8 bytes at a time while the text is ASCII.
inline size_t Utf8ValidPrefix(const char* s, size_t n) {
  const auto* p = reinterpret_cast<const uint8_t*>(s);
  size_t i = 0;
  while (i < n) {
    while (i + 8 <= n) {
      uint64_t word;
      std::memcpy(&word, p + i, 8);
      if (word & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= n) break;
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    const Utf8Char c = Utf8DecodeAt(s, n, i, Utf8Form::kStrict);
    if (!c.valid) return i;
    i += c.length;
  }
  return n;
}

inline bool Utf8IsValid(const char* s, size_t n) { return Utf8ValidPrefix(s, n) == n; }

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

// Decodes the code point at s[*i] of untrusted text s[0, n) (*i < n), strict
// form. A valid sequence advances *i past it and returns its code point;
// anything else advances *i by one byte and returns kReplacementChar with
// *valid = false.
inline uint32_t Utf8DecodeChecked(const char* s, size_t n, size_t* i, bool* valid) {
  const Utf8Char c = Utf8DecodeAt(s, n, *i, Utf8Form::kStrict);
  *valid = c.valid;
  *i += c.valid ? c.length : 1;
  return c.code_point;
}

// Writes the 1..4 byte encoding of `cp` (< 0x200000; a scalar value for
// well-formed output) to out, which must have room for kMaxUtf8Bytes, and
// returns the byte count.
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

}  // namespace octet
