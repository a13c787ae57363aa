// qs8_packed_gemm_4x8c4__neon: baseline Advanced SIMD variant of
// qs8_packed_gemm (contract and layout in kernels/qs8_packed_gemm.h); armv7 NEON
// and aarch64 alike. A is read in place; no copies.
//
// Tiling: tiles of C of 4 rows x 8 channels (half a packed tile: the first or
// last 32 bytes of each group row) on aarch64, 2 rows x 8 on AArch32 (16 q
// registers). A step takes one group of 4 k: 2 q loads of weights (4 channels x
// 4 k each); per row, the group's 4 bytes of A duplicated ([a0 a1 a2 a3] x 4),
// and per weight register 2 vmull_s8 (smull, smull2; 8 products each: 2
// channels x 4 k, to int16) folded into an int32x4 accumulator by vpadalq_s16,
// which adds k pairs: lanes (channel c, k 0-1), (c, k 2-3), (c + 1, ..). So each
// channel has 2 lanes, added once per tile (vpadd), after the k loop.
//
// Exactness: every int16 product is at most 128 * 128 = 2^14 in magnitude, so it
// is exact in int16, and vpadalq_s16 widens before adding. vmlal_s8 (products
// accumulated in int16) is not used: two products of -128 * -128 would already
// overflow int16. The accumulators hold partial sums of at most K * 2^14 <= 2^30.
// The packed corr (for unsigned x signed instructions) is not used.
//
// Edges: the last group of k (K % 4 != 0) is done first, from a zero-padded copy
// of its 1..3 bytes of A (the weights past K are zero); rows past M are not
// computed (a tile is compiled for each row count); channels past N are computed
// (zero weights) and not stored.
//
// Code shape, for GCC 12: the accumulators are an array, kept in registers only
// because every loop over rows or channels is unrolled (#pragma GCC unroll).

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel_inline.h"
#include "kernels/qs8_packed_gemm.h"

namespace octet {
namespace {

constexpr size_t kNr = kQs8PackedNr;  // channels per packed tile
constexpr size_t kHalf = 8;           // channels per tile of C
#if defined(__aarch64__)
constexpr size_t kMr = 4;  // rows of A per tile of C: 16 accumulators
#else
constexpr size_t kMr = 2;  // 16 q registers: 8 accumulators + operands
#endif

// [a0 a1 a2 a3] x 4 from the 4 bytes at p (any alignment).
OCTET_KERNEL_INLINE int8x16_t DupA(const int8_t* p) {
  int32_t v;
  __builtin_memcpy(&v, p, sizeof(v));
  return vreinterpretq_s8_s32(vdupq_n_s32(v));
}

// The 8 int16 products of the high halves of b and a (2 channels x 4 k).
OCTET_KERNEL_INLINE int16x8_t MulHigh(int8x16_t b, int8x16_t a) {
#if defined(__aarch64__)
  return vmull_high_s8(b, a);  // smull2: no move of the high halves
#else
  return vmull_s8(vget_high_s8(b), vget_high_s8(a));
#endif
}

// acc[i][0..3] += (4 bytes at a[i]) . the 8 channels at w (2 q registers).
template <size_t kRows>
OCTET_KERNEL_INLINE void Step(const int8_t* const a[kRows], const int8_t* w,
                              int32x4_t acc[kRows][4]) {
  const int8x16_t b0 = vld1q_s8(w);       // channels 0..3 x 4 k
  const int8x16_t b1 = vld1q_s8(w + 16);  // channels 4..7 x 4 k
#pragma GCC unroll 4
  for (size_t i = 0; i < kRows; ++i) {
    const int8x16_t va = DupA(a[i]);
    acc[i][0] = vpadalq_s16(acc[i][0], vmull_s8(vget_low_s8(b0), vget_low_s8(va)));
    acc[i][1] = vpadalq_s16(acc[i][1], MulHigh(b0, va));
    acc[i][2] = vpadalq_s16(acc[i][2], vmull_s8(vget_low_s8(b1), vget_low_s8(va)));
    acc[i][3] = vpadalq_s16(acc[i][3], MulHigh(b1, va));
  }
}

// [c0 c1 c2 c3] from x = (c0, c0, c1, c1) and y = (c2, c2, c3, c3) lane pairs.
OCTET_KERNEL_INLINE int32x4_t AddPairs(int32x4_t x, int32x4_t y) {
#if defined(__aarch64__)
  return vpaddq_s32(x, y);
#else
  return vcombine_s32(vpadd_s32(vget_low_s32(x), vget_high_s32(x)),
                      vpadd_s32(vget_low_s32(y), vget_high_s32(y)));
#endif
}

// Stores the first n (1..8) channels of a row.
OCTET_KERNEL_INLINE void StoreRow(int32_t* c, const int32x4_t acc[4], size_t n) {
  const int32x4_t lo = AddPairs(acc[0], acc[1]);  // channels 0..3
  const int32x4_t hi = AddPairs(acc[2], acc[3]);  // channels 4..7
  if (n == kHalf) {
    vst1q_s32(c, lo);
    vst1q_s32(c + 4, hi);
    return;
  }
  int32_t row[kHalf];
  vst1q_s32(row, lo);
  vst1q_s32(row + 4, hi);
  for (size_t t = 0; t < n; ++t) c[t] = row[t];
}

// One tile of C: rows a[0..kRows-1] of A (stride lda) against the 8 channels at
// w ([groups][16][4] of one packed tile, from its first or second half), over
// all K; stores the first n (1..8) channels of each row.
template <size_t kRows>
OCTET_KERNEL_INLINE void Tile(const int8_t* a, size_t lda, size_t K, const int8_t* w, int32_t* c,
                              size_t ldc, size_t n) {
  int32x4_t acc[kRows][4];  // [row][channel pair]: 2 lanes (k pairs) per channel
#pragma GCC unroll 4
  for (size_t i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) acc[i][j] = vdupq_n_s32(0);
  }
  const size_t full = K / 4;  // groups of 4 k of A
  if (K % 4 != 0) {
    int8_t tail[kRows][4] = {};  // [row]: the last K % 4 k of A, zero-padded
    const int8_t* rows[kRows];
#pragma GCC unroll 4
    for (size_t i = 0; i < kRows; ++i) {
      for (size_t t = 0; t < K % 4; ++t) tail[i][t] = a[i * lda + 4 * full + t];
      rows[i] = tail[i];
    }
    Step<kRows>(rows, w + full * 64, acc);
  }
  for (size_t g = 0; g < full; ++g) {
    const int8_t* rows[kRows];
#pragma GCC unroll 4
    for (size_t i = 0; i < kRows; ++i) rows[i] = a + i * lda + 4 * g;
    Step<kRows>(rows, w + g * 64, acc);
  }
#pragma GCC unroll 4
  for (size_t i = 0; i < kRows; ++i) StoreRow(c + i * ldc, acc[i], n);
}

}  // namespace

void qs8_packed_gemm_4x8c4__neon(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                                 const int8_t* packed, int32_t* C, size_t ldc) {
  const size_t kp = (K + kQs8PackedKGroup - 1) / kQs8PackedKGroup * kQs8PackedKGroup;
  const size_t tile_bytes = kQs8PackedCorrBytes + kNr * kp;
  for (size_t n0 = 0; n0 < N; n0 += kHalf) {
    const size_t n = N - n0 < kHalf ? N - n0 : kHalf;
    // [groups][16][4] of packed tile n0 / 16, from channel n0 % 16 (0 or 8).
    const int8_t* w = packed + n0 / kNr * tile_bytes + kQs8PackedCorrBytes + n0 % kNr * 4;
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
