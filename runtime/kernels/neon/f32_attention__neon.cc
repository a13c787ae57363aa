// f32_attention__neon: Advanced SIMD (aarch64 and armv7 NEON) variant of f32_attention (contract
// and error bound in kernels/f32_attention.h): AttentionRows of kernels/f32_attention_vector.h on
// VecNeon (kernels/neon/f32_vector_neon.h). Blocks of 8 query rows (two vectors); Q K^T 4 keys x 8
// rows, P V 4 rows x 8 columns per step (8 accumulators: fits AArch32's 16 q registers).
#include "kernels/f32_attention.h"
#include "kernels/f32_attention_vector.h"
#include "kernels/neon/f32_vector_neon.h"

namespace octet {

void f32_attention__neon(const AttentionParams& params, const float* q, size_t ldq, const float* k,
                         size_t ldk, const float* v, size_t ldv, float* out, size_t ldo,
                         float* scratch) {
  AttentionRows<VecNeon, 2, 4, 4, 2>(params, q, ldq, k, ldk, v, ldv, out, ldo, scratch);
}

}  // namespace octet
