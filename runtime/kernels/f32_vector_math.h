// Float math on vectors, written once for every ISA: exp, GELU (erf and tanh
// forms), SiLU, ReLU, sin/cos in double for RoPE, and a scalar double 1/sqrt,
// without libm. The generic kernels (kernels/f32_vector_kernels.h) call these;
// each ISA supplies the vector operations as a struct V:
// kernels/x86/f32_vector_avx2.h, kernels/x86/f32_vector_avx512.h,
// kernels/neon/f32_vector_neon.h.
//
// The vector interface (V):
//   F, I, M              float vector, int32 vector, lane mask; kLanes floats per F
//   Zero, Set(v), First  0, v in every lane, lane 0
//   FirstN(n)            mask of lanes 0..n-1 (n < kLanes)
//   Load, Store          kLanes floats, unaligned
//   LoadN, StoreN        the first n < kLanes floats: no other element is read or
//                        written; LoadN's other lanes are 0
//   LoadI32(N)           int32 values converted to float
//   LoadNonZeroBytes(N)  mask of lanes t with p[t] != 0
//   StoreU8(N)           int32 lanes in [0, 255] stored as bytes
//   Add Sub Mul Div      IEEE, except AArch32's Div (a times Recip(b))
//   MulAdd(a, b, c)      a b + c, NegMulAdd(a, b, c) = c - a b: fused where the
//                        ISA has FMA (not on AArch32)
//   Recip(a)             1 / a within 2^-22 relative, for finite normal a
//   Max(a, b), Min(a, b) a > b ? a : b and a < b ? a : b, exactly (so NaN in a is
//                        dropped and NaN in b kept: the argument order matters)
//   Abs, Lt, And, Select(m, a, b) = m ? a : b
//   CvtNearest           to int32, to nearest with ties to even (0 <= x < 2^22)
//   ScaleByPow2(p, t)    p 2^n for t = 1.5 2^23 + n (the rounding trick below),
//                        n in [-150, 128], p in [0.7, 1.5]: one rounding
//   ReduceAdd, ReduceMax of the lanes (any order; ReduceMax of non-NaN lanes)
//   kHasDoubles          whether DF (doubles) exists; then kDLanes, DLoadFloats,
//                        DStoreFloats (rounded to float), DSet, DAdd, DSub, DMul,
//                        DRoundHalfAway, DNanOutside, DQuadrant (see SinCosDouble)
//
// Error bounds (measured by tests/kernels/f32_vector_test.cc over dense sweeps
// and every edge listed there, on x86, aarch64 and AArch32 under qemu):
//   Exp(x)        relative error <= 2^-22 (2 ulp) for results >= 2^-126; below
//                 that an absolute error < 2^-149 (AArch32 flushes them to 0, an
//                 absolute error < 2^-126). x < -104 gives 0, x > 88.7228 +inf,
//                 -inf 0, NaN NaN.
//   GeluErf(x)    = x Phi(x), Phi the normal CDF: |error| <= 2^-22 max(1, |x|);
//                 relative <= 2^-20 for x >= -5 and <= 2^-16 for x > -14.5, where
//                 the results are normal (Phi's tail is computed directly; it
//                 loses relative accuracy with |x| through the float x^2 / 2).
//   SiLU          x / (1 + exp(-x)): relative error <= 2^-21 (4 ulp) where the
//                 result is >= 2^-126 (2^-119 on AArch32, where smaller ones may
//                 be flushed to 0).
//   GeluTanh      x / (1 + exp(-2u)), u in float as the reference: the same bound
//                 plus the effect of u's rounding, 2^-23 |2u| relative.
// They are accurate rather than bit-exact: results differ between ISAs by
// their roundings (FMA or not, Div) but stay within these bounds.
//
// Linkage: internal and always inlined (kernels/qs8_gemm_driver.h, "Linkage").
// Only compiler headers and kernels/*.h, so kernel files stay freestanding.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel_inline.h"
#include "kernels/scalar_math.h"

namespace octet {
namespace {  // internal linkage per including file

// ---------------------------------------------------------------------------
// exp(x) = 2^n e^r, n = round(x / ln 2), r = x - n ln 2, |r| <= ln 2 / 2.
//
// Rounding trick: t = x log2(e) + 1.5 2^23 lies in [2^23, 2^24), where floats
// are the integers, so the sum rounds x log2(e) to an integer n (to nearest)
// and t's low mantissa bits hold n; t - 1.5 2^23 is n as a float, exactly.
// Reduction (Cody-Waite): ln 2 = kExpLn2Hi + kExpLn2Lo, kExpLn2Hi with 9
// significant bits, so n kExpLn2Hi is exact for |n| <= 150 and x - n kExpLn2Hi
// too (the two are within a factor 2 of each other, or n = 0), with or without
// FMA; the kExpLn2Lo product adds an error < 2^-32 to r.
// Polynomial: e^r = 1 + r + r^2 (c2 + c3 r + c4 r^2 + c5 r^3 + c6 r^4), a
// minimax fit in relative error (3.1e-9 on |r| <= ln 2 / 2) by
// scripts/fit-f32-vector-math.py; the float evaluation and the final sum add
// about an ulp.
// Range: x is clamped to [-104, 89] (NaN kept): below -104, e^x < 2^-150
// rounds to 0; above 88.7228, to inf. ScaleByPow2 then spans n in [-150, 128].
constexpr float kExpMagic = 12582912.0f;               // 1.5 * 2^23
constexpr float kExpLog2e = 1.44269504088896341f;      // 1 / ln 2
constexpr float kExpLn2Hi = 0.693359375f;              // 355 / 512
constexpr float kExpLn2Lo = -2.12194440054690583e-4f;  // ln 2 - kExpLn2Hi
constexpr float kExpMin = -104.0f;
constexpr float kExpMax = 89.0f;
constexpr float kExpC2 = 4.9999994040e-01f;
constexpr float kExpC3 = 1.6666521132e-01f;
constexpr float kExpC4 = 4.1668388993e-02f;
constexpr float kExpC5 = 8.3687175065e-03f;
constexpr float kExpC6 = 1.3814596459e-03f;

template <class V>
OCTET_KERNEL_INLINE typename V::F Exp(typename V::F x) {
  typedef typename V::F F;
  x = V::Min(V::Set(kExpMax), V::Max(V::Set(kExpMin), x));  // NaN stays NaN
  const F t = V::MulAdd(x, V::Set(kExpLog2e), V::Set(kExpMagic));
  const F n = V::Sub(t, V::Set(kExpMagic));
  F r = V::NegMulAdd(n, V::Set(kExpLn2Hi), x);
  r = V::NegMulAdd(n, V::Set(kExpLn2Lo), r);
  F q = V::MulAdd(V::Set(kExpC6), r, V::Set(kExpC5));
  q = V::MulAdd(q, r, V::Set(kExpC4));
  q = V::MulAdd(q, r, V::Set(kExpC3));
  q = V::MulAdd(q, r, V::Set(kExpC2));
  const F p = V::Add(V::MulAdd(q, V::Mul(r, r), r), V::Set(1.0f));
  return V::ScaleByPow2(p, t);
}

// ---------------------------------------------------------------------------
// GELU, erf form: x Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2.
//
// With t = |x| and h(t) = Phi(-t) = erfc(t / sqrt 2) / 2: Phi(x) = h(t) for
// x < 0 and 1 - h(t) for x >= 0, so the small tail is computed directly, never
// as a difference of two numbers near 1 (the reference's 1 + erff(x / sqrt 2)
// loses the tail's relative accuracy that way; its absolute error is what the
// comparison with it bounds). h(t) = exp(-t^2 / 2) S(s), s = 1 / (1 + t / 4),
// where S (a smooth function of s in (0, 1]) is a polynomial of degree 9 fitted
// in relative error on t in [0, 9] (1.4e-9, scripts/fit-f32-vector-math.py). t
// is clamped to 14.5, where exp(-t^2 / 2) is 0 in float: h = 0 there, so
// GELU(x) = x for x > 14.5, -0 for x < -14.5, and like the reference NaN for
// -inf (-inf * 0), +inf for +inf.
constexpr float kGeluG0 = -5.2364866860e-05f;
constexpr float kGeluG1 = 1.0076946020e-01f;
constexpr float kGeluG2 = 9.0701490641e-02f;
constexpr float kGeluG3 = 1.3943387568e-01f;
constexpr float kGeluG4 = -6.8995200098e-02f;
constexpr float kGeluG5 = 3.9055028558e-01f;
constexpr float kGeluG6 = -4.3266934156e-01f;
constexpr float kGeluG7 = 4.6683862805e-01f;
constexpr float kGeluG8 = -2.2586145997e-01f;
constexpr float kGeluG9 = 3.9284642786e-02f;

template <class V>
OCTET_KERNEL_INLINE typename V::F GeluErf(typename V::F x) {
  typedef typename V::F F;
  const F t = V::Min(V::Set(14.5f), V::Abs(x));  // NaN stays NaN
  const F s = V::Recip(V::MulAdd(t, V::Set(0.25f), V::Set(1.0f)));
  F poly = V::MulAdd(V::Set(kGeluG9), s, V::Set(kGeluG8));
  poly = V::MulAdd(poly, s, V::Set(kGeluG7));
  poly = V::MulAdd(poly, s, V::Set(kGeluG6));
  poly = V::MulAdd(poly, s, V::Set(kGeluG5));
  poly = V::MulAdd(poly, s, V::Set(kGeluG4));
  poly = V::MulAdd(poly, s, V::Set(kGeluG3));
  poly = V::MulAdd(poly, s, V::Set(kGeluG2));
  poly = V::MulAdd(poly, s, V::Set(kGeluG1));
  poly = V::MulAdd(poly, s, V::Set(kGeluG0));
  const F h = V::Mul(Exp<V>(V::Mul(V::Mul(t, t), V::Set(-0.5f))), poly);
  return V::Mul(x, V::Select(V::Lt(x, V::Zero()), h, V::Sub(V::Set(1.0f), h)));
}

// x / (1 + exp(-v)), i.e. x sigmoid(v): exp(-v) = inf gives +-0 (and NaN for
// x = +-inf, as the reference's inf / inf).
template <class V>
OCTET_KERNEL_INLINE typename V::F TimesSigmoid(typename V::F x, typename V::F v) {
  return V::Div(x, V::Add(V::Set(1.0f), Exp<V>(V::Sub(V::Zero(), v))));
}

// SiLU: x sigmoid(x).
template <class V>
OCTET_KERNEL_INLINE typename V::F Silu(typename V::F x) {
  return TimesSigmoid<V>(x, x);
}

// GELU, tanh form: 0.5 x (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2 / pi) (x +
// 0.044715 x^3) evaluated in the reference's order.
template <class V>
OCTET_KERNEL_INLINE typename V::F GeluTanh(typename V::F x) {
  typedef typename V::F F;
  const F cube = V::Mul(V::Mul(V::Mul(V::Set(0.044715f), x), x), x);
  const F u = V::Mul(V::Set(0.79788456080286536f), V::Add(x, cube));
  return TimesSigmoid<V>(x, V::Add(u, u));
}

// ReLU: x > 0 ? x : 0, as the reference (NaN and -0 give +0).
template <class V>
OCTET_KERNEL_INLINE typename V::F Relu(typename V::F x) {
  return V::Max(x, V::Zero());
}

// ---------------------------------------------------------------------------
// 1 / sqrt(v) in double for normal, finite v > 0: the bit-level first guess
// (relative error < 3.5%) and four Newton steps (error squared each time: the
// last leaves the double rounding of the steps, a few 1e-16). Its float
// rounding is the reference's float(1.0 / sqrt(v)) except when that lies within
// ~1e-16 of a rounding boundary.
OCTET_KERNEL_INLINE double RsqrtDouble(double v) {
  uint64_t bits;
  __builtin_memcpy(&bits, &v, sizeof(bits));
  bits = 0x5FE6EB50C7B537A9ull - (bits >> 1);
  double y;
  __builtin_memcpy(&y, &bits, sizeof(y));
  const double half_v = 0.5 * v;
  for (int k = 0; k < 4; ++k) y = y * (1.5 - half_v * y * y);
  return y;
}

// ---------------------------------------------------------------------------
// sin and cos of float angles, rounded to float: ScalarSinCos's algorithm
// (kernels/scalar_math.h: the same reduction, quadrant rule and Taylor series,
// in double) on kDLanes angles at a time, NaN for |x| >= 2^30 as there. Every
// step is one IEEE operation in the same order, so compiled without contraction
// (as the RoPE files and the reference are) the results are ScalarSinCos's bits.
// n: a multiple of V::kDLanes (the arrays are padded).
template <class V>
OCTET_KERNEL_INLINE void SinCosDouble(const float* angle, size_t n, float* sin_out,
                                      float* cos_out) {
  typedef typename V::DF DF;
  for (size_t i = 0; i < n; i += V::kDLanes) {
    const DF x = V::DLoadFloats(angle + i);
    // + 0: ScalarSinCos's n is an int, so its dn is never -0.
    const DF dn = V::DAdd(V::DRoundHalfAway(V::DMul(x, V::DSet(kScalarTwoOverPi))), V::DSet(0.0));
    DF r = V::DSub(x, V::DMul(dn, V::DSet(kScalarPio2_1)));
    r = V::DSub(r, V::DMul(dn, V::DSet(kScalarPio2_2)));
    r = V::DSub(r, V::DMul(dn, V::DSet(kScalarPio2_3)));
    r = V::DSub(r, V::DMul(dn, V::DSet(kScalarPio2_3t)));
    const DF r2 = V::DMul(r, r);
    DF s = V::DSet(kScalarInvFactorial[17]);
    DF c = V::DSet(kScalarInvFactorial[18]);
    for (int k = 15; k >= 1; k -= 2) s = V::DSub(V::DSet(kScalarInvFactorial[k]), V::DMul(r2, s));
    for (int k = 16; k >= 0; k -= 2) c = V::DSub(V::DSet(kScalarInvFactorial[k]), V::DMul(r2, c));
    s = V::DMul(s, r);
    DF sin_x, cos_x;
    V::DQuadrant(dn, s, c, &sin_x, &cos_x);
    V::DStoreFloats(sin_out + i, V::DNanOutside(sin_x, x, 1073741824.0));
    V::DStoreFloats(cos_out + i, V::DNanOutside(cos_x, x, 1073741824.0));
  }
}

// sin and cos of angle[0..n) (n a multiple of 16, the arrays padded): vectors of
// doubles where the ISA has them, ScalarSinCos otherwise (armv7 NEON).
template <class V>
OCTET_KERNEL_INLINE void SinCos(const float* angle, size_t n, float* sin_out, float* cos_out) {
  if constexpr (V::kHasDoubles) {
    SinCosDouble<V>(angle, n, sin_out, cos_out);
  } else {
    for (size_t i = 0; i < n; ++i) {
      double s = 0.0, c = 0.0;
      ScalarSinCos(angle[i], &s, &c);
      sin_out[i] = static_cast<float>(s);
      cos_out[i] = static_cast<float>(c);
    }
  }
}

}  // namespace
}  // namespace octet
