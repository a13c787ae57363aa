// The reference of qs8_packed_gemm_f32: the definition, qs8_packed_gemm__ref
// then qs8_dequantize_rows__ref (kernels/qs8_packed_gemm.h).

#include "kernels/qs8_dequantize_rows.h"
#include "kernels/qs8_packed_gemm.h"

namespace octet {

void qs8_packed_gemm_f32__ref(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                              const int8_t* packed, const float* row_scales,
                              const float* col_scales, const float* bias, float* out,
                              size_t ldo) {
  const size_t kp = (K + kQs8PackedKGroup - 1) / kQs8PackedKGroup * kQs8PackedKGroup;
  const size_t tile_bytes = kQs8PackedCorrBytes + kQs8PackedNr * kp;  // qs8_packed_tile_bytes
  int32_t acc[kQs8PackedNr];  // one row of one packed tile
  for (size_t m = 0; m < M; ++m) {
    for (size_t n0 = 0; n0 < N; n0 += kQs8PackedNr) {
      const size_t n = N - n0 < kQs8PackedNr ? N - n0 : kQs8PackedNr;
      qs8_packed_gemm__ref(1, n, K, A + m * lda, lda, packed + n0 / kQs8PackedNr * tile_bytes,
                           acc, kQs8PackedNr);
      qs8_dequantize_rows__ref(1, n, acc, kQs8PackedNr, row_scales + m, col_scales + n0,
                               bias != nullptr ? bias + n0 : nullptr, out + m * ldo + n0, ldo);
    }
  }
}

}  // namespace octet
