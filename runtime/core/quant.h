// The int8 arithmetic, defined once. Reference kernels, optimized kernels, the
// session and the converter all use these definitions, so "bit-exact" has one
// meaning. Header-only, compiler headers only (kernel files may include it).
//
// Conventions (DESIGN.md §4)
//   real = scale * q, zero point 0 (symmetric) for weights and activations.
//   Weights: q in [-127, 127], one scale per output channel (row of [N, K]):
//            scale = max|w_row| / 127 (1 for an all-zero row).
//   Activations: dynamic, one scale per row (token): scale = max|x_row| / 127,
//            q = round_half_even(x / scale) clamped to [-127, 127]. -128 is never
//            produced, so a negated value always fits (the kernels still accept it).
//   Products: int8 x int8 -> int32 accumulation (kernels/qs8_gemm.h),
//            dequantized as acc * (row_scale * channel_scale), in fp32.
//   Rounding: round half to even (the IEEE default; __builtin_rintf under the
//            default rounding mode), so the converter and the runtime agree.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace octet {

constexpr int32_t kQ8Max = 127;
constexpr int32_t kQ8Min = -127;  // symmetric: -128 is never produced

inline int32_t RoundHalfEven(float x) { return static_cast<int32_t>(__builtin_rintf(x)); }

inline int8_t SaturateQ8(int32_t v) {
  return static_cast<int8_t>(v < kQ8Min ? kQ8Min : (v > kQ8Max ? kQ8Max : v));
}

// Quantizes x[0..n) with a symmetric per-row scale. Returns the scale (1 for an
// all-zero or empty row, so dequantization never divides by zero).
inline float QuantizeRowSymmetric(const float* x, size_t n, int8_t* q) {
  float max_abs = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    const float a = x[i] < 0.0f ? -x[i] : x[i];
    max_abs = a > max_abs ? a : max_abs;
  }
  const float scale = max_abs > 0.0f ? max_abs / static_cast<float>(kQ8Max) : 1.0f;
  const float inv_scale = 1.0f / scale;
  for (size_t i = 0; i < n; ++i) {
    float v = x[i] * inv_scale;
    v = v > 127.0f ? 127.0f : (v < -127.0f ? -127.0f : v);  // also before the cast: no UB
    q[i] = static_cast<int8_t>(RoundHalfEven(v));
  }
  return scale;
}

// acc * row_scale * channel_scale, in this order (fp32, no FMA contraction in
// the reference: optimized epilogues must multiply in the same order).
inline float DequantizeAcc(int32_t acc, float row_scale, float channel_scale) {
  return static_cast<float>(acc) * (row_scale * channel_scale);
}

}  // namespace octet
