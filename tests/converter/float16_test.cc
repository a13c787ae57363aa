// F16 and BF16 widening: exact for every one of the 65536 bit patterns.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "converter/hf_fixtures.h"
#include "import/float16.h"

namespace octet {
namespace {

using convert::Bf16ToFloatBits;
using convert::BitsToFloat;
using convert::HalfToFloatBits;

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

// binary16 by its definition, in double.
double HalfReference(uint16_t h) {
  const int sign = (h >> 15) ? -1 : 1;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

TEST_CASE("F16 -> F32 is exact for every finite value, including subnormals and signed zeros") {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    if (((bits >> 10) & 0x1f) == 0x1f) continue;  // inf / NaN below
    const float f = BitsToFloat(HalfToFloatBits(bits));
    const double expected = HalfReference(bits);
    REQUIRE_MESSAGE(static_cast<double>(f) == expected, "half bits 0x" << std::hex << h);
    REQUIRE(std::signbit(f) == ((bits & 0x8000) != 0));
  }
  CHECK(BitsToFloat(HalfToFloatBits(0x0001)) == std::ldexp(1.0f, -24));     // smallest subnormal
  CHECK(BitsToFloat(HalfToFloatBits(0x03ff)) == std::ldexp(1023.0f, -24));  // largest subnormal
  CHECK(BitsToFloat(HalfToFloatBits(0x0400)) == std::ldexp(1.0f, -14));     // smallest normal
  CHECK(BitsToFloat(HalfToFloatBits(0x7bff)) == 65504.0f);                  // largest finite
  CHECK(Bits(BitsToFloat(HalfToFloatBits(0x8000))) == 0x80000000u);         // -0
}

TEST_CASE("F16 infinities and NaNs keep their sign and payload") {
  CHECK(BitsToFloat(HalfToFloatBits(0x7c00)) == INFINITY);
  CHECK(BitsToFloat(HalfToFloatBits(0xfc00)) == -INFINITY);
  for (uint32_t payload = 1; payload < 0x400; ++payload) {
    const uint16_t bits = static_cast<uint16_t>(0x7c00 | payload);
    const uint32_t f = HalfToFloatBits(bits);
    REQUIRE(std::isnan(BitsToFloat(f)));
    REQUIRE(f == (0x7f800000u | (payload << 13)));
    REQUIRE(HalfToFloatBits(static_cast<uint16_t>(bits | 0x8000)) == (f | 0x80000000u));
  }
}

TEST_CASE("BF16 -> F32 is the top half of the float") {
  for (uint32_t b = 0; b < 65536; ++b) {
    const uint32_t f = Bf16ToFloatBits(static_cast<uint16_t>(b));
    REQUIRE(f == (b << 16));
  }
  CHECK(BitsToFloat(Bf16ToFloatBits(0x3f80)) == 1.0f);
  CHECK(BitsToFloat(Bf16ToFloatBits(0xc040)) == -3.0f);
  CHECK(BitsToFloat(Bf16ToFloatBits(0x7f80)) == INFINITY);
  CHECK(BitsToFloat(Bf16ToFloatBits(0x0001)) == std::ldexp(1.0f, -133));  // subnormal
}

TEST_CASE("the test fixtures' float -> F16 rounding inverts the widening") {
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const float f = BitsToFloat(HalfToFloatBits(static_cast<uint16_t>(h)));
    REQUIRE(testing::FloatToHalfBits(f) == h);
    REQUIRE(testing::FloatToHalfBits(-f) == (h | 0x8000));
  }
}

}  // namespace
}  // namespace octet
