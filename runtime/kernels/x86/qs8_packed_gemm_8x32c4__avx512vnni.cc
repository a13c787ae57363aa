// qs8_packed_gemm_8x32c4__avx512vnni: AVX512-VNNI variant of qs8_packed_gemm
// (contract in kernels/qs8_packed_gemm.h; the code, its tiling and its
// exactness argument in kernels/x86/qs8_packed_gemm_avx512vnni_tile.h).

#include "kernels/x86/qs8_packed_gemm_avx512vnni_tile.h"

namespace octet {

void qs8_packed_gemm_8x32c4__avx512vnni(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                                        const int8_t* packed, int32_t* C, size_t ldc) {
  const Dequant none{nullptr, nullptr, nullptr};
  if (M > 4 && K % kQs8PackedKGroup == 0) {
    InPlaceGemm<false>(M, N, K, A, lda, packed, C, ldc, none);
  } else if (M <= 4) {
    Gemm<1, 4, false>(M, N, K, A, lda, packed, C, ldc, none);  // one packed tile at a time
  } else {
    Gemm<2, kMr, false>(M, N, K, A, lda, packed, C, ldc, none);
  }
}

}  // namespace octet
