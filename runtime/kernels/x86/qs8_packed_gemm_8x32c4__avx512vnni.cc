// qs8_packed_gemm_8x32c4__avx512vnni: AVX512-VNNI variant of qs8_packed_gemm
// (contract and layout in kernels/qs8_packed_gemm.h).
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
// Blocking: A is copied, +128, into a stack block of up to 8 rows x kKc k (32
// KB); k is cut into blocks of kKc = 4096 (one for every K of BERT-base and
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
  alignas(64) uint8_t rows[kMr][kKc];
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
template <size_t kRows, size_t kTiles, size_t kSplit>
OCTET_KERNEL_INLINE void Tile(const ABlock& a, size_t groups, const int8_t* tile, size_t tile_bytes,
                              size_t k0, bool first, int32_t* c, size_t ldc,
                              const __mmask16* masks) {
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
      _mm512_mask_storeu_epi32(c + i * ldc + t * kNr, masks[t], sum);
    }
  }
}

// The k split of a tile: a tile of one packed tile and 1 or 2 rows has too few
// vpdpbusd chains to hide the instruction's latency (4-5 cycles), so it keeps 4 or
// 2 sets of accumulators, for alternate groups of k.
constexpr size_t Split(size_t rows, size_t tiles) { return tiles > 1 || rows > 2 ? 1 : 4 / rows; }

// Tile<kRows, kTiles, Split> for kRows = mr (1..kMaxRows): a switch, so each row count
// has its own loop with its accumulators in registers.
template <size_t kTiles, size_t kMaxRows>
OCTET_KERNEL_INLINE void TileOfRows(size_t mr, const ABlock& a, size_t groups, const int8_t* tile,
                                    size_t tile_bytes, size_t k0, bool first, int32_t* c,
                                    size_t ldc, const __mmask16* masks) {
  static_assert(kMaxRows == 4 || kMaxRows == 8, "row tiles of up to 4 or 8 rows");
  switch (mr) {
    case 1:
      return Tile<1, kTiles, Split(1, kTiles)>(a, groups, tile, tile_bytes, k0, first, c, ldc,
                                               masks);
    case 2:
      return Tile<2, kTiles, Split(2, kTiles)>(a, groups, tile, tile_bytes, k0, first, c, ldc,
                                               masks);
    case 3:
      return Tile<3, kTiles, Split(3, kTiles)>(a, groups, tile, tile_bytes, k0, first, c, ldc,
                                               masks);
    case 4:
      return Tile<4, kTiles, Split(4, kTiles)>(a, groups, tile, tile_bytes, k0, first, c, ldc,
                                               masks);
    default:
      break;
  }
  if constexpr (kMaxRows == 8) {
    switch (mr) {
      case 5:
        return Tile<5, kTiles, Split(5, kTiles)>(a, groups, tile, tile_bytes, k0, first, c, ldc,
                                                 masks);
      case 6:
        return Tile<6, kTiles, Split(6, kTiles)>(a, groups, tile, tile_bytes, k0, first, c, ldc,
                                                 masks);
      case 7:
        return Tile<7, kTiles, Split(7, kTiles)>(a, groups, tile, tile_bytes, k0, first, c, ldc,
                                                 masks);
      default:
        return Tile<8, kTiles, Split(8, kTiles)>(a, groups, tile, tile_bytes, k0, first, c, ldc,
                                                 masks);
    }
  }
}

// The channels of packed tile j to store: those below N.
OCTET_KERNEL_INLINE __mmask16 ChannelMask(size_t N, size_t j) {
  const size_t n = N - j * kNr;
  return n >= kNr ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n) - 1);
}

// The tiles of C of rows m0 .. m0 + mr - 1 and packed tiles [j0, j1): kWide
// packed tiles at a time, then 2, then 1.
template <size_t kWide, size_t kMaxRows>
OCTET_KERNEL_INLINE void RowTile(size_t mr, const ABlock& a, size_t groups, const int8_t* packed,
                                 size_t tile_bytes, size_t j0, size_t j1, size_t N, size_t k0,
                                 bool first, int32_t* c, size_t ldc) {
  size_t j = j0;
  for (; j + kWide <= j1; j += kWide) {
    __mmask16 masks[kWide];
    for (size_t t = 0; t < kWide; ++t) masks[t] = ChannelMask(N, j + t);
    TileOfRows<kWide, kMaxRows>(mr, a, groups, packed + j * tile_bytes, tile_bytes, k0, first,
                                c + j * kNr, ldc, masks);
  }
  if constexpr (kWide > 2) {
    if (j + 2 <= j1) {
      const __mmask16 masks[2] = {ChannelMask(N, j), ChannelMask(N, j + 1)};
      TileOfRows<2, kMaxRows>(mr, a, groups, packed + j * tile_bytes, tile_bytes, k0, first,
                              c + j * kNr, ldc, masks);
      j += 2;
    }
  }
  if (j < j1) {
    const __mmask16 mask = ChannelMask(N, j);
    TileOfRows<1, kMaxRows>(mr, a, groups, packed + j * tile_bytes, tile_bytes, k0, first,
                            c + j * kNr, ldc, &mask);
  }
}

// The whole product with row tiles of up to kMaxRows rows and kWide packed tiles.
template <size_t kWide, size_t kMaxRows>
OCTET_KERNEL_INLINE void Gemm(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                              const int8_t* packed, int32_t* C, size_t ldc) {
  const size_t kp = (K + kQs8PackedKGroup - 1) / kQs8PackedKGroup * kQs8PackedKGroup;
  const size_t tile_bytes = kQs8PackedCorrBytes + kNr * kp;
  const size_t tiles = (N + kNr - 1) / kNr;
  ABlock a;
  for (size_t k0 = 0; k0 < kp; k0 += kKc) {
    const size_t kc = kp - k0 < kKc ? kp - k0 : kKc;  // a multiple of 4
    const size_t groups = kc / kQs8PackedKGroup;
    const size_t k_count = K - k0 < kc ? K - k0 : kc;  // >= 1: k0 <= kp - 4 < K
    for (size_t j0 = 0; j0 < tiles; j0 += kNc) {
      const size_t j1 = tiles - j0 < kNc ? tiles : j0 + kNc;
      for (size_t m0 = 0; m0 < M; m0 += kMaxRows) {
        const size_t mr = M - m0 < kMaxRows ? M - m0 : kMaxRows;
        for (size_t i = 0; i < mr; ++i) CopyRowPlus128(A + (m0 + i) * lda + k0, k_count, a.rows[i]);
        RowTile<kWide, kMaxRows>(mr, a, groups, packed, tile_bytes, j0, j1, N, k0, k0 == 0,
                                 C + m0 * ldc, ldc);
      }
    }
  }
}

}  // namespace

void qs8_packed_gemm_8x32c4__avx512vnni(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                                        const int8_t* packed, int32_t* C, size_t ldc) {
  if (M <= 4) {
    Gemm<1, 4>(M, N, K, A, lda, packed, C, ldc);  // one packed tile at a time
  } else {
    Gemm<2, kMr>(M, N, K, A, lda, packed, C, ldc);
  }
}

}  // namespace octet
