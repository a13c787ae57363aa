// f32_gated_activation__avx512: AVX-512 (F, BW, VL) variant of f32_gated_activation (contract and
// error bound in kernels/f32_elementwise.h): GatedActivationRows of kernels/f32_vector_kernels.h on
// VecAvx512 (kernels/x86/f32_vector_avx512.h), 16 floats per vector.
#include "kernels/f32_elementwise.h"
#include "kernels/f32_vector_kernels.h"
#include "kernels/x86/f32_vector_avx512.h"

namespace octet {

void f32_gated_activation__avx512(F32Activation act, size_t rows, size_t n, float* x,
                                  size_t x_stride, const float* up, size_t up_stride) {
  GatedActivationRows<VecAvx512>(act, rows, n, x, x_stride, up, up_stride);
}

}  // namespace octet
