// qs8_dequantize_rows__neon: Advanced SIMD variant of qs8_dequantize_rows
// (contract in kernels/qs8_dequantize_rows.h); armv7 NEON and aarch64 alike. 4
// columns per step: vcvtq_f32_s32, row_scale * col_scales, the product, then
// the bias sum; the last cols % 4 with the reference, qs8_dequantize_rows__ref
// (a baseline-ISA function: no inline function of core/quant.h is compiled with
// this file's flags, see kernels/x86/qs8_quantize_rows__avx2.cc).
//
// Exactness: each operation rounds once (to nearest even), in the reference's
// order. The file is compiled with -ffp-contract=off: GCC's intrinsics are
// plain vector arithmetic and would otherwise fuse the product and the bias sum
// into one fmla on aarch64.
//
// AArch32 NEON always flushes subnormal inputs and results to zero; the scalar
// (VFP) reference does not. A step is redone in scalar code when any of its
// lanes could differ (with the reference), which is when one of these holds:
//   |s| < 2^-126, s = row_scale * col_scale (s is 0, or was flushed, or a scale
//       was subnormal); otherwise |float(acc) * s| is 0 or >= 2^-126, never
//       subnormal, as |float(acc)| is 0 or >= 1;
//   with a bias, the bias is subnormal and not 0, or |out| < 2^-126 (the sum
//       may have been flushed; this includes out = 0, a rare value with a bias).
// A normal NEON result equals the IEEE one. On aarch64 nothing is flushed.

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel_inline.h"
#include "kernels/qs8_dequantize_rows.h"

namespace octet {
namespace {

#if !defined(__aarch64__)
// Lanes whose float |v| < 2^-126 (0 and subnormals): the bits of |v| below
// those of FLT_MIN.
OCTET_KERNEL_INLINE uint32x4_t BelowNormal(float32x4_t v) {
  const uint32x4_t abs_bits = vandq_u32(vreinterpretq_u32_f32(v), vdupq_n_u32(0x7FFFFFFF));
  return vcltq_u32(abs_bits, vdupq_n_u32(0x00800000));
}

OCTET_KERNEL_INLINE bool AnyLane(uint32x4_t mask) {
  const uint32x2_t m = vorr_u32(vget_low_u32(mask), vget_high_u32(mask));
  return (vget_lane_u32(m, 0) | vget_lane_u32(m, 1)) != 0;
}
#endif

}  // namespace

void qs8_dequantize_rows__neon(size_t rows, size_t cols, const int32_t* acc, size_t lda,
                               const float* row_scales, const float* col_scales, const float* bias,
                               float* out, size_t ldo) {
  for (size_t r = 0; r < rows; ++r) {
    const int32_t* a = acc + r * lda;  // [cols]
    float* o = out + r * ldo;          // [cols]
    const float32x4_t row_scale4 = vdupq_n_f32(row_scales[r]);
    size_t c = 0;
    for (; c + 4 <= cols; c += 4) {
      const float32x4_t s = vmulq_f32(row_scale4, vld1q_f32(col_scales + c));
      float32x4_t y = vmulq_f32(vcvtq_f32_s32(vld1q_s32(a + c)), s);
#if defined(__aarch64__)
      if (bias != nullptr) y = vaddq_f32(y, vld1q_f32(bias + c));
#else
      uint32x4_t redo = BelowNormal(s);
      if (bias != nullptr) {
        const float32x4_t b = vld1q_f32(bias + c);
        y = vaddq_f32(y, b);
        // Subnormal and not 0: |b| - 1 below 2^23 - 1 as unsigned bits.
        const uint32x4_t b_bits = vandq_u32(vreinterpretq_u32_f32(b), vdupq_n_u32(0x7FFFFFFF));
        redo = vorrq_u32(redo, vcltq_u32(vsubq_u32(b_bits, vdupq_n_u32(1)), vdupq_n_u32(0x7FFFFF)));
        redo = vorrq_u32(redo, BelowNormal(y));
      }
      if (AnyLane(redo)) {
        qs8_dequantize_rows__ref(1, 4, a + c, lda, row_scales + r, col_scales + c,
                                 bias != nullptr ? bias + c : nullptr, o + c, ldo);
        continue;
      }
#endif
      vst1q_f32(o + c, y);
    }
    if (c < cols) {
      qs8_dequantize_rows__ref(1, cols - c, a + c, lda, row_scales + r, col_scales + c,
                               bias != nullptr ? bias + c : nullptr, o + c, ldo);
    }
  }
}

}  // namespace octet
