// Float row operations of the fp32 forward pass: norms, activations, biases,
// residual adds. Rows of n floats; outputs may alias inputs (same pointer and
// stride). Statistics are accumulated in double in the references: the results
// then sit within float rounding of PyTorch's, whatever its summation order.
//
// Each family has a reference (__ref, scalar, the definition) and vector
// variants (__avx2, __avx512, __neon: kernels/f32_vector_kernels.h on each
// ISA's vectors); kernel_table.h picks one. The variants' error against the
// reference, for any rows, n (tails of every length, n = 0 included), strides
// and in-place calls (tests/kernels/f32_vector_test.cc asserts each bound):
//
//   f32_layernorm   |y - y_ref| <= 2^-20 (|w_i| (|x_i - mean| + |mean| + sd) / sd + |b_i|)
//                   with sd = sqrt(var + eps): about 1e-6 in units of the normalized
//                   output. Mean and variance are summed in float within blocks
//                   of 8 values per lane and in double across blocks; 1 / sd is
//                   computed in double as the reference does.
//   f32_rmsnorm     |y - y_ref| <= 2^-21 |y_ref| + 2^-100 |w_i| (the same sums; the
//                   absolute term covers AArch32's flush of subnormal x).
//   Rows the float sums cannot serve go to the reference whole, so their results
//   are the reference's bits: a sum that is not finite (an inf or NaN in the
//   row, or |x| beyond ~1e18 whose squares overflow float) or var + eps < 2^-60
//   (where float squares of the deviations could underflow).
//   f32_activation, f32_gated_activation (before the product with `up`, which
//   adds half an ulp):
//     kGeluErf      |y - y_ref| <= 2^-22 max(1, |x|)   (the reference's 1 + erff
//                   cancels for x < 0; the variants compute Phi(x) there directly)
//     kGeluTanh     |y - y_ref| <= 2^-21 |y_ref| + 2^-22 |x|   (the same cancellation)
//     kSilu         |y - y_ref| <= 2^-20 |y_ref| + 2^-126
//     kRelu         bit-identical (NaN -> 0, -0 -> +0, as the reference)
//   On AArch32, whose NEON flushes subnormals to zero, results below 2^-119 may
//   be 0 (an absolute error < 2^-119 on top of these). inf and NaN inputs give
//   the reference's results (GELU(-inf) = NaN as 0.5 * -inf * 0, SiLU(-inf) =
//   NaN, GELU(+inf) = +inf).
//   f32_add_bias, f32_add   bit-identical (one float sum per element).
#pragma once

#include <stddef.h>

namespace octet {

// y = (x - mean) / sqrt(var + eps) * weight + bias (biased variance; bias may be null).
typedef void (*F32LayerNormFn)(size_t rows, size_t n, const float* x, size_t x_stride,
                               const float* weight, const float* bias, float eps, float* y,
                               size_t y_stride);
void f32_layernorm__ref(size_t rows, size_t n, const float* x, size_t x_stride, const float* weight,
                        const float* bias, float eps, float* y, size_t y_stride);

// y = x / sqrt(mean(x^2) + eps) * weight (Llama's RMSNorm and T5's layer norm).
typedef void (*F32RmsNormFn)(size_t rows, size_t n, const float* x, size_t x_stride,
                             const float* weight, float eps, float* y, size_t y_stride);
void f32_rmsnorm__ref(size_t rows, size_t n, const float* x, size_t x_stride, const float* weight,
                      float eps, float* y, size_t y_stride);

enum class F32Activation { kGeluErf, kGeluTanh, kRelu, kSilu };

// x[i] = act(x[i]) for a contiguous run of n values.
typedef void (*F32ActivationFn)(F32Activation act, size_t n, float* x);
void f32_activation__ref(F32Activation act, size_t n, float* x);

// x[r, i] = act(x[r, i]) * up[r, i]: the gated (GLU) feed-forward.
typedef void (*F32GatedActivationFn)(F32Activation act, size_t rows, size_t n, float* x,
                                     size_t x_stride, const float* up, size_t up_stride);
void f32_gated_activation__ref(F32Activation act, size_t rows, size_t n, float* x, size_t x_stride,
                               const float* up, size_t up_stride);

// x[r, i] += bias[i].
typedef void (*F32AddBiasFn)(size_t rows, size_t n, float* x, size_t x_stride, const float* bias);
void f32_add_bias__ref(size_t rows, size_t n, float* x, size_t x_stride, const float* bias);

// y[i] += x[i] for a contiguous run of n values (the residual connection).
typedef void (*F32AddFn)(size_t n, float* y, const float* x);
void f32_add__ref(size_t n, float* y, const float* x);

// Optimized variants, named <op>__<isa>; kernel_table.cc lists them with the CPU
// features each needs. Call them only through the table, or after checking
// those features.
void f32_layernorm__avx2(size_t rows, size_t n, const float* x, size_t x_stride,
                         const float* weight, const float* bias, float eps, float* y,
                         size_t y_stride);
void f32_layernorm__avx512(size_t rows, size_t n, const float* x, size_t x_stride,
                           const float* weight, const float* bias, float eps, float* y,
                           size_t y_stride);
void f32_layernorm__neon(size_t rows, size_t n, const float* x, size_t x_stride,
                         const float* weight, const float* bias, float eps, float* y,
                         size_t y_stride);
void f32_rmsnorm__avx2(size_t rows, size_t n, const float* x, size_t x_stride, const float* weight,
                       float eps, float* y, size_t y_stride);
void f32_rmsnorm__avx512(size_t rows, size_t n, const float* x, size_t x_stride,
                         const float* weight, float eps, float* y, size_t y_stride);
void f32_rmsnorm__neon(size_t rows, size_t n, const float* x, size_t x_stride, const float* weight,
                       float eps, float* y, size_t y_stride);
void f32_activation__avx2(F32Activation act, size_t n, float* x);
void f32_activation__avx512(F32Activation act, size_t n, float* x);
void f32_activation__neon(F32Activation act, size_t n, float* x);
void f32_gated_activation__avx2(F32Activation act, size_t rows, size_t n, float* x, size_t x_stride,
                                const float* up, size_t up_stride);
void f32_gated_activation__avx512(F32Activation act, size_t rows, size_t n, float* x,
                                  size_t x_stride, const float* up, size_t up_stride);
void f32_gated_activation__neon(F32Activation act, size_t rows, size_t n, float* x, size_t x_stride,
                                const float* up, size_t up_stride);
void f32_add_bias__avx2(size_t rows, size_t n, float* x, size_t x_stride, const float* bias);
void f32_add_bias__avx512(size_t rows, size_t n, float* x, size_t x_stride, const float* bias);
void f32_add_bias__neon(size_t rows, size_t n, float* x, size_t x_stride, const float* bias);
void f32_add__avx2(size_t n, float* y, const float* x);
void f32_add__avx512(size_t n, float* y, const float* x);
void f32_add__neon(size_t n, float* y, const float* x);

}  // namespace octet
