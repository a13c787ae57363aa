// qs8_gemm_4x4c8__avx2: AVX2 variant of qs8_gemm (contract in kernels/qs8_gemm.h).
//
// Tiling: C is computed in tiles of up to 4 rows of A against 4 rows of B, 8
// values of k per step. A step sign-extends 8 int8 of each row to int16
// (vpmovsxbw) and multiplies with vpmaddwd, which adds two adjacent int16 products
// into one int32 lane. Two B rows share a ymm ([column n | column n+1], 8 k each)
// and each A row is broadcast to both 128-bit halves, so a 4x4 tile needs 8
// accumulators (row x column pair) plus 3 operands, which fit the 16 ymm
// registers. The lanes are folded into the 4 results of a row once per tile,
// after the k loop. The last row tile is compiled for its own row count (1..4),
// so M = 1 (decoding one token) does a quarter of the work of a 4-row tile.
//
// Exactness: vpmaddubsw would saturate to int16, so it is not used. Every int16
// product is at most 128 * 128 = 2^14 in magnitude, the pair vpmaddwd adds is at
// most 2^15 and lands in int32, and the accumulators hold partial sums of at most
// K * 2^14 <= 2^30 (kQs8GemmMaxK), so no step rounds, saturates or overflows.
//
// Edges: columns past N repeat the last valid row of B (their results are
// computed and dropped), so every load stays inside A and B. The last K % 8
// values of k are copied into zero-padded 8-byte stack buffers; zeros add nothing.
//
// Code shape, for GCC 12: accumulators are named struct members (arrays of them
// are not kept in registers); the tail step comes before the k loop and 16 k per
// step are not unrolled (either makes it copy or spill accumulators in the loop);
// the reduction starts with 64-bit unpacks (see Reduce).

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/qs8_gemm.h"

namespace octet {
namespace {

constexpr size_t kMr = 4;  // rows of A per tile
constexpr size_t kNr = 4;  // rows of B (columns of C) per tile
constexpr size_t kKc = 8;  // k per step

// One row of a tile: int32 lanes [column 0 x4 | column 1 x4] and
// [column 2 x4 | column 3 x4], each lane a different pair of k.
struct RowAcc {
  __m256i c01, c23;
};

struct TileAcc {
  RowAcc r0, r1, r2, r3;
};

// [A[i, k..k+7] | A[i, k..k+7]] as int16, for p = A[i] + k.
__attribute__((always_inline)) inline __m256i LoadA(const int8_t* p) {
  return _mm256_cvtepi8_epi16(
      _mm_broadcastq_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}

// [B[j, k..k+7] | B[j+1, k..k+7]] as int16, for p = B[j] + k and q = B[j+1] + k.
__attribute__((always_inline)) inline __m256i LoadBPair(const int8_t* p, const int8_t* q) {
  return _mm256_cvtepi8_epi16(
      _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)),
                         _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q))));
}

__attribute__((always_inline)) inline void DotRow(RowAcc& acc, __m256i a, __m256i b01,
                                                  __m256i b23) {
  acc.c01 = _mm256_add_epi32(acc.c01, _mm256_madd_epi16(a, b01));
  acc.c23 = _mm256_add_epi32(acc.c23, _mm256_madd_epi16(a, b23));
}

// One step: 8 k from k of rows a[0..kRows-1] against rows b[0..3].
template <size_t kRows>
__attribute__((always_inline)) inline void Step(const int8_t* const a[kMr],
                                                const int8_t* const b[kNr], size_t k,
                                                TileAcc& acc) {
  const __m256i b01 = LoadBPair(b[0] + k, b[1] + k);
  const __m256i b23 = LoadBPair(b[2] + k, b[3] + k);
  DotRow(acc.r0, LoadA(a[0] + k), b01, b23);
  if (kRows > 1) DotRow(acc.r1, LoadA(a[1] + k), b01, b23);
  if (kRows > 2) DotRow(acc.r2, LoadA(a[2] + k), b01, b23);
  if (kRows > 3) DotRow(acc.r3, LoadA(a[3] + k), b01, b23);
}

// [sum of column 0 lanes, ..., column 3 lanes]: the row's 4 results. The first
// level uses 64-bit unpacks: touching the accumulators as 32-bit vectors after
// the loop makes GCC 12 keep a second copy of each through the loop.
__attribute__((always_inline)) inline __m128i Reduce(const RowAcc& acc) {
  // [c0 c0 c2 c2 | c1 c1 c3 c3] (partial sums), then across the halves [c0 c2 c1 c3].
  const __m256i s = _mm256_add_epi32(_mm256_unpacklo_epi64(acc.c01, acc.c23),
                                     _mm256_unpackhi_epi64(acc.c01, acc.c23));
  const __m128i sums = _mm_hadd_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  return _mm_shuffle_epi32(sums, _MM_SHUFFLE(3, 1, 2, 0));
}

// Copies k in [k0, k0 + count) of rows[0..n-1] into zero-padded 8-byte rows.
__attribute__((always_inline)) inline void CopyTail(const int8_t* const rows[4], size_t n,
                                                    size_t k0, size_t count, int8_t tail[4][kKc]) {
  for (size_t r = 0; r < n; ++r) {
    for (size_t t = 0; t < kKc; ++t) tail[r][t] = t < count ? rows[r][k0 + t] : 0;
  }
}

// Stores the first n (1..4) int32 of v to c.
__attribute__((always_inline)) inline void StoreRow(int32_t* c, __m128i v, size_t n) {
  if (n == 4) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(c), v);
    return;
  }
  if (n & 2) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(c), v);
    v = _mm_unpackhi_epi64(v, v);
    c += 2;
  }
  if (n & 1) *c = _mm_cvtsi128_si32(v);
}

// One tile of kRows rows of A (a[0..kRows-1]) against 4 rows of B:
// rows[i] = C[i, 0..3] for i < kRows. bt: B's zero-padded tails.
template <size_t kRows>
__attribute__((always_inline)) inline void Tile(const int8_t* const a[kMr],
                                                const int8_t* const b[kNr],
                                                const int8_t* const bt[kNr], size_t k_main,
                                                size_t k_rem, __m128i rows[kMr]) {
  const __m256i zero = _mm256_setzero_si256();
  const RowAcc zero_row = {zero, zero};
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

void qs8_gemm_4x4c8__avx2(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
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
      __m128i rows[kMr];  // [row]: C[m0 + i, n0..n0+3]
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
