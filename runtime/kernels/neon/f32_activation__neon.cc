// f32_activation__neon: Advanced SIMD (aarch64 and armv7 NEON) variant of f32_activation (contract
// and error bound in kernels/f32_elementwise.h): ActivationRun of kernels/f32_vector_kernels.h on
// VecNeon (kernels/neon/f32_vector_neon.h), 4 floats per vector.
#include "kernels/f32_elementwise.h"
#include "kernels/f32_vector_kernels.h"
#include "kernels/neon/f32_vector_neon.h"

namespace octet {

void f32_activation__neon(F32Activation act, size_t n, float* x) {
  ActivationRun<VecNeon>(act, n, x);
}

}  // namespace octet
