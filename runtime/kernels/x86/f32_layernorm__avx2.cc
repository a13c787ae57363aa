// f32_layernorm__avx2: AVX2 + FMA variant of f32_layernorm (contract and error bound in
// kernels/f32_elementwise.h): LayerNormRows of kernels/f32_vector_kernels.h on VecAvx2
// (kernels/x86/f32_vector_avx2.h), 8 floats per vector.
#include "kernels/f32_elementwise.h"
#include "kernels/f32_vector_kernels.h"
#include "kernels/x86/f32_vector_avx2.h"

namespace octet {

void f32_layernorm__avx2(size_t rows, size_t n, const float* x, size_t x_stride,
                         const float* weight, const float* bias, float eps, float* y,
                         size_t y_stride) {
  LayerNormRows<VecAvx2>(rows, n, x, x_stride, weight, bias, eps, y, y_stride);
}

}  // namespace octet
