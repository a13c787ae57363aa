// qs8_softmax_tile__avx2: AVX2 + FMA variant of qs8_softmax_tile (contract and error bound in
// kernels/qs8_softmax_tile.h): SoftmaxTile of kernels/f32_vector_kernels.h on VecAvx2
// (kernels/x86/f32_vector_avx2.h), 8 floats per vector.
#include "kernels/f32_vector_kernels.h"
#include "kernels/qs8_softmax_tile.h"
#include "kernels/x86/f32_vector_avx2.h"

namespace octet {

float qs8_softmax_tile__avx2(const Qs8SoftmaxTileParams& params, float* running_max,
                             float* running_sum, float* correction, float* work, uint8_t* p) {
  return SoftmaxTile<VecAvx2>(params, running_max, running_sum, correction, work, p);
}

}  // namespace octet
