// f32_activation__avx512: AVX-512 (F, BW, VL) variant of f32_activation (contract and error bound
// in kernels/f32_elementwise.h): ActivationRun of kernels/f32_vector_kernels.h on VecAvx512
// (kernels/x86/f32_vector_avx512.h), 16 floats per vector.
#include "kernels/f32_elementwise.h"
#include "kernels/f32_vector_kernels.h"
#include "kernels/x86/f32_vector_avx512.h"

namespace octet {

void f32_activation__avx512(F32Activation act, size_t n, float* x) {
  ActivationRun<VecAvx512>(act, n, x);
}

}  // namespace octet
