// The int8 arithmetic, defined once. Reference kernels, optimized kernels, the
// session and the converter all use these definitions, so "bit-exact" has one
// meaning. Header-only, compiler headers only (kernel files may include it).
//
// Conventions (docs/design.md §4)
//   real = scale * q, zero point 0 (symmetric) for weights and activations.
//   Weights: q in [-127, 127], one scale per output channel (row of [N, K]):
//            scale = max|w_row| / 127 (1 for an all-zero row). octet-convert
//            quantizes every matrix this way (converter/quantize/quantize.h):
//            the linear layers, the embeddings and the LM head.
//   Activations: dynamic, one scale per row (token): scale = max|x_row| / 127,
//            q = round_half_even(x / scale) clamped to [-127, 127]. -128 is never
//            produced, so a negated value always fits (the kernels still accept it).
//            Chosen by measurement over static calibrated scales: on the
//            converter's calibration runs a per-row scale gives ~45 dB SQNR on
//            the residual stream against ~40 dB for one static scale per tensor
//            (the report stores both per model), and it needs no calibration.
//   Products: int8 x int8 -> int32 accumulation (kernels/qs8_gemm.h),
//            dequantized as acc * (row_scale * channel_scale), in fp32.
//   Rounding: round half to even (the IEEE default; __builtin_rintf under the
//            default rounding mode), so the converter and the runtime agree.
//
// Attention (ops/qs8_attention.h has the arithmetic in full)
//   Q, K and V are quantized per (token, head) with QuantizeRowSymmetric; K and
//   V are stored that way in the KV cache (int8 values + one f32 scale per
//   token and kv head: (head_dim + 4) / (2 head_dim) of an fp16 cache, 53% at
//   head_dim 64). Q·Kᵀ is int8 x int8 -> int32 (qs8_gemm); the logits, the
//   online softmax and its rescaling are fp32; the weights e_j * v_scale_j are
//   quantized to uint8 [0, 255] with one scale per (row, head, key tile), so V's
//   per-token scale sits in P and V's int8 values enter the P·V reduction
//   unscaled: uint8 x int8 -> int32 (kernels/qu8s8_pv.h).
//
// What stays fp32, and why: norms (a mean and a variance per row, cheap next to
// the products, and their outputs are quantized right after), residual adds
// (the residual stream carries the model's precision across layers), the
// activation functions (elementwise), biases, the softmax (exp of differences
// of logits: fp32 costs a few operations per key against head_dim multiply-adds
// per key in each product) and the final logits.
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
// all-zero or empty row, or one so small its scale underflows, so
// dequantization never divides by zero). A row with
// an inf or a NaN quantizes to zeros with a NaN scale: whatever it multiplies
// comes out NaN (garbage in, NaN out), and no float-to-int conversion sees a
// value outside int's range.
inline float QuantizeRowSymmetric(const float* x, size_t n, int8_t* q) {
  float max_abs = 0.0f;
  bool finite = true;
  for (size_t i = 0; i < n; ++i) {
    const float a = x[i] < 0.0f ? -x[i] : x[i];
    finite = finite && a <= __FLT_MAX__;  // false for inf and NaN
    max_abs = a > max_abs ? a : max_abs;
  }
  if (!finite) {
    for (size_t i = 0; i < n; ++i) q[i] = 0;
    return __builtin_nanf("");
  }
  float scale = max_abs > 0.0f ? max_abs / static_cast<float>(kQ8Max) : 1.0f;
  // Subnormal rows below 127 times the smallest subnormal (~1.8e-43) have a
  // scale that underflows to 0: they count as all-zero rows.
  if (!(scale > 0.0f)) scale = 1.0f;
  const float inv_scale = 1.0f / scale;
  // Rows with max|x| below ~3.7e-37 have a scale whose inverse overflows to
  // inf (and 0 * inf is NaN): they divide instead. The optimized kernels send
  // rows below 2^-100 here (kernels/qs8_quantize_rows.h).
  const bool divide = !(inv_scale < __builtin_inff());
  for (size_t i = 0; i < n; ++i) {
    float v = divide ? x[i] / scale : x[i] * inv_scale;
    v = v > 127.0f ? 127.0f : (v < -127.0f ? -127.0f : v);  // also before the cast: no UB
    q[i] = static_cast<int8_t>(RoundHalfEven(v));
  }
  return scale;
}

// 16-bit inputs (Tensor.input_bits 16, the converter's choice by measurement):
// a row as two int8 digits, its int8 quantization and the int8 quantization of
// what that missed:
//
//   hi, hi_scale = QuantizeRowSymmetric(x)
//   r[i]         = QuantizationResidual(x[i], hi[i], hi_scale)
//   lo, lo_scale = QuantizeRowSymmetric(r)
//
// so x ~ hi_scale * hi + lo_scale * lo with |r| <= hi_scale / 2, lo_scale <=
// hi_scale / 254: about 15 bits against 8. x · w = hi_scale * (hi · w) +
// lo_scale * (lo · w): two int8 x int8 -> int32 products on the same kernels,
// dequantized and summed in fp32. Both quantizations are qs8_quantize_rows (any
// variant: bit-exact with QuantizeRowSymmetric); a row with an inf or a NaN
// gives NaN scales (garbage in, NaN out).

// x - scale * q, rounded once to float. In double the product (24 x 8 bits) and
// the difference (|x - scale * q| <= scale / 2 for q = round(x / scale), so the
// operands' exponents are close) are exact: the same float on every platform,
// whether or not the compiler fuses the multiply-add.
inline float QuantizationResidual(float x, int8_t q, float scale) {
  return static_cast<float>(static_cast<double>(x) -
                            static_cast<double>(scale) * static_cast<double>(q));
}

// The scalar definition above; residual: n floats of scratch.
inline void QuantizeRowTwoDigits(const float* x, size_t n, int8_t* hi, int8_t* lo,
                                 float* hi_scale, float* lo_scale, float* residual) {
  *hi_scale = QuantizeRowSymmetric(x, n, hi);
  for (size_t i = 0; i < n; ++i) residual[i] = QuantizationResidual(x[i], hi[i], *hi_scale);
  *lo_scale = QuantizeRowSymmetric(residual, n, lo);
}

// acc * row_scale * channel_scale, in this order (fp32, no FMA contraction in
// the reference: optimized epilogues must multiply in the same order).
inline float DequantizeAcc(int32_t acc, float row_scale, float channel_scale) {
  return static_cast<float>(acc) * (row_scale * channel_scale);
}

}  // namespace octet
