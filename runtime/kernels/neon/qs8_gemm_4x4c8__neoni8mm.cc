// qs8_gemm_4x4c8__neoni8mm: Advanced SIMD + int8 matrix multiply (armv8.6 i8mm)
// variant of qs8_gemm (contract in kernels/qs8_gemm.h); aarch64 and AArch32.
//
// Tiling: C is computed in tiles of up to 4 rows of A against 4 rows of B.
// vmmlaq_s32 (smmla) takes a 2x8 int8 block of A rows and a 2x8 block of B rows
// and adds their 2x2 product to an int32x4 [r0c0, r0c1, r1c0, r1c1]: 8 k per
// instruction. A step covers 16 k: the q loads of rows (0, 1) and (2, 3) of A and
// of B are regrouped into 2x8 blocks (low and high halves), and 8 smmla update
// the 4 accumulators of the tile's 2x2 blocks. The accumulators already hold
// finished sums; only a regrouping of their halves is left after the k loop. A
// last row tile of 1 or 2 rows is compiled for one row pair, so M = 1 (decoding
// one token) does half the work of a 4-row tile.
//
// Exactness: smmla multiplies int8 by int8 and adds 8 products (at most 8 * 2^14
// in magnitude) to each int32 lane without saturating; the accumulators hold
// partial sums of at most K * 2^14 <= 2^30.
//
// Edges: rows past M (in a row pair) or N repeat a valid row (results dropped),
// so every load stays inside A and B. The last K % 16 values of k are copied into
// zero-padded 16-byte stack buffers; zeros add nothing.
//
// Code shape, for GCC 12: accumulators are named struct members (arrays of them
// are not kept in registers) and the tail step comes before the k loop (after
// it, accumulators get copied around the multiplies of the loop).

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/qs8_gemm.h"

namespace octet {
namespace {

constexpr size_t kMr = 4;   // rows of A per tile
constexpr size_t kNr = 4;   // rows of B (columns of C) per tile
constexpr size_t kKc = 16;  // k per step (two smmla k-blocks of 8)

// The four 2x2 blocks of a tile: rows (0, 1) or (2, 3) by columns (0, 1) or (2, 3),
// each [r0c0, r0c1, r1c0, r1c1].
struct TileAcc {
  int32x4_t r01c01, r01c23, r23c01, r23c23;
};

// Rows x and y (16 k from k) regrouped into 2x8 blocks: lo = [x k0..7, y k0..7],
// hi = [x k8..15, y k8..15].
struct Blocks {
  int8x16_t lo, hi;
};

__attribute__((always_inline)) inline Blocks LoadBlocks(const int8_t* x, const int8_t* y,
                                                        size_t k) {
  const int8x16_t vx = vld1q_s8(x + k);
  const int8x16_t vy = vld1q_s8(y + k);
#if defined(__aarch64__)
  // zip1/zip2 of the 64-bit halves: one instruction each.
  const int64x2_t x64 = vreinterpretq_s64_s8(vx);
  const int64x2_t y64 = vreinterpretq_s64_s8(vy);
  return {vreinterpretq_s8_s64(vzip1q_s64(x64, y64)), vreinterpretq_s8_s64(vzip2q_s64(x64, y64))};
#else
  // AArch32: a q register is a pair of d registers, so these are register moves.
  return {vcombine_s8(vget_low_s8(vx), vget_low_s8(vy)),
          vcombine_s8(vget_high_s8(vx), vget_high_s8(vy))};
#endif
}

// acc += the 2x2 products of 16 k.
__attribute__((always_inline)) inline int32x4_t Mmla16(int32x4_t acc, const Blocks& a,
                                                       const Blocks& b) {
  return vmmlaq_s32(vmmlaq_s32(acc, a.lo, b.lo), a.hi, b.hi);
}

// One step: 16 k from k of kPairs row pairs a[0..2*kPairs-1] against rows b[0..3].
template <size_t kPairs>
__attribute__((always_inline)) inline void Step(const int8_t* const a[kMr],
                                                const int8_t* const b[kNr], size_t k,
                                                TileAcc& acc) {
  const Blocks b01 = LoadBlocks(b[0], b[1], k);
  const Blocks b23 = LoadBlocks(b[2], b[3], k);
  const Blocks a01 = LoadBlocks(a[0], a[1], k);
  acc.r01c01 = Mmla16(acc.r01c01, a01, b01);
  acc.r01c23 = Mmla16(acc.r01c23, a01, b23);
  if (kPairs > 1) {
    const Blocks a23 = LoadBlocks(a[2], a[3], k);
    acc.r23c01 = Mmla16(acc.r23c01, a23, b01);
    acc.r23c23 = Mmla16(acc.r23c23, a23, b23);
  }
}

// Copies k in [k0, k0 + count) of rows[0..n-1] into zero-padded 16-byte rows.
__attribute__((always_inline)) inline void CopyTail(const int8_t* const rows[4], size_t n,
                                                    size_t k0, size_t count, int8_t tail[4][kKc]) {
  for (size_t r = 0; r < n; ++r) {
    for (size_t t = 0; t < kKc; ++t) tail[r][t] = t < count ? rows[r][k0 + t] : 0;
  }
}

// Stores the first n (1..4) int32 of v to c.
__attribute__((always_inline)) inline void StoreRow(int32_t* c, int32x4_t v, size_t n) {
  if (n == 4) {
    vst1q_s32(c, v);
    return;
  }
  int32x2_t part = vget_low_s32(v);
  if (n & 2) {
    vst1_s32(c, part);
    part = vget_high_s32(v);
    c += 2;
  }
  if (n & 1) vst1_lane_s32(c, part, 0);
}

// One tile of kPairs row pairs of A (a[0..2*kPairs-1]) against 4 rows of B:
// rows[i] = C[i, 0..3] for i < 2 * kPairs. bt: B's zero-padded tails.
template <size_t kPairs>
__attribute__((always_inline)) inline void Tile(const int8_t* const a[kMr],
                                                const int8_t* const b[kNr],
                                                const int8_t* const bt[kNr], size_t k_main,
                                                size_t k_rem, int32x4_t rows[kMr]) {
  const int32x4_t zero = vdupq_n_s32(0);
  TileAcc acc = {zero, zero, zero, zero};
  if (k_rem != 0) {
    int8_t a_tail[kMr][kKc];  // [row, k]: A[i, k_main:K], zero-padded
    CopyTail(a, 2 * kPairs, k_main, k_rem, a_tail);
    const int8_t* const at[kMr] = {a_tail[0], a_tail[1], a_tail[2], a_tail[3]};
    Step<kPairs>(at, bt, 0, acc);
  }
  for (size_t k = 0; k < k_main; k += kKc) Step<kPairs>(a, b, k, acc);
  // Row r of a pair: the r-th halves of its (0, 1) and (2, 3) column blocks.
  rows[0] = vcombine_s32(vget_low_s32(acc.r01c01), vget_low_s32(acc.r01c23));
  rows[1] = vcombine_s32(vget_high_s32(acc.r01c01), vget_high_s32(acc.r01c23));
  if (kPairs > 1) {
    rows[2] = vcombine_s32(vget_low_s32(acc.r23c01), vget_low_s32(acc.r23c23));
    rows[3] = vcombine_s32(vget_high_s32(acc.r23c01), vget_high_s32(acc.r23c23));
  }
}

}  // namespace

void qs8_gemm_4x4c8__neoni8mm(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                              const int8_t* B, size_t ldb, int32_t* C, size_t ldc) {
  const size_t k_main = K - K % kKc;  // k read in place from A and B
  const size_t k_rem = K % kKc;       // k read from the zero-padded copies
  for (size_t n0 = 0; n0 < N; n0 += kNr) {
    const size_t nr = N - n0 < kNr ? N - n0 : kNr;
    const int8_t* b[kNr];  // rows n0.. of B; past N, the last row again
    for (size_t j = 0; j < kNr; ++j) b[j] = B + (n0 + (j < nr ? j : nr - 1)) * ldb;
    int8_t b_tail[kNr][kKc];  // [column, k]: B[n0 + j, k_main:K], zero-padded
    CopyTail(b, kNr, k_main, k_rem, b_tail);
    const int8_t* const bt[kNr] = {b_tail[0], b_tail[1], b_tail[2], b_tail[3]};

    for (size_t m0 = 0; m0 < M; m0 += kMr) {
      const size_t mr = M - m0 < kMr ? M - m0 : kMr;
      const int8_t* a[kMr];  // rows m0.. of A; past M, the last row again
      for (size_t i = 0; i < kMr; ++i) a[i] = A + (m0 + (i < mr ? i : mr - 1)) * lda;
      int32x4_t rows[kMr];  // [row]: C[m0 + i, n0..n0+3]
      if (mr <= 2) {
        Tile<1>(a, b, bt, k_main, k_rem, rows);
      } else {
        Tile<2>(a, b, bt, k_main, k_rem, rows);
      }
      for (size_t i = 0; i < mr; ++i) StoreRow(C + (m0 + i) * ldc + n0, rows[i], nr);
    }
  }
}

}  // namespace octet
