// f32_rope__avx512: AVX-512 (F, BW, VL) variant of f32_rope (contract and error bound in
// kernels/position.h): RopeRows of kernels/f32_vector_kernels.h on VecAvx512
// (kernels/x86/f32_vector_avx512.h), 16 floats per vector.
#include "kernels/f32_vector_kernels.h"
#include "kernels/position.h"
#include "kernels/x86/f32_vector_avx512.h"

namespace octet {

void f32_rope__avx512(const F32RopeParams& params, float* x, size_t ldx) {
  RopeRows<VecAvx512>(params, x, ldx);
}

}  // namespace octet
