// f32_attention__avx512: AVX-512 (F, BW, VL) variant of f32_attention (contract and error bound in
// kernels/f32_attention.h): AttentionRows of kernels/f32_attention_vector.h on VecAvx512
// (kernels/x86/f32_vector_avx512.h). Blocks of 32 query rows (two vectors); Q K^T 8 keys x 32
// rows, P V 4 rows x 64 columns per step (16 accumulators of the 32 registers).
#include "kernels/f32_attention.h"
#include "kernels/f32_attention_vector.h"
#include "kernels/x86/f32_vector_avx512.h"

namespace octet {

void f32_attention__avx512(const AttentionParams& params, const float* q, size_t ldq,
                           const float* k, size_t ldk, const float* v, size_t ldv, float* out,
                           size_t ldo, float* scratch) {
  AttentionRows<VecAvx512, 2, 8, 4, 4>(params, q, ldq, k, ldk, v, ldv, out, ldo, scratch);
}

}  // namespace octet
