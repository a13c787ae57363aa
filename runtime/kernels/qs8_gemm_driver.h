// The part every optimized qs8_gemm variant shares (contract in kernels/qs8_gemm.h):
// the walk over C in 4 x 4 tiles, the edge policy, and, for the variants that
// copy the last K % kKc values of k, the k loop of a tile. A variant file supplies
// the ISA part as a Kernel (or Steps) struct and instantiates Qs8GemmTiles with it.
//
// Tiles: C is computed in tiles of up to kMr = 4 rows of A against kNr = 4 rows
// of B (columns of C). Column tiles are the outer loop, so the 4 rows of B stay
// in cache while every row tile of A passes over them. The last row tile is
// compiled for its own row count (1..4, or 2 or 4 for a Kernel that works on row
// pairs), so M = 1 (decoding one token) does a quarter (a half) of the work of a
// 4-row tile.
//
// Edges: rows of B past N repeat its last row, rows of A past M the first row of
// the row tile: their results are computed and dropped, and every load stays
// inside A and B. Only the nr valid columns and mr valid rows of a tile are stored.
//
// Qs8PaddedK: the last K % kKc values of k of each row are copied into
// zero-padded kKc-byte stack buffers (B's once per column tile, A's in each tile);
// zeros add nothing to a dot product, so no load reads past the end of a row.
//
// Code shape, for GCC 12 (each point was seen to add spills or accumulator copies
// to the k loops, or instructions per tile, on x86, aarch64 or AArch32): the tail
// step comes before the k loop, not after it; the Steps keep their accumulators as
// named struct members, not arrays; ColumnTile holds B's tail bytes but no pointers
// to them (a tile makes those); the row count goes through a switch (see
// TileOfRows); the first row tile is told by an argument (m0 == 0), not by a flag
// in ColumnTile; each Kernel stores its own partial rows (AVX-512 with a mask).
//
// Linkage: everything here is in an unnamed namespace and always inlined. Each
// variant file is compiled with its own ISA flags (-mavx512vnni, -march=...+i8mm,
// ...), and a plain inline function or template instantiated in two of them would
// be emitted as one weak (COMDAT) symbol per file, of which the linker keeps one
// for the whole binary: the AVX2 variant could end up running the copy compiled
// with AVX-512 flags, on a CPU without them. With internal linkage every file has
// its own copy (and, inlined, no symbol at all); always_inline alone would not
// do, as taking a function's address still emits a weak out-of-line copy.
// scripts/android-compile-check.sh fails on any symbol a kernel file exports
// beside its own function.
//
// Only compiler headers (stddef.h, stdint.h), so kernel files stay freestanding.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel_inline.h"

namespace octet {
namespace {  // internal linkage per including file: see "Linkage" above

constexpr size_t kMr = 4;  // rows of A per tile
constexpr size_t kNr = 4;  // rows of B (columns of C) per tile

// What Qs8GemmTiles needs from a Kernel:
//   Row                  4 int32, one row of a tile's results (__m128i, int32x4_t)
//   kRowStep             1: Tile<kRows> for kRows = 1, 2, 3, 4; 2: for 2 and 4 only
//   ColumnTile(b, K)     what the row tiles of one column tile share
//   Tile<kRows>(a, b, cols, first, rows)
//                        rows[i] = C[i, 0..3] for the rows a[0..kRows-1] of A
//                        against the rows b[0..3] of B, over all K values of k;
//                        first: this is the column tile's first row tile
//   StoreRow(c, row, n)  stores the first n (1..4) int32 of row to c

// Kernel::Tile<kRows> for the smallest kRows the Kernel has that covers mr rows.
// A switch: with a chain of ifs GCC 12 allocated the k loops' registers worse on
// AArch32.
template <class Kernel>
OCTET_KERNEL_INLINE void TileOfRows(size_t mr, bool first, const int8_t* const a[kMr],
                                    const int8_t* const b[kNr], typename Kernel::ColumnTile& cols,
                                    typename Kernel::Row rows[kMr]) {
  static_assert(Kernel::kRowStep == 1 || Kernel::kRowStep == 2, "row tiles of 1 or 2 rows");
  if constexpr (Kernel::kRowStep == 2) {
    if (mr <= 2) {
      Kernel::template Tile<2>(a, b, cols, first, rows);
    } else {
      Kernel::template Tile<4>(a, b, cols, first, rows);
    }
  } else {
    switch (mr) {
      case 1:
        Kernel::template Tile<1>(a, b, cols, first, rows);
        break;
      case 2:
        Kernel::template Tile<2>(a, b, cols, first, rows);
        break;
      case 3:
        Kernel::template Tile<3>(a, b, cols, first, rows);
        break;
      default:
        Kernel::template Tile<4>(a, b, cols, first, rows);
        break;
    }
  }
}

// qs8_gemm (same arguments) with the tiles of Kernel.
template <class Kernel>
OCTET_KERNEL_INLINE void Qs8GemmTiles(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                                      const int8_t* B, size_t ldb, int32_t* C, size_t ldc) {
  for (size_t n0 = 0; n0 < N; n0 += kNr) {
    const size_t nr = N - n0 < kNr ? N - n0 : kNr;
    const int8_t* b[kNr];  // rows n0.. of B; past N, the last row again
    for (size_t j = 0; j < kNr; ++j) b[j] = B + (n0 + (j < nr ? j : nr - 1)) * ldb;
    typename Kernel::ColumnTile cols(b, K);

    for (size_t m0 = 0; m0 < M; m0 += kMr) {
      const size_t mr = M - m0 < kMr ? M - m0 : kMr;
      const int8_t* a[kMr];  // rows m0.. of A; past M, row m0 again
      for (size_t i = 0; i < kMr; ++i) a[i] = A + (m0 + (i < mr ? i : 0)) * lda;
      typename Kernel::Row rows[kMr];  // [row]: C[m0 + i, n0..n0+3]
      TileOfRows<Kernel>(mr, m0 == 0, a, b, cols, rows);
      for (size_t i = 0; i < mr; ++i) Kernel::StoreRow(C + (m0 + i) * ldc + n0, rows[i], nr);
    }
  }
}

// Copies k in [k0, k0 + count) of rows[0..n-1] into zero-padded kKc-byte rows.
template <size_t kKc>
OCTET_KERNEL_INLINE void CopyTail(const int8_t* const rows[], size_t n, size_t k0, size_t count,
                                  int8_t tail[][kKc]) {
  for (size_t r = 0; r < n; ++r) {
    for (size_t t = 0; t < kKc; ++t) tail[r][t] = t < count ? rows[r][k0 + t] : 0;
  }
}

// A Kernel for Qs8GemmTiles from the Steps of a tile, with the zero-padded k tail
// (see the top of this file). Steps supplies Row, kRowStep and StoreRow (passed on
// as they are) and:
//   kKc                        k per step
//   Acc, Zero()                the accumulators of a tile, all zero
//   Step<kRows>(a, b, k, acc)  adds kKc k from k of rows a[0..kRows-1] against b[0..3]
//   Finish<kRows>(acc, rows)   rows[i] = the 4 results of row i < kRows
template <class Steps>
struct Qs8PaddedK : Steps {
  static constexpr size_t kKc = Steps::kKc;

  struct ColumnTile {
    OCTET_KERNEL_INLINE ColumnTile(const int8_t* const b[kNr], size_t K)
        : k_main(K - K % kKc), k_rem(K % kKc) {
      CopyTail<kKc>(b, kNr, k_main, k_rem, tail);
    }
    const size_t k_main;    // k read in place from A and B
    const size_t k_rem;     // k read from the zero-padded copies
    int8_t tail[kNr][kKc];  // [column, k]: B[n0 + j, k_main:K], zero-padded
  };

  template <size_t kRows>
  OCTET_KERNEL_INLINE static void Tile(const int8_t* const a[kMr], const int8_t* const b[kNr],
                                       const ColumnTile& cols, bool /*first*/,
                                       typename Steps::Row rows[kMr]) {
    const size_t k_main = cols.k_main;
    const size_t k_rem = cols.k_rem;
    typename Steps::Acc acc = Steps::Zero();
    if (k_rem != 0) {
      int8_t a_tail[kMr][kKc];  // [row, k]: A[i, k_main:K], zero-padded
      CopyTail<kKc>(a, kRows, k_main, k_rem, a_tail);
      const int8_t* const at[kMr] = {a_tail[0], a_tail[1], a_tail[2], a_tail[3]};
      const int8_t* const bt[kNr] = {cols.tail[0], cols.tail[1], cols.tail[2], cols.tail[3]};
      Steps::template Step<kRows>(at, bt, 0, acc);
    }
    for (size_t k = 0; k < k_main; k += kKc) Steps::template Step<kRows>(a, b, k, acc);
    Steps::template Finish<kRows>(acc, rows);
  }
};

}  // namespace
}  // namespace octet
