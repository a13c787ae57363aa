// qs8_packed_check__avx512vnni: AVX-512 VNNI variant of qs8_packed_check
// (contract in kernels/qs8_packed_check.h). A group row of a tile, 16 channels
// x 4 k, is one zmm, and vpdpbusd by 128 (unsigned 128 x signed byte, 4 products
// added into each int32 lane) adds 128 x a channel's 4 bytes into its lane: in 2
// accumulators (even and odd groups, to halve the dependency chain), the first
// starting from corr, each lane builds up corr + 128 * sum (wrapped to 32 bits),
// which must be 0. The few padding bytes are checked in scalar code.

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel_inline.h"
#include "kernels/qs8_packed_check.h"

namespace octet {

size_t qs8_packed_check__avx512vnni(size_t N, size_t K, const int8_t* packed) {
  const size_t groups = (K + kQs8PackedKGroup - 1) / kQs8PackedKGroup;
  const size_t tiles = (N + kQs8PackedNr - 1) / kQs8PackedNr;
  const size_t tile_bytes = Qs8PackedCheckTileBytes(K);
  const size_t group_bytes = kQs8PackedNr * kQs8PackedKGroup;      // 64
  const __m512i u128 = _mm512_set1_epi8(static_cast<char>(0x80));  // unsigned 128
  for (size_t j = 0; j < tiles; ++j) {
    const int8_t* tile = packed + j * tile_bytes;
    const int8_t* w = tile + kQs8PackedCorrBytes;                            // [groups][16][4]
    __m512i acc0 = _mm512_loadu_si512(tile), acc1 = _mm512_setzero_si512();  // corr, 0
    size_t g = 0;
    for (; g + 2 <= groups; g += 2) {
      acc0 = _mm512_dpbusd_epi32(acc0, u128, _mm512_loadu_si512(w + g * group_bytes));
      acc1 = _mm512_dpbusd_epi32(acc1, u128, _mm512_loadu_si512(w + (g + 1) * group_bytes));
    }
    if (g < groups) acc0 = _mm512_dpbusd_epi32(acc0, u128, _mm512_loadu_si512(w + g * group_bytes));
    const __m512i diff = _mm512_add_epi32(acc0, acc1);
    if (_mm512_test_epi32_mask(diff, diff) != 0) return j;
    if (!Qs8PackedTilePaddingIsZero(N, K, tile, j)) return j;
  }
  return tiles;
}

}  // namespace octet
