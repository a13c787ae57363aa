#include "text/utf8.h"

#include <cstring>

namespace octet::text {
namespace {

// Length of the valid sequence at p[0, avail), or 0 when it is invalid.
// The second-byte ranges are what exclude overlongs (E0, F0), surrogates (ED)
// and code points above U+10FFFF (F4).
inline size_t ValidSequenceAt(const uint8_t* p, size_t avail) {
  const uint8_t b0 = p[0];
  const size_t len = Utf8SequenceLength(b0);
  if (len == 0 || len > avail) return 0;
  if (len == 1) return 1;
  uint8_t lo = 0x80, hi = 0xBF;
  if (b0 == 0xE0) lo = 0xA0;
  if (b0 == 0xED) hi = 0x9F;
  if (b0 == 0xF0) lo = 0x90;
  if (b0 == 0xF4) hi = 0x8F;
  if (p[1] < lo || p[1] > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if ((p[k] & 0xC0) != 0x80) return 0;
  }
  return len;
}

}  // namespace

size_t Utf8ValidPrefix(const char* s, size_t n) {
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
    const size_t len = ValidSequenceAt(p + i, n - i);
    if (len == 0) return i;
    i += len;
  }
  return n;
}

uint32_t Utf8DecodeChecked(const char* s, size_t n, size_t* i, bool* valid) {
  const auto* p = reinterpret_cast<const uint8_t*>(s) + *i;
  if (p[0] < 0x80) {
    *valid = true;
    *i += 1;
    return p[0];
  }
  if (ValidSequenceAt(p, n - *i) == 0) {
    *valid = false;
    *i += 1;
    return kReplacementChar;
  }
  *valid = true;
  return Utf8Decode(s, i);
}

}  // namespace octet::text
