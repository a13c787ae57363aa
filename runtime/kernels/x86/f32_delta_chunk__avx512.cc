// f32_delta_chunk__avx512: DeltaChunk of kernels/f32_delta_rule_vector.h on VecAvx512
// (kernels/x86/f32_vector_avx512.h); matrix-product tiles of 8 rows x 2 vectors.
#include "kernels/f32_delta_rule.h"
#include "kernels/f32_delta_rule_vector.h"
#include "kernels/x86/f32_vector_avx512.h"

namespace octet {

void f32_delta_chunk__avx512(const F32DeltaChunkArgs& a) { DeltaChunk<VecAvx512, 8>(a); }

}  // namespace octet
