// f32_delta_step__neon, f32_delta_chunk__neon: the bodies of kernels/f32_delta_rule_vector.h on
// VecNeon (kernels/neon/f32_vector_neon.h); matrix-product tiles of 8 rows x 2 vectors on
// aarch64 (32 vector registers), 4 rows on AArch32 (16).
#include "kernels/f32_delta_rule.h"
#include "kernels/f32_delta_rule_vector.h"
#include "kernels/neon/f32_vector_neon.h"

namespace octet {

#if defined(__aarch64__)
constexpr size_t kDeltaTileRows = 8;
#else
constexpr size_t kDeltaTileRows = 4;
#endif

void f32_delta_step__neon(size_t dk, size_t dv, const float* q, const float* k, const float* v,
                          float beta, float g, float* S, float* o) {
  DeltaStep<VecNeon>(dk, dv, q, k, v, beta, g, S, o);
}

void f32_delta_chunk__neon(const F32DeltaChunkArgs& a) { DeltaChunk<VecNeon, kDeltaTileRows>(a); }

}  // namespace octet
