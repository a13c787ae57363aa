// qu8s8_pv_4x64c4__avx512vnni: AVX512-VNNI variant of qu8s8_pv (contract in
// kernels/qu8s8_pv.h). A and B are read in place: no copies, no blocks of k.
//
// Tiling: 4 x 64 tiles (row tiles of 1..4 rows, compiled for each count), 4
// values of k per step. vpdpbusd multiplies unsigned bytes by signed bytes, 4
// per int32 lane, which is this product's own pair of types: the 4 bytes
// A[i, k..k+3] (one dword of A's row) are broadcast, and B's rows k..k+3 are
// interleaved byte by byte (vpunpck[lh]bw, then vpunpck[lh]wd) into 4 zmm whose
// int32 lanes each hold (B[k, n], .., B[k+3, n]) of one column n. So a step is 4
// loads and 8 unpacks of B, and per row one broadcast and 4 vpdpbusd into its 4
// accumulators. The accumulators need no reduction: each lane is one column.
//
// Column order: the unpacks work within 128-bit lanes, so accumulator j holds
// columns 16 l + 4 j .. 16 l + 4 j + 3 in lane l; a 4 x 4 transpose of the
// 128-bit lanes (vshufi32x4) puts them in order once per tile, at the store.
//
// Edges: the last column tile (N % 64 columns) loads and stores with masks
// (masked-off bytes are neither read nor faulted on). The last K % 4 values of k
// use zero registers for the rows of B past K and a dword of A built from its
// remaining bytes, so no load passes the end of a row of A or the last row of B.
//
// Exactness: vpdpbusd does not saturate (vpdpbusds would); the accumulators hold
// partial sums of at most K * 255 * 128 < 2^31 (kQu8s8PvMaxK).
//
// Code shape, for GCC 12: accumulators are named struct members (arrays of them
// are not kept in registers); the tail step comes before the k loop.

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

#include "kernels/kernel_inline.h"
#include "kernels/qu8s8_pv.h"

namespace octet {
namespace {

constexpr size_t kMr = 4;   // rows of A per tile
constexpr size_t kNr = 64;  // columns per tile

// One row of a tile: accumulator j holds columns 16 l + 4 j .. 16 l + 4 j + 3 in
// 128-bit lane l.
struct RowAcc {
  __m512i c0, c1, c2, c3;
};

struct TileAcc {
  RowAcc r0, r1, r2, r3;
};

// Rows k..k+3 of B, 64 columns: lane n' of bj is (B[k, n], .., B[k+3, n]) for the
// column n of RowAcc::cj.
struct BQuads {
  __m512i b0, b1, b2, b3;
};

// 64 bytes at p, or with kMasked only those selected by `mask` (the others 0).
template <bool kMasked>
OCTET_KERNEL_INLINE __m512i LoadRow(const int8_t* p, __mmask64 mask) {
  return kMasked ? _mm512_maskz_loadu_epi8(mask, p) : _mm512_loadu_si512(p);
}

OCTET_KERNEL_INLINE BQuads Interleave(__m512i r0, __m512i r1, __m512i r2, __m512i r3) {
  const __m512i r01_lo = _mm512_unpacklo_epi8(r0, r1);  // columns 0..7 of each lane
  const __m512i r01_hi = _mm512_unpackhi_epi8(r0, r1);  // columns 8..15
  const __m512i r23_lo = _mm512_unpacklo_epi8(r2, r3);
  const __m512i r23_hi = _mm512_unpackhi_epi8(r2, r3);
  return {_mm512_unpacklo_epi16(r01_lo, r23_lo), _mm512_unpackhi_epi16(r01_lo, r23_lo),
          _mm512_unpacklo_epi16(r01_hi, r23_hi), _mm512_unpackhi_epi16(r01_hi, r23_hi)};
}

// acc.cj += a_quad . bj: a_quad is 4 bytes of A, broadcast.
OCTET_KERNEL_INLINE void DotRow(RowAcc& acc, __m512i a_quad, const BQuads& b) {
  acc.c0 = _mm512_dpbusd_epi32(acc.c0, a_quad, b.b0);
  acc.c1 = _mm512_dpbusd_epi32(acc.c1, a_quad, b.b1);
  acc.c2 = _mm512_dpbusd_epi32(acc.c2, a_quad, b.b2);
  acc.c3 = _mm512_dpbusd_epi32(acc.c3, a_quad, b.b3);
}

// The 4 bytes at p as one dword (an unaligned load).
OCTET_KERNEL_INLINE uint32_t LoadDword(const uint8_t* p) {
  uint32_t v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}

// A[i, k..k+3] of the rows a[0..kRows-1] against b, for kRows rows.
template <size_t kRows>
OCTET_KERNEL_INLINE void Step(const uint8_t* const a[kMr], size_t k, const BQuads& b,
                              TileAcc& acc) {
  DotRow(acc.r0, _mm512_set1_epi32(static_cast<int>(LoadDword(a[0] + k))), b);
  if (kRows > 1) DotRow(acc.r1, _mm512_set1_epi32(static_cast<int>(LoadDword(a[1] + k))), b);
  if (kRows > 2) DotRow(acc.r2, _mm512_set1_epi32(static_cast<int>(LoadDword(a[2] + k))), b);
  if (kRows > 3) DotRow(acc.r3, _mm512_set1_epi32(static_cast<int>(LoadDword(a[3] + k))), b);
}

// Stores the first nr columns of one row of a tile, in column order (a 4 x 4
// transpose of the accumulators' 128-bit lanes); with kMasked, nr < 64.
template <bool kMasked>
OCTET_KERNEL_INLINE void StoreRow(int32_t* c, const RowAcc& acc, size_t nr) {
  // t01 = [c0.l0, c0.l1, c1.l0, c1.l1], t23 = the same of c2, c3, and so on.
  const __m512i t01 = _mm512_shuffle_i32x4(acc.c0, acc.c1, _MM_SHUFFLE(1, 0, 1, 0));
  const __m512i t23 = _mm512_shuffle_i32x4(acc.c2, acc.c3, _MM_SHUFFLE(1, 0, 1, 0));
  const __m512i u01 = _mm512_shuffle_i32x4(acc.c0, acc.c1, _MM_SHUFFLE(3, 2, 3, 2));
  const __m512i u23 = _mm512_shuffle_i32x4(acc.c2, acc.c3, _MM_SHUFFLE(3, 2, 3, 2));
  const __m512i cols[4] = {
      _mm512_shuffle_i32x4(t01, t23, _MM_SHUFFLE(2, 0, 2, 0)),  // columns 0..15
      _mm512_shuffle_i32x4(t01, t23, _MM_SHUFFLE(3, 1, 3, 1)),  // 16..31
      _mm512_shuffle_i32x4(u01, u23, _MM_SHUFFLE(2, 0, 2, 0)),  // 32..47
      _mm512_shuffle_i32x4(u01, u23, _MM_SHUFFLE(3, 1, 3, 1)),  // 48..63
  };
  for (size_t j = 0; j < 4; ++j) {
    if (kMasked) {
      const size_t n = nr > 16 * j ? nr - 16 * j : 0;
      const __mmask16 mask = n >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << n) - 1);
      _mm512_mask_storeu_epi32(c + 16 * j, mask, cols[j]);
    } else {
      _mm512_storeu_si512(c + 16 * j, cols[j]);
    }
  }
}

// One tile: kRows rows a[0..kRows-1] of A against the columns at b (row stride
// ldb) of B, all K values of k; stores C's rows c, c + ldc, .. (nr columns).
template <size_t kRows, bool kMasked>
OCTET_KERNEL_INLINE void VnniTile(const uint8_t* const a[kMr], const int8_t* b, size_t ldb,
                                  size_t K, size_t nr, int32_t* c, size_t ldc) {
  const __mmask64 mask = kMasked ? (static_cast<__mmask64>(1) << nr) - 1 : ~__mmask64{0};
  const __m512i zero = _mm512_setzero_si512();
  const RowAcc zero_row = {zero, zero, zero, zero};
  TileAcc acc = {zero_row, zero_row, zero_row, zero_row};
  const size_t k_main = K - K % 4;
  if (K % 4 != 0) {
    // The last K % 4 (1..3) values of k: rows of B past K are zeros, and so are
    // the bytes of A's dword past K.
    const size_t rem = K % 4;
    const int8_t* row = b + k_main * ldb;
    const __m512i r1 = rem > 1 ? LoadRow<kMasked>(row + ldb, mask) : zero;
    const __m512i r2 = rem > 2 ? LoadRow<kMasked>(row + 2 * ldb, mask) : zero;
    const BQuads quads = Interleave(LoadRow<kMasked>(row, mask), r1, r2, zero);
    uint8_t tail[kMr][4] = {};  // [row, k]: A[i, k_main:K], zero-padded
    for (size_t i = 0; i < kRows; ++i) {
      for (size_t t = 0; t < rem; ++t) tail[i][t] = a[i][k_main + t];
    }
    const uint8_t* const at[kMr] = {tail[0], tail[1], tail[2], tail[3]};
    Step<kRows>(at, 0, quads, acc);
  }
  for (size_t k = 0; k < k_main; k += 4) {
    const int8_t* row = b + k * ldb;
    const BQuads quads =
        Interleave(LoadRow<kMasked>(row, mask), LoadRow<kMasked>(row + ldb, mask),
                   LoadRow<kMasked>(row + 2 * ldb, mask), LoadRow<kMasked>(row + 3 * ldb, mask));
    Step<kRows>(a, k, quads, acc);
  }
  StoreRow<kMasked>(c, acc.r0, nr);
  if (kRows > 1) StoreRow<kMasked>(c + ldc, acc.r1, nr);
  if (kRows > 2) StoreRow<kMasked>(c + 2 * ldc, acc.r2, nr);
  if (kRows > 3) StoreRow<kMasked>(c + 3 * ldc, acc.r3, nr);
}

// VnniTile for kRows = mr (1..4). A switch: see TileOfRows in
// kernels/qs8_gemm_driver.h.
template <bool kMasked>
OCTET_KERNEL_INLINE void TileOfRows(size_t mr, const uint8_t* const a[kMr], const int8_t* b,
                                    size_t ldb, size_t K, size_t nr, int32_t* c, size_t ldc) {
  switch (mr) {
    case 1:
      VnniTile<1, kMasked>(a, b, ldb, K, nr, c, ldc);
      break;
    case 2:
      VnniTile<2, kMasked>(a, b, ldb, K, nr, c, ldc);
      break;
    case 3:
      VnniTile<3, kMasked>(a, b, ldb, K, nr, c, ldc);
      break;
    default:
      VnniTile<4, kMasked>(a, b, ldb, K, nr, c, ldc);
      break;
  }
}

}  // namespace

void qu8s8_pv_4x64c4__avx512vnni(size_t M, size_t N, size_t K, const uint8_t* A, size_t lda,
                                 const int8_t* B, size_t ldb, int32_t* C, size_t ldc) {
  for (size_t m0 = 0; m0 < M; m0 += kMr) {
    const size_t mr = M - m0 < kMr ? M - m0 : kMr;
    const uint8_t* a[kMr];  // rows m0.. of A; past M, row m0 again (never read)
    for (size_t i = 0; i < kMr; ++i) a[i] = A + (m0 + (i < mr ? i : 0)) * lda;
    int32_t* c = C + m0 * ldc;
    size_t n0 = 0;
    for (; n0 + kNr <= N; n0 += kNr) TileOfRows<false>(mr, a, B + n0, ldb, K, kNr, c + n0, ldc);
    if (n0 < N) TileOfRows<true>(mr, a, B + n0, ldb, K, N - n0, c + n0, ldc);
  }
}

}  // namespace octet
