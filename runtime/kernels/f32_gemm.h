// f32_gemm: float matrix product for fp32 model files (the oracle path).
//   C[m, n] = sum_k A[m, k] * B[n, k]     A [M, K] (lda), B [N, K] (ldb), C [M, N] (ldc)
// Summation in increasing k, in fp32.
#pragma once

#include <stddef.h>

namespace octet {

typedef void (*F32GemmFn)(size_t M, size_t N, size_t K, const float* A, size_t lda,
                          const float* B, size_t ldb, float* C, size_t ldc);

void f32_gemm__ref(size_t M, size_t N, size_t K, const float* A, size_t lda, const float* B,
                   size_t ldb, float* C, size_t ldc);

}  // namespace octet
