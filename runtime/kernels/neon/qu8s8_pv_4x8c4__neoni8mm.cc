// qu8s8_pv_4x8c4__neoni8mm: Advanced SIMD + int8 matrix multiply (armv8.6 i8mm)
// variant of qu8s8_pv (contract in kernels/qu8s8_pv.h); aarch64 and AArch32. The
// walk over C, the blocks of k, the copies of A and of B's last columns are
// kernels/qu8s8_pv_driver.h's; the accumulators and their store
// kernels/neon/qu8s8_pv_neon_tile.h's.
//
// Tiling: 4 x 8 tiles, 4 values of k per multiply. i8mm's sudot (by element)
// multiplies signed bytes by unsigned bytes, 4 per int32 lane, which is this
// product's own pair of types: rows k..k+3 of B (8 columns) are interleaved byte
// by byte (zip of bytes, then of halfwords) into two q registers whose int32
// lanes each hold (B[k, n], .., B[k+3, n]) of one column n, and
// vsudotq_lane_s32 multiplies them by one group of 4 bytes of A's row (A[i,
// k..k+3], lane 0 or 1 of an 8-byte load). The accumulators need no reduction:
// each lane is one column.
//
// Edges: the last kc % 8 values of k use A's copy (zero past kc) and zero
// registers for the rows of B past kc.
//
// Exactness: sudot does not saturate; each lane adds 4 products of at most
// 255 * 128 in magnitude. Partial sums: see the driver.

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/neon/qu8s8_pv_neon_tile.h"
#include "kernels/qu8s8_pv.h"
#include "kernels/qu8s8_pv_driver.h"

namespace octet {
namespace {

// A[i, k..k+7] of the tile's rows: two groups of 4 values of k.
struct AOctet {
  uint8x8_t r0, r1, r2, r3;
};

template <size_t kRows>
OCTET_KERNEL_INLINE AOctet LoadA(const uint8_t* a, size_t lda, size_t k) {
  const uint8x8_t r0 = vld1_u8(a + k);
  return {r0, kRows > 1 ? vld1_u8(a + lda + k) : r0, kRows > 2 ? vld1_u8(a + 2 * lda + k) : r0,
          kRows > 3 ? vld1_u8(a + 3 * lda + k) : r0};
}

// Rows k..k+3 of B, 8 columns: lane j of lo holds (B[k, j], .., B[k+3, j]),
// lane j of hi the same of column 4 + j.
struct BQuads {
  int8x16_t lo, hi;
};

OCTET_KERNEL_INLINE BQuads Interleave(int8x8_t r0, int8x8_t r1, int8x8_t r2, int8x8_t r3) {
#if defined(__aarch64__)
  // zip1 of the low halves; the zero high halves cost nothing after a load.
  const int8x8_t z = vdup_n_s8(0);
  const int16x8_t r01 = vreinterpretq_s16_s8(vzip1q_s8(vcombine_s8(r0, z), vcombine_s8(r1, z)));
  const int16x8_t r23 = vreinterpretq_s16_s8(vzip1q_s8(vcombine_s8(r2, z), vcombine_s8(r3, z)));
  return {vreinterpretq_s8_s16(vzip1q_s16(r01, r23)), vreinterpretq_s8_s16(vzip2q_s16(r01, r23))};
#else
  // AArch32: vzip.8 of two d registers, then vzip.16 of two q registers.
  const int8x8x2_t z01 = vzip_s8(r0, r1);  // (k, k+1) pairs of columns 0..3, 4..7
  const int8x8x2_t z23 = vzip_s8(r2, r3);
  const int16x8x2_t q = vzipq_s16(vreinterpretq_s16_s8(vcombine_s8(z01.val[0], z01.val[1])),
                                  vreinterpretq_s16_s8(vcombine_s8(z23.val[0], z23.val[1])));
  return {vreinterpretq_s8_s16(q.val[0]), vreinterpretq_s8_s16(q.val[1])};
#endif
}

// Rows k..k+3 of B at p (row stride ldb).
OCTET_KERNEL_INLINE BQuads LoadQuads(const int8_t* p, size_t ldb) {
  return Interleave(vld1_s8(p), vld1_s8(p + ldb), vld1_s8(p + 2 * ldb), vld1_s8(p + 3 * ldb));
}

// The first `rows` (1..4) of them, zeros for the others (past kc: not read).
OCTET_KERNEL_INLINE BQuads LoadQuadsPartial(const int8_t* p, size_t ldb, size_t rows) {
  const int8x8_t zero = vdup_n_s8(0);
  return Interleave(vld1_s8(p), rows > 1 ? vld1_s8(p + ldb) : zero,
                    rows > 2 ? vld1_s8(p + 2 * ldb) : zero, rows > 3 ? vld1_s8(p + 3 * ldb) : zero);
}

// acc += b . the group kLane (0 or 1) of 4 bytes of a.
template <int kLane>
OCTET_KERNEL_INLINE void Dot(PvRowAcc& acc, const BQuads& b, uint8x8_t a) {
  acc.lo = vsudotq_lane_s32(acc.lo, b.lo, a, kLane);
  acc.hi = vsudotq_lane_s32(acc.hi, b.hi, a, kLane);
}

// 4 values of k (group kLane of a) for the kRows rows, b the rows of B.
template <size_t kRows, int kLane>
OCTET_KERNEL_INLINE void Group(const AOctet& a, const BQuads& b, PvTileAcc& acc) {
  Dot<kLane>(acc.r0, b, a.r0);
  if (kRows > 1) Dot<kLane>(acc.r1, b, a.r1);
  if (kRows > 2) Dot<kLane>(acc.r2, b, a.r2);
  if (kRows > 3) Dot<kLane>(acc.r3, b, a.r3);
}

// The Kernel of Qu8s8PvTiles (kernels/qu8s8_pv_driver.h).
struct I8mm {
  using APacked = uint8_t;
  static constexpr size_t kNr = 8;
  static constexpr size_t kAPad = 8;  // A is read 8 values of k at a time

  template <size_t kRows>
  OCTET_KERNEL_INLINE static void Tile(const uint8_t* a, size_t lda, size_t kc, const int8_t* b,
                                       size_t ldb, int32_t* c, size_t ldc, bool add) {
    PvTileAcc acc = PvZero();
    const size_t k_main = kc - kc % 8;
    const size_t rem = kc % 8;
    if (rem != 0) {
      // The last kc % 8 (1..7) values of k; A's copy is zero past kc.
      const AOctet ao = LoadA<kRows>(a, lda, k_main);
      const int8_t* row = b + k_main * ldb;
      Group<kRows, 0>(ao, LoadQuadsPartial(row, ldb, rem < 4 ? rem : 4), acc);
      if (rem > 4) Group<kRows, 1>(ao, LoadQuadsPartial(row + 4 * ldb, ldb, rem - 4), acc);
    }
    for (size_t k = 0; k < k_main; k += 8) {
      const AOctet ao = LoadA<kRows>(a, lda, k);
      const int8_t* row = b + k * ldb;
      Group<kRows, 0>(ao, LoadQuads(row, ldb), acc);
      Group<kRows, 1>(ao, LoadQuads(row + 4 * ldb, ldb), acc);
    }
    PvStoreTile<kRows>(c, ldc, acc, add);
  }
};

}  // namespace

void qu8s8_pv_4x8c4__neoni8mm(size_t M, size_t N, size_t K, const uint8_t* A, size_t lda,
                              const int8_t* B, size_t ldb, int32_t* C, size_t ldc) {
  Qu8s8PvTiles<I8mm>(M, N, K, A, lda, B, ldb, C, ldc);
}

}  // namespace octet
