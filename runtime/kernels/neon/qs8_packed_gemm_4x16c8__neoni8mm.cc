// qs8_packed_gemm_4x16c8__neoni8mm: Advanced SIMD + int8 matrix multiply (armv8.6
// i8mm) variant of qs8_packed_gemm (contract and layout in
// kernels/qs8_packed_gemm.h); aarch64 and AArch32. A is read in place.
//
// Tiling: tiles of C of 4 rows x 16 channels (one packed tile) on aarch64, 2 rows
// x 16 on AArch32 (16 q registers). vmmlaq_s32 (smmla) adds the 2x2 product of a
// 2x8 int8 block of A rows and a 2x8 block of weight rows (channels) to an
// int32x4 [r0c0, r0c1, r1c0, r1c1]: 8 k per instruction, twice sdot's work. A
// step covers 8 k, two groups of the packed layout: for each 4 channels, the two
// group rows (16 bytes each: 4 channels x 4 k) are interleaved by 32-bit lanes
// (vzipq_s32), which gives exactly the 2x8 blocks [c0 k0..7, c1 k0..7] and [c2
// k0..7, c3 k0..7]; the 8 bytes of k of each row of a row pair are combined into
// one 2x8 block. Per step and row pair: 8 weight loads, 4 zips, 8 smmla. The
// accumulators are 2x2 blocks [row pair][channel pair]; a row of C is the low
// (even row) or high (odd row) halves of its pair's 8 blocks, regrouped once
// after the k loop.
//
// Exactness: smmla multiplies int8 by int8 and adds 8 products (at most 8 * 2^14
// in magnitude) into each int32 lane without saturating; the accumulators hold
// partial sums of at most K * 2^14 <= 2^30. The packed corr is not used.
//
// Edges: the last K % 8 k are done first, from zero-padded 8-byte copies of the
// rows' bytes, against their 1 or 2 groups (a second group past the packed K is
// taken as zeros); with an odd row count the last pair's second row is zeros and
// is not stored; channels past N are computed (zero weights) and not stored.

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel_inline.h"
#include "kernels/qs8_packed_gemm.h"

namespace octet {
namespace {

constexpr size_t kNr = kQs8PackedNr;  // channels per packed tile = per tile of C
#if defined(__aarch64__)
constexpr size_t kMr = 4;  // 16 accumulators + 8 weight blocks + 2 A blocks
#else
constexpr size_t kMr = 2;  // 16 q registers: 8 accumulators + 4 weight blocks + 1 A block
#endif

// A missing row's 8 bytes, or a missing group row's 64.
alignas(16) constexpr int8_t kZeros[64] = {};

// The 2x8 weight blocks of channels (4q, 4q+1) and (4q+2, 4q+3) from two group
// rows g0, g1 (16 bytes each: channels 4q..4q+3 x 4 k).
OCTET_KERNEL_INLINE int32x4x2_t WeightBlocks(const int8_t* g0, const int8_t* g1) {
  return vzipq_s32(vreinterpretq_s32_s8(vld1q_s8(g0)), vreinterpretq_s32_s8(vld1q_s8(g1)));
}

// acc[p][0..7] += the row pairs' 2x8 blocks a[p] . the 8 k of the two group rows
// at w0, w1 ([16][4] each).
template <size_t kPairs>
OCTET_KERNEL_INLINE void Step(int32x4_t acc[kPairs][8], const int8x16_t a[kPairs],
                              const int8_t* w0, const int8_t* w1) {
#pragma GCC unroll 4
  for (size_t q = 0; q < 4; ++q) {
    const int32x4x2_t b = WeightBlocks(w0 + 16 * q, w1 + 16 * q);
#pragma GCC unroll 2
    for (size_t p = 0; p < kPairs; ++p) {
      acc[p][2 * q] = vmmlaq_s32(acc[p][2 * q], a[p], vreinterpretq_s8_s32(b.val[0]));
      acc[p][2 * q + 1] = vmmlaq_s32(acc[p][2 * q + 1], a[p], vreinterpretq_s8_s32(b.val[1]));
    }
  }
}

// The 2x8 block of rows x, y (8 bytes each).
OCTET_KERNEL_INLINE int8x16_t RowPair(const int8_t* x, const int8_t* y) {
  return vcombine_s8(vld1_s8(x), vld1_s8(y));
}

// Stores the first n (1..16) channels of one row: its halves (high: odd row) of
// the 8 blocks of its pair.
OCTET_KERNEL_INLINE void StoreRow(int32_t* c, const int32x4_t acc[8], bool high, size_t n) {
  int32x4_t row[4];
#pragma GCC unroll 4
  for (size_t q = 0; q < 4; ++q) {
    row[q] = high ? vcombine_s32(vget_high_s32(acc[2 * q]), vget_high_s32(acc[2 * q + 1]))
                  : vcombine_s32(vget_low_s32(acc[2 * q]), vget_low_s32(acc[2 * q + 1]));
  }
  if (n == kNr) {
#pragma GCC unroll 4
    for (size_t q = 0; q < 4; ++q) vst1q_s32(c + 4 * q, row[q]);
    return;
  }
  int32_t all[kNr];
#pragma GCC unroll 4
  for (size_t q = 0; q < 4; ++q) vst1q_s32(all + 4 * q, row[q]);
  for (size_t t = 0; t < n; ++t) c[t] = all[t];
}

// One tile of C: rows a[0..kRows-1] of A (stride lda) against the packed tile's
// weights w ([Kp / 4][16][4]), over all K; stores the first n channels of a row.
template <size_t kRows>
OCTET_KERNEL_INLINE void Tile(const int8_t* a, size_t lda, size_t K, const int8_t* w, int32_t* c,
                              size_t ldc, size_t n) {
  constexpr size_t kPairs = (kRows + 1) / 2;
  int32x4_t acc[kPairs][8];  // [row pair][channel pair]: 2x2 blocks
#pragma GCC unroll 2
  for (size_t p = 0; p < kPairs; ++p) {
#pragma GCC unroll 8
    for (size_t j = 0; j < 8; ++j) acc[p][j] = vdupq_n_s32(0);
  }
  // Row i's bytes, or zeros for the second row of an odd last pair.
  const int8_t* rows[2 * kPairs];
#pragma GCC unroll 4
  for (size_t i = 0; i < 2 * kPairs; ++i) rows[i] = i < kRows ? a + i * lda : nullptr;
  const size_t k_main = K - K % 8;  // read in place, 8 k per step
  if (k_main != K) {
    const size_t kp = (K + kQs8PackedKGroup - 1) / kQs8PackedKGroup * kQs8PackedKGroup;
    int8_t tail[2 * kPairs][8];  // [row]: A[i, k_main:K], zero-padded to 8
    int8x16_t at[kPairs];
#pragma GCC unroll 4
    for (size_t i = 0; i < 2 * kPairs; ++i) {
      for (size_t t = 0; t < 8; ++t) {
        tail[i][t] = rows[i] != nullptr && k_main + t < K ? rows[i][k_main + t] : 0;
      }
    }
#pragma GCC unroll 2
    for (size_t p = 0; p < kPairs; ++p) at[p] = RowPair(tail[2 * p], tail[2 * p + 1]);
    const int8_t* w0 = w + k_main * kNr;
    const int8_t* w1 = k_main + 4 < kp ? w0 + 4 * kNr : kZeros;  // past the packed K: zeros
    Step<kPairs>(acc, at, w0, w1);
  }
  for (size_t k = 0; k < k_main; k += 8) {
    int8x16_t ak[kPairs];  // [pair]: A[2p, k:k+8], A[2p+1, k:k+8]
#pragma GCC unroll 2
    for (size_t p = 0; p < kPairs; ++p) {
      ak[p] = RowPair(rows[2 * p] + k, rows[2 * p + 1] != nullptr ? rows[2 * p + 1] + k : kZeros);
    }
    Step<kPairs>(acc, ak, w + k * kNr, w + (k + 4) * kNr);
  }
#pragma GCC unroll 4
  for (size_t i = 0; i < kRows; ++i) StoreRow(c + i * ldc, acc[i / 2], i % 2 == 1, n);
}

}  // namespace

void qs8_packed_gemm_4x16c8__neoni8mm(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                                      const int8_t* packed, int32_t* C, size_t ldc) {
  const size_t kp = (K + kQs8PackedKGroup - 1) / kQs8PackedKGroup * kQs8PackedKGroup;
  const size_t tile_bytes = kQs8PackedCorrBytes + kNr * kp;
  for (size_t n0 = 0; n0 < N; n0 += kNr) {
    const size_t n = N - n0 < kNr ? N - n0 : kNr;
    const int8_t* w = packed + n0 / kNr * tile_bytes + kQs8PackedCorrBytes;  // [groups][16][4]
    for (size_t m0 = 0; m0 < M; m0 += kMr) {
      const int8_t* a = A + m0 * lda;
      int32_t* c = C + m0 * ldc + n0;
      const size_t mr = M - m0 < kMr ? M - m0 : kMr;
#if defined(__aarch64__)
      switch (mr) {
        case 1:
          Tile<1>(a, lda, K, w, c, ldc, n);
          break;
        case 2:
          Tile<2>(a, lda, K, w, c, ldc, n);
          break;
        case 3:
          Tile<3>(a, lda, K, w, c, ldc, n);
          break;
        default:
          Tile<4>(a, lda, K, w, c, ldc, n);
          break;
      }
#else
      if (mr == 1) {
        Tile<1>(a, lda, K, w, c, ldc, n);
      } else {
        Tile<2>(a, lda, K, w, c, ldc, n);
      }
#endif
    }
  }
}

}  // namespace octet
