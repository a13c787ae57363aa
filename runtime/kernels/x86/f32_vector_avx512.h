// VecAvx512: the operations kernels/f32_vector_kernels.h's generic float
// kernels need, on AVX-512 vectors of 16 floats (the interface is described in
// kernels/f32_vector_math.h, "The vector interface"). Included only by the
// kernels/x86/*__avx512.cc files, which are compiled with AVX-512 F, BW and VL
// (no DQ: float logic goes through the integer forms).
//
// Tails: masked loads and stores, which neither read nor write the masked-off
// lanes. Max and Min are vmaxps / vminps (a > b ? a : b and a < b ? a : b, the
// second operand when either is NaN). ScaleByPow2 is vscalefps, which scales
// with one rounding, gradual underflow and overflow to inf. CvtNearest is
// vcvtps2dq (MXCSR mode: to nearest even by default).
//
// Linkage: internal and always inlined (kernels/qs8_gemm_driver.h, "Linkage").
#pragma once

// GCC 12's AVX-512 intrinsics initialize their "undefined" operands from
// themselves (__m512i __Y = __Y), which -Wmaybe-uninitialized reports at every use.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel_inline.h"

namespace octet {
namespace {  // internal linkage per including file

struct VecAvx512 {
  typedef __m512 F;     // 16 floats
  typedef __m512i I;    // 16 int32
  typedef __mmask16 M;  // one bit per lane
  static constexpr size_t kLanes = 16;
  static constexpr bool kHasDoubles = true;  // DF below

  static OCTET_KERNEL_INLINE F Zero() { return _mm512_setzero_ps(); }
  static OCTET_KERNEL_INLINE F Set(float v) { return _mm512_set1_ps(v); }
  static OCTET_KERNEL_INLINE float First(F v) { return _mm512_cvtss_f32(v); }
  static OCTET_KERNEL_INLINE M FirstN(size_t n) { return static_cast<M>((1u << n) - 1); }

  static OCTET_KERNEL_INLINE F Load(const float* p) { return _mm512_loadu_ps(p); }
  static OCTET_KERNEL_INLINE F LoadN(const float* p, size_t n) {
    return _mm512_maskz_loadu_ps(FirstN(n), p);
  }
  static OCTET_KERNEL_INLINE void Store(float* p, F v) { _mm512_storeu_ps(p, v); }
  static OCTET_KERNEL_INLINE void StoreN(float* p, F v, size_t n) {
    _mm512_mask_storeu_ps(p, FirstN(n), v);
  }
  static OCTET_KERNEL_INLINE F LoadI32(const int32_t* p) {
    return _mm512_cvtepi32_ps(_mm512_loadu_si512(p));
  }
  static OCTET_KERNEL_INLINE F LoadI32N(const int32_t* p, size_t n) {
    return _mm512_cvtepi32_ps(_mm512_maskz_loadu_epi32(FirstN(n), p));
  }
  static OCTET_KERNEL_INLINE M LoadNonZeroBytes(const uint8_t* p) {
    return _mm_test_epi8_mask(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)),
                              _mm_set1_epi8(-1));
  }
  static OCTET_KERNEL_INLINE M LoadNonZeroBytesN(const uint8_t* p, size_t n) {
    const __m128i bytes = _mm_maskz_loadu_epi8(FirstN(n), p);
    return _mm_test_epi8_mask(bytes, _mm_set1_epi8(-1));
  }
  // 16 int32, each in [0, 255], as bytes.
  static OCTET_KERNEL_INLINE void StoreU8(uint8_t* p, I v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtepi32_epi8(v));
  }
  static OCTET_KERNEL_INLINE void StoreU8N(uint8_t* p, I v, size_t n) {
    _mm_mask_storeu_epi8(p, FirstN(n), _mm512_cvtepi32_epi8(v));
  }

  static OCTET_KERNEL_INLINE F Add(F a, F b) { return _mm512_add_ps(a, b); }
  static OCTET_KERNEL_INLINE F Sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static OCTET_KERNEL_INLINE F Mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static OCTET_KERNEL_INLINE F Div(F a, F b) { return _mm512_div_ps(a, b); }
  static OCTET_KERNEL_INLINE F MulAdd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static OCTET_KERNEL_INLINE F NegMulAdd(F a, F b, F c) { return _mm512_fnmadd_ps(a, b, c); }
  // vrcp14ps (relative error <= 2^-14) and one Newton step: <= 2^-23.
  static OCTET_KERNEL_INLINE F Recip(F a) {
    const __m512 r = _mm512_rcp14_ps(a);
    return _mm512_fmadd_ps(r, _mm512_fnmadd_ps(a, r, _mm512_set1_ps(1.0f)), r);
  }
  static OCTET_KERNEL_INLINE F Max(F a, F b) { return _mm512_max_ps(a, b); }
  static OCTET_KERNEL_INLINE F Min(F a, F b) { return _mm512_min_ps(a, b); }
  static OCTET_KERNEL_INLINE F Abs(F a) { return _mm512_abs_ps(a); }
  static OCTET_KERNEL_INLINE M Lt(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static OCTET_KERNEL_INLINE M And(M a, M b) { return static_cast<M>(a & b); }
  static OCTET_KERNEL_INLINE F Select(M m, F a, F b) { return _mm512_mask_blend_ps(m, b, a); }
  static OCTET_KERNEL_INLINE I CvtNearest(F a) { return _mm512_cvtps_epi32(a); }

  // p * 2^n for t = 1.5 * 2^23 + n: vscalefps by n = t - 1.5 * 2^23 (exact).
  static OCTET_KERNEL_INLINE F ScaleByPow2(F p, F t) {
    return _mm512_scalef_ps(p, _mm512_sub_ps(t, _mm512_set1_ps(12582912.0f)));
  }

  static OCTET_KERNEL_INLINE float ReduceAdd(F v) { return _mm512_reduce_add_ps(v); }
  static OCTET_KERNEL_INLINE float ReduceMax(F v) { return _mm512_reduce_max_ps(v); }

  // Doubles, for the sine and cosine of RoPE (SinCosDouble in f32_vector_math.h).
  typedef __m512d DF;  // 8 doubles
  static constexpr size_t kDLanes = 8;
  static OCTET_KERNEL_INLINE DF DLoadFloats(const float* p) {
    return _mm512_cvtps_pd(_mm256_loadu_ps(p));
  }
  static OCTET_KERNEL_INLINE void DStoreFloats(float* p, DF v) {
    _mm256_storeu_ps(p, _mm512_cvtpd_ps(v));
  }
  static OCTET_KERNEL_INLINE DF DSet(double v) { return _mm512_set1_pd(v); }
  static OCTET_KERNEL_INLINE DF DAdd(DF a, DF b) { return _mm512_add_pd(a, b); }
  static OCTET_KERNEL_INLINE DF DSub(DF a, DF b) { return _mm512_sub_pd(a, b); }
  static OCTET_KERNEL_INLINE DF DMul(DF a, DF b) { return _mm512_mul_pd(a, b); }
  static OCTET_KERNEL_INLINE __m512i DBits(DF v) { return _mm512_castpd_si512(v); }
  // ScalarRoundToInt as a double: trunc(x + 0.5) or trunc(x - 0.5) by the sign of x.
  static OCTET_KERNEL_INLINE DF DRoundHalfAway(DF x) {
    const __m512i sign = _mm512_and_si512(DBits(x), _mm512_set1_epi64(INT64_MIN));
    const __m512d half = _mm512_castsi512_pd(_mm512_or_si512(DBits(_mm512_set1_pd(0.5)), sign));
    return _mm512_roundscale_pd(_mm512_add_pd(x, half), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  }
  // NaN where !(|x| < limit).
  static OCTET_KERNEL_INLINE DF DNanOutside(DF v, DF x, double limit) {
    const __mmask8 inside = _mm512_cmp_pd_mask(_mm512_abs_pd(x), _mm512_set1_pd(limit), _CMP_LT_OQ);
    return _mm512_mask_blend_pd(inside, _mm512_set1_pd(__builtin_nan("")), v);
  }
  // The quadrant step of ScalarSinCos: n = dn mod 4 picks (s, c), (c, -s),
  // (-s, -c) or (-c, s) as (sin, cos).
  static OCTET_KERNEL_INLINE void DQuadrant(DF dn, DF s, DF c, DF* sin_x, DF* cos_x) {
    const __m256i n = _mm512_cvttpd_epi32(dn);
    const __mmask8 odd = _mm256_test_epi32_mask(n, _mm256_set1_epi32(1));
    const __mmask8 sin_neg = _mm256_test_epi32_mask(n, _mm256_set1_epi32(2));
    const __mmask8 cos_neg =
        _mm256_test_epi32_mask(_mm256_add_epi32(n, _mm256_set1_epi32(1)), _mm256_set1_epi32(2));
    const __m512i sign = _mm512_set1_epi64(INT64_MIN);
    const __m512i sin_bits = DBits(_mm512_mask_blend_pd(odd, s, c));
    const __m512i cos_bits = DBits(_mm512_mask_blend_pd(odd, c, s));
    *sin_x = _mm512_castsi512_pd(_mm512_mask_xor_epi64(sin_bits, sin_neg, sin_bits, sign));
    *cos_x = _mm512_castsi512_pd(_mm512_mask_xor_epi64(cos_bits, cos_neg, cos_bits, sign));
  }
};

}  // namespace
}  // namespace octet
