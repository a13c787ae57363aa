// qs8_packed_gemm_avx512vnni_tile.h: the code of the AVX512-VNNI variants of
// qs8_packed_gemm and qs8_packed_gemm_f32 (the same product with
// qs8_dequantize_rows fused into its stores; contracts and layout in
// kernels/qs8_packed_gemm.h), each defined in its own file
// (x86/qs8_packed_gemm_8x32c4__avx512vnni.cc and
// x86/qs8_packed_gemm_f32_8x32c4__avx512vnni.cc) from the templates here,
// which are internal to each file that includes this one (an anonymous
// namespace: nothing weak is shared between files compiled apart).
//
// Tiling: tiles of C of 8 rows x 32 channels (2 packed tiles), 16 accumulators,
// one zmm per (row, packed tile), each int32 lane one channel. A step takes one
// group of 4 k: 2 zmm loads of weights (a group row of each packed tile), and per
// row one vpbroadcastd of 4 bytes of A and 2 vpdpbusd. The accumulators are
// columns of C: stored as they are, no reduction. With M <= 4 (decoding) a tile
// is 1..4 rows x 16 channels (one packed tile), so the weights stream from memory
// in one sequential pass, tile after tile; with 1 or 2 rows it splits k over 4 or
// 2 sets of accumulators (alternate groups), so 4 vpdpbusd chains cover the
// instruction's latency.
//
// Exactness: vpdpbusd multiplies unsigned by signed bytes, so the A block holds
// A + 128 (xor 0x80 maps int8 onto uint8), which adds 128 * sum_k B[n, k] to
// C[m, n]; the accumulators start at the packed corr = -128 * sum_k B[n, k] to
// cancel it. A partial sum after k' values of k is then
// sum_{k<k'} A B - 128 sum_{k>=k'} B, a sum of K terms of magnitude <= 2^14:
// <= 2^30, so nothing wraps (vpdpbusd would wrap, not saturate, anyway). The
// padding k of a group (K % 4 != 0) have zero weights: whatever the A block holds
// there adds nothing.
//
// Two paths. Prefill with K % 4 == 0 (every model's K) reads A in place: see
// "Prefill with K % 4 == 0" below. The rest (M <= 4, decoding, and any K) is
// the copy path described here.
//
// Blocking: A is copied, +128, into a stack block of up to 8 rows x kKc k (33
// KB: rows kKc + 64 bytes apart, so they do not share L1 sets); k is cut into blocks of kKc = 4096 (one for every K of BERT-base and
// Llama-class small models), the later blocks adding to C. Loops: k block, then
// column blocks of kNc = 64 packed tiles (1024 channels: 0.8 MB of weights at
// K = 768, which stay in the L2 cache of most x86 cores while every row tile of
// A passes over them), then row tiles (their A block in L1), then the tiles of C.
// The copy costs one xor per 64 bytes of A per column block, under 1% of the
// vpdpbusd at M = 128. (On the Zen 4 this was tuned on, k blocks of 1024 or
// column blocks of 256 channels were 2-5% slower; no column blocks at all, about
// the same.)
//
// Edges: rows past M are not computed (a tile is compiled for each row count);
// channels past N in the last packed tile are computed (zero weights) and not
// stored (masked stores; a later k block loads C with the same masks).
//
// Code shape, for GCC 12: the accumulators are an array, kept in registers only
// because every loop that touches it is unrolled (#pragma GCC unroll; one loop
// left rolled and the array lives on the stack); they start from one masked load
// each and leave through Opaque (see there): with a branch between two sets of
// loads, or without Opaque, each vpdpbusd of the loop gets copies around it.

// GCC 12's AVX-512 intrinsics initialize their "undefined" operands from
// themselves (__m512i __Y = __Y), which -Wmaybe-uninitialized reports at every use.
#pragma once

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
#include "kernels/qs8_packed_gemm.h"

namespace octet {
namespace {

constexpr size_t kNr = kQs8PackedNr;  // channels per packed tile (one zmm of int32)
constexpr size_t kMr = 8;             // rows of A per tile of C
constexpr size_t kKc = 4096;          // k per block of A (a multiple of 64)
constexpr size_t kNc = 64;            // packed tiles per column block

// Rows m0.. of A for k in [k0, k0 + kc), + 128: [row][k] as uint8.
struct ABlock {
  alignas(64) uint8_t rows[kMr][kKc + 64];  // + 64: rows 4 KB apart would share L1 sets
};

// dst[0..count) = a[0..count) + 128 (as uint8), count in 1..kKc; the rest of the
// last 64 bytes is 0x80 (it meets zero weights or is not read).
OCTET_KERNEL_INLINE void CopyRowPlus128(const int8_t* a, size_t count, uint8_t* dst) {
  const __m512i v128 = _mm512_set1_epi8(static_cast<char>(0x80));
  size_t k = 0;
  for (; k + 64 <= count; k += 64) {
    _mm512_store_si512(dst + k, _mm512_xor_si512(_mm512_loadu_si512(a + k), v128));
  }
  if (k < count) {
    const __mmask64 mask = (static_cast<__mmask64>(1) << (count - k)) - 1;
    _mm512_store_si512(dst + k, _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, a + k), v128));
  }
}

// 4 bytes at p broadcast to the 16 lanes.
OCTET_KERNEL_INLINE __m512i Broadcast4(const uint8_t* p) {
  return _mm512_broadcastd_epi32(_mm_loadu_si32(p));
}

// v, through an empty asm statement that hides where it comes from. Without it
// GCC 12 copies every accumulator around each vpdpbusd of the k loop when the
// loop's results go straight into masked stores or adds.
OCTET_KERNEL_INLINE __m512i Opaque(__m512i v) {
  __asm__("" : "+v"(v));
  return v;
}

// Where qs8_packed_gemm_f32 puts its results: rows from the tile's first row,
// channels from its first channel (unused by qs8_packed_gemm).
struct Dequant {
  const float* row_scales;  // [rows]
  const float* col_scales;  // [channels]
  const float* bias;        // [channels] or null
  Dequant Offset(size_t row, size_t channel) const {
    if (row_scales == nullptr) return *this;  // qs8_packed_gemm: nothing to offset
    return {row_scales + row, col_scales + channel, bias != nullptr ? bias + channel : nullptr};
  }
};

// The masked channels of one row of C, dequantized as qs8_dequantize_rows does
// (each operation rounded on its own: the file is compiled with
// -ffp-contract=off), stored as float over the int32 slots at c.
OCTET_KERNEL_INLINE void StoreDequantized(__m512i acc, float row_scale, const float* col_scales,
                                          const float* bias, int32_t* c, __mmask16 mask) {
  const __m512 scale =
      _mm512_mul_ps(_mm512_set1_ps(row_scale), _mm512_maskz_loadu_ps(mask, col_scales));
  __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), scale);
  if (bias != nullptr) y = _mm512_add_ps(y, _mm512_maskz_loadu_ps(mask, bias));
  _mm512_mask_storeu_ps(c, mask, y);
}

// One group of k, g: acc[i][t] += a.rows[i][4g..4g+3] . w[g] of packed tile t.
template <size_t kRows, size_t kTiles>
OCTET_KERNEL_INLINE void Step(const ABlock& a, const int8_t* w, size_t tile_bytes, size_t g,
                              __m512i acc[kRows][kTiles]) {
  __m512i b[kTiles];  // [packed tile]: group g, 16 channels x 4 k
#pragma GCC unroll 4
  for (size_t t = 0; t < kTiles; ++t) b[t] = _mm512_loadu_si512(w + t * tile_bytes + g * 64);
#pragma GCC unroll 8
  for (size_t i = 0; i < kRows; ++i) {
    const __m512i va = Broadcast4(a.rows[i] + g * 4);
#pragma GCC unroll 4
    for (size_t t = 0; t < kTiles; ++t) acc[i][t] = _mm512_dpbusd_epi32(acc[i][t], va, b[t]);
  }
}

// One tile of C: rows 0..kRows-1 of the A block (groups [0, groups) of its k)
// against kTiles packed tiles from `tile` (stride tile_bytes), at k0 of the
// packed k. first: C = corr + the products; otherwise C += the products.
// masks[t]: the channels of packed tile t to store. kSplit sets of accumulators
// take turns over the groups (see Split), added before the store.
template <size_t kRows, size_t kTiles, size_t kSplit, bool kF32>
OCTET_KERNEL_INLINE void Tile(const ABlock& a, size_t groups, const int8_t* tile, size_t tile_bytes,
                              size_t k0, bool first, bool last, int32_t* c, size_t ldc,
                              const __mmask16* masks, const Dequant& dq) {
  // The accumulators start from corr (first) or C, through one masked load each:
  // a branch between two sets of loads makes GCC copy every accumulator around
  // each vpdpbusd of the loop.
  const int8_t* init = first ? tile : reinterpret_cast<const int8_t*>(c);
  const size_t init_row = first ? 0 : ldc * sizeof(int32_t);            // bytes
  const size_t init_tile = first ? tile_bytes : kNr * sizeof(int32_t);  // bytes
  __m512i acc[kSplit][kRows][kTiles];  // [k split][row][packed tile]: 16 channels of C
#pragma GCC unroll 8
  for (size_t i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
    for (size_t t = 0; t < kTiles; ++t) {
      acc[0][i][t] = _mm512_maskz_loadu_epi32(masks[t], init + i * init_row + t * init_tile);
#pragma GCC unroll 4
      for (size_t s = 1; s < kSplit; ++s) acc[s][i][t] = _mm512_setzero_si512();
    }
  }
  const int8_t* w = tile + kQs8PackedCorrBytes + k0 * kNr;  // [group][16][4] of packed tile 0
  const size_t rem = groups % kSplit;
  for (size_t g = 0; g < rem; ++g) Step<kRows, kTiles>(a, w, tile_bytes, g, acc[0]);
  for (size_t g = rem; g < groups; g += kSplit) {
#pragma GCC unroll 4
    for (size_t s = 0; s < kSplit; ++s) Step<kRows, kTiles>(a, w, tile_bytes, g + s, acc[s]);
  }
#pragma GCC unroll 8
  for (size_t i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
    for (size_t t = 0; t < kTiles; ++t) {
      __m512i sum = Opaque(acc[0][i][t]);
#pragma GCC unroll 4
      for (size_t s = 1; s < kSplit; ++s) sum = _mm512_add_epi32(sum, Opaque(acc[s][i][t]));
      if (kF32 && last) {
        StoreDequantized(sum, dq.row_scales[i], dq.col_scales + t * kNr,
                         dq.bias != nullptr ? dq.bias + t * kNr : nullptr, c + i * ldc + t * kNr,
                         masks[t]);
      } else {
        _mm512_mask_storeu_epi32(c + i * ldc + t * kNr, masks[t], sum);
      }
    }
  }
}

// The k split of a tile: a tile of one packed tile and 1 or 2 rows has too few
// vpdpbusd chains to hide the instruction's latency (4-5 cycles), so it keeps 4 or
// 2 sets of accumulators, for alternate groups of k.
constexpr size_t Split(size_t rows, size_t tiles) { return tiles > 1 || rows > 2 ? 1 : 4 / rows; }

// Tile<kRows, kTiles, Split> for kRows = mr (1..kMaxRows): a switch, so each row count
// has its own loop with its accumulators in registers.
template <size_t kTiles, size_t kMaxRows, bool kF32>
OCTET_KERNEL_INLINE void TileOfRows(size_t mr, const ABlock& a, size_t groups, const int8_t* tile,
                                    size_t tile_bytes, size_t k0, bool first, bool last,
                                    int32_t* c, size_t ldc, const __mmask16* masks,
                                    const Dequant& dq) {
  static_assert(kMaxRows == 4 || kMaxRows == 8, "row tiles of up to 4 or 8 rows");
#define OCTET_TILE_CASE(rows)                                                              \
  case rows:                                                                               \
    return Tile<rows, kTiles, Split(rows, kTiles), kF32>(a, groups, tile, tile_bytes, k0, \
                                                         first, last, c, ldc, masks, dq)
  switch (mr) {
    OCTET_TILE_CASE(1);
    OCTET_TILE_CASE(2);
    OCTET_TILE_CASE(3);
    OCTET_TILE_CASE(4);
    default:
      break;
  }
  if constexpr (kMaxRows == 8) {
    switch (mr) {
      OCTET_TILE_CASE(5);
      OCTET_TILE_CASE(6);
      OCTET_TILE_CASE(7);
      default:
        return Tile<8, kTiles, Split(8, kTiles), kF32>(a, groups, tile, tile_bytes, k0, first,
                                                       last, c, ldc, masks, dq);
    }
  }
#undef OCTET_TILE_CASE
}

// The channels of packed tile j to store: those below N.
OCTET_KERNEL_INLINE __mmask16 ChannelMask(size_t N, size_t j) {
  const size_t n = N - j * kNr;
  return n >= kNr ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n) - 1);
}

// The tiles of C of rows m0 .. m0 + mr - 1 (c and dq start at row m0) and packed
// tiles [j0, j1): kWide packed tiles at a time, then 2, then 1.
template <size_t kWide, size_t kMaxRows, bool kF32>
OCTET_KERNEL_INLINE void RowTile(size_t mr, const ABlock& a, size_t groups, const int8_t* packed,
                                 size_t tile_bytes, size_t j0, size_t j1, size_t N, size_t k0,
                                 bool first, bool last, int32_t* c, size_t ldc,
                                 const Dequant& dq) {
  size_t j = j0;
  for (; j + kWide <= j1; j += kWide) {
    __mmask16 masks[kWide];
    for (size_t t = 0; t < kWide; ++t) masks[t] = ChannelMask(N, j + t);
    TileOfRows<kWide, kMaxRows, kF32>(mr, a, groups, packed + j * tile_bytes, tile_bytes, k0,
                                      first, last, c + j * kNr, ldc, masks,
                                      dq.Offset(0, j * kNr));
  }
  if constexpr (kWide > 2) {
    if (j + 2 <= j1) {
      const __mmask16 masks[2] = {ChannelMask(N, j), ChannelMask(N, j + 1)};
      TileOfRows<2, kMaxRows, kF32>(mr, a, groups, packed + j * tile_bytes, tile_bytes, k0, first,
                                    last, c + j * kNr, ldc, masks, dq.Offset(0, j * kNr));
      j += 2;
    }
  }
  if (j < j1) {
    const __mmask16 mask = ChannelMask(N, j);
    TileOfRows<1, kMaxRows, kF32>(mr, a, groups, packed + j * tile_bytes, tile_bytes, k0, first,
                                  last, c + j * kNr, ldc, &mask, dq.Offset(0, j * kNr));
  }
}

// The whole product with row tiles of up to kMaxRows rows and kWide packed tiles.
// kF32: C is the float output's memory (ldc = ldo), holding int32 partial sums
// between k blocks, and the last k block stores the dequantized floats over them.
template <size_t kWide, size_t kMaxRows, bool kF32>
OCTET_KERNEL_INLINE void Gemm(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                              const int8_t* packed, int32_t* C, size_t ldc, const Dequant& dq) {
  const size_t kp = (K + kQs8PackedKGroup - 1) / kQs8PackedKGroup * kQs8PackedKGroup;
  const size_t tile_bytes = kQs8PackedCorrBytes + kNr * kp;
  const size_t tiles = (N + kNr - 1) / kNr;
  ABlock a;
  for (size_t k0 = 0; k0 < kp; k0 += kKc) {
    const size_t kc = kp - k0 < kKc ? kp - k0 : kKc;  // a multiple of 4
    const size_t groups = kc / kQs8PackedKGroup;
    const size_t k_count = K - k0 < kc ? K - k0 : kc;  // >= 1: k0 <= kp - 4 < K
    const bool last = k0 + kc == kp;
    for (size_t j0 = 0; j0 < tiles; j0 += kNc) {
      const size_t j1 = tiles - j0 < kNc ? tiles : j0 + kNc;
      for (size_t m0 = 0; m0 < M; m0 += kMaxRows) {
        const size_t mr = M - m0 < kMaxRows ? M - m0 : kMaxRows;
        for (size_t i = 0; i < mr; ++i) CopyRowPlus128(A + (m0 + i) * lda + k0, k_count, a.rows[i]);
        RowTile<kWide, kMaxRows, kF32>(mr, a, groups, packed, tile_bytes, j0, j1, N, k0, k0 == 0,
                                       last, C + m0 * ldc, ldc, dq.Offset(m0, 0));
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Prefill with K % 4 == 0 and M > 4: A read in place, weights offset in
// registers. vpdpbusd's memory operand can be a 4-byte broadcast ({1to16}) but
// is its signed operand, so here A (signed) is that operand, read straight from
// its rows, and the weights become the unsigned one: each loaded group row is
// xored with 0x80 (B + 128), 1 vpxord per 8 vpdpbusd, which replaces the 8
// vpbroadcastd and the copy of A. B + 128 adds 128 * sum_k A[m, k] to C[m, n]:
// the accumulators of row m start at -128 * sum_k A[m, k] (RowCorr), so a
// partial sum after k' values of k is sum_{k<k'} A B - 128 sum_{k>=k'} A, a sum
// of K terms of magnitude <= 2^14 as before (no k blocks are needed). K % 4 == 0
// keeps every group inside A's row (a partial group would read the next row's
// bytes, or past A, against padding that the xor makes 128).
//
// Loops: chunks of kMc rows (their A, <= 384 KB at K = 3072, stays in the L2
// cache), then column tiles of 2 packed tiles (their weights, 24 KB at K = 768,
// stay in L1 or L2), then row tiles of 8 rows. Each weight byte comes from
// memory once per chunk and serves all its rows at once, and while a column
// tile is computed the next one is prefetched into L2, one slice per row tile.
// A layer's weights come from DRAM (a model is read once per forward pass):
// with row tiles as the outer loop (the copy path below) the first row tile
// of each column block waits for them. Measured on a Zen 5 (AVX512-VNNI, 2
// vpdpbusd a cycle), 128 x 3072 x 768 products over 48 matrices in turn (113
// MB, as a model's layers): 680 GOPS with the copy path, 770 with this one (880
// with one matrix, in cache, for both).
//
// Addresses: row i of a row tile is p0 or p4 (rows 0, 4) + 0, 1, 2 or 3 lda,
// each one base + index * scale, so the k loop keeps its pointers in registers.

constexpr size_t kMc = 128;  // rows per chunk

// corr[i] = -128 * sum_k A[i, k] for the rows of a chunk.
OCTET_KERNEL_INLINE void RowCorr(size_t rows, size_t K, const int8_t* A, size_t lda,
                                 int32_t* corr) {
  const __m512i ones = _mm512_set1_epi8(1);
  for (size_t i = 0; i < rows; ++i) {
    const int8_t* a = A + i * lda;
    __m512i sum = _mm512_setzero_si512();
    size_t k = 0;
    for (; k + 64 <= K; k += 64) sum = _mm512_dpbusd_epi32(sum, ones, _mm512_loadu_si512(a + k));
    if (k < K) {
      const __mmask64 mask = (static_cast<__mmask64>(1) << (K - k)) - 1;
      sum = _mm512_dpbusd_epi32(sum, ones, _mm512_maskz_loadu_epi8(mask, a + k));
    }
    corr[i] = -128 * _mm512_reduce_add_epi32(sum);
  }
}

// One tile of C: kRows rows of A in place (row stride lda) against kTiles
// packed tiles from `tile`, over all K (groups of 4).
template <size_t kRows, size_t kTiles, bool kF32>
OCTET_KERNEL_INLINE void InPlaceTile(const int8_t* A, size_t lda, const int32_t* corr,
                                     size_t groups, const int8_t* tile, size_t tile_bytes,
                                     int32_t* c, size_t ldc, const __mmask16* masks,
                                     const Dequant& dq) {
  const __m512i v128 = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i acc[kRows][kTiles];
#pragma GCC unroll 8
  for (size_t i = 0; i < kRows; ++i) {
    const __m512i start = _mm512_set1_epi32(corr[i]);
#pragma GCC unroll 4
    for (size_t t = 0; t < kTiles; ++t) acc[i][t] = start;
  }
  // Row i at (p0 or p4) + (i % 4) lda: base + index * scale (lda scaled by 1
  // or 2, or lda3), 4 registers for 8 rows (see the comment on kMc).
  const size_t lda3 = 3 * lda;
  const int8_t* p0 = A;
  const int8_t* p4 = A + 4 * lda;
  const int8_t* w = tile + kQs8PackedCorrBytes;  // [group][16][4] of packed tile 0
  for (size_t g = 0; g < groups; ++g) {
    __m512i b[kTiles];
#pragma GCC unroll 4
    for (size_t t = 0; t < kTiles; ++t) {
      b[t] = _mm512_xor_si512(_mm512_loadu_si512(w + t * tile_bytes + g * 64), v128);
    }
#pragma GCC unroll 8
    for (size_t i = 0; i < kRows; ++i) {
      const int8_t* base = (i < 4 ? p0 : p4) + g * 4;
      const size_t i4 = i % 4;
      int32_t a4;
      __builtin_memcpy(&a4, i4 == 3 ? base + lda3 : base + i4 * lda, sizeof(a4));
      const __m512i va = _mm512_set1_epi32(a4);
#pragma GCC unroll 4
      for (size_t t = 0; t < kTiles; ++t) acc[i][t] = _mm512_dpbusd_epi32(acc[i][t], b[t], va);
    }
  }
#pragma GCC unroll 8
  for (size_t i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
    for (size_t t = 0; t < kTiles; ++t) {
      const __m512i sum = Opaque(acc[i][t]);
      if (kF32) {
        StoreDequantized(sum, dq.row_scales[i], dq.col_scales + t * kNr,
                         dq.bias != nullptr ? dq.bias + t * kNr : nullptr, c + i * ldc + t * kNr,
                         masks[t]);
      } else {
        _mm512_mask_storeu_epi32(c + i * ldc + t * kNr, masks[t], sum);
      }
    }
  }
}

// InPlaceTile for mr = 1..8 rows.
template <size_t kTiles, bool kF32>
OCTET_KERNEL_INLINE void InPlaceTileOfRows(size_t mr, const int8_t* A, size_t lda,
                                           const int32_t* corr, size_t groups, const int8_t* tile,
                                           size_t tile_bytes, int32_t* c, size_t ldc,
                                           const __mmask16* masks, const Dequant& dq) {
#define OCTET_IN_PLACE_CASE(rows)                                                        \
  case rows:                                                                             \
    return InPlaceTile<rows, kTiles, kF32>(A, lda, corr, groups, tile, tile_bytes, c, ldc, \
                                           masks, dq)
  switch (mr) {
    OCTET_IN_PLACE_CASE(1);
    OCTET_IN_PLACE_CASE(2);
    OCTET_IN_PLACE_CASE(3);
    OCTET_IN_PLACE_CASE(4);
    OCTET_IN_PLACE_CASE(5);
    OCTET_IN_PLACE_CASE(6);
    OCTET_IN_PLACE_CASE(7);
    default:
      return InPlaceTile<8, kTiles, kF32>(A, lda, corr, groups, tile, tile_bytes, c, ldc, masks,
                                          dq);
  }
#undef OCTET_IN_PLACE_CASE
}

template <bool kF32>
void InPlaceGemm(size_t M, size_t N, size_t K, const int8_t* A, size_t lda, const int8_t* packed,
                 int32_t* C, size_t ldc, const Dequant& dq) {
  const size_t tile_bytes = kQs8PackedCorrBytes + kNr * K;  // K % 4 == 0
  const size_t tiles = (N + kNr - 1) / kNr;
  const size_t groups = K / kQs8PackedKGroup;
  int32_t corr[kMc];
  for (size_t c0 = 0; c0 < M; c0 += kMc) {
    const size_t rows = M - c0 < kMc ? M - c0 : kMc;
    RowCorr(rows, K, A + c0 * lda, lda, corr);
    for (size_t j = 0; j < tiles; j += 2) {
      const int8_t* tile = packed + j * tile_bytes;
      const __mmask16 masks[2] = {ChannelMask(N, j),
                                   j + 1 < tiles ? ChannelMask(N, j + 1) : __mmask16{0}};
      // The next column tile's weights, one slice per row tile, into L2.
      const size_t next_tiles = tiles - j - (j + 1 < tiles ? 2 : 1);  // after this column tile
      const size_t next_bytes = (next_tiles < 2 ? next_tiles : 2) * tile_bytes;
      const char* next =
          next_bytes > 0 ? reinterpret_cast<const char*>(tile + 2 * tile_bytes) : nullptr;
      const size_t row_tiles = (rows + kMr - 1) / kMr;
      const size_t slice = (next_bytes / 64 + row_tiles - 1) / row_tiles * 64;
      for (size_t m0 = c0; m0 < c0 + rows; m0 += kMr) {
        const size_t mr = c0 + rows - m0 < kMr ? c0 + rows - m0 : kMr;
        const size_t from = (m0 - c0) / kMr * slice;
        for (size_t off = from; off < from + slice && off < next_bytes; off += 64) {
          _mm_prefetch(next + off, _MM_HINT_T1);
        }
        const Dequant at = dq.Offset(m0, j * kNr);
        if (j + 1 < tiles) {
          InPlaceTileOfRows<2, kF32>(mr, A + m0 * lda, lda, corr + (m0 - c0), groups, tile,
                                     tile_bytes, C + m0 * ldc + j * kNr, ldc, masks, at);
        } else {
          InPlaceTileOfRows<1, kF32>(mr, A + m0 * lda, lda, corr + (m0 - c0), groups, tile,
                                     tile_bytes, C + m0 * ldc + j * kNr, ldc, masks, at);
        }
      }
    }
  }
}

}  // namespace
}  // namespace octet
