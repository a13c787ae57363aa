// f32_add_bias__avx2: AVX2 + FMA variant of f32_add_bias (contract and error bound in
// kernels/f32_elementwise.h): AddBiasRows of kernels/f32_vector_kernels.h on VecAvx2
// (kernels/x86/f32_vector_avx2.h), 8 floats per vector.
#include "kernels/f32_elementwise.h"
#include "kernels/f32_vector_kernels.h"
#include "kernels/x86/f32_vector_avx2.h"

namespace octet {

void f32_add_bias__avx2(size_t rows, size_t n, float* x, size_t x_stride, const float* bias) {
  AddBiasRows<VecAvx2>(rows, n, x, x_stride, bias);
}

}  // namespace octet
