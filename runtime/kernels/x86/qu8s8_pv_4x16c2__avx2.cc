// qu8s8_pv_4x16c2__avx2: AVX2 variant of qu8s8_pv (contract in kernels/qu8s8_pv.h).
// The walk over C, the blocks of k, the copies of A (as int16) and of B's last
// columns are kernels/qu8s8_pv_driver.h's.
//
// Tiling: 4 x 16 tiles, 2 values of k per step. A step sign-extends 16 int8 of
// rows k and k+1 of B to int16 (vpmovsxbw) and interleaves them (vpunpck[lh]wd)
// into two ymm of (k, k+1) pairs, one per group of 8 columns; the pair
// (A[i, k], A[i, k+1]), one int32 of the int16 copy of A, is broadcast, and
// vpmaddwd adds the two products of each column into its int32 lane. A 4 x 16
// tile needs 8 accumulators (row x column group) plus 3 operands.
//
// Column order: vpunpck[lh]wd work within 128-bit halves, so the accumulators
// hold columns [0..3 | 8..11] and [4..7 | 12..15]; vperm2i128 puts them in order
// once per tile, at the store.
//
// Exactness: vpmaddubsw (u8 x s8) would saturate the sum of two products to
// int16 (2 * 255 * -128 does not fit), so A is widened to int16 and vpmaddwd is
// used: each product is at most 255 * 128 < 2^15 in magnitude and the pair sum
// lands in int32. Partial sums: see the driver.

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/qu8s8_pv.h"
#include "kernels/qu8s8_pv_driver.h"

namespace octet {
namespace {

// One row of a tile: int32 lanes of columns [0..3 | 8..11] and [4..7 | 12..15].
struct RowAcc {
  __m256i c0, c1;
};

struct TileAcc {
  RowAcc r0, r1, r2, r3;
};

// Rows k and k+1 of B, 16 columns, as int16 (k, k+1) pairs: lo holds columns
// [0..3 | 8..11], hi [4..7 | 12..15].
struct BPairs {
  __m256i lo, hi;
};

OCTET_KERNEL_INLINE __m256i LoadRow16(const int8_t* p) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

OCTET_KERNEL_INLINE BPairs Interleave(__m256i row_k, __m256i row_k1) {
  return {_mm256_unpacklo_epi16(row_k, row_k1), _mm256_unpackhi_epi16(row_k, row_k1)};
}

// acc += (A[i, k], A[i, k+1]) . B pairs, for p = &A_copy[i, k] (int16).
OCTET_KERNEL_INLINE void DotRow(RowAcc& acc, const int16_t* p, const BPairs& b) {
  const __m256i a = _mm256_broadcastd_epi32(_mm_loadu_si32(p));
  acc.c0 = _mm256_add_epi32(acc.c0, _mm256_madd_epi16(a, b.lo));
  acc.c1 = _mm256_add_epi32(acc.c1, _mm256_madd_epi16(a, b.hi));
}

template <size_t kRows>
OCTET_KERNEL_INLINE void Step(const int16_t* a, size_t lda, size_t k, const BPairs& b,
                              TileAcc& acc) {
  DotRow(acc.r0, a + k, b);
  if (kRows > 1) DotRow(acc.r1, a + lda + k, b);
  if (kRows > 2) DotRow(acc.r2, a + 2 * lda + k, b);
  if (kRows > 3) DotRow(acc.r3, a + 3 * lda + k, b);
}

// Stores (or adds) one row of a tile: 16 int32 in column order.
OCTET_KERNEL_INLINE void StoreRow(int32_t* c, const RowAcc& acc, bool add) {
  __m256i lo = _mm256_permute2x128_si256(acc.c0, acc.c1, 0x20);  // columns 0..7
  __m256i hi = _mm256_permute2x128_si256(acc.c0, acc.c1, 0x31);  // columns 8..15
  __m256i* c_lo = reinterpret_cast<__m256i*>(c);
  __m256i* c_hi = reinterpret_cast<__m256i*>(c + 8);
  if (add) {
    lo = _mm256_add_epi32(lo, _mm256_loadu_si256(c_lo));
    hi = _mm256_add_epi32(hi, _mm256_loadu_si256(c_hi));
  }
  _mm256_storeu_si256(c_lo, lo);
  _mm256_storeu_si256(c_hi, hi);
}

// The Kernel of Qu8s8PvTiles (kernels/qu8s8_pv_driver.h).
struct Avx2 {
  using APacked = int16_t;
  static constexpr size_t kNr = 16;
  static constexpr size_t kAPad = 2;  // a pair load at the last, odd k reads one past kc

  template <size_t kRows>
  OCTET_KERNEL_INLINE static void Tile(const int16_t* a, size_t lda, size_t kc, const int8_t* b,
                                       size_t ldb, int32_t* c, size_t ldc, bool add) {
    const __m256i zero = _mm256_setzero_si256();
    const RowAcc zero_row = {zero, zero};
    TileAcc acc = {zero_row, zero_row, zero_row, zero_row};
    const size_t k_main = kc - kc % 2;
    if (kc % 2 != 0) {
      // The last k alone: row k+1 of B does not exist, so it is zeros (and the
      // copy of A has a zero there).
      Step<kRows>(a, lda, k_main, Interleave(LoadRow16(b + k_main * ldb), zero), acc);
    }
    for (size_t k = 0; k < k_main; k += 2) {
      const int8_t* row = b + k * ldb;
      Step<kRows>(a, lda, k, Interleave(LoadRow16(row), LoadRow16(row + ldb)), acc);
    }
    StoreRow(c, acc.r0, add);
    if (kRows > 1) StoreRow(c + ldc, acc.r1, add);
    if (kRows > 2) StoreRow(c + 2 * ldc, acc.r2, add);
    if (kRows > 3) StoreRow(c + 3 * ldc, acc.r3, add);
  }
};

}  // namespace

void qu8s8_pv_4x16c2__avx2(size_t M, size_t N, size_t K, const uint8_t* A, size_t lda,
                           const int8_t* B, size_t ldb, int32_t* C, size_t ldc) {
  Qu8s8PvTiles<Avx2>(M, N, K, A, lda, B, ldb, C, ldc);
}

}  // namespace octet
