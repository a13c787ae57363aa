// IEEE binary16 and bfloat16 to binary32, exactly: every half value
// (subnormals, signed zeros, infinities, NaN payloads) has one float that is
// equal to it, and these return that float's bits.
#pragma once

#include <cstdint>
#include <cstring>

namespace octet {
namespace convert {

// binary16: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits.
inline uint32_t HalfToFloatBits(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) {  // infinity or NaN: keep the payload
    return sign | 0x7f800000u | (mantissa << 13);
  }
  if (exponent != 0) {  // normal: rebias 15 -> 127
    return sign | ((exponent + (127 - 15)) << 23) | (mantissa << 13);
  }
  if (mantissa == 0) return sign;  // signed zero
  // Subnormal: mantissa x 2^-24. Shift the leading 1 up to the implicit bit;
  // every binary16 subnormal is a normal binary32.
  int e = 127 - 15 + 1;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    --e;
  }
  return sign | (static_cast<uint32_t>(e) << 23) | ((mantissa & 0x3ffu) << 13);
}

// bfloat16 is the top half of a binary32.
inline uint32_t Bf16ToFloatBits(uint16_t b) { return static_cast<uint32_t>(b) << 16; }

inline float BitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

}  // namespace convert
}  // namespace octet
