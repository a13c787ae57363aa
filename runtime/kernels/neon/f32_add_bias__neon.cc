// f32_add_bias__neon: Advanced SIMD (aarch64 and armv7 NEON) variant of f32_add_bias (contract and
// error bound in kernels/f32_elementwise.h): AddBiasRows of kernels/f32_vector_kernels.h on VecNeon
// (kernels/neon/f32_vector_neon.h), 4 floats per vector.
#include "kernels/f32_elementwise.h"
#include "kernels/f32_vector_kernels.h"
#include "kernels/neon/f32_vector_neon.h"

namespace octet {

void f32_add_bias__neon(size_t rows, size_t n, float* x, size_t x_stride, const float* bias) {
  AddBiasRows<VecNeon>(rows, n, x, x_stride, bias);
}

}  // namespace octet
