// qs8_gemm_4x4c64__avx512vnni: AVX512-VNNI variant of qs8_gemm (contract in
// kernels/qs8_gemm.h). The tile walk and edges are kernels/qs8_gemm_driver.h's.
//
// Tiling: 4 x 4 tiles, 64 values of k per step: 4 zmm loads of A, 4 of B and 16
// vpdpbusd into 16 zmm accumulators, one per (row, column), each lane a different
// group of 4 k. The 16 lanes are folded into the 4 results of a row once per
// tile, after the k loop.
//
// Exactness: vpdpbusd multiplies unsigned bytes by signed bytes, so A is offset to
// A + 128 (xor 0x80 maps int8 [-128, 127] onto uint8 [0, 255]) and the tile
// computes sum_k (A + 128) * B = sum_k A * B + 128 * sum_k B. The second term,
// 128 * sum_k B[n, k], comes from vpdpbusd of 0x80 bytes with the B rows, computed
// once per block of 4 columns (in its first row tile) and subtracted from each
// row. vpdpbusd does not saturate (vpdpbusds would); the widest partial sum is
// K * 255 * 128 < 2^31 for K <= kQs8GemmMaxK, so nothing wraps.
//
// K tail: instead of the driver's zero-padded copies, the last K % 64 values of k
// use masked byte loads, which read (and fault on) only the selected bytes; B's
// masked-off bytes are zero, so they add nothing whatever the offset A bytes hold.
//
// Code shape, for GCC 12: accumulators are named struct members (arrays of them
// are not kept in registers); the masked step comes before the k loop (after it,
// every accumulator is copied around each vpdpbusd of the loop); the reduction
// starts with 64-bit unpacks (see Reduce).

// GCC 12's AVX-512 intrinsics initialize their "undefined" operands from
// themselves (__m512i __Y = __Y), which -Wmaybe-uninitialized reports at every use.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif
#include <stddef.h>
#include <stdint.h>

#include "kernels/qs8_gemm.h"
#include "kernels/qs8_gemm_driver.h"

namespace octet {
namespace {

constexpr size_t kKc = 64;  // k per step
// A column tile's first row tile reads B's 4 rows from memory (a product with
// one row, decoding, reads nothing else); the hardware prefetchers alone left
// that stream at well under half the machine's read bandwidth (qs8_gemm_bench,
// M = 1, B beyond the last-level cache). Each step asks for B's lines
// kPrefetchTiles column tiles ahead (16 KB at K = 1024). 0 turns it off.
constexpr size_t kPrefetchTiles = 4;

// One row of a tile (or the B sums): an accumulator per column, 16 int32 lanes of
// partial sums each.
struct RowAcc {
  __m512i c0, c1, c2, c3;
};

struct TileAcc {
  RowAcc r0, r1, r2, r3;
};

// 64 k of the tile's 4 rows of B.
struct BRows {
  __m512i b0, b1, b2, b3;
};

// acc.cj += a_u8 . bj (unsigned by signed bytes, 4 products per int32 lane).
OCTET_KERNEL_INLINE void DotRow(RowAcc& acc, __m512i a_u8, const BRows& b) {
  acc.c0 = _mm512_dpbusd_epi32(acc.c0, a_u8, b.b0);
  acc.c1 = _mm512_dpbusd_epi32(acc.c1, a_u8, b.b1);
  acc.c2 = _mm512_dpbusd_epi32(acc.c2, a_u8, b.b2);
  acc.c3 = _mm512_dpbusd_epi32(acc.c3, a_u8, b.b3);
}

// 64 bytes at p, or with kMasked only those selected by `mask` (the others 0).
template <bool kMasked>
OCTET_KERNEL_INLINE __m512i Load64(const int8_t* p, __mmask64 mask) {
  return kMasked ? _mm512_maskz_loadu_epi8(mask, p) : _mm512_loadu_si512(p);
}

// One step of 64 k from k (with kMasked, only the k selected by `mask`) for rows
// a[0..kRows-1]: acc.ri.cj += (A[i] + 128) . B[j]; with kSumB also
// b_sum.cj += 128 . B[j].
// With kSumB (a column tile's first row tile, the one that reads B from memory)
// it also asks for B's rows `ahead` bytes further on (see kPrefetchTiles).
template <size_t kRows, bool kSumB, bool kMasked>
OCTET_KERNEL_INLINE void Step(const int8_t* const a[kMr], const int8_t* const b[kNr], size_t k,
                              __mmask64 mask, size_t ahead, TileAcc& acc, RowAcc& b_sum) {
  const __m512i v128 = _mm512_set1_epi8(static_cast<char>(0x80));
  if (kSumB && kPrefetchTiles > 0) {
    for (size_t j = 0; j < kNr; ++j) {
      _mm_prefetch(reinterpret_cast<const char*>(b[j] + k) + ahead, _MM_HINT_T0);
    }
  }
  const BRows vb = {Load64<kMasked>(b[0] + k, mask), Load64<kMasked>(b[1] + k, mask),
                    Load64<kMasked>(b[2] + k, mask), Load64<kMasked>(b[3] + k, mask)};
  if (kSumB) DotRow(b_sum, v128, vb);
  DotRow(acc.r0, _mm512_xor_si512(Load64<kMasked>(a[0] + k, mask), v128), vb);
  if (kRows > 1) DotRow(acc.r1, _mm512_xor_si512(Load64<kMasked>(a[1] + k, mask), v128), vb);
  if (kRows > 2) DotRow(acc.r2, _mm512_xor_si512(Load64<kMasked>(a[2] + k, mask), v128), vb);
  if (kRows > 3) DotRow(acc.r3, _mm512_xor_si512(Load64<kMasked>(a[3] + k, mask), v128), vb);
}

// [sum(c0), sum(c1), sum(c2), sum(c3)] of the 16 int32 lanes of each accumulator.
// The first level uses 64-bit unpacks: touching the accumulators as 32-bit vectors
// after the loop makes GCC 12 keep a second copy of each through the loop.
OCTET_KERNEL_INLINE __m128i Reduce(const RowAcc& acc) {
  // Per 128-bit lane, with c0 = [a0 a1 a2 a3], c1 = [b0 ..] and so on:
  // t02 = [a0+a2, a1+a3, c0+c2, c1+c3], t13 = [b0+b2, b1+b3, d0+d2, d1+d3].
  const __m512i t02 = _mm512_add_epi32(_mm512_unpacklo_epi64(acc.c0, acc.c2),
                                       _mm512_unpackhi_epi64(acc.c0, acc.c2));
  const __m512i t13 = _mm512_add_epi32(_mm512_unpacklo_epi64(acc.c1, acc.c3),
                                       _mm512_unpackhi_epi64(acc.c1, acc.c3));
  // lo = [a0+a2, b0+b2, a1+a3, b1+b3], hi = the same for c and d; then [a b c d].
  const __m512i lo = _mm512_unpacklo_epi32(t02, t13);
  const __m512i hi = _mm512_unpackhi_epi32(t02, t13);
  const __m512i s = _mm512_add_epi32(_mm512_unpacklo_epi64(lo, hi), _mm512_unpackhi_epi64(lo, hi));
  // The four 128-bit lanes hold partial [a b c d]: add them.
  const __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(s), _mm512_extracti64x4_epi64(s, 1));
  return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

// One tile of kRows rows of A (a[0..kRows-1]) against 4 rows of B:
// rows[i] = C[i, 0..3] for i < kRows. With kSumB it also computes
// *b_corr = [128 * sum_k B[j, k]] for j < 4; without, it uses the one given.
template <size_t kRows, bool kSumB>
OCTET_KERNEL_INLINE void VnniTile(const int8_t* const a[kMr], const int8_t* const b[kNr], size_t K,
                                  size_t ahead, __m128i* b_corr, __m128i rows[kMr]) {
  const __m512i zero = _mm512_setzero_si512();
  const RowAcc zero_row = {zero, zero, zero, zero};
  TileAcc acc = {zero_row, zero_row, zero_row, zero_row};
  RowAcc b_sum = zero_row;  // [column]: partial 128 * sum_k B
  const size_t k_main = K - K % kKc;
  if (K % kKc != 0) {
    const __mmask64 mask = (static_cast<__mmask64>(1) << (K % kKc)) - 1;
    Step<kRows, kSumB, true>(a, b, k_main, mask, ahead, acc, b_sum);
  }
  for (size_t k = 0; k < k_main; k += kKc) {
    Step<kRows, kSumB, false>(a, b, k, 0, ahead, acc, b_sum);
  }
  if (kSumB) *b_corr = Reduce(b_sum);
  rows[0] = _mm_sub_epi32(Reduce(acc.r0), *b_corr);
  if (kRows > 1) rows[1] = _mm_sub_epi32(Reduce(acc.r1), *b_corr);
  if (kRows > 2) rows[2] = _mm_sub_epi32(Reduce(acc.r2), *b_corr);
  if (kRows > 3) rows[3] = _mm_sub_epi32(Reduce(acc.r3), *b_corr);
}

// The Kernel of Qs8GemmTiles (kernels/qs8_gemm_driver.h).
struct Vnni {
  using Row = __m128i;
  static constexpr size_t kRowStep = 1;

  struct ColumnTile {
    // B's rows are ldb = b[1] - b[0] apart (0 in a last tile of one column:
    // nothing follows it), the column tiles kNr rows apart.
    OCTET_KERNEL_INLINE ColumnTile(const int8_t* const* b, size_t k_total)
        : K(k_total), ahead(static_cast<size_t>(b[1] - b[0]) * kNr * kPrefetchTiles) {}
    const size_t K;
    const size_t ahead;  // bytes from a column tile's rows to those kPrefetchTiles tiles on
    __m128i b_corr;  // [4]: 128 * sum_k B[n0 + j, k], set by the first row tile
  };

  // The first row tile of a column tile also computes its b_corr.
  template <size_t kRows>
  OCTET_KERNEL_INLINE static void Tile(const int8_t* const a[kMr], const int8_t* const b[kNr],
                                       ColumnTile& cols, bool first, __m128i rows[kMr]) {
    if (first) {
      VnniTile<kRows, true>(a, b, cols.K, cols.ahead, &cols.b_corr, rows);
    } else {
      VnniTile<kRows, false>(a, b, cols.K, cols.ahead, &cols.b_corr, rows);
    }
  }

  // A masked store: no branch on n.
  OCTET_KERNEL_INLINE static void StoreRow(int32_t* c, __m128i row, size_t n) {
    _mm_mask_storeu_epi32(c, static_cast<__mmask8>((1u << n) - 1), row);
  }
};

}  // namespace

void qs8_gemm_4x4c64__avx512vnni(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                                 const int8_t* B, size_t ldb, int32_t* C, size_t ldc) {
  Qs8GemmTiles<Vnni>(M, N, K, A, lda, B, ldb, C, ldc);
}

}  // namespace octet
