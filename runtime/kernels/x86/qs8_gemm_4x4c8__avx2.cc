// qs8_gemm_4x4c8__avx2: AVX2 variant of qs8_gemm (contract in kernels/qs8_gemm.h).
// The tile walk, edges and K tail are kernels/qs8_gemm_driver.h's (Qs8PaddedK).
//
// Tiling: 4 x 4 tiles, 8 values of k per step. A step sign-extends 8 int8 of each
// row to int16 (vpmovsxbw) and multiplies with vpmaddwd, which adds two adjacent
// int16 products into one int32 lane. Two B rows share a ymm ([column n | column
// n+1], 8 k each) and each A row is broadcast to both 128-bit halves, so a 4x4
// tile needs 8 accumulators (row x column pair) plus 3 operands, which fit the 16
// ymm registers. The lanes are folded into the 4 results of a row once per tile,
// after the k loop.
//
// Exactness: vpmaddubsw would saturate to int16, so it is not used. Every int16
// product is at most 128 * 128 = 2^14 in magnitude, the pair vpmaddwd adds is at
// most 2^15 and lands in int32, and the accumulators hold partial sums of at most
// K * 2^14 <= 2^30 (kQs8GemmMaxK), so no step rounds, saturates or overflows.
//
// Code shape, for GCC 12 (beside the driver's): 16 k per step are not unrolled
// (it makes GCC copy or spill accumulators in the loop); the reduction starts with
// 64-bit unpacks (see Reduce).

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/qs8_gemm.h"
#include "kernels/qs8_gemm_driver.h"

namespace octet {
namespace {

// One row of a tile: int32 lanes [column 0 x4 | column 1 x4] and
// [column 2 x4 | column 3 x4], each lane a different pair of k.
struct RowAcc {
  __m256i c01, c23;
};

struct TileAcc {
  RowAcc r0, r1, r2, r3;
};

// [A[i, k..k+7] | A[i, k..k+7]] as int16, for p = A[i] + k.
OCTET_KERNEL_INLINE __m256i LoadA(const int8_t* p) {
  return _mm256_cvtepi8_epi16(
      _mm_broadcastq_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}

// [B[j, k..k+7] | B[j+1, k..k+7]] as int16, for p = B[j] + k and q = B[j+1] + k.
OCTET_KERNEL_INLINE __m256i LoadBPair(const int8_t* p, const int8_t* q) {
  return _mm256_cvtepi8_epi16(
      _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)),
                         _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q))));
}

OCTET_KERNEL_INLINE void DotRow(RowAcc& acc, __m256i a, __m256i b01, __m256i b23) {
  acc.c01 = _mm256_add_epi32(acc.c01, _mm256_madd_epi16(a, b01));
  acc.c23 = _mm256_add_epi32(acc.c23, _mm256_madd_epi16(a, b23));
}

// [sum of column 0 lanes, ..., column 3 lanes]: the row's 4 results. The first
// level uses 64-bit unpacks: touching the accumulators as 32-bit vectors after
// the loop makes GCC 12 keep a second copy of each through the loop.
OCTET_KERNEL_INLINE __m128i Reduce(const RowAcc& acc) {
  // [c0 c0 c2 c2 | c1 c1 c3 c3] (partial sums), then across the halves [c0 c2 c1 c3].
  const __m256i s = _mm256_add_epi32(_mm256_unpacklo_epi64(acc.c01, acc.c23),
                                     _mm256_unpackhi_epi64(acc.c01, acc.c23));
  const __m128i sums = _mm_hadd_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  return _mm_shuffle_epi32(sums, _MM_SHUFFLE(3, 1, 2, 0));
}

// The Steps of Qs8PaddedK (kernels/qs8_gemm_driver.h).
struct Avx2Steps {
  using Row = __m128i;
  using Acc = TileAcc;
  static constexpr size_t kRowStep = 1;
  static constexpr size_t kKc = 8;

  OCTET_KERNEL_INLINE static TileAcc Zero() {
    const __m256i zero = _mm256_setzero_si256();
    const RowAcc zero_row = {zero, zero};
    return {zero_row, zero_row, zero_row, zero_row};
  }

  // 8 k from k of rows a[0..kRows-1] against rows b[0..3].
  template <size_t kRows>
  OCTET_KERNEL_INLINE static void Step(const int8_t* const a[kMr], const int8_t* const b[kNr],
                                       size_t k, TileAcc& acc) {
    const __m256i b01 = LoadBPair(b[0] + k, b[1] + k);
    const __m256i b23 = LoadBPair(b[2] + k, b[3] + k);
    DotRow(acc.r0, LoadA(a[0] + k), b01, b23);
    if (kRows > 1) DotRow(acc.r1, LoadA(a[1] + k), b01, b23);
    if (kRows > 2) DotRow(acc.r2, LoadA(a[2] + k), b01, b23);
    if (kRows > 3) DotRow(acc.r3, LoadA(a[3] + k), b01, b23);
  }

  template <size_t kRows>
  OCTET_KERNEL_INLINE static void Finish(const TileAcc& acc, __m128i rows[kMr]) {
    rows[0] = Reduce(acc.r0);
    if (kRows > 1) rows[1] = Reduce(acc.r1);
    if (kRows > 2) rows[2] = Reduce(acc.r2);
    if (kRows > 3) rows[3] = Reduce(acc.r3);
  }

  // Stores the first n (1..4) int32 of row to c.
  OCTET_KERNEL_INLINE static void StoreRow(int32_t* c, __m128i row, size_t n) {
    if (n == 4) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(c), row);
      return;
    }
    if (n & 2) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(c), row);
      row = _mm_unpackhi_epi64(row, row);
      c += 2;
    }
    if (n & 1) *c = _mm_cvtsi128_si32(row);
  }
};

}  // namespace

void qs8_gemm_4x4c8__avx2(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                          const int8_t* B, size_t ldb, int32_t* C, size_t ldc) {
  Qs8GemmTiles<Qs8PaddedK<Avx2Steps>>(M, N, K, A, lda, B, ldb, C, ldc);
}

}  // namespace octet
