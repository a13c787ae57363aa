// f32_delta_chunk__avx2: DeltaChunk of kernels/f32_delta_rule_vector.h on VecAvx2
// (kernels/x86/f32_vector_avx2.h); matrix-product tiles of 6 rows x 2 vectors.
#include "kernels/f32_delta_rule.h"
#include "kernels/f32_delta_rule_vector.h"
#include "kernels/x86/f32_vector_avx2.h"

namespace octet {

void f32_delta_chunk__avx2(const F32DeltaChunkArgs& a) { DeltaChunk<VecAvx2, 6>(a); }

}  // namespace octet
