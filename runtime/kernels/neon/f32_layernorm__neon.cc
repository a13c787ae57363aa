// f32_layernorm__neon: Advanced SIMD (aarch64 and armv7 NEON) variant of f32_layernorm (contract
// and error bound in kernels/f32_elementwise.h): LayerNormRows of kernels/f32_vector_kernels.h on
// VecNeon (kernels/neon/f32_vector_neon.h), 4 floats per vector.
#include "kernels/f32_elementwise.h"
#include "kernels/f32_vector_kernels.h"
#include "kernels/neon/f32_vector_neon.h"

namespace octet {

void f32_layernorm__neon(size_t rows, size_t n, const float* x, size_t x_stride,
                         const float* weight, const float* bias, float eps, float* y,
                         size_t y_stride) {
  LayerNormRows<VecNeon>(rows, n, x, x_stride, weight, bias, eps, y, y_stride);
}

}  // namespace octet
