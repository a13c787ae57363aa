// exp, log, pow, sin and cos for the float kernels, without libm.
//
// Kernel files stay freestanding (compiler headers only, no libm symbols:
// scripts/android-compile-check.sh), so the transcendental functions the float
// kernels need are defined here, in double precision, by range reduction and a
// truncated Taylor series. Their error is a few double ulps, far below float
// resolution: a result rounded to float is the correctly rounded float value
// except when the exact value lies within ~1e-15 (relative) of a rounding
// boundary between two floats. A side effect worth having: the same bits on every
// platform (libm's float functions differ by an ulp between glibc, bionic and
// the vectorized ones PyTorch uses).
//
// Ranges (the callers stay well inside them):
//   ScalarExp(x)     any x; 0 below -708 (no double subnormals), +inf above 709
//   ScalarExp2(x)    the same range as ScalarExp, exact for integer x
//   ScalarLog(x)     x > 0 (0 -> -inf, negative -> NaN)
//   ScalarPow(a, b)  a > 0, |b log a| < 700
//   ScalarSinCos(x)  |x| < 2^20 * pi / 2 (about 1.6e6) with full accuracy; the
//                    reduction loses bits gradually beyond that; NaN from 2^30 on
//
// Integers stay 32-bit: on AArch32, 64-bit integer <-> double conversions are
// calls into the compiler's runtime, which kernel files may not make.
//
// Linkage: an unnamed namespace, so a kernel file compiled with ISA flags gets
// its own copy and exports no symbol (see kernels/qs8_gemm_driver.h, "Linkage").
#pragma once

#include <stdint.h>

namespace octet {
namespace {  // internal linkage per including file

constexpr double kScalarLn2Hi = 6.93147180369123816490e-01;    // ln 2, first 32 bits
constexpr double kScalarLn2Lo = 1.90821492927058770002e-10;    // ln 2 - kScalarLn2Hi
constexpr double kScalarLog2e = 1.44269504088896338700e+00;    // 1 / ln 2
constexpr double kScalarPio2_1 = 1.57079632673412561417e+00;   // pi/2, first 33 bits
constexpr double kScalarPio2_2 = 6.07710050630396597660e-11;   // next 33 bits
constexpr double kScalarPio2_3 = 2.02226624871116645580e-21;   // next 33 bits
constexpr double kScalarPio2_3t = 8.47842766036889956997e-32;  // pi/2 - the three above
constexpr double kScalarTwoOverPi = 6.36619772367581382433e-01;

// 1 / k! for k = 0..18.
constexpr double kScalarInvFactorial[19] = {
    1.0,
    1.0,
    1.0 / 2.0,
    1.0 / 6.0,
    1.0 / 24.0,
    1.0 / 120.0,
    1.0 / 720.0,
    1.0 / 5040.0,
    1.0 / 40320.0,
    1.0 / 362880.0,
    1.0 / 3628800.0,
    1.0 / 39916800.0,
    1.0 / 479001600.0,
    1.0 / 6227020800.0,
    1.0 / 87178291200.0,
    1.0 / 1307674368000.0,
    1.0 / 20922789888000.0,
    1.0 / 355687428096000.0,
    1.0 / 6402373705728000.0,
};

// Nearest integer, halves away from zero. |x| < 2^31 - 1.
inline int32_t ScalarRoundToInt(double x) {
  return static_cast<int32_t>(x >= 0.0 ? x + 0.5 : x - 0.5);
}

// 2^n for -1022 <= n <= 1023, built from its bits.
inline double ScalarPow2i(int32_t n) {
  const uint64_t bits = static_cast<uint64_t>(n + 1023) << 52;
  double d;
  __builtin_memcpy(&d, &bits, sizeof(d));
  return d;
}

// e^r for |r| <= ln2 / 2 + a little: Taylor series to r^13 (remainder < 4e-18).
inline double ScalarExpReduced(double r) {
  double p = kScalarInvFactorial[13];
  for (int k = 12; k >= 0; --k) p = p * r + kScalarInvFactorial[k];
  return p;
}

// e^x = 2^n e^r with n = round(x / ln 2), r = x - n ln 2 (ln 2 in two parts, so
// n * kScalarLn2Hi is exact).
inline double ScalarExp(double x) {
  if (x != x) return x;
  if (x > 709.0) return __builtin_inf();
  if (x < -708.0) return 0.0;
  const int32_t n = ScalarRoundToInt(x * kScalarLog2e);
  const double dn = static_cast<double>(n);
  const double r = (x - dn * kScalarLn2Hi) - dn * kScalarLn2Lo;
  return ScalarExpReduced(r) * ScalarPow2i(n);
}

// 2^x = 2^n e^((x - n) ln 2), n = round(x); x - n is exact.
inline double ScalarExp2(double x) {
  if (x != x) return x;
  if (x > 1023.0) return __builtin_inf();
  if (x < -1022.0) return 0.0;
  const int32_t n = ScalarRoundToInt(x);
  const double f = x - static_cast<double>(n);
  return ScalarExpReduced(f * (kScalarLn2Hi + kScalarLn2Lo)) * ScalarPow2i(n);
}

// ln x = e ln 2 + ln m, x = m 2^e with m in [sqrt(1/2), sqrt(2)); ln m from
// 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.172, series to s^21.
inline double ScalarLog(double x) {
  if (x != x) return x;
  if (x < 0.0) return __builtin_nan("");
  if (x == 0.0) return -__builtin_inf();
  if (x > 1.7976931348623157e308) return x;  // +inf
  uint64_t bits;
  __builtin_memcpy(&bits, &x, sizeof(bits));
  int32_t e = static_cast<int32_t>((bits >> 52) & 0x7ff);
  if (e == 0) {  // subnormal: scale by 2^54 into the normal range
    const double scaled = x * 18014398509481984.0;
    __builtin_memcpy(&bits, &scaled, sizeof(bits));
    e = static_cast<int32_t>((bits >> 52) & 0x7ff) - 54;
  }
  e -= 1023;
  bits = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull;  // m in [1, 2)
  double m;
  __builtin_memcpy(&m, &bits, sizeof(m));
  if (m > 1.41421356237309504880) {
    m *= 0.5;
    e += 1;
  }
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  double series = 1.0 / 21.0;
  for (int k = 19; k >= 1; k -= 2) series = series * s2 + 1.0 / k;
  const double ln_m = 2.0 * s * series;
  const double de = static_cast<double>(e);
  return de * kScalarLn2Hi + (de * kScalarLn2Lo + ln_m);
}

// a^b for a > 0.
inline double ScalarPow(double a, double b) { return ScalarExp(b * ScalarLog(a)); }

// sin x and cos x: x = n pi/2 + r with |r| <= pi/4 (pi/2 in four parts, each
// product with n exact for |n| < 2^20), Taylor series of sin r to r^17 and of
// cos r to r^18 (remainders < 1e-19), then the quadrant n mod 4.
inline void ScalarSinCos(double x, double* sin_x, double* cos_x) {
  if (!(x > -1073741824.0 && x < 1073741824.0)) {  // NaN, infinite or |x| >= 2^30
    *sin_x = __builtin_nan("");
    *cos_x = __builtin_nan("");
    return;
  }
  const int32_t n = ScalarRoundToInt(x * kScalarTwoOverPi);
  const double dn = static_cast<double>(n);
  const double r =
      (((x - dn * kScalarPio2_1) - dn * kScalarPio2_2) - dn * kScalarPio2_3) - dn * kScalarPio2_3t;
  const double r2 = r * r;
  double s = kScalarInvFactorial[17];  // sin r = r (1 - r^2/3! + r^4/5! - ...)
  double c = kScalarInvFactorial[18];  // cos r = 1 - r^2/2! + r^4/4! - ...
  for (int k = 15; k >= 1; k -= 2) s = kScalarInvFactorial[k] - r2 * s;
  for (int k = 16; k >= 0; k -= 2) c = kScalarInvFactorial[k] - r2 * c;
  s *= r;
  switch (n & 3) {
    case 0:
      *sin_x = s;
      *cos_x = c;
      break;
    case 1:
      *sin_x = c;
      *cos_x = -s;
      break;
    case 2:
      *sin_x = -s;
      *cos_x = -c;
      break;
    default:
      *sin_x = -c;
      *cos_x = s;
      break;
  }
}

}  // namespace
}  // namespace octet
