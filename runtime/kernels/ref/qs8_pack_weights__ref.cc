// The packed weight layout of qs8_packed_gemm (defined in kernels/qs8_packed_gemm.h):
// its sizes and the one function that writes it. Compiler headers only, like the
// kernels (scripts/android-compile-check.sh).

#include "kernels/qs8_packed_gemm.h"

namespace octet {

static_assert(kQs8PackedCorrBytes == kQs8PackedNr * sizeof(int32_t), "corr: one int32 per channel");
static_assert(kQs8PackedNr * kQs8PackedKGroup == 64, "a group row is one 64-byte line");

size_t qs8_packed_tile_bytes(size_t K) {
  const size_t kp = (K + kQs8PackedKGroup - 1) / kQs8PackedKGroup * kQs8PackedKGroup;
  return kQs8PackedCorrBytes + kQs8PackedNr * kp;
}

size_t qs8_pack_weights_size(size_t N, size_t K) {
  return (N + kQs8PackedNr - 1) / kQs8PackedNr * qs8_packed_tile_bytes(K);
}

void qs8_pack_weights__ref(size_t N, size_t K, const int8_t* B, size_t ldb, int8_t* packed) {
  const size_t groups = (K + kQs8PackedKGroup - 1) / kQs8PackedKGroup;
  const size_t tile_bytes = qs8_packed_tile_bytes(K);
  for (size_t n0 = 0; n0 < N; n0 += kQs8PackedNr) {
    int8_t* tile = packed + n0 / kQs8PackedNr * tile_bytes;
    int32_t corr[kQs8PackedNr];              // [channel]
    int8_t* w = tile + kQs8PackedCorrBytes;  // [groups][16][4]
    for (size_t c = 0; c < kQs8PackedNr; ++c) {
      const size_t n = n0 + c;
      int32_t sum = 0;
      for (size_t g = 0; g < groups; ++g) {
        for (size_t t = 0; t < kQs8PackedKGroup; ++t) {
          const size_t k = g * kQs8PackedKGroup + t;
          const int8_t v = n < N && k < K ? B[n * ldb + k] : 0;
          w[(g * kQs8PackedNr + c) * kQs8PackedKGroup + t] = v;
          sum += v;
        }
      }
      corr[c] = -128 * sum;  // |sum| <= 128 K <= 2^23: no overflow
    }
    __builtin_memcpy(tile, corr, sizeof(corr));  // native-endian int32
  }
}

}  // namespace octet
