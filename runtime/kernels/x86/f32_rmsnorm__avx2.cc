// f32_rmsnorm__avx2: AVX2 + FMA variant of f32_rmsnorm (contract and error bound in
// kernels/f32_elementwise.h): RmsNormRows of kernels/f32_vector_kernels.h on VecAvx2
// (kernels/x86/f32_vector_avx2.h), 8 floats per vector.
#include "kernels/f32_elementwise.h"
#include "kernels/f32_vector_kernels.h"
#include "kernels/x86/f32_vector_avx2.h"

namespace octet {

void f32_rmsnorm__avx2(size_t rows, size_t n, const float* x, size_t x_stride, const float* weight,
                       float eps, float* y, size_t y_stride) {
  RmsNormRows<VecAvx2>(rows, n, x, x_stride, weight, eps, y, y_stride);
}

}  // namespace octet
