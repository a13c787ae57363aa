// qs8_packed_gemm_4x16c4__neondot: Advanced SIMD + dot product (armv8.2
// dotprod) variant of qs8_packed_gemm (contract and layout in
// kernels/qs8_packed_gemm.h); aarch64 and AArch32. A is read in place; no copies.
//
// Tiling: tiles of C of 4 rows x 16 channels (one packed tile) on aarch64, 2 rows
// x 16 on AArch32 (16 q registers). A step takes 16 k of A: one q-register load
// per row (4 groups of 4 k), and per group 4 q loads of weights (the group row:
// 4 channels x 4 k each) and, per row, 4 sdot by lane (vdotq_lane(q)_s32): every
// int32 lane of an accumulator adds the 4 products of one channel, so the 4
// accumulators of a row are its 16 channels of C, stored as they are.
//
// Exactness: sdot multiplies int8 by int8, as the packed weights and A are, and
// adds the 4 products (at most 2^16 in magnitude) into the int32 lane without
// saturating; the accumulators hold partial sums of at most K * 2^14 <= 2^30. The
// packed corr (for unsigned x signed instructions) is not used.
//
// Edges: the last K % 16 k are done first, from a zero-padded 16-byte copy of
// each row's bytes, over the 1..4 groups they fill (the weights past K are zero);
// rows past M are not computed (a tile is compiled for each row count); channels
// past N are computed (zero weights) and not stored.
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

constexpr size_t kNr = kQs8PackedNr;  // channels per packed tile = per tile of C
#if defined(__aarch64__)
constexpr size_t kMr = 4;  // rows of A per tile of C: 16 accumulators + 8 operands
#else
constexpr size_t kMr = 2;  // 16 q registers: 8 accumulators + 6 operands
#endif

// acc[0..3] += the group at w (16 channels x 4 k) . the 4 bytes of group kLane of a.
template <int kLane>
OCTET_KERNEL_INLINE void Dot(int32x4_t acc[4], const int8x16_t b[4], int8x16_t a) {
#if defined(__aarch64__)
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) acc[j] = vdotq_laneq_s32(acc[j], b[j], a, kLane);
#else
  const int8x8_t half = kLane < 2 ? vget_low_s8(a) : vget_high_s8(a);
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) acc[j] = vdotq_lane_s32(acc[j], b[j], half, kLane % 2);
#endif
}

// One group (kLane of the 16 k in a[i]) for every row.
//
// The empty asm (a compiler barrier: no instruction) keeps GCC 12 from loading
// the weights of all 4 groups of a step before their sdots: 16 weight registers
// + 16 accumulators + A overflow the 32 vector registers, and the 4-row loop
// then kept one accumulator on the stack (a load, 2 moves and a store per step;
// 34 cycles instead of 32 per step in llvm-mca's Neoverse N1 = Cortex-A76 model,
// scripts/arm-mca.sh).
template <size_t kRows, int kLane>
OCTET_KERNEL_INLINE void Group(int32x4_t acc[kRows][4], const int8_t* w, const int8x16_t a[kRows]) {
  __asm__("" ::: "memory");
  const int8x16_t b[4] = {vld1q_s8(w), vld1q_s8(w + 16), vld1q_s8(w + 32), vld1q_s8(w + 48)};
#pragma GCC unroll 4
  for (size_t i = 0; i < kRows; ++i) Dot<kLane>(acc[i], b, a[i]);
}

// Stores the first n (1..16) channels of a row.
OCTET_KERNEL_INLINE void StoreRow(int32_t* c, const int32x4_t acc[4], size_t n) {
  if (n == kNr) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) vst1q_s32(c + 4 * j, acc[j]);
    return;
  }
  int32_t row[kNr];
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) vst1q_s32(row + 4 * j, acc[j]);
  for (size_t t = 0; t < n; ++t) c[t] = row[t];
}

// One tile of C: rows a[0..kRows-1] of A (stride lda) against the packed tile's
// weights w ([groups][16][4]), over all K; stores the first n channels of a row.
template <size_t kRows>
OCTET_KERNEL_INLINE void Tile(const int8_t* a, size_t lda, size_t K, const int8_t* w, int32_t* c,
                              size_t ldc, size_t n) {
  int32x4_t acc[kRows][4];  // [row][channels 4j..4j+3]
#pragma GCC unroll 4
  for (size_t i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) acc[i][j] = vdupq_n_s32(0);
  }
  const size_t k_main = K - K % 16;  // read in place, 16 k per step
  if (k_main != K) {
    int8x16_t at[kRows];  // [row]: A[i, k_main:K], zero-padded to 16
#pragma GCC unroll 4
    for (size_t i = 0; i < kRows; ++i) {
      int8_t tail[16] = {};
      for (size_t t = 0; t < K - k_main; ++t) tail[t] = a[i * lda + k_main + t];
      at[i] = vld1q_s8(tail);
    }
    const int8_t* wt = w + k_main * kNr;  // the 1..4 groups of the tail
    const size_t groups = (K - k_main + 3) / 4;
    Group<kRows, 0>(acc, wt, at);
    if (groups > 1) Group<kRows, 1>(acc, wt + 64, at);
    if (groups > 2) Group<kRows, 2>(acc, wt + 128, at);
    if (groups > 3) Group<kRows, 3>(acc, wt + 192, at);
  }
  for (size_t k = 0; k < k_main; k += 16) {
    int8x16_t ak[kRows];  // [row]: A[i, k:k+16]
#pragma GCC unroll 4
    for (size_t i = 0; i < kRows; ++i) ak[i] = vld1q_s8(a + i * lda + k);
    const int8_t* wk = w + k * kNr;
    Group<kRows, 0>(acc, wk, ak);
    Group<kRows, 1>(acc, wk + 64, ak);
    Group<kRows, 2>(acc, wk + 128, ak);
    Group<kRows, 3>(acc, wk + 192, ak);
  }
#pragma GCC unroll 4
  for (size_t i = 0; i < kRows; ++i) StoreRow(c + i * ldc, acc[i], n);
}

}  // namespace

void qs8_packed_gemm_4x16c4__neondot(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
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
