// qs8_gemm_4x4c8__neoni8mm: Advanced SIMD + int8 matrix multiply (armv8.6 i8mm)
// variant of qs8_gemm (contract in kernels/qs8_gemm.h); aarch64 and AArch32. The
// tile walk, edges and K tail are kernels/qs8_gemm_driver.h's (Qs8PaddedK).
//
// Tiling: 4 x 4 tiles. vmmlaq_s32 (smmla) takes a 2x8 int8 block of A rows and a
// 2x8 block of B rows and adds their 2x2 product to an int32x4 [r0c0, r0c1, r1c0,
// r1c1]: 8 k per instruction. A step covers 16 k: the q loads of rows (0, 1) and
// (2, 3) of A and of B are regrouped into 2x8 blocks (low and high halves), and 8
// smmla update the 4 accumulators of the tile's 2x2 blocks. The accumulators
// already hold finished sums; only a regrouping of their halves is left after the
// k loop. Row tiles are compiled for whole row pairs (kRowStep 2), so M = 1
// (decoding one token) does half the work of a 4-row tile; a row of a pair past M
// repeats a valid row (the driver's edge policy).
//
// Exactness: smmla multiplies int8 by int8 and adds 8 products (at most 8 * 2^14
// in magnitude) to each int32 lane without saturating; the accumulators hold
// partial sums of at most K * 2^14 <= 2^30.

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/neon/qs8_gemm_neon_tile.h"
#include "kernels/qs8_gemm.h"
#include "kernels/qs8_gemm_driver.h"

namespace octet {
namespace {

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

OCTET_KERNEL_INLINE Blocks LoadBlocks(const int8_t* x, const int8_t* y, size_t k) {
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
OCTET_KERNEL_INLINE int32x4_t Mmla16(int32x4_t acc, const Blocks& a, const Blocks& b) {
  return vmmlaq_s32(vmmlaq_s32(acc, a.lo, b.lo), a.hi, b.hi);
}

// The Steps of Qs8PaddedK (kernels/qs8_gemm_driver.h).
struct I8mmSteps {
  using Row = int32x4_t;
  using Acc = TileAcc;
  static constexpr size_t kRowStep = 2;
  static constexpr size_t kKc = 16;  // two smmla k-blocks of 8

  OCTET_KERNEL_INLINE static TileAcc Zero() {
    const int32x4_t zero = vdupq_n_s32(0);
    return {zero, zero, zero, zero};
  }

  // 16 k from k of the row pairs of a[0..kRows-1] against rows b[0..3].
  template <size_t kRows>
  OCTET_KERNEL_INLINE static void Step(const int8_t* const a[kMr], const int8_t* const b[kNr],
                                       size_t k, TileAcc& acc) {
    const Blocks b01 = LoadBlocks(b[0], b[1], k);
    const Blocks b23 = LoadBlocks(b[2], b[3], k);
    const Blocks a01 = LoadBlocks(a[0], a[1], k);
    acc.r01c01 = Mmla16(acc.r01c01, a01, b01);
    acc.r01c23 = Mmla16(acc.r01c23, a01, b23);
    if (kRows > 2) {
      const Blocks a23 = LoadBlocks(a[2], a[3], k);
      acc.r23c01 = Mmla16(acc.r23c01, a23, b01);
      acc.r23c23 = Mmla16(acc.r23c23, a23, b23);
    }
  }

  // Row r of a pair: the r-th halves of its (0, 1) and (2, 3) column blocks.
  template <size_t kRows>
  OCTET_KERNEL_INLINE static void Finish(const TileAcc& acc, int32x4_t rows[kMr]) {
    rows[0] = vcombine_s32(vget_low_s32(acc.r01c01), vget_low_s32(acc.r01c23));
    rows[1] = vcombine_s32(vget_high_s32(acc.r01c01), vget_high_s32(acc.r01c23));
    if (kRows > 2) {
      rows[2] = vcombine_s32(vget_low_s32(acc.r23c01), vget_low_s32(acc.r23c23));
      rows[3] = vcombine_s32(vget_high_s32(acc.r23c01), vget_high_s32(acc.r23c23));
    }
  }

  OCTET_KERNEL_INLINE static void StoreRow(int32_t* c, int32x4_t row, size_t n) {
    StoreRowNeon(c, row, n);
  }
};

}  // namespace

void qs8_gemm_4x4c8__neoni8mm(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                              const int8_t* B, size_t ldb, int32_t* C, size_t ldc) {
  Qs8GemmTiles<Qs8PaddedK<I8mmSteps>>(M, N, K, A, lda, B, ldb, C, ldc);
}

}  // namespace octet
