// f32_layernorm__avx512: AVX-512 (F, BW, VL) variant of f32_layernorm (contract and error bound in
// kernels/f32_elementwise.h): LayerNormRows of kernels/f32_vector_kernels.h on VecAvx512
// (kernels/x86/f32_vector_avx512.h), 16 floats per vector.
#include "kernels/f32_elementwise.h"
#include "kernels/f32_vector_kernels.h"
#include "kernels/x86/f32_vector_avx512.h"

namespace octet {

void f32_layernorm__avx512(size_t rows, size_t n, const float* x, size_t x_stride,
                           const float* weight, const float* bias, float eps, float* y,
                           size_t y_stride) {
  LayerNormRows<VecAvx512>(rows, n, x, x_stride, weight, bias, eps, y, y_stride);
}

}  // namespace octet
