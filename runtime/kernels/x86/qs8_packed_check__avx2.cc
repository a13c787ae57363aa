// qs8_packed_check__avx2: AVX2 variant of qs8_packed_check (contract in
// kernels/qs8_packed_check.h). A group row of a tile, 16 channels x 4 k, is 2
// ymm; vpmaddubsw by ones (unsigned 1 x signed byte) adds the k pairs into
// int16 (at most 2 x 128 in magnitude: no saturation), vpmaddwd by ones adds
// the two pairs of a channel into its int32 lane, so each channel's sum builds
// up in one lane of 2 accumulators (channels 0-7, 8-15), 2 more for odd groups
// to shorten the dependency chains. Then corr + 128 * sum must be 0 in every
// lane; the few padding bytes are checked in scalar code.

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel_inline.h"
#include "kernels/qs8_packed_check.h"

namespace octet {
namespace {

// The 8 channel sums of one 32-byte half group row at p.
OCTET_KERNEL_INLINE __m256i ChannelSums8(const int8_t* p, __m256i ones8, __m256i ones16) {
  const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, w), ones16);
}

}  // namespace

size_t qs8_packed_check__avx2(size_t N, size_t K, const int8_t* packed) {
  const size_t groups = (K + kQs8PackedKGroup - 1) / kQs8PackedKGroup;
  const size_t tiles = (N + kQs8PackedNr - 1) / kQs8PackedNr;
  const size_t tile_bytes = Qs8PackedCheckTileBytes(K);
  const size_t group_bytes = kQs8PackedNr * kQs8PackedKGroup;  // 64
  const __m256i ones8 = _mm256_set1_epi8(1);
  const __m256i ones16 = _mm256_set1_epi16(1);
  for (size_t j = 0; j < tiles; ++j) {
    const int8_t* tile = packed + j * tile_bytes;
    const int8_t* w = tile + kQs8PackedCorrBytes;                        // [groups][16][4]
    __m256i lo0 = _mm256_setzero_si256(), hi0 = _mm256_setzero_si256();  // channels 0-7, 8-15
    __m256i lo1 = _mm256_setzero_si256(), hi1 = _mm256_setzero_si256();
    size_t g = 0;
    for (; g + 2 <= groups; g += 2) {
      const int8_t* row = w + g * group_bytes;
      lo0 = _mm256_add_epi32(lo0, ChannelSums8(row, ones8, ones16));
      hi0 = _mm256_add_epi32(hi0, ChannelSums8(row + 32, ones8, ones16));
      lo1 = _mm256_add_epi32(lo1, ChannelSums8(row + group_bytes, ones8, ones16));
      hi1 = _mm256_add_epi32(hi1, ChannelSums8(row + group_bytes + 32, ones8, ones16));
    }
    if (g < groups) {
      const int8_t* row = w + g * group_bytes;
      lo0 = _mm256_add_epi32(lo0, ChannelSums8(row, ones8, ones16));
      hi0 = _mm256_add_epi32(hi0, ChannelSums8(row + 32, ones8, ones16));
    }
    const __m256i lo = _mm256_add_epi32(lo0, lo1), hi = _mm256_add_epi32(hi0, hi1);
    const __m256i corr_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile));
    const __m256i corr_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile + 32));
    const __m256i diff = _mm256_or_si256(_mm256_add_epi32(corr_lo, _mm256_slli_epi32(lo, 7)),
                                         _mm256_add_epi32(corr_hi, _mm256_slli_epi32(hi, 7)));
    if (!_mm256_testz_si256(diff, diff)) return j;
    if (!Qs8PackedTilePaddingIsZero(N, K, tile, j)) return j;
  }
  return tiles;
}

}  // namespace octet
