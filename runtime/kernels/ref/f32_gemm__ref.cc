#include "kernels/f32_gemm.h"

namespace octet {

void f32_gemm__ref(size_t M, size_t N, size_t K, const float* A, size_t lda, const float* B,
                   size_t ldb, float* C, size_t ldc) {
  for (size_t m = 0; m < M; ++m) {
    const float* a = A + m * lda;  // [K]
    for (size_t n = 0; n < N; ++n) {
      const float* b = B + n * ldb;  // [K]
      float acc = 0.0f;
      for (size_t k = 0; k < K; ++k) acc += a[k] * b[k];
      C[m * ldc + n] = acc;
    }
  }
}

}  // namespace octet
