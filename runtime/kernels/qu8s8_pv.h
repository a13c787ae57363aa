// qu8s8_pv: unsigned 8-bit x signed 8-bit -> int32 matrix product without a
// transpose, the P·V product of int8 attention (ops/qs8_attention.h): P holds
// the softmax weights of one key tile in [0, 255], V the tile's int8 values,
// one row per key, in the KV cache's position-major layout (used in place).
//
//   C[m, n] = sum_k A[m, k] * B[k, n]       for m < M, n < N
//
//   A: [M, K] uint8, row stride lda bytes     (P: one row per query row, one column per key)
//   B: [K, N] int8,  row stride ldb bytes     (V: one row per key, N = head_dim)
//   C: [M, N] int32, row stride ldc elements  (overwritten)
//
// Every variant computes exactly this (tolerance 0), for any M, N >= 1 and
// 1 <= K <= kQu8s8PvMaxK, any A in [0, 255] and B in [-128, 127]: the widest
// partial sum, K * 255 * 128, stays inside int32.
//
// Kernel files include only compiler headers (see qs8_gemm.h).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace octet {

constexpr size_t kQu8s8PvMaxK = 65536;

typedef void (*Qu8s8PvFn)(size_t M, size_t N, size_t K, const uint8_t* A, size_t lda,
                          const int8_t* B, size_t ldb, int32_t* C, size_t ldc);

// The reference: plain loops, the definition of the result.
void qu8s8_pv__ref(size_t M, size_t N, size_t K, const uint8_t* A, size_t lda, const int8_t* B,
                   size_t ldb, int32_t* C, size_t ldc);

// Optimized variants, named <op>_<MR>x<NR>[c<KC>]__<isa>: each computes an MR x NR
// tile of C per pass (MR rows of A, NR columns of B) and consumes KC values of k
// per multiply instruction (1 if no c). Only the ones for the target
// architecture are compiled (runtime/kernels/CMakeLists.txt); kernel_table.cc
// lists them with the CPU features each needs. Call them only through the
// table, or after checking those features.
//
// No dotprod variant: sdot multiplies signed by signed bytes, and P is 0..255, so
// CPUs with dotprod but without i8mm (Cortex-A76, Pi 5) use the NEON baseline.
void qu8s8_pv_4x16c2__avx2(size_t M, size_t N, size_t K, const uint8_t* A, size_t lda,
                           const int8_t* B, size_t ldb, int32_t* C, size_t ldc);
void qu8s8_pv_4x64c4__avx512vnni(size_t M, size_t N, size_t K, const uint8_t* A, size_t lda,
                                 const int8_t* B, size_t ldb, int32_t* C, size_t ldc);
void qu8s8_pv_4x8__neon(size_t M, size_t N, size_t K, const uint8_t* A, size_t lda, const int8_t* B,
                        size_t ldb, int32_t* C, size_t ldc);
void qu8s8_pv_4x8c4__neoni8mm(size_t M, size_t N, size_t K, const uint8_t* A, size_t lda,
                              const int8_t* B, size_t ldb, int32_t* C, size_t ldc);

}  // namespace octet
