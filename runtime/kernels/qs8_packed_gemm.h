// qs8_packed_gemm: the int8 x int8 -> int32 product of a linear layer against
// weights packed once, at load time, into the layout the kernels want.
//
//   C[m, n] = sum_k A[m, k] * B[n, k]       for m < M, n < N
//
//   A:      [M, K] int8, row stride lda bytes     (activations, one row per token)
//   packed: B [N, K] int8 (the file's [out, in] layout, row stride ldb), packed by
//           qs8_pack_weights__ref (layout below)
//   C:      [M, N] int32, row stride ldc elements (overwritten)
//
// The same numbers as qs8_gemm__ref on (A, B) (tolerance 0), for any M, N >= 1,
// 1 <= K <= kQs8GemmMaxK, any A and B in [-128, 127]: every result and every
// partial sum of every variant is a sum of at most K terms of magnitude <= 2^14,
// so <= 2^30 (see the variants for their partial sums).
//
// Layout
// ------
// B is cut into column tiles of kQs8PackedNr = 16 output channels (rows of B);
// tile j holds channels 16 j .. 16 j + 15, those past N are zero. K is padded with
// zeros to Kp = K rounded up to a multiple of 4. Each tile is
// qs8_packed_tile_bytes(K) = 64 + 16 * Kp bytes:
//
//   int32 corr[16]           corr[c] = -128 * sum_k B[16 j + c, k]   (64 bytes)
//   int8  w[Kp / 4][16][4]   w[g][c][t] = B[16 j + c, 4 g + t]       (16 * Kp bytes)
//
// and tile j starts at byte j * qs8_packed_tile_bytes(K), so every tile is
// addressable on its own: to split N across threads at multiples of 16, a caller
// passes (packed + j0 * tile_bytes, C + 16 j0) and the part's width as N. corr is
// native-endian int32.
//
// Why this layout:
//   - The 4 k of one channel are 4 consecutive bytes: one int32 lane of every
//     4-byte dot-product instruction (x86 vpdpbusd, ARM sdot/vdotq_lane_s32) and
//     of vpmaddwd / vpadal pairs (AVX2, NEON baseline) holds one channel, so the
//     accumulators are columns of C and need no horizontal reduction over k (AVX2
//     and the NEON baseline add the 2 halves of a lane pair once per tile).
//   - A row of a group, 16 channels x 4 k = 64 bytes, is one zmm, 4 NEON q
//     registers or 4 x 16 bytes that vpmovsxbw widens to 4 ymm; A is read 4 bytes
//     (one group of k) at a time and broadcast to every lane.
//   - The weights stay signed int8, as NEON's sdot and smull and AVX2's vpmaddwd
//     (on sign-extended bytes) want them. vpdpbusd multiplies unsigned by signed
//     bytes: the VNNI variant offsets A by +128 (xor 0x80, once per call and
//     block of A, into a stack copy), which adds 128 * sum_k B[n, k] to C[m, n];
//     corr cancels it. It is computed here, once, and the accumulators start from
//     it, so no call sums the weights. The other variants never read corr.
//     (Storing B + 128 instead would let VNNI read A in place, but would cost the
//     dotprod variant an eor per weight register, 1 per 4 sdot; and vpmaddubsw,
//     u8 x s8 with int16 pair sums, saturates on full-range bytes, so AVX2 gains
//     nothing from unsigned weights.)
//   - corr comes first and is 64 bytes: with a 64-byte aligned buffer every w row
//     is one aligned cache line (the kernels accept any alignment).
//   - Memory: 16 Kp + 64 bytes per 16 channels against 16 K unpacked: +0.5% at
//     K = 768 (+ 64 / (16 K) per tile, + up to 3 zero k, + up to 15 zero channels).
//
// Calls: no state, no allocation; the VNNI variants keep a 33 KB block of A on
// the stack where they copy it (M <= 4, or K % 4 != 0), the others read A in
// place. Calls writing disjoint parts of C (e.g.
// ranges of tiles) may run concurrently.
//
// Kernel files include only compiler headers (see qs8_gemm.h).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "kernels/qs8_gemm.h"

namespace octet {

constexpr size_t kQs8PackedNr = 16;         // output channels per packed tile
constexpr size_t kQs8PackedKGroup = 4;      // k per group (K is padded to a multiple)
constexpr size_t kQs8PackedCorrBytes = 64;  // int32 corr[16] at the start of a tile

// Bytes of one packed tile for K: 64 + 16 * Kp.
size_t qs8_packed_tile_bytes(size_t K);

// Bytes qs8_pack_weights__ref writes for B [N, K]: ceil(N / 16) tiles.
size_t qs8_pack_weights_size(size_t N, size_t K);

// Packs B [N, K] (row stride ldb bytes) into packed[qs8_pack_weights_size(N, K)],
// corr included. One layout for every variant: this is the only packing function.
// For 1 <= K <= kQs8GemmMaxK, N >= 1. packed should be 64-byte aligned for speed.
void qs8_pack_weights__ref(size_t N, size_t K, const int8_t* B, size_t ldb, int8_t* packed);

// packed: the tiles of channels [0, N), packed with this K: a whole packed B, or
// (packed B) + j0 * qs8_packed_tile_bytes(K) for channels from 16 j0 on.
typedef void (*Qs8PackedGemmFn)(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                                const int8_t* packed, int32_t* C, size_t ldc);

// The reference: plain loops over the packed layout (corr unused), the definition.
void qs8_packed_gemm__ref(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                          const int8_t* packed, int32_t* C, size_t ldc);

// Optimized variants, named <op>_<MR>x<NR>c<k per step>__<isa>: each computes MR
// x NR tiles of C (MR rows of A, NR channels) from groups of 4 k (the NEON ones 2
// x NR on AArch32, which has half the registers; i8mm's smmla takes two groups
// at once, zipped into its 2x8 blocks in registers). For M = 1..4 (decoding, where the
// weights stream from memory) the VNNI variant switches to tiles of one packed
// tile, so it reads the weights in one sequential pass; the others' tiles already
// are one (half) packed tile wide. Only the
// ones for the target architecture are compiled (runtime/kernels/CMakeLists.txt);
// kernel_table.cc lists them with the CPU features each needs. Call them only
// through the table, or after checking those features.
void qs8_packed_gemm_8x32c4__avx512vnni(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                                        const int8_t* packed, int32_t* C, size_t ldc);
void qs8_packed_gemm_4x8c4__avx2(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                                 const int8_t* packed, int32_t* C, size_t ldc);
void qs8_packed_gemm_4x16c8__neoni8mm(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                                      const int8_t* packed, int32_t* C, size_t ldc);
void qs8_packed_gemm_4x16c4__neondot(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                                     const int8_t* packed, int32_t* C, size_t ldc);
void qs8_packed_gemm_4x8c4__neon(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                                 const int8_t* packed, int32_t* C, size_t ldc);

// qs8_packed_gemm_f32: the same product with its results dequantized and the
// bias added in the kernel's stores, as qs8_dequantize_rows does it, so the int32
// results never make a pass through memory:
//
//   out[m, n] = float(C[m, n]) * (row_scales[m] * col_scales[n])   (+ bias[n])
//
//   row_scales: [M] float, col_scales: [N] float, bias: [N] float or null
//   out:        [M, N] float, row stride ldo elements (overwritten)
//
// Bit-identical with qs8_packed_gemm followed by qs8_dequantize_rows (both exact
// by their contracts), for finite scales and bias. Only ISAs where the fusion
// pays have a variant; elsewhere the table's entry is null and callers use the
// two kernels (KernelTable::qs8_packed_gemm_f32).
typedef void (*Qs8PackedGemmF32Fn)(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                                   const int8_t* packed, const float* row_scales,
                                   const float* col_scales, const float* bias, float* out,
                                   size_t ldo);

// The reference: qs8_packed_gemm__ref then qs8_dequantize_rows__ref, one row and
// one packed tile at a time.
void qs8_packed_gemm_f32__ref(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                              const int8_t* packed, const float* row_scales,
                              const float* col_scales, const float* bias, float* out, size_t ldo);

void qs8_packed_gemm_f32_8x32c4__avx512vnni(size_t M, size_t N, size_t K, const int8_t* A,
                                            size_t lda, const int8_t* packed,
                                            const float* row_scales, const float* col_scales,
                                            const float* bias, float* out, size_t ldo);

}  // namespace octet
