// qs8_quantize_rows: dynamic per-row symmetric int8 quantization of float
// activations, QuantizeRowSymmetric (core/quant.h) applied to each row:
//
//   scales[r] = max_c |x[r, c]| / 127, or 1 for an all-zero row
//   q[r, c]   = round_half_even(clamp(x[r, c] * (1 / scales[r]), -127, 127))
//
//   x:      [rows, cols] float, row stride ldx elements
//   q:      [rows, cols] int8,  row stride ldq bytes   (overwritten)
//   scales: [rows] float                               (overwritten)
//
// Every variant equals the reference bit for bit, q and scales, for any rows,
// cols >= 1 and any x, in the default floating-point environment (round to
// nearest even; no flush-to-zero on x86 and aarch64). The max, the scale and
// 1 / scale are computed as in quant.h; the vector part multiplies, clamps and
// rounds (ties to even) exactly as the scalar definition does.
//
// Tiny and non-finite rows: if max|x| < 2^-100, or the row holds an inf or a
// NaN, every variant quantizes the row with QuantizeRowSymmetric itself. Below
// that bound the scale may be subnormal and 1 / scale infinite, and AArch32 NEON
// flushes subnormals to zero; above it, 1 / scale <= 127 * 2^100, so a
// subnormal x (< 2^-126) gives |x / scale| < 0.5: flushed or not, it rounds to
// 0. A row with an inf or a NaN (a malformed model's weights can make one)
// becomes zeros with a NaN scale (quant.h), so the product it feeds is NaN, not
// undefined behaviour.
//
// Kernel files include only compiler headers and core/quant.h (see qs8_gemm.h).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace octet {

typedef void (*Qs8QuantizeRowsFn)(size_t rows, size_t cols, const float* x, size_t ldx, int8_t* q,
                                  size_t ldq, float* scales);

// The reference: QuantizeRowSymmetric on each row.
void qs8_quantize_rows__ref(size_t rows, size_t cols, const float* x, size_t ldx, int8_t* q,
                            size_t ldq, float* scales);

// Optimized variants, named <op>__<isa>; kernel_table.cc lists them with the CPU
// features each needs. Call them only through the table, or after checking
// those features.
void qs8_quantize_rows__avx2(size_t rows, size_t cols, const float* x, size_t ldx, int8_t* q,
                             size_t ldq, float* scales);
void qs8_quantize_rows__avx512(size_t rows, size_t cols, const float* x, size_t ldx, int8_t* q,
                               size_t ldq, float* scales);
void qs8_quantize_rows__neon(size_t rows, size_t cols, const float* x, size_t ldx, int8_t* q,
                             size_t ldq, float* scales);

// The bound under which every variant uses QuantizeRowSymmetric (see above).
constexpr float kQs8QuantizeTinyMax = 0x1p-100f;

}  // namespace octet
