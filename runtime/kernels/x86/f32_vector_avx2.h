// VecAvx2: the operations kernels/f32_vector_kernels.h's generic float kernels
// need, on AVX2 + FMA vectors of 8 floats (the interface is described in
// kernels/f32_vector_math.h, "The vector interface"). Included only by the
// kernels/x86/*__avx2.cc files, which are compiled with -mavx2 -mfma.
//
// Tails: vmaskmovps reads and writes only the first n lanes. Max and Min are
// vmaxps / vminps, which are a > b ? a : b and a < b ? a : b as the interface
// asks (the second operand when either is NaN). CvtNearest is vcvtps2dq, which
// rounds in the MXCSR mode: to nearest even by default.
//
// Linkage: internal and always inlined (kernels/qs8_gemm_driver.h, "Linkage").
#pragma once

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel_inline.h"

namespace octet {
namespace {  // internal linkage per including file

struct VecAvx2 {
  typedef __m256 F;   // 8 floats
  typedef __m256i I;  // 8 int32
  typedef __m256 M;   // 8 lanes, all bits set where true
  static constexpr size_t kLanes = 8;
  static constexpr bool kHasDoubles = true;  // DF below

  static OCTET_KERNEL_INLINE F Zero() { return _mm256_setzero_ps(); }
  static OCTET_KERNEL_INLINE F Set(float v) { return _mm256_set1_ps(v); }
  static OCTET_KERNEL_INLINE float First(F v) { return _mm256_cvtss_f32(v); }

  // Lanes 0..n-1 (n < 8).
  static OCTET_KERNEL_INLINE __m256i TailBits(size_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static OCTET_KERNEL_INLINE M FirstN(size_t n) { return _mm256_castsi256_ps(TailBits(n)); }

  static OCTET_KERNEL_INLINE F Load(const float* p) { return _mm256_loadu_ps(p); }
  static OCTET_KERNEL_INLINE F LoadN(const float* p, size_t n) {
    return _mm256_maskload_ps(p, TailBits(n));
  }
  static OCTET_KERNEL_INLINE void Store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static OCTET_KERNEL_INLINE void StoreN(float* p, F v, size_t n) {
    _mm256_maskstore_ps(p, TailBits(n), v);
  }
  static OCTET_KERNEL_INLINE F LoadI32(const int32_t* p) {
    return _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static OCTET_KERNEL_INLINE F LoadI32N(const int32_t* p, size_t n) {
    return _mm256_cvtepi32_ps(_mm256_maskload_epi32(reinterpret_cast<const int*>(p), TailBits(n)));
  }

  // Lanes t whose byte p[t] is not 0 (the first n bytes only, for the N form).
  static OCTET_KERNEL_INLINE M NonZeroBytes8(__m128i bytes) {
    const __m256i v = _mm256_cvtepu8_epi32(bytes);
    const __m256i zero = _mm256_cmpeq_epi32(v, _mm256_setzero_si256());
    return _mm256_castsi256_ps(_mm256_xor_si256(zero, _mm256_set1_epi32(-1)));
  }
  static OCTET_KERNEL_INLINE M LoadNonZeroBytes(const uint8_t* p) {
    return NonZeroBytes8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  static OCTET_KERNEL_INLINE M LoadNonZeroBytesN(const uint8_t* p, size_t n) {
    uint8_t bytes[16] = {};
    for (size_t t = 0; t < n; ++t) bytes[t] = p[t];
    return NonZeroBytes8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes)));
  }

  // The 8 int32 of v, each in [0, 255], as bytes.
  static OCTET_KERNEL_INLINE __m128i Bytes8(I v) {
    const __m256i b = _mm256_packus_epi16(_mm256_packus_epi32(v, v), _mm256_setzero_si256());
    // Bytes 0..3 of each 128-bit half are lanes 0..3 and 4..7.
    return _mm_unpacklo_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
  }
  static OCTET_KERNEL_INLINE void StoreU8(uint8_t* p, I v) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), Bytes8(v));
  }
  static OCTET_KERNEL_INLINE void StoreU8N(uint8_t* p, I v, size_t n) {
    uint8_t bytes[16];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(bytes), Bytes8(v));
    for (size_t t = 0; t < n; ++t) p[t] = bytes[t];
  }

  static OCTET_KERNEL_INLINE F Add(F a, F b) { return _mm256_add_ps(a, b); }
  static OCTET_KERNEL_INLINE F Sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static OCTET_KERNEL_INLINE F Mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static OCTET_KERNEL_INLINE F Div(F a, F b) { return _mm256_div_ps(a, b); }
  static OCTET_KERNEL_INLINE F MulAdd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static OCTET_KERNEL_INLINE F NegMulAdd(F a, F b, F c) { return _mm256_fnmadd_ps(a, b, c); }
  // vrcpps (relative error <= 1.5 * 2^-12) and one Newton step: <= 2^-22.
  static OCTET_KERNEL_INLINE F Recip(F a) {
    const __m256 r = _mm256_rcp_ps(a);
    return _mm256_fmadd_ps(r, _mm256_fnmadd_ps(a, r, _mm256_set1_ps(1.0f)), r);
  }
  static OCTET_KERNEL_INLINE F Max(F a, F b) { return _mm256_max_ps(a, b); }
  static OCTET_KERNEL_INLINE F Min(F a, F b) { return _mm256_min_ps(a, b); }
  static OCTET_KERNEL_INLINE F Abs(F a) {
    return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)));
  }
  static OCTET_KERNEL_INLINE M Lt(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static OCTET_KERNEL_INLINE M And(M a, M b) { return _mm256_and_ps(a, b); }
  static OCTET_KERNEL_INLINE F Select(M m, F a, F b) { return _mm256_blendv_ps(b, a, m); }
  static OCTET_KERNEL_INLINE I CvtNearest(F a) { return _mm256_cvtps_epi32(a); }

  // p * 2^n for t = 1.5 * 2^23 + n (n an integer in [-150, 128], p in [0.7, 1.5]): n
  // split in two halves, each a normal power of two, so the first product is
  // exact and the second rounds once (to a subnormal, 0 or inf at the ends).
  static OCTET_KERNEL_INLINE F ScaleByPow2(F p, F t) {
    const __m256i n = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(0x4B400000));
    const __m256i n1 = _mm256_srai_epi32(n, 1);
    const __m256i n2 = _mm256_sub_epi32(n, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  }

  static OCTET_KERNEL_INLINE float ReduceAdd(F v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static OCTET_KERNEL_INLINE float ReduceMax(F v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
  }

  // Doubles, for the sine and cosine of RoPE (SinCosDouble in f32_vector_math.h).
  typedef __m256d DF;  // 4 doubles
  static constexpr size_t kDLanes = 4;
  static OCTET_KERNEL_INLINE DF DLoadFloats(const float* p) {
    return _mm256_cvtps_pd(_mm_loadu_ps(p));
  }
  static OCTET_KERNEL_INLINE void DStoreFloats(float* p, DF v) {
    _mm_storeu_ps(p, _mm256_cvtpd_ps(v));
  }
  static OCTET_KERNEL_INLINE DF DSet(double v) { return _mm256_set1_pd(v); }
  static OCTET_KERNEL_INLINE DF DAdd(DF a, DF b) { return _mm256_add_pd(a, b); }
  static OCTET_KERNEL_INLINE DF DSub(DF a, DF b) { return _mm256_sub_pd(a, b); }
  static OCTET_KERNEL_INLINE DF DMul(DF a, DF b) { return _mm256_mul_pd(a, b); }
  // ScalarRoundToInt as a double: trunc(x + 0.5) or trunc(x - 0.5) by the sign of x.
  static OCTET_KERNEL_INLINE DF DRoundHalfAway(DF x) {
    const __m256d sign = _mm256_and_pd(x, _mm256_set1_pd(-0.0));
    const __m256d half = _mm256_or_pd(_mm256_set1_pd(0.5), sign);
    return _mm256_round_pd(_mm256_add_pd(x, half), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  }
  // NaN where !(|x| < limit).
  static OCTET_KERNEL_INLINE DF DNanOutside(DF v, DF x, double limit) {
    const __m256d abs_x = _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
    const __m256d inside = _mm256_cmp_pd(abs_x, _mm256_set1_pd(limit), _CMP_LT_OQ);
    return _mm256_blendv_pd(_mm256_set1_pd(__builtin_nan("")), v, inside);
  }
  // The quadrant step of ScalarSinCos: n = dn mod 4 picks (s, c), (c, -s),
  // (-s, -c) or (-c, s) as (sin, cos).
  static OCTET_KERNEL_INLINE void DQuadrant(DF dn, DF s, DF c, DF* sin_x, DF* cos_x) {
    const __m256i n = _mm256_cvtepi32_epi64(_mm256_cvttpd_epi32(dn));
    const __m256i one = _mm256_set1_epi64x(1), two = _mm256_set1_epi64x(2);
    const __m256d odd = _mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_and_si256(n, one), one));
    const __m256i sin_sign = _mm256_slli_epi64(_mm256_and_si256(n, two), 62);
    const __m256i cos_sign = _mm256_slli_epi64(_mm256_and_si256(_mm256_add_epi64(n, one), two), 62);
    *sin_x = _mm256_xor_pd(_mm256_blendv_pd(s, c, odd), _mm256_castsi256_pd(sin_sign));
    *cos_x = _mm256_xor_pd(_mm256_blendv_pd(c, s, odd), _mm256_castsi256_pd(cos_sign));
  }
};

}  // namespace
}  // namespace octet
