// f32_rope__neon: Advanced SIMD (aarch64 and armv7 NEON) variant of f32_rope (contract and error
// bound in kernels/position.h): RopeRows of kernels/f32_vector_kernels.h on VecNeon
// (kernels/neon/f32_vector_neon.h), 4 floats per vector.
#include "kernels/f32_vector_kernels.h"
#include "kernels/neon/f32_vector_neon.h"
#include "kernels/position.h"

namespace octet {

void f32_rope__neon(const F32RopeParams& params, float* x, size_t ldx) {
  RopeRows<VecNeon>(params, x, ldx);
}

}  // namespace octet
