// f32_add__neon: Advanced SIMD (aarch64 and armv7 NEON) variant of f32_add (contract and error
// bound in kernels/f32_elementwise.h): AddRun of kernels/f32_vector_kernels.h on VecNeon
// (kernels/neon/f32_vector_neon.h), 4 floats per vector.
#include "kernels/f32_elementwise.h"
#include "kernels/f32_vector_kernels.h"
#include "kernels/neon/f32_vector_neon.h"

namespace octet {

void f32_add__neon(size_t n, float* y, const float* x) { AddRun<VecNeon>(n, y, x); }

}  // namespace octet
