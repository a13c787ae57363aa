// f32_delta_chunk__neon: DeltaChunk of kernels/f32_delta_rule_vector.h on VecNeon
// (kernels/neon/f32_vector_neon.h); matrix-product tiles of 8 rows x 2 vectors on aarch64
// (32 vector registers), 4 rows on AArch32 (16).
#include "kernels/f32_delta_rule.h"
#include "kernels/f32_delta_rule_vector.h"
#include "kernels/neon/f32_vector_neon.h"

namespace octet {

void f32_delta_chunk__neon(const F32DeltaChunkArgs& a) {
#if defined(__aarch64__)
  DeltaChunk<VecNeon, 8>(a);
#else
  DeltaChunk<VecNeon, 4>(a);
#endif
}

}  // namespace octet
