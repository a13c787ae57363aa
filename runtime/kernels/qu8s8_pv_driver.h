// The part the AVX2 and NEON qu8s8_pv variants share (contract in
// kernels/qu8s8_pv.h): the walk over C, the blocks of k, the copies of A and of
// B's last columns, and the edge policy. A variant file supplies the ISA part as
// a Kernel struct and instantiates Qu8s8PvTiles with it. (The AVX512-VNNI variant
// does without: masked loads and 4-byte broadcasts read A and B in place.)
//
// The product is vectorized over the columns of C: a row of B (one key's values,
// contiguous) is loaded, widened or interleaved, and multiplied by the A value of
// each row of the tile, broadcast.
//
// Loop order: blocks of up to kPvKb values of k outermost; in a block, row tiles
// of up to kPvMr = 4 rows of A; in a row tile, column tiles of Kernel::kNr
// columns. A block's tile results are stored to C (the first block) or added to
// it (later ones), so accumulators live in registers through a block and no
// buffer grows with K. For the usual call (K = 64, one key tile; M <= 4) that is
// one block and one row tile: B is read once.
//
// Copies, per block:
//   A: the kc values of k of each row of the row tile go to a stack buffer as
//      Kernel::APacked (int16 for the widening variants: converted once, not once
//      per column tile), followed by Kernel::kAPad zeros, so the kernel's vector
//      loads of A (up to kAPad values from any k < kc) stay inside it.
//   B: if N % kNr != 0, the last N % kNr columns of the block's kc rows go to a
//      zero-padded [kc, kNr] stack buffer, which the last column tile reads as
//      its B (ldb = kNr): every load of B in a kernel is a whole kNr-column row.
// A Kernel reads rows k < kc of B only (it does the last kc % step values of k
// with zero registers for the rows past kc).
//
// Edges: the last row tile is compiled for its own row count (1..4); the last
// column tile is stored to a [kPvMr, kNr] stack buffer and its nr valid columns
// copied (or added) to C. Nothing outside the rows and columns of the contract is
// read or written.
//
// Exactness: a block's partial sums are at most kPvKb * 255 * 128 in magnitude,
// C's running sums at most K * 255 * 128 < 2^31 (kQu8s8PvMaxK): no step wraps.
//
// Linkage: unnamed namespace and always inlined, for the reason given in
// kernels/qs8_gemm_driver.h. Only compiler headers, so kernel files stay
// freestanding.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel_inline.h"

namespace octet {
namespace {  // internal linkage per including file

constexpr size_t kPvMr = 4;    // rows of A per tile
constexpr size_t kPvKb = 256;  // values of k per block

// What Qu8s8PvTiles needs from a Kernel:
//   APacked                  int16_t or uint8_t: A's element type in the copy
//   kNr                      columns per tile
//   kAPad                    zeros after the kc values of each copied row of A
//   Tile<kRows>(a, lda, kc, b, ldb, c, ldc, add)
//                            for i < kRows, j < kNr: the sum over k < kc of
//                            a[i * lda + k] * b[k * ldb + j], stored to
//                            c[i * ldc + j], or with `add` added to it

// Kernel::Tile<kRows> for kRows = mr (1..4). A switch: see TileOfRows in
// kernels/qs8_gemm_driver.h.
template <class Kernel>
OCTET_KERNEL_INLINE void PvTileOfRows(size_t mr, const typename Kernel::APacked* a, size_t lda,
                                      size_t kc, const int8_t* b, size_t ldb, int32_t* c,
                                      size_t ldc, bool add) {
  switch (mr) {
    case 1:
      Kernel::template Tile<1>(a, lda, kc, b, ldb, c, ldc, add);
      break;
    case 2:
      Kernel::template Tile<2>(a, lda, kc, b, ldb, c, ldc, add);
      break;
    case 3:
      Kernel::template Tile<3>(a, lda, kc, b, ldb, c, ldc, add);
      break;
    default:
      Kernel::template Tile<4>(a, lda, kc, b, ldb, c, ldc, add);
      break;
  }
}

// qu8s8_pv (same arguments) with the tiles of Kernel.
template <class Kernel>
OCTET_KERNEL_INLINE void Qu8s8PvTiles(size_t M, size_t N, size_t K, const uint8_t* A, size_t lda,
                                      const int8_t* B, size_t ldb, int32_t* C, size_t ldc) {
  using APacked = typename Kernel::APacked;
  constexpr size_t kNr = Kernel::kNr;
  constexpr size_t kLdaPacked = kPvKb + Kernel::kAPad;
  APacked a_copy[kPvMr * kLdaPacked];  // [row, k]: A[m0 + i, k0:k0+kc], then zeros
  int8_t b_tail[kPvKb * kNr];          // [k, column]: B[k0:k0+kc, n_full:N], zero-padded
  int32_t c_tail[kPvMr * kNr];         // [row, column]: the last column tile's results
  const size_t n_full = N - N % kNr;   // columns in whole tiles
  const size_t n_rem = N - n_full;

  for (size_t k0 = 0; k0 < K; k0 += kPvKb) {
    const size_t kc = K - k0 < kPvKb ? K - k0 : kPvKb;
    const bool add = k0 != 0;
    const int8_t* b = B + k0 * ldb;  // [kc, ldb]: this block's rows of B
    if (n_rem != 0) {
      for (size_t k = 0; k < kc; ++k) {
        for (size_t j = 0; j < kNr; ++j)
          b_tail[k * kNr + j] = j < n_rem ? b[k * ldb + n_full + j] : 0;
      }
    }

    for (size_t m0 = 0; m0 < M; m0 += kPvMr) {
      const size_t mr = M - m0 < kPvMr ? M - m0 : kPvMr;
      for (size_t i = 0; i < mr; ++i) {
        const uint8_t* a = A + (m0 + i) * lda + k0;
        APacked* row = a_copy + i * kLdaPacked;
        for (size_t k = 0; k < kc; ++k) row[k] = static_cast<APacked>(a[k]);
        for (size_t k = kc; k < kc + Kernel::kAPad; ++k) row[k] = 0;
      }
      int32_t* c = C + m0 * ldc;  // [mr, ldc]
      for (size_t n0 = 0; n0 < n_full; n0 += kNr) {
        PvTileOfRows<Kernel>(mr, a_copy, kLdaPacked, kc, b + n0, ldb, c + n0, ldc, add);
      }
      if (n_rem != 0) {
        PvTileOfRows<Kernel>(mr, a_copy, kLdaPacked, kc, b_tail, kNr, c_tail, kNr, false);
        for (size_t i = 0; i < mr; ++i) {
          int32_t* c_row = c + i * ldc + n_full;
          for (size_t j = 0; j < n_rem; ++j) {
            c_row[j] = add ? c_row[j] + c_tail[i * kNr + j] : c_tail[i * kNr + j];
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace octet
