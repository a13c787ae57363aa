#include "kernels/qu8s8_pv.h"

namespace octet {

void qu8s8_pv__ref(size_t M, size_t N, size_t K, const uint8_t* A, size_t lda, const int8_t* B,
                   size_t ldb, int32_t* C, size_t ldc) {
  for (size_t m = 0; m < M; ++m) {
    const uint8_t* a = A + m * lda;  // [K]
    int32_t* c = C + m * ldc;        // [N]
    for (size_t n = 0; n < N; ++n) {
      int32_t acc = 0;
      for (size_t k = 0; k < K; ++k) {
        acc += static_cast<int32_t>(a[k]) * static_cast<int32_t>(B[k * ldb + n]);
      }
      c[n] = acc;
    }
  }
}

}  // namespace octet
