// qs8_softmax_tile: the float work of ops/qs8_attention.cc between its two
// integer products, for one query row against one tile of n keys: logits from
// the int32 Q·Kᵀ, the online-softmax update, and the uint8 weights P for P·V.
//
// Visible keys: lo <= t < hi (hi <= n) with key_mask == null or key_mask[t] != 0.
// With s_t = -inf for the others:
//   s_t   = float(qk[t]) * (q_scale * k_scales[t]) + bias[t]   (bias null: no sum)
//   m     = max_t s_t; if m = -inf (no visible key, or every logit -inf):
//           p[0..n) = 0, return 0; *running_max, *running_sum, *correction untouched
//   if m > *running_max:  c = exp(*running_max - m)  (0 when *running_max = -inf)
//                         *correction = c, *running_sum *= c, *running_max = m
//   e_t   = exp(s_t - *running_max)                  (0 for hidden keys)
//   *running_sum += sum_t e_t
//   w_t   = e_t * v_scales[t],  w_max = max_t w_t
//   p[t]  = round_half_even(min(w_t * (255 / w_max), 255)), 0 for hidden keys,
//           for w_max = 0, and where w_t * (255 / w_max) is NaN
//   returns p_scale = w_max / 255: the weight one unit of p stands for
// The caller then multiplies its output accumulator by *correction (if written)
// and adds p_scale * (P · V).
//
//   qk        [n] int32    k_scales, v_scales [n] float    bias [n] float or null
//   key_mask  [n] uint8 or null                           p [n] uint8 (written, all n)
//   work      [n] float scratch; on return (when some key is visible) it holds w_t
//             for the visible keys whose logit is finite (tests read it to see e_t);
//             its other entries are unspecified
// *correction is only written when the running max grows: the caller sets it
// to 1 first.
//
// The reference, qs8_softmax_tile__ref, is ops/qs8_attention.cc's original
// scalar code: exp in double (ScalarExp, kernels/scalar_math.h) rounded to
// float, sums in key order. The vector variants (kernels/f32_vector_kernels.h)
// compute exp with Exp (kernels/f32_vector_math.h: <= 2 ulp) and sum in lanes;
// against the reference (tests/kernels/f32_vector_test.cc):
//   s_t, *running_max         bit-identical (the reference and the variants are
//                             compiled without contraction: the product and the
//                             sum round apart)
//   *correction, e_t, w_t     relative error <= 2^-21 (where e_t >= 2^-126; below,
//                             Exp's absolute error, f32_vector_math.h)
//   w_max, p_scale            relative error <= 2^-21
//   *running_sum              relative error <= 2^-21 + n 2^-24 (the reference's
//                             own key-order sum is the larger part)
//   p[t]                      within 1 of the reference's: a flip of the rounding
//                             where w_t * 255 / w_max lies within ~2^-20 of a half
//
// Kernel headers include only compiler headers and kernels/*.h.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace octet {

struct Qs8SoftmaxTileParams {
  size_t n = 0;                       // keys in the tile
  size_t lo = 0, hi = 0;              // keys the row may see (key_mask aside): [lo, hi)
  const uint8_t* key_mask = nullptr;  // null or [n]: 0 hides the key
  const int32_t* qk = nullptr;        // [n] the row's Q·Kᵀ
  float q_scale = 0.0f;               // the row's Q scale times the logit scale
  const float* k_scales = nullptr;    // [n]
  const float* bias = nullptr;        // null or [n]: added to the logits (ALiBi, T5)
  const float* v_scales = nullptr;    // [n]
};

typedef float (*Qs8SoftmaxTileFn)(const Qs8SoftmaxTileParams& params, float* running_max,
                                  float* running_sum, float* correction, float* work, uint8_t* p);

float qs8_softmax_tile__ref(const Qs8SoftmaxTileParams& params, float* running_max,
                            float* running_sum, float* correction, float* work, uint8_t* p);

// Optimized variants, named <op>__<isa>; kernel_table.cc lists them with the CPU
// features each needs.
float qs8_softmax_tile__avx2(const Qs8SoftmaxTileParams& params, float* running_max,
                             float* running_sum, float* correction, float* work, uint8_t* p);
float qs8_softmax_tile__avx512(const Qs8SoftmaxTileParams& params, float* running_max,
                               float* running_sum, float* correction, float* work, uint8_t* p);
float qs8_softmax_tile__neon(const Qs8SoftmaxTileParams& params, float* running_max,
                             float* running_sum, float* correction, float* work, uint8_t* p);

}  // namespace octet
