// qs8_gemm: int8 x int8 -> int32 matrix product, the core of every int8 linear
// layer (and later Q·Kᵀ and P·V).
//
//   C[m, n] = sum_k A[m, k] * B[n, k]       for m < M, n < N
//
//   A: [M, K] int8, row stride lda bytes      (activations, one row per token)
//   B: [N, K] int8, row stride ldb bytes      (weights, one row per output channel,
//                                             the file's layout: used in place)
//   C: [M, N] int32, row stride ldc elements
//
// Every variant computes exactly this (tolerance 0), for any M, N >= 1 and
// 1 <= K <= kQs8GemmMaxK, any value of A and B in [-128, 127]. The bound on K
// keeps every partial sum of every variant inside int32 (the VNNI variant adds
// 128 to A, so its widest partial sum is K * 255 * 128 < 2^31).
//
// Kernel files include only compiler headers (stdint.h, stddef.h, the ISA's
// intrinsics header) so they compile for Android triples without a libc.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace octet {

constexpr size_t kQs8GemmMaxK = 65536;

typedef void (*Qs8GemmFn)(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                          const int8_t* B, size_t ldb, int32_t* C, size_t ldc);

// The reference: plain loops, slow on purpose, the definition of the result.
void qs8_gemm__ref(size_t M, size_t N, size_t K, const int8_t* A, size_t lda, const int8_t* B,
                   size_t ldb, int32_t* C, size_t ldc);

// Optimized variants, named <op>_<MR>x<NR>c<KC>__<isa>: each computes an MR x NR
// tile of C per pass and consumes KC values of k per instruction group. Only the
// ones for the target architecture are compiled (runtime/kernels/CMakeLists.txt);
// kernel_table.cc lists them with the CPU features each needs. Call them only
// through the table, or after checking those features.
void qs8_gemm_4x4c8__avx2(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                          const int8_t* B, size_t ldb, int32_t* C, size_t ldc);
void qs8_gemm_4x4c64__avx512vnni(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                                 const int8_t* B, size_t ldb, int32_t* C, size_t ldc);
void qs8_gemm_4x4c16__neon(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                           const int8_t* B, size_t ldb, int32_t* C, size_t ldc);
void qs8_gemm_4x4c16__neondot(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                              const int8_t* B, size_t ldb, int32_t* C, size_t ldc);
void qs8_gemm_4x4c8__neoni8mm(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                              const int8_t* B, size_t ldb, int32_t* C, size_t ldc);

}  // namespace octet
