// qs8_gemm_4x4c16__neon: baseline Advanced SIMD variant of qs8_gemm (contract in
// kernels/qs8_gemm.h); armv7 NEON and aarch64 alike.
//
// Tiling: C is computed in tiles of up to 4 rows of A against 4 rows of B, 16
// values of k per step: 4 q-register loads of A, 4 of B, and for each of the 16
// (row, column) pairs two vmull_s8 (8 int8 products each, to int16) folded into
// that pair's int32x4 accumulator with vpadalq_s16 (adds adjacent int16 pairs
// into the int32 lanes). The 4 lanes are folded into the result once per tile,
// after the k loop. The last row tile is
// compiled for its own row count (1..4), so M = 1 (decoding one token) does a
// quarter of the work of a 4-row tile.
//
// Exactness: every int16 product is at most 128 * 128 = 2^14 in magnitude, so it
// is exact in int16, and vpadalq_s16 widens before adding. vmlal_s8 (products
// accumulated in int16) is not used: two products of -128 * -128 would already
// overflow int16. The accumulators hold partial sums of at most K * 2^14 <= 2^30.
//
// Edges: columns past N repeat the last valid row of B (results dropped), so
// every load stays inside A and B. The last K % 16 values of k are copied into
// zero-padded 16-byte stack buffers; zeros add nothing.
//
// On aarch64 the 16 accumulators and 8 operands fit the 32 q registers. armv7 has
// 16, so there the compiler keeps some accumulators on the stack.
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
constexpr size_t kKc = 16;  // k per step

// One row of a tile: an accumulator per column, 4 int32 lanes of partial sums.
struct RowAcc {
  int32x4_t c0, c1, c2, c3;
};

struct TileAcc {
  RowAcc r0, r1, r2, r3;
};

// acc += 16 k of a . b, widening the int16 products pairwise into the int32 lanes.
__attribute__((always_inline)) inline int32x4_t Dot16(int32x4_t acc, int8x16_t a, int8x16_t b) {
  acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
#if defined(__aarch64__)
  return vpadalq_s16(acc, vmull_high_s8(a, b));  // smull2: no move of the high halves
#else
  return vpadalq_s16(acc, vmull_s8(vget_high_s8(a), vget_high_s8(b)));
#endif
}

__attribute__((always_inline)) inline void DotRow(RowAcc& acc, int8x16_t a, int8x16_t b0,
                                                  int8x16_t b1, int8x16_t b2, int8x16_t b3) {
  acc.c0 = Dot16(acc.c0, a, b0);
  acc.c1 = Dot16(acc.c1, a, b1);
  acc.c2 = Dot16(acc.c2, a, b2);
  acc.c3 = Dot16(acc.c3, a, b3);
}

// One step: 16 k from k of rows a[0..kRows-1] against rows b[0..3].
template <size_t kRows>
__attribute__((always_inline)) inline void Step(const int8_t* const a[kMr],
                                                const int8_t* const b[kNr], size_t k,
                                                TileAcc& acc) {
  const int8x16_t b0 = vld1q_s8(b[0] + k);
  const int8x16_t b1 = vld1q_s8(b[1] + k);
  const int8x16_t b2 = vld1q_s8(b[2] + k);
  const int8x16_t b3 = vld1q_s8(b[3] + k);
  DotRow(acc.r0, vld1q_s8(a[0] + k), b0, b1, b2, b3);
  if (kRows > 1) DotRow(acc.r1, vld1q_s8(a[1] + k), b0, b1, b2, b3);
  if (kRows > 2) DotRow(acc.r2, vld1q_s8(a[2] + k), b0, b1, b2, b3);
  if (kRows > 3) DotRow(acc.r3, vld1q_s8(a[3] + k), b0, b1, b2, b3);
}

// [sum(c0), sum(c1), sum(c2), sum(c3)]: the row's 4 results.
__attribute__((always_inline)) inline int32x4_t Reduce(const RowAcc& acc) {
  const int32x2_t p0 = vpadd_s32(vget_low_s32(acc.c0), vget_high_s32(acc.c0));
  const int32x2_t p1 = vpadd_s32(vget_low_s32(acc.c1), vget_high_s32(acc.c1));
  const int32x2_t p2 = vpadd_s32(vget_low_s32(acc.c2), vget_high_s32(acc.c2));
  const int32x2_t p3 = vpadd_s32(vget_low_s32(acc.c3), vget_high_s32(acc.c3));
  return vcombine_s32(vpadd_s32(p0, p1), vpadd_s32(p2, p3));
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

// One tile of kRows rows of A (a[0..kRows-1]) against 4 rows of B:
// rows[i] = C[i, 0..3] for i < kRows. bt: B's zero-padded tails.
template <size_t kRows>
__attribute__((always_inline)) inline void Tile(const int8_t* const a[kMr],
                                                const int8_t* const b[kNr],
                                                const int8_t* const bt[kNr], size_t k_main,
                                                size_t k_rem, int32x4_t rows[kMr]) {
  const int32x4_t zero = vdupq_n_s32(0);
  const RowAcc zero_row = {zero, zero, zero, zero};
  TileAcc acc = {zero_row, zero_row, zero_row, zero_row};
  if (k_rem != 0) {
    int8_t a_tail[kMr][kKc];  // [row, k]: A[i, k_main:K], zero-padded
    CopyTail(a, kRows, k_main, k_rem, a_tail);
    const int8_t* const at[kMr] = {a_tail[0], a_tail[1], a_tail[2], a_tail[3]};
    Step<kRows>(at, bt, 0, acc);
  }
  for (size_t k = 0; k < k_main; k += kKc) Step<kRows>(a, b, k, acc);
  rows[0] = Reduce(acc.r0);
  if (kRows > 1) rows[1] = Reduce(acc.r1);
  if (kRows > 2) rows[2] = Reduce(acc.r2);
  if (kRows > 3) rows[3] = Reduce(acc.r3);
}

}  // namespace

void qs8_gemm_4x4c16__neon(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
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
      const int8_t* a[kMr];  // rows m0..m0+mr-1 of A (the others unused)
      for (size_t i = 0; i < kMr; ++i) a[i] = A + (m0 + (i < mr ? i : 0)) * lda;
      int32x4_t rows[kMr];  // [row]: C[m0 + i, n0..n0+3]
      switch (mr) {
        case 1:
          Tile<1>(a, b, bt, k_main, k_rem, rows);
          break;
        case 2:
          Tile<2>(a, b, bt, k_main, k_rem, rows);
          break;
        case 3:
          Tile<3>(a, b, bt, k_main, k_rem, rows);
          break;
        default:
          Tile<4>(a, b, bt, k_main, k_rem, rows);
          break;
      }
      for (size_t i = 0; i < mr; ++i) StoreRow(C + (m0 + i) * ldc + n0, rows[i], nr);
    }
  }
}

}  // namespace octet
