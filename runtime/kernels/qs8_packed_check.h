// qs8_packed_check: the load-time check of int8 weights packed in
// qs8_packed_gemm's layout (kernels/qs8_packed_gemm.h): are the tiles' derived
// bytes what qs8_pack_weights__ref writes?
//
//   corr[c] == -128 * sum_k w[.][c][.]     for every channel c < 16 of a tile
//   w[g][c][t] == 0                        for channels 16 j + c >= N and for
//                                          k = 4 g + t >= K (the padding)
//
//   packed: ceil(N / 16) tiles of qs8_packed_tile_bytes(K) bytes (any alignment)
//
// Returns the index of the first tile that fails either check, or the number of
// tiles, ceil(N / 16), when every tile passes. Every variant returns what the
// reference returns for any bytes, N >= 1 and 1 <= K <= kQs8GemmMaxK: a sum is
// at most 128 K <= 2^23 in magnitude, so 128 * sum fits int32, and corr +
// 128 * sum wrapped to 32 bits (the vector variants' test) is 0 only when
// corr == -128 * sum. The caller (format/loader.cc) describes a failing tile
// itself.
//
// The sums of a tile's channels are sums of each 4-byte lane over its groups:
// one vpdpbusd by 128 per 64-byte group row (AVX-512 VNNI), vpmaddubsw +
// vpmaddwd by ones (AVX2), vpaddl + vpadal (NEON). Calls: no state, no allocation.
//
// Kernel files include only compiler headers (see qs8_gemm.h).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel_inline.h"
#include "kernels/qs8_packed_gemm.h"

namespace octet {

typedef size_t (*Qs8PackedCheckFn)(size_t N, size_t K, const int8_t* packed);

// The reference: plain loops over every byte of every tile, the definition.
size_t qs8_packed_check__ref(size_t N, size_t K, const int8_t* packed);

// Optimized variants, named <op>__<isa>; kernel_table.cc lists them with the
// CPU features each needs. Call them only through the table, or after checking
// those features.
size_t qs8_packed_check__avx512vnni(size_t N, size_t K, const int8_t* packed);
size_t qs8_packed_check__avx2(size_t N, size_t K, const int8_t* packed);
size_t qs8_packed_check__neon(size_t N, size_t K, const int8_t* packed);

namespace {  // internal linkage per including file (kernels/qs8_gemm_driver.h, "Linkage")

// qs8_packed_tile_bytes(K), for the kernel files (which call no function outside them).
OCTET_KERNEL_INLINE size_t Qs8PackedCheckTileBytes(size_t K) {
  return kQs8PackedCorrBytes +
         kQs8PackedNr * ((K + kQs8PackedKGroup - 1) / kQs8PackedKGroup * kQs8PackedKGroup);
}

// Whether the padding bytes of tile j (k >= K in every channel's last group;
// channels >= N) are zero: the part of the check that reads few bytes, shared
// by the vector variants (the reference has its own loops).
OCTET_KERNEL_INLINE bool Qs8PackedTilePaddingIsZero(size_t N, size_t K, const int8_t* tile,
                                                    size_t j) {
  const size_t groups = (K + kQs8PackedKGroup - 1) / kQs8PackedKGroup;
  const size_t group_bytes = kQs8PackedNr * kQs8PackedKGroup;
  const int8_t* w = tile + kQs8PackedCorrBytes;               // [groups][16][4]
  int bits = 0;                                               // OR of the bytes that must be zero
  const size_t k_tail = K - (groups - 1) * kQs8PackedKGroup;  // 1..4 valid k in the last group
  if (k_tail < kQs8PackedKGroup) {
    const int8_t* last = w + (groups - 1) * group_bytes;
    for (size_t c = 0; c < kQs8PackedNr; ++c) {
      for (size_t t = k_tail; t < kQs8PackedKGroup; ++t) bits |= last[c * kQs8PackedKGroup + t];
    }
  }
  const size_t first = j * kQs8PackedNr;
  if (N - first < kQs8PackedNr) {  // the last tile: channels past N
    for (size_t g = 0; g < groups; ++g) {
      for (size_t c = N - first; c < kQs8PackedNr; ++c) {
        for (size_t t = 0; t < kQs8PackedKGroup; ++t) {
          bits |= w[g * group_bytes + c * kQs8PackedKGroup + t];
        }
      }
    }
  }
  return bits == 0;
}

}  // namespace

}  // namespace octet
