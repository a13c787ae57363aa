// qs8_packed_gemm_4x8c4__avx2: AVX2 variant of qs8_packed_gemm (contract and
// layout in kernels/qs8_packed_gemm.h). A is read in place; no copies.
//
// Tiling: tiles of C of 4 rows x 8 channels (half a packed tile: the first or
// last 32 bytes of each group row). A step takes one group of 4 k: the 8
// channels' 32 bytes are sign-extended to int16 (vpmovsxbw) into 2 ymm of 4
// channels x 4 k; per row, the group's 4 bytes of A are broadcast and
// sign-extended to [a0 a1 a2 a3] x 4 int16, and vpmaddwd multiplies them with
// each ymm, adding k pairs into int32 lanes: (channel c, k 0-1), (c, k 2-3), ...
// So each channel has 2 lanes in its row's accumulators, added once per tile
// (vphaddd), after the k loop. 8 accumulators + 2 weight registers + A fit the
// 16 ymm registers.
//
// Exactness: vpmaddubsw (unsigned x signed bytes, pairs added into int16) is not
// used: it saturates, e.g. 255 * 127 + 255 * 127 > 2^15, for any offset that
// makes one side unsigned. Here both sides are int16: every product is at most
// 2^14 in magnitude, the pair vpmaddwd adds lands in int32, and the accumulators
// hold partial sums of at most K * 2^14 <= 2^30 (kQs8GemmMaxK). The packed corr is
// not used.
//
// Edges: the last group of k (K % 4 != 0) is done first, from a zero-padded copy
// of its 1..3 bytes of A (the weights past K are zero); rows past M are not computed
// (a tile is compiled for each row count); channels past N are computed (zero
// weights) and not stored.
//
// Code shape, for GCC 12: the accumulators are an array, kept in registers only
// because every loop that touches it is unrolled (#pragma GCC unroll).

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel_inline.h"
#include "kernels/qs8_packed_gemm.h"

namespace octet {
namespace {

constexpr size_t kNr = kQs8PackedNr;  // channels per packed tile
constexpr size_t kMr = 4;             // rows of A per tile of C
constexpr size_t kHalf = 8;           // channels per tile of C

// [a0 a1 a2 a3] x 4 as int16 from the 4 bytes at p: vbroadcastss from memory (a
// plain load; GCC 12 turns _mm_broadcastd_epi32 of a load into vmovd + vpshufd),
// then one vpmovsxbw.
OCTET_KERNEL_INLINE __m256i BroadcastA(const void* p) {
  return _mm256_cvtepi8_epi16(_mm_castps_si128(_mm_broadcast_ss(static_cast<const float*>(p))));
}

// acc[i][h] += (4 bytes at a[i]) . w half h (channels 4h..4h+3 of the tile of C).
template <size_t kRows>
OCTET_KERNEL_INLINE void Step(const void* const a[kRows], const int8_t* w, __m256i acc[kRows][2]) {
  const __m256i b0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
  const __m256i b1 =
      _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 16)));
#pragma GCC unroll 4
  for (size_t i = 0; i < kRows; ++i) {
    const __m256i va = BroadcastA(a[i]);
    acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(va, b0));
    acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(va, b1));
  }
}

// v, through an empty asm statement that hides where it comes from. Without it
// GCC 12 -O3 copies every accumulator after each add of the k loop (and spills
// one) when the loop's results go straight into the horizontal adds.
OCTET_KERNEL_INLINE __m256i Opaque(__m256i v) {
  __asm__("" : "+x"(v));
  return v;
}

// c[0..n) of the 8 channels: lanes (channel, k pair) of lo (channels 0..3) and hi
// (4..7) added pairwise.
OCTET_KERNEL_INLINE void StoreRow(int32_t* c, __m256i lo, __m256i hi, size_t n) {
  // Per 128-bit lane: [c0 c1 c4 c5 | c2 c3 c6 c7], then the 64-bit pairs in order.
  const __m256i sums = _mm256_permute4x64_epi64(_mm256_hadd_epi32(lo, hi), _MM_SHUFFLE(3, 1, 2, 0));
  if (n == kHalf) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c), sums);
    return;
  }
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), lane);
  _mm256_maskstore_epi32(c, mask, sums);  // masked-off lanes are not written (or faulted on)
}

// One tile of C: rows a[0..kRows-1] of A (row stride lda) against the 8 channels
// of w ([groups][16][4] of one packed tile, from its first or second half), over
// all K; stores the first n (1..8) channels of each row.
template <size_t kRows>
OCTET_KERNEL_INLINE void Tile(const int8_t* a, size_t lda, size_t K, const int8_t* w, int32_t* c,
                              size_t ldc, size_t n) {
  __m256i acc[kRows][2];  // [row][channels 0-3, 4-7]: 2 lanes (k pairs) per channel
#pragma GCC unroll 4
  for (size_t i = 0; i < kRows; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_si256();
  const size_t full = K / 4;  // groups of 4 k of A
  if (K % 4 != 0) {
    int8_t tail[kRows][4] = {};  // [row]: the last K % 4 k of A, zero-padded
    const void* rows[kRows];
#pragma GCC unroll 4
    for (size_t i = 0; i < kRows; ++i) {
      for (size_t t = 0; t < K % 4; ++t) tail[i][t] = a[i * lda + 4 * full + t];
      rows[i] = tail[i];
    }
    Step<kRows>(rows, w + full * 64, acc);
  }
  for (size_t g = 0; g < full; ++g) {
    const void* rows[kRows];
#pragma GCC unroll 4
    for (size_t i = 0; i < kRows; ++i) rows[i] = a + i * lda + 4 * g;
    Step<kRows>(rows, w + g * 64, acc);
  }
#pragma GCC unroll 4
  for (size_t i = 0; i < kRows; ++i) StoreRow(c + i * ldc, Opaque(acc[i][0]), Opaque(acc[i][1]), n);
}

}  // namespace

void qs8_packed_gemm_4x8c4__avx2(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                                 const int8_t* packed, int32_t* C, size_t ldc) {
  const size_t kp = (K + kQs8PackedKGroup - 1) / kQs8PackedKGroup * kQs8PackedKGroup;
  const size_t tile_bytes = kQs8PackedCorrBytes + kNr * kp;
  for (size_t n0 = 0; n0 < N; n0 += kHalf) {
    const size_t n = N - n0 < kHalf ? N - n0 : kHalf;
    // [groups][16][4] of packed tile n0 / 16, from channel n0 % 16 (0 or 8).
    const int8_t* w = packed + n0 / kNr * tile_bytes + kQs8PackedCorrBytes + n0 % kNr * 4;
    for (size_t m0 = 0; m0 < M; m0 += kMr) {
      const int8_t* a = A + m0 * lda;
      int32_t* c = C + m0 * ldc + n0;
      switch (M - m0 < kMr ? M - m0 : kMr) {
        case 1:
          Tile<1>(a, lda, K, w, c, ldc, n);
          break;
        case 2:
          Tile<2>(a, lda, K, w, c, ldc, n);
          break;
        case 3:
          Tile<3>(a, lda, K, w, c, ldc, n);
          break;
        default:
          Tile<4>(a, lda, K, w, c, ldc, n);
          break;
      }
    }
  }
}

}  // namespace octet
