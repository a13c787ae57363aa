// f32_gated_activation__neon: Advanced SIMD (aarch64 and armv7 NEON) variant of
// f32_gated_activation (contract and error bound in kernels/f32_elementwise.h): GatedActivationRows
// of kernels/f32_vector_kernels.h on VecNeon (kernels/neon/f32_vector_neon.h), 4 floats per vector.
#include "kernels/f32_elementwise.h"
#include "kernels/f32_vector_kernels.h"
#include "kernels/neon/f32_vector_neon.h"

namespace octet {

void f32_gated_activation__neon(F32Activation act, size_t rows, size_t n, float* x, size_t x_stride,
                                const float* up, size_t up_stride) {
  GatedActivationRows<VecNeon>(act, rows, n, x, x_stride, up, up_stride);
}

}  // namespace octet
