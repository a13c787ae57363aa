// Float row operations of the fp32 forward pass: norms, activations, biases.
// Rows of n floats; outputs may alias inputs (same pointer and stride).
// Statistics are accumulated in double: the results then sit within float
// rounding of PyTorch's, whatever its summation order.
#pragma once

#include <stddef.h>

namespace octet {

// y = (x - mean) / sqrt(var + eps) * weight + bias (biased variance; bias may be null).
void f32_layernorm__ref(size_t rows, size_t n, const float* x, size_t x_stride,
                        const float* weight, const float* bias, float eps, float* y,
                        size_t y_stride);

// y = x / sqrt(mean(x^2) + eps) * weight (Llama's RMSNorm and T5's layer norm).
void f32_rmsnorm__ref(size_t rows, size_t n, const float* x, size_t x_stride, const float* weight,
                      float eps, float* y, size_t y_stride);

enum class F32Activation { kGeluErf, kGeluTanh, kRelu, kSilu };

// x[i] = act(x[i]) for a contiguous run of n values.
void f32_activation__ref(F32Activation act, size_t n, float* x);

// x[r, i] = act(x[r, i]) * up[r, i]: the gated (GLU) feed-forward.
void f32_gated_activation__ref(F32Activation act, size_t rows, size_t n, float* x,
                               size_t x_stride, const float* up, size_t up_stride);

// x[r, i] += bias[i].
void f32_add_bias__ref(size_t rows, size_t n, float* x, size_t x_stride, const float* bias);

}  // namespace octet
