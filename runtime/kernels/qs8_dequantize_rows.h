// qs8_dequantize_rows: int32 accumulators to float, DequantizeAcc (core/quant.h)
// on each element, then an optional per-column bias:
//
//   out[r, c] = float(acc[r, c]) * (row_scales[r] * col_scales[c])   (+ bias[c])
//
//   acc:        [rows, cols] int32, row stride lda elements
//   row_scales: [rows] float   (per token: the activation scales)
//   col_scales: [cols] float   (per output channel: the weight scales)
//   bias:       [cols] float, or null for none
//   out:        [rows, cols] float, row stride ldo elements (overwritten)
//
// Each operation is rounded on its own, in this order: the conversion, the
// product of the scales, the product, then the bias sum (no fused
// multiply-add: the reference and every variant are compiled with
// -ffp-contract=off, runtime/kernels/CMakeLists.txt). Every variant equals the
// reference bit for bit for any rows, cols >= 1 and finite scales and bias, in
// the default floating-point environment (round to nearest even; no
// flush-to-zero on x86 and aarch64; AArch32 NEON always flushes, and its
// variant redoes in scalar code each group of 4 where that could matter).
//
// Kernel files include only compiler headers and core/quant.h (see qs8_gemm.h).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace octet {

typedef void (*Qs8DequantizeRowsFn)(size_t rows, size_t cols, const int32_t* acc, size_t lda,
                                    const float* row_scales, const float* col_scales,
                                    const float* bias, float* out, size_t ldo);

// The reference: DequantizeAcc on each element, then + bias[c].
void qs8_dequantize_rows__ref(size_t rows, size_t cols, const int32_t* acc, size_t lda,
                              const float* row_scales, const float* col_scales, const float* bias,
                              float* out, size_t ldo);

// Optimized variants, named <op>__<isa>; kernel_table.cc lists them with the CPU
// features each needs. Call them only through the table, or after checking
// those features.
void qs8_dequantize_rows__avx2(size_t rows, size_t cols, const int32_t* acc, size_t lda,
                               const float* row_scales, const float* col_scales, const float* bias,
                               float* out, size_t ldo);
void qs8_dequantize_rows__avx512(size_t rows, size_t cols, const int32_t* acc, size_t lda,
                                 const float* row_scales, const float* col_scales,
                                 const float* bias, float* out, size_t ldo);
void qs8_dequantize_rows__neon(size_t rows, size_t cols, const int32_t* acc, size_t lda,
                               const float* row_scales, const float* col_scales, const float* bias,
                               float* out, size_t ldo);

}  // namespace octet
