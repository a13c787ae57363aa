// qs8_packed_check__neon: NEON variant of qs8_packed_check (contract in
// kernels/qs8_packed_check.h), AArch64 and AArch32. A group row of a tile, 16
// channels x 4 k, is 4 q registers of 4 channels each; vpaddl adds the k pairs
// into int16 and vpadal adds the two pairs of a channel into its int32 lane of
// an accumulator, so each channel's sum builds up in one lane of 4 accumulators.
// Then corr + 128 * sum must be 0 in every lane; the few padding bytes are
// checked in scalar code.

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel_inline.h"
#include "kernels/qs8_packed_check.h"

namespace octet {
namespace {

// acc + the sums of the 4 channels (4 bytes each) at p.
OCTET_KERNEL_INLINE int32x4_t AddChannelSums4(int32x4_t acc, const int8_t* p) {
  return vpadalq_s16(acc, vpaddlq_s8(vld1q_s8(p)));
}

// corr + 128 * sum, 4 channels.
OCTET_KERNEL_INLINE uint32x4_t Diff4(const int8_t* corr, int32x4_t sum) {
  const int32x4_t c = vreinterpretq_s32_s8(vld1q_s8(corr));  // native-endian int32
  return vreinterpretq_u32_s32(vaddq_s32(c, vshlq_n_s32(sum, 7)));
}

}  // namespace

size_t qs8_packed_check__neon(size_t N, size_t K, const int8_t* packed) {
  const size_t groups = (K + kQs8PackedKGroup - 1) / kQs8PackedKGroup;
  const size_t tiles = (N + kQs8PackedNr - 1) / kQs8PackedNr;
  const size_t tile_bytes = Qs8PackedCheckTileBytes(K);
  const size_t group_bytes = kQs8PackedNr * kQs8PackedKGroup;  // 64
  for (size_t j = 0; j < tiles; ++j) {
    const int8_t* tile = packed + j * tile_bytes;
    const int8_t* w = tile + kQs8PackedCorrBytes;        // [groups][16][4]
    int32x4_t s0 = vdupq_n_s32(0), s1 = vdupq_n_s32(0);  // channels 0-3, 4-7
    int32x4_t s2 = vdupq_n_s32(0), s3 = vdupq_n_s32(0);  // channels 8-11, 12-15
    for (size_t g = 0; g < groups; ++g) {
      const int8_t* row = w + g * group_bytes;
      s0 = AddChannelSums4(s0, row);
      s1 = AddChannelSums4(s1, row + 16);
      s2 = AddChannelSums4(s2, row + 32);
      s3 = AddChannelSums4(s3, row + 48);
    }
    const uint32x4_t diff = vorrq_u32(vorrq_u32(Diff4(tile, s0), Diff4(tile + 16, s1)),
                                      vorrq_u32(Diff4(tile + 32, s2), Diff4(tile + 48, s3)));
    const uint32x2_t half = vorr_u32(vget_low_u32(diff), vget_high_u32(diff));
    if ((vget_lane_u32(half, 0) | vget_lane_u32(half, 1)) != 0) return j;
    if (!Qs8PackedTilePaddingIsZero(N, K, tile, j)) return j;
  }
  return tiles;
}

}  // namespace octet
