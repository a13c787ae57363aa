// qs8_quantize_rows__neon: Advanced SIMD variant of qs8_quantize_rows (contract
// in kernels/qs8_quantize_rows.h); armv7 NEON and aarch64 alike.
//
// Per row, two passes over x. The max: |x| as bits (sign cleared), whose
// unsigned integer order is the float order for finite values, so vmaxq_u32
// gives the exact max; being integer, it is also immune to AArch32 NEON's
// flush-to-zero (a row of subnormals keeps its max). The scale and 1 / scale
// are then computed in scalar code exactly as quant.h does. The quantization, 8
// values per step (the last cols % 8 through zero-padded copies): multiply by
// 1 / scale, clamp to [-127, 127], round half to even, narrow to int8. Rows with
// max|x| < kQs8QuantizeTinyMax go to the reference (a baseline-ISA function: no
// inline function of core/quant.h is compiled with this file's flags, see
// kernels/x86/qs8_quantize_rows__avx2.cc).
//
// Rounding: aarch64 has vcvtnq_s32_f32 (fcvtns: to nearest, ties to even).
// armv7 has no such conversion (vcvt truncates), so it adds 1.5 * 2^23: for
// |v| <= 127 the sum lies in [2^23, 2^24), where floats are the integers, so the
// addition itself rounds v to an integer, to nearest with ties to even (NEON
// always rounds so), and the sum's bits minus those of 1.5 * 2^23 are that
// integer.
//
// Flush-to-zero (AArch32 NEON, always on): subnormal inputs and results of the
// multiply become zero, where IEEE arithmetic would give a value of magnitude
// < 0.5 (1 / scale <= 127 * 2^100 here): both round to 0. Nothing else here is
// subnormal.

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#include "core/quant.h"
#include "kernels/kernel_inline.h"
#include "kernels/qs8_quantize_rows.h"

namespace octet {
namespace {

// The bits of max|x[0..n)|.
OCTET_KERNEL_INLINE uint32_t MaxAbsBits(const float* x, size_t n) {
  const uint32x4_t abs_mask = vdupq_n_u32(0x7FFFFFFF);
  uint32x4_t m = vdupq_n_u32(0);
  size_t c = 0;
  for (; c + 4 <= n; c += 4) {
    m = vmaxq_u32(m, vandq_u32(vreinterpretq_u32_f32(vld1q_f32(x + c)), abs_mask));
  }
#if defined(__aarch64__)
  uint32_t max_bits = vmaxvq_u32(m);
#else
  uint32x2_t m2 = vpmax_u32(vget_low_u32(m), vget_high_u32(m));
  m2 = vpmax_u32(m2, m2);
  uint32_t max_bits = vget_lane_u32(m2, 0);
#endif
  for (; c < n; ++c) {
    uint32_t bits;
    __builtin_memcpy(&bits, x + c, sizeof(bits));
    bits &= 0x7FFFFFFF;
    max_bits = bits > max_bits ? bits : max_bits;
  }
  return max_bits;
}

// 4 values: round_half_even(clamp(x * inv_scale, -127, 127)) as int32.
OCTET_KERNEL_INLINE int32x4_t Quantize4(const float* x, float32x4_t inv_scale) {
  float32x4_t v = vmulq_f32(vld1q_f32(x), inv_scale);
  v = vminq_f32(vmaxq_f32(v, vdupq_n_f32(-127.0f)), vdupq_n_f32(127.0f));
#if defined(__aarch64__)
  return vcvtnq_s32_f32(v);
#else
  const float32x4_t magic = vdupq_n_f32(12582912.0f);  // 1.5 * 2^23, bits 0x4B400000
  return vsubq_s32(vreinterpretq_s32_f32(vaddq_f32(v, magic)), vreinterpretq_s32_f32(magic));
#endif
}

// 8 values as int8.
OCTET_KERNEL_INLINE int8x8_t Quantize8(const float* x, float32x4_t inv_scale) {
  return vmovn_s16(
      vcombine_s16(vmovn_s32(Quantize4(x, inv_scale)), vmovn_s32(Quantize4(x + 4, inv_scale))));
}

}  // namespace

void qs8_quantize_rows__neon(size_t rows, size_t cols, const float* x, size_t ldx, int8_t* q,
                             size_t ldq, float* scales) {
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * ldx;  // [cols]
    int8_t* qr = q + r * ldq;       // [cols]
    const uint32_t max_bits = MaxAbsBits(xr, cols);
    float max_abs;
    __builtin_memcpy(&max_abs, &max_bits, sizeof(max_abs));
    if (!(max_abs >= kQs8QuantizeTinyMax && max_abs <= __FLT_MAX__)) {  // tiny, inf or NaN
      qs8_quantize_rows__ref(1, cols, xr, ldx, qr, ldq, scales + r);
      continue;
    }
    const float scale = max_abs / static_cast<float>(kQ8Max);
    scales[r] = scale;
    const float32x4_t inv = vdupq_n_f32(1.0f / scale);
    size_t c = 0;
    for (; c + 8 <= cols; c += 8) vst1_s8(qr + c, Quantize8(xr + c, inv));
    if (c < cols) {
      // The last cols % 8 through zero-padded copies.
      const size_t rem = cols - c;
      float x8[8] = {};
      int8_t q8[8];
      for (size_t t = 0; t < rem; ++t) x8[t] = xr[c + t];
      vst1_s8(q8, Quantize8(x8, inv));
      for (size_t t = 0; t < rem; ++t) qr[c + t] = q8[t];
    }
  }
}

}  // namespace octet
