#include "kernels/qs8_gemm.h"

namespace octet {

void qs8_gemm__ref(size_t M, size_t N, size_t K, const int8_t* A, size_t lda, const int8_t* B,
                   size_t ldb, int32_t* C, size_t ldc) {
  for (size_t m = 0; m < M; ++m) {
    const int8_t* a = A + m * lda;  // [K]
    for (size_t n = 0; n < N; ++n) {
      const int8_t* b = B + n * ldb;  // [K]
      int32_t acc = 0;
      for (size_t k = 0; k < K; ++k) acc += static_cast<int32_t>(a[k]) * static_cast<int32_t>(b[k]);
      C[m * ldc + n] = acc;
    }
  }
}

}  // namespace octet
