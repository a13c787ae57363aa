// qs8_packed_gemm_f32_8x32c4__avx512vnni: AVX512-VNNI variant of qs8_packed_gemm_f32
// (contract in kernels/qs8_packed_gemm.h; the code, its tiling and its
// exactness argument in kernels/x86/qs8_packed_gemm_avx512vnni_tile.h).

#include "kernels/x86/qs8_packed_gemm_avx512vnni_tile.h"

namespace octet {

void qs8_packed_gemm_f32_8x32c4__avx512vnni(size_t M, size_t N, size_t K, const int8_t* A,
                                            size_t lda, const int8_t* packed,
                                            const float* row_scales, const float* col_scales,
                                            const float* bias, float* out, size_t ldo) {
  // The int32 partial sums of k blocks live in out's slots (same size).
  int32_t* C = reinterpret_cast<int32_t*>(out);
  const Dequant dq{row_scales, col_scales, bias};
  if (M > 4 && K % kQs8PackedKGroup == 0) {
    InPlaceGemm<true>(M, N, K, A, lda, packed, C, ldo, dq);
  } else {
    // M <= 4 (decoding), or a K that is not a multiple of 4 (no model's): row
    // tiles of up to 4 rows and one packed tile, the copy path's streaming tile.
    Gemm<1, 4, true>(M, N, K, A, lda, packed, C, ldo, dq);
  }
}

}  // namespace octet
