// f32_add__avx2: AVX2 + FMA variant of f32_add (contract and error bound in
// kernels/f32_elementwise.h): AddRun of kernels/f32_vector_kernels.h on VecAvx2
// (kernels/x86/f32_vector_avx2.h), 8 floats per vector.
#include "kernels/f32_elementwise.h"
#include "kernels/f32_vector_kernels.h"
#include "kernels/x86/f32_vector_avx2.h"

namespace octet {

void f32_add__avx2(size_t n, float* y, const float* x) { AddRun<VecAvx2>(n, y, x); }

}  // namespace octet
