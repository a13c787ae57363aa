// qs8_packed_check__ref: the definition of qs8_packed_check (kernels/qs8_packed_check.h),
// one tile at a time: each channel's sum over every byte of its groups, the
// padding's bytes ORed, then the comparisons.

#include "kernels/qs8_packed_check.h"

namespace octet {

size_t qs8_packed_check__ref(size_t N, size_t K, const int8_t* packed) {
  const size_t groups = (K + kQs8PackedKGroup - 1) / kQs8PackedKGroup;
  const size_t tiles = (N + kQs8PackedNr - 1) / kQs8PackedNr;
  const size_t tile_bytes = Qs8PackedCheckTileBytes(K);
  for (size_t j = 0; j < tiles; ++j) {
    const int8_t* tile = packed + j * tile_bytes;
    const int8_t* w = tile + kQs8PackedCorrBytes;  // [groups][16][4]
    int padding = 0;                               // OR of the bytes that must be zero
    for (size_t c = 0; c < kQs8PackedNr; ++c) {
      const bool channel_valid = j * kQs8PackedNr + c < N;
      int32_t sum = 0;
      for (size_t g = 0; g < groups; ++g) {
        for (size_t t = 0; t < kQs8PackedKGroup; ++t) {
          const int8_t v = w[(g * kQs8PackedNr + c) * kQs8PackedKGroup + t];
          sum += v;
          if (!channel_valid || g * kQs8PackedKGroup + t >= K) padding |= v;
        }
      }
      int32_t corr;
      __builtin_memcpy(&corr, tile + c * sizeof(int32_t), sizeof(corr));  // native-endian
      if (corr != -128 * sum) return j;
    }
    if (padding != 0) return j;
  }
  return tiles;
}

}  // namespace octet
