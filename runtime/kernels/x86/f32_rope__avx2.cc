// f32_rope__avx2: AVX2 + FMA variant of f32_rope (contract and error bound in kernels/position.h):
// RopeRows of kernels/f32_vector_kernels.h on VecAvx2 (kernels/x86/f32_vector_avx2.h), 8 floats per
// vector.
#include "kernels/f32_vector_kernels.h"
#include "kernels/position.h"
#include "kernels/x86/f32_vector_avx2.h"

namespace octet {

void f32_rope__avx2(const F32RopeParams& params, float* x, size_t ldx) {
  RopeRows<VecAvx2>(params, x, ldx);
}

}  // namespace octet
