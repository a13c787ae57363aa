// The 4 x 4 tile, 16 k per step, of qs8_gemm_4x4c16__neon and
// qs8_gemm_4x4c16__neondot: the two differ only in Dot16, the instruction group that
// adds the products of 16 k into an int32x4 accumulator. Also StoreRowNeon, the
// partial row store of every NEON variant.
//
// A step does 4 q-register loads of A, 4 of B, and one Dot16 per (row, column)
// pair into that pair's int32x4 accumulator. The 4 lanes are folded into the
// result once per tile, after the k loop. On aarch64 the 16 accumulators and 8
// operands fit the 32 q registers; AArch32 has 16, so there the compiler keeps
// some accumulators on the stack.
//
// Internal linkage and always inlined, for the reason given in
// kernels/qs8_gemm_driver.h ("Linkage"): the including files have different -march
// flags. Only compiler headers, so kernel files stay freestanding.
#pragma once

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/qs8_gemm_driver.h"

namespace octet {
namespace {  // internal linkage per including file

// Stores the first n (1..4) int32 of row to c.
OCTET_KERNEL_INLINE void StoreRowNeon(int32_t* c, int32x4_t row, size_t n) {
  if (n == 4) {
    vst1q_s32(c, row);
    return;
  }
  int32x2_t part = vget_low_s32(row);
  if (n & 2) {
    vst1_s32(c, part);
    part = vget_high_s32(row);
    c += 2;
  }
  if (n & 1) vst1_lane_s32(c, part, 0);
}

// The Steps of Qs8PaddedK (kernels/qs8_gemm_driver.h). Dot::Dot16(acc, a, b)
// returns acc plus the 16 products a[t] * b[t], spread over its 4 lanes in any
// way, exactly (no saturation, no rounding).
template <class Dot>
struct NeonSteps4x4c16 {
  using Row = int32x4_t;
  static constexpr size_t kRowStep = 1;
  static constexpr size_t kKc = 16;

  // One row of a tile: an accumulator per column, 4 int32 lanes of partial sums.
  struct RowAcc {
    int32x4_t c0, c1, c2, c3;
  };

  struct Acc {
    RowAcc r0, r1, r2, r3;
  };

  OCTET_KERNEL_INLINE static Acc Zero() {
    const int32x4_t zero = vdupq_n_s32(0);
    const RowAcc zero_row = {zero, zero, zero, zero};
    return {zero_row, zero_row, zero_row, zero_row};
  }

  OCTET_KERNEL_INLINE static void DotRow(RowAcc& acc, int8x16_t a, int8x16_t b0, int8x16_t b1,
                                         int8x16_t b2, int8x16_t b3) {
    acc.c0 = Dot::Dot16(acc.c0, a, b0);
    acc.c1 = Dot::Dot16(acc.c1, a, b1);
    acc.c2 = Dot::Dot16(acc.c2, a, b2);
    acc.c3 = Dot::Dot16(acc.c3, a, b3);
  }

  // 16 k from k of rows a[0..kRows-1] against rows b[0..3].
  template <size_t kRows>
  OCTET_KERNEL_INLINE static void Step(const int8_t* const a[kMr], const int8_t* const b[kNr],
                                       size_t k, Acc& acc) {
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
  OCTET_KERNEL_INLINE static int32x4_t Reduce(const RowAcc& acc) {
    const int32x2_t p0 = vpadd_s32(vget_low_s32(acc.c0), vget_high_s32(acc.c0));
    const int32x2_t p1 = vpadd_s32(vget_low_s32(acc.c1), vget_high_s32(acc.c1));
    const int32x2_t p2 = vpadd_s32(vget_low_s32(acc.c2), vget_high_s32(acc.c2));
    const int32x2_t p3 = vpadd_s32(vget_low_s32(acc.c3), vget_high_s32(acc.c3));
    return vcombine_s32(vpadd_s32(p0, p1), vpadd_s32(p2, p3));
  }

  template <size_t kRows>
  OCTET_KERNEL_INLINE static void Finish(const Acc& acc, int32x4_t rows[kMr]) {
    rows[0] = Reduce(acc.r0);
    if (kRows > 1) rows[1] = Reduce(acc.r1);
    if (kRows > 2) rows[2] = Reduce(acc.r2);
    if (kRows > 3) rows[3] = Reduce(acc.r3);
  }

  OCTET_KERNEL_INLINE static void StoreRow(int32_t* c, int32x4_t row, size_t n) {
    StoreRowNeon(c, row, n);
  }
};

}  // namespace
}  // namespace octet
