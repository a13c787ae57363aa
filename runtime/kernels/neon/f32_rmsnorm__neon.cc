// f32_rmsnorm__neon: Advanced SIMD (aarch64 and armv7 NEON) variant of f32_rmsnorm (contract and
// error bound in kernels/f32_elementwise.h): RmsNormRows of kernels/f32_vector_kernels.h on VecNeon
// (kernels/neon/f32_vector_neon.h), 4 floats per vector.
#include "kernels/f32_elementwise.h"
#include "kernels/f32_vector_kernels.h"
#include "kernels/neon/f32_vector_neon.h"

namespace octet {

void f32_rmsnorm__neon(size_t rows, size_t n, const float* x, size_t x_stride, const float* weight,
                       float eps, float* y, size_t y_stride) {
  RmsNormRows<VecNeon>(rows, n, x, x_stride, weight, eps, y, y_stride);
}

}  // namespace octet
