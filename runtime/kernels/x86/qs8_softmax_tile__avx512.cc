// qs8_softmax_tile__avx512: AVX-512 (F, BW, VL) variant of qs8_softmax_tile (contract and error
// bound in kernels/qs8_softmax_tile.h): SoftmaxTile of kernels/f32_vector_kernels.h on VecAvx512
// (kernels/x86/f32_vector_avx512.h), 16 floats per vector.
#include "kernels/f32_vector_kernels.h"
#include "kernels/qs8_softmax_tile.h"
#include "kernels/x86/f32_vector_avx512.h"

namespace octet {

float qs8_softmax_tile__avx512(const Qs8SoftmaxTileParams& params, float* running_max,
                               float* running_sum, float* correction, float* work, uint8_t* p) {
  return SoftmaxTile<VecAvx512>(params, running_max, running_sum, correction, work, p);
}

}  // namespace octet
