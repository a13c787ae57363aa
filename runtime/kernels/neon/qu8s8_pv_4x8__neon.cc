// qu8s8_pv_4x8__neon: baseline Advanced SIMD variant of qu8s8_pv (contract in
// kernels/qu8s8_pv.h); armv7 NEON and aarch64 alike. The walk over C, the blocks
// of k, the copies of A (as int16) and of B's last columns are
// kernels/qu8s8_pv_driver.h's; the accumulators and their store
// kernels/neon/qu8s8_pv_neon_tile.h's.
//
// Tiling: 4 x 8 tiles, one value of k per multiply. A row of B (8 columns) is
// sign-extended to int16 (vmovl_s8), and vmlal_lane_s16 multiplies each half by
// one int16 lane of A's copy (4 values of k per load) and adds the products,
// widened, into the int32 accumulators: 2 per row and k.
//
// This is also the variant for CPUs with dotprod but without i8mm (Cortex-A76,
// Pi 5): sdot multiplies signed by signed bytes, and A (P) is 0..255.
//
// Exactness: A (0..255) and B (-128..127) are exact in int16, each product (at
// most 255 * 128 < 2^15 in magnitude) is formed in int32 by vmlal. Partial sums:
// see the driver.

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/neon/qu8s8_pv_neon_tile.h"
#include "kernels/qu8s8_pv.h"
#include "kernels/qu8s8_pv_driver.h"

namespace octet {
namespace {

// A[i, k..k+3] of the tile's rows, as int16.
struct AQuad {
  int16x4_t r0, r1, r2, r3;
};

template <size_t kRows>
OCTET_KERNEL_INLINE AQuad LoadA(const int16_t* a, size_t lda, size_t k) {
  const int16x4_t r0 = vld1_s16(a + k);
  return {r0, kRows > 1 ? vld1_s16(a + lda + k) : r0, kRows > 2 ? vld1_s16(a + 2 * lda + k) : r0,
          kRows > 3 ? vld1_s16(a + 3 * lda + k) : r0};
}

// 8 columns of one row of B, as int16.
OCTET_KERNEL_INLINE int16x8_t LoadRow(const int8_t* p) { return vmovl_s8(vld1_s8(p)); }

// acc += b * a[kLane], widened.
template <int kLane>
OCTET_KERNEL_INLINE void Mlal(PvRowAcc& acc, int16x8_t b, int16x4_t a) {
  acc.lo = vmlal_lane_s16(acc.lo, vget_low_s16(b), a, kLane);
#if defined(__aarch64__)
  acc.hi = vmlal_high_lane_s16(acc.hi, b, a, kLane);  // smlal2: no move of the high half
#else
  acc.hi = vmlal_lane_s16(acc.hi, vget_high_s16(b), a, kLane);
#endif
}

// One value of k (lane kLane of a) for the kRows rows, b the row of B.
template <size_t kRows, int kLane>
OCTET_KERNEL_INLINE void Step(const AQuad& a, int16x8_t b, PvTileAcc& acc) {
  Mlal<kLane>(acc.r0, b, a.r0);
  if (kRows > 1) Mlal<kLane>(acc.r1, b, a.r1);
  if (kRows > 2) Mlal<kLane>(acc.r2, b, a.r2);
  if (kRows > 3) Mlal<kLane>(acc.r3, b, a.r3);
}

// The Kernel of Qu8s8PvTiles (kernels/qu8s8_pv_driver.h).
struct Neon {
  using APacked = int16_t;
  static constexpr size_t kNr = 8;
  static constexpr size_t kAPad = 4;  // A is read 4 values of k at a time

  template <size_t kRows>
  OCTET_KERNEL_INLINE static void Tile(const int16_t* a, size_t lda, size_t kc, const int8_t* b,
                                       size_t ldb, int32_t* c, size_t ldc, bool add) {
    PvTileAcc acc = PvZero();
    const size_t k_main = kc - kc % 4;
    if (kc % 4 != 0) {
      // The last kc % 4 (1..3) values of k; A's copy is zero past kc.
      const AQuad aq = LoadA<kRows>(a, lda, k_main);
      const int8_t* row = b + k_main * ldb;
      Step<kRows, 0>(aq, LoadRow(row), acc);
      if (kc % 4 > 1) Step<kRows, 1>(aq, LoadRow(row + ldb), acc);
      if (kc % 4 > 2) Step<kRows, 2>(aq, LoadRow(row + 2 * ldb), acc);
    }
    for (size_t k = 0; k < k_main; k += 4) {
      const AQuad aq = LoadA<kRows>(a, lda, k);
      const int8_t* row = b + k * ldb;
      Step<kRows, 0>(aq, LoadRow(row), acc);
      Step<kRows, 1>(aq, LoadRow(row + ldb), acc);
      Step<kRows, 2>(aq, LoadRow(row + 2 * ldb), acc);
      Step<kRows, 3>(aq, LoadRow(row + 3 * ldb), acc);
    }
    PvStoreTile<kRows>(c, ldc, acc, add);
  }
};

}  // namespace

void qu8s8_pv_4x8__neon(size_t M, size_t N, size_t K, const uint8_t* A, size_t lda, const int8_t* B,
                        size_t ldb, int32_t* C, size_t ldc) {
  Qu8s8PvTiles<Neon>(M, N, K, A, lda, B, ldb, C, ldc);
}

}  // namespace octet
