// The reference of qs8_packed_gemm: plain loops over the packed layout
// (kernels/qs8_packed_gemm.h); corr is not used.

#include "kernels/qs8_packed_gemm.h"

namespace octet {

void qs8_packed_gemm__ref(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                          const int8_t* packed, int32_t* C, size_t ldc) {
  const size_t kp = (K + kQs8PackedKGroup - 1) / kQs8PackedKGroup * kQs8PackedKGroup;
  const size_t tile_bytes = kQs8PackedCorrBytes + kQs8PackedNr * kp;  // qs8_packed_tile_bytes
  for (size_t m = 0; m < M; ++m) {
    const int8_t* a = A + m * lda;  // [K]
    for (size_t n = 0; n < N; ++n) {
      // [Kp / 4][16][4]: channel n's k of group g at w[(g * 16 + n % 16) * 4 ..]
      const int8_t* w = packed + n / kQs8PackedNr * tile_bytes + kQs8PackedCorrBytes;
      const size_t c = n % kQs8PackedNr;
      int32_t acc = 0;
      for (size_t k = 0; k < K; ++k) {
        const size_t g = k / kQs8PackedKGroup;
        const size_t t = k % kQs8PackedKGroup;
        acc += static_cast<int32_t>(a[k]) *
               static_cast<int32_t>(w[(g * kQs8PackedNr + c) * kQs8PackedKGroup + t]);
      }
      C[m * ldc + n] = acc;
    }
  }
}

}  // namespace octet
