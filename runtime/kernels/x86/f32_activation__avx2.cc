// f32_activation__avx2: AVX2 + FMA variant of f32_activation (contract and error bound in
// kernels/f32_elementwise.h): ActivationRun of kernels/f32_vector_kernels.h on VecAvx2
// (kernels/x86/f32_vector_avx2.h), 8 floats per vector.
#include "kernels/f32_elementwise.h"
#include "kernels/f32_vector_kernels.h"
#include "kernels/x86/f32_vector_avx2.h"

namespace octet {

void f32_activation__avx2(F32Activation act, size_t n, float* x) {
  ActivationRun<VecAvx2>(act, n, x);
}

}  // namespace octet
