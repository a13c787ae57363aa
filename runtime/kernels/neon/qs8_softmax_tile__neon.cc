// qs8_softmax_tile__neon: Advanced SIMD (aarch64 and armv7 NEON) variant of qs8_softmax_tile
// (contract and error bound in kernels/qs8_softmax_tile.h): SoftmaxTile of
// kernels/f32_vector_kernels.h on VecNeon (kernels/neon/f32_vector_neon.h), 4 floats per vector.
#include "kernels/f32_vector_kernels.h"
#include "kernels/neon/f32_vector_neon.h"
#include "kernels/qs8_softmax_tile.h"

namespace octet {

float qs8_softmax_tile__neon(const Qs8SoftmaxTileParams& params, float* running_max,
                             float* running_sum, float* correction, float* work, uint8_t* p) {
  return SoftmaxTile<VecNeon>(params, running_max, running_sum, correction, work, p);
}

}  // namespace octet
