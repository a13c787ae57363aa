// What the NEON qu8s8_pv variants (qu8s8_pv_4x8__neon, qu8s8_pv_4x8c4__neoni8mm)
// share: the accumulators of a 4 x 8 tile (two int32x4 per row, columns 0..3 and
// 4..7, in column order) and their store. 8 columns, not 16: AArch32 has 16 q
// registers, and a 4 x 8 tile's 8 accumulators leave room for the operands.
//
// Internal linkage and always inlined, for the reason given in
// kernels/qs8_gemm_driver.h ("Linkage"). Only compiler headers.
#pragma once

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel_inline.h"

namespace octet {
namespace {  // internal linkage per including file

// One row of a tile: columns 0..3 and 4..7.
struct PvRowAcc {
  int32x4_t lo, hi;
};

struct PvTileAcc {
  PvRowAcc r0, r1, r2, r3;
};

OCTET_KERNEL_INLINE PvTileAcc PvZero() {
  const int32x4_t zero = vdupq_n_s32(0);
  const PvRowAcc zero_row = {zero, zero};
  return {zero_row, zero_row, zero_row, zero_row};
}

// Stores one row of a tile (8 int32) to c, or with `add` adds it to c.
OCTET_KERNEL_INLINE void PvStoreRow(int32_t* c, const PvRowAcc& acc, bool add) {
  int32x4_t lo = acc.lo;
  int32x4_t hi = acc.hi;
  if (add) {
    lo = vaddq_s32(lo, vld1q_s32(c));
    hi = vaddq_s32(hi, vld1q_s32(c + 4));
  }
  vst1q_s32(c, lo);
  vst1q_s32(c + 4, hi);
}

// Stores (or adds) the kRows rows of a tile to c, c + ldc, ...
template <size_t kRows>
OCTET_KERNEL_INLINE void PvStoreTile(int32_t* c, size_t ldc, const PvTileAcc& acc, bool add) {
  PvStoreRow(c, acc.r0, add);
  if (kRows > 1) PvStoreRow(c + ldc, acc.r1, add);
  if (kRows > 2) PvStoreRow(c + 2 * ldc, acc.r2, add);
  if (kRows > 3) PvStoreRow(c + 3 * ldc, acc.r3, add);
}

}  // namespace
}  // namespace octet
