// f32_add__avx512: AVX-512 (F, BW, VL) variant of f32_add (contract and error bound in
// kernels/f32_elementwise.h): AddRun of kernels/f32_vector_kernels.h on VecAvx512
// (kernels/x86/f32_vector_avx512.h), 16 floats per vector.
#include "kernels/f32_elementwise.h"
#include "kernels/f32_vector_kernels.h"
#include "kernels/x86/f32_vector_avx512.h"

namespace octet {

void f32_add__avx512(size_t n, float* y, const float* x) { AddRun<VecAvx512>(n, y, x); }

}  // namespace octet
