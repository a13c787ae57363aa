// f32_attention__avx2: AVX2 + FMA variant of f32_attention (contract and error bound in
// kernels/f32_attention.h): AttentionRows of kernels/f32_attention_vector.h on VecAvx2
// (kernels/x86/f32_vector_avx2.h). Blocks of 16 query rows (two vectors); Q K^T 4 keys x 16
// rows, P V 4 rows x 16 columns per step (8 accumulators of the 16 registers).
#include "kernels/f32_attention.h"
#include "kernels/f32_attention_vector.h"
#include "kernels/x86/f32_vector_avx2.h"

namespace octet {

void f32_attention__avx2(const AttentionParams& params, const float* q, size_t ldq, const float* k,
                         size_t ldk, const float* v, size_t ldv, float* out, size_t ldo,
                         float* scratch) {
  AttentionRows<VecAvx2, 2, 4, 4, 2>(params, q, ldq, k, ldk, v, ldv, out, ldo, scratch);
}

}  // namespace octet
