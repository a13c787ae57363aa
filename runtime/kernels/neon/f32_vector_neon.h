// VecNeon: the operations kernels/f32_vector_kernels.h's generic float kernels
// need, on Advanced SIMD vectors of 4 floats (the interface is described in
// kernels/f32_vector_math.h, "The vector interface"), for aarch64 and for
// armv7 NEON alike. Included only by the kernels/neon/f32_*__neon.cc and
// qs8_softmax_tile__neon.cc files.
//
// Where the two differ:
//   MulAdd / NegMulAdd  aarch64 fmla / fmls (fused); armv7 vmla / vmls (a
//                       product and a sum, each rounded: plain -mfpu=neon has no
//                       fused multiply-add)
//   Div, Recip          aarch64 fdiv; armv7 vrecpe and two vrecps Newton steps
//                       (relative error <= ~2^-22), times the dividend
//   CvtNearest          aarch64 fcvtns; armv7 the 1.5 * 2^23 addition (see
//                       kernels/neon/qs8_quantize_rows__neon.cc), for 0 <= x < 2^22
//   DF (doubles)        aarch64 only: armv7 NEON has no double vectors, so
//                       SinCos there is ScalarSinCos in a loop
// AArch32 NEON always flushes subnormal inputs and results to zero; aarch64
// does not (the default FPCR).
//
// Max and Min are compare-and-select, to be a > b ? a : b and a < b ? a : b as
// on x86 (vmaxq_f32 would return NaN for a NaN operand). Tails go through
// zero-padded stack copies: no lane past n is read or written.
//
// Linkage: internal and always inlined (kernels/qs8_gemm_driver.h, "Linkage").
#pragma once

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel_inline.h"

namespace octet {
namespace {  // internal linkage per including file

struct VecNeon {
  typedef float32x4_t F;  // 4 floats
  typedef int32x4_t I;    // 4 int32
  typedef uint32x4_t M;   // 4 lanes, all bits set where true
  static constexpr size_t kLanes = 4;
#if defined(__aarch64__)
  static constexpr bool kHasDoubles = true;  // DF below
#else
  static constexpr bool kHasDoubles = false;
#endif

  static OCTET_KERNEL_INLINE F Zero() { return vdupq_n_f32(0.0f); }
  static OCTET_KERNEL_INLINE F Set(float v) { return vdupq_n_f32(v); }
  static OCTET_KERNEL_INLINE float First(F v) { return vgetq_lane_f32(v, 0); }
  static OCTET_KERNEL_INLINE M FirstN(size_t n) {
    const uint32_t lanes[4] = {0, 1, 2, 3};
    return vcltq_u32(vld1q_u32(lanes), vdupq_n_u32(static_cast<uint32_t>(n)));
  }

  static OCTET_KERNEL_INLINE F Load(const float* p) { return vld1q_f32(p); }
  static OCTET_KERNEL_INLINE F LoadN(const float* p, size_t n) {
    float v[4] = {};
    for (size_t t = 0; t < n; ++t) v[t] = p[t];
    return vld1q_f32(v);
  }
  static OCTET_KERNEL_INLINE void Store(float* p, F v) { vst1q_f32(p, v); }
  static OCTET_KERNEL_INLINE void StoreN(float* p, F v, size_t n) {
    float out[4];
    vst1q_f32(out, v);
    for (size_t t = 0; t < n; ++t) p[t] = out[t];
  }
  static OCTET_KERNEL_INLINE F LoadI32(const int32_t* p) { return vcvtq_f32_s32(vld1q_s32(p)); }
  static OCTET_KERNEL_INLINE F LoadI32N(const int32_t* p, size_t n) {
    int32_t v[4] = {};
    for (size_t t = 0; t < n; ++t) v[t] = p[t];
    return vcvtq_f32_s32(vld1q_s32(v));
  }
  // Lanes t whose byte p[t] is not 0 (the first n bytes only, for the N form).
  static OCTET_KERNEL_INLINE M NonZeroBytes4(const uint8_t bytes[8]) {
    const uint32x4_t v = vmovl_u16(vget_low_u16(vmovl_u8(vld1_u8(bytes))));
    return vtstq_u32(v, v);
  }
  static OCTET_KERNEL_INLINE M LoadNonZeroBytes(const uint8_t* p) {
    uint8_t bytes[8] = {};
    __builtin_memcpy(bytes, p, 4);
    return NonZeroBytes4(bytes);
  }
  static OCTET_KERNEL_INLINE M LoadNonZeroBytesN(const uint8_t* p, size_t n) {
    uint8_t bytes[8] = {};
    for (size_t t = 0; t < n; ++t) bytes[t] = p[t];
    return NonZeroBytes4(bytes);
  }
  // 4 int32, each in [0, 255], as bytes.
  static OCTET_KERNEL_INLINE void StoreU8N(uint8_t* p, I v, size_t n) {
    const uint16x4_t h = vmovn_u32(vreinterpretq_u32_s32(v));
    uint8_t bytes[8];
    vst1_u8(bytes, vmovn_u16(vcombine_u16(h, h)));
    for (size_t t = 0; t < n; ++t) p[t] = bytes[t];
  }
  static OCTET_KERNEL_INLINE void StoreU8(uint8_t* p, I v) { StoreU8N(p, v, 4); }

  static OCTET_KERNEL_INLINE F Add(F a, F b) { return vaddq_f32(a, b); }
  static OCTET_KERNEL_INLINE F Sub(F a, F b) { return vsubq_f32(a, b); }
  static OCTET_KERNEL_INLINE F Mul(F a, F b) { return vmulq_f32(a, b); }
#if defined(__aarch64__)
  static OCTET_KERNEL_INLINE F MulAdd(F a, F b, F c) { return vfmaq_f32(c, a, b); }
  static OCTET_KERNEL_INLINE F NegMulAdd(F a, F b, F c) { return vfmsq_f32(c, a, b); }
  static OCTET_KERNEL_INLINE F Div(F a, F b) { return vdivq_f32(a, b); }
  static OCTET_KERNEL_INLINE F Recip(F a) { return vdivq_f32(vdupq_n_f32(1.0f), a); }
  static OCTET_KERNEL_INLINE I CvtNearest(F a) { return vcvtnq_s32_f32(a); }
#else
  static OCTET_KERNEL_INLINE F MulAdd(F a, F b, F c) { return vmlaq_f32(c, a, b); }
  static OCTET_KERNEL_INLINE F NegMulAdd(F a, F b, F c) { return vmlsq_f32(c, a, b); }
  // vrecpe (8 bits), then r * (2 - a r) twice. 1 / inf and 1 / (|a| >= 2^126) give 0
  // (vrecps(a, 0) = 2), which flush-to-zero would give anyway.
  static OCTET_KERNEL_INLINE F Recip(F a) {
    float32x4_t r = vrecpeq_f32(a);
    r = vmulq_f32(r, vrecpsq_f32(a, r));
    return vmulq_f32(r, vrecpsq_f32(a, r));
  }
  static OCTET_KERNEL_INLINE F Div(F a, F b) { return vmulq_f32(a, Recip(b)); }
  static OCTET_KERNEL_INLINE I CvtNearest(F a) {
    const float32x4_t magic = vdupq_n_f32(12582912.0f);  // 1.5 * 2^23
    return vsubq_s32(vreinterpretq_s32_f32(vaddq_f32(a, magic)), vreinterpretq_s32_f32(magic));
  }
#endif
  static OCTET_KERNEL_INLINE M Lt(F a, F b) { return vcltq_f32(a, b); }
  static OCTET_KERNEL_INLINE M And(M a, M b) { return vandq_u32(a, b); }
  static OCTET_KERNEL_INLINE F Select(M m, F a, F b) { return vbslq_f32(m, a, b); }
  static OCTET_KERNEL_INLINE F Max(F a, F b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
  static OCTET_KERNEL_INLINE F Min(F a, F b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
  static OCTET_KERNEL_INLINE F Abs(F a) { return vabsq_f32(a); }

  // p * 2^n for t = 1.5 * 2^23 + n (n an integer in [-150, 128], p in [0.7, 1.5]): n
  // split in two halves, each a normal power of two, so the first product is
  // exact and the second rounds once (to a subnormal, or 0 on AArch32, or inf).
  static OCTET_KERNEL_INLINE F ScaleByPow2(F p, F t) {
    const int32x4_t n = vsubq_s32(vreinterpretq_s32_f32(t), vdupq_n_s32(0x4B400000));
    const int32x4_t n1 = vshrq_n_s32(n, 1);
    const int32x4_t n2 = vsubq_s32(n, n1);
    const int32x4_t bias = vdupq_n_s32(127);
    const float32x4_t s1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n1, bias), 23));
    const float32x4_t s2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n2, bias), 23));
    return vmulq_f32(vmulq_f32(p, s1), s2);
  }

  static OCTET_KERNEL_INLINE float ReduceAdd(F v) {
#if defined(__aarch64__)
    return vaddvq_f32(v);
#else
    const float32x2_t s = vadd_f32(vget_low_f32(v), vget_high_f32(v));
    return vget_lane_f32(vpadd_f32(s, s), 0);
#endif
  }
  static OCTET_KERNEL_INLINE float ReduceMax(F v) {
#if defined(__aarch64__)
    return vmaxvq_f32(v);
#else
    const float32x2_t m = vpmax_f32(vget_low_f32(v), vget_high_f32(v));
    return vget_lane_f32(vpmax_f32(m, m), 0);
#endif
  }

#if defined(__aarch64__)
  // Doubles, for the sine and cosine of RoPE (SinCosDouble in f32_vector_math.h).
  typedef float64x2_t DF;  // 2 doubles
  static constexpr size_t kDLanes = 2;
  static OCTET_KERNEL_INLINE DF DLoadFloats(const float* p) { return vcvt_f64_f32(vld1_f32(p)); }
  static OCTET_KERNEL_INLINE void DStoreFloats(float* p, DF v) { vst1_f32(p, vcvt_f32_f64(v)); }
  static OCTET_KERNEL_INLINE DF DSet(double v) { return vdupq_n_f64(v); }
  static OCTET_KERNEL_INLINE DF DAdd(DF a, DF b) { return vaddq_f64(a, b); }
  static OCTET_KERNEL_INLINE DF DSub(DF a, DF b) { return vsubq_f64(a, b); }
  static OCTET_KERNEL_INLINE DF DMul(DF a, DF b) { return vmulq_f64(a, b); }
  // ScalarRoundToInt as a double: trunc(x + 0.5) or trunc(x - 0.5) by the sign of x.
  static OCTET_KERNEL_INLINE DF DRoundHalfAway(DF x) {
    const uint64x2_t sign = vdupq_n_u64(0x8000000000000000ull);
    const float64x2_t half = vbslq_f64(sign, x, vdupq_n_f64(0.5));  // 0.5 with x's sign
    return vrndq_f64(vaddq_f64(x, half));
  }
  // NaN where !(|x| < limit).
  static OCTET_KERNEL_INLINE DF DNanOutside(DF v, DF x, double limit) {
    const uint64x2_t inside = vcltq_f64(vabsq_f64(x), vdupq_n_f64(limit));
    return vbslq_f64(inside, v, vdupq_n_f64(__builtin_nan("")));
  }
  // The quadrant step of ScalarSinCos: n = dn mod 4 picks (s, c), (c, -s),
  // (-s, -c) or (-c, s) as (sin, cos).
  static OCTET_KERNEL_INLINE void DQuadrant(DF dn, DF s, DF c, DF* sin_x, DF* cos_x) {
    const int64x2_t n = vcvtq_s64_f64(dn);
    const uint64x2_t odd = vtstq_s64(n, vdupq_n_s64(1));
    const uint64x2_t sin_sign =
        vshlq_n_u64(vreinterpretq_u64_s64(vandq_s64(n, vdupq_n_s64(2))), 62);
    const uint64x2_t cos_sign = vshlq_n_u64(
        vreinterpretq_u64_s64(vandq_s64(vaddq_s64(n, vdupq_n_s64(1)), vdupq_n_s64(2))), 62);
    *sin_x =
        vreinterpretq_f64_u64(veorq_u64(vreinterpretq_u64_f64(vbslq_f64(odd, c, s)), sin_sign));
    *cos_x =
        vreinterpretq_f64_u64(veorq_u64(vreinterpretq_u64_f64(vbslq_f64(odd, s, c)), cos_sign));
  }
#endif
};

}  // namespace
}  // namespace octet
