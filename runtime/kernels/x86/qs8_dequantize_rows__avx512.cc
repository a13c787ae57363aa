// qs8_dequantize_rows__avx512: AVX-512 (F, BW, VL) variant of
// qs8_dequantize_rows (contract in kernels/qs8_dequantize_rows.h). 16 columns
// per step, as the AVX2 variant (kernels/x86/qs8_dequantize_rows__avx2.cc) does
// 8; the last cols % 16 with masked loads and stores, which neither read nor
// write the masked-off lanes.
//
// Exactness: each operation rounds once, in the reference's order; the file is
// compiled with -ffp-contract=off, so the product and the bias sum are not fused.

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
#include "kernels/qs8_dequantize_rows.h"

namespace octet {
namespace {

// out[0..16) of one row from column c; masked-off lanes are not touched.
OCTET_KERNEL_INLINE void Dequantize16(const int32_t* acc, __m512 row_scale, const float* col_scales,
                                      const float* bias, float* out, __mmask16 mask) {
  const __m512 scale = _mm512_mul_ps(row_scale, _mm512_maskz_loadu_ps(mask, col_scales));
  __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_maskz_loadu_epi32(mask, acc)), scale);
  if (bias != nullptr) y = _mm512_add_ps(y, _mm512_maskz_loadu_ps(mask, bias));
  _mm512_mask_storeu_ps(out, mask, y);
}

}  // namespace

void qs8_dequantize_rows__avx512(size_t rows, size_t cols, const int32_t* acc, size_t lda,
                                 const float* row_scales, const float* col_scales,
                                 const float* bias, float* out, size_t ldo) {
  const __mmask16 tail_mask = static_cast<__mmask16>((1u << (cols % 16)) - 1);
  for (size_t r = 0; r < rows; ++r) {
    const int32_t* a = acc + r * lda;  // [cols]
    float* o = out + r * ldo;          // [cols]
    const __m512 row_scale = _mm512_set1_ps(row_scales[r]);
    size_t c = 0;
    for (; c + 16 <= cols; c += 16) {
      Dequantize16(a + c, row_scale, col_scales + c, bias != nullptr ? bias + c : nullptr, o + c,
                   0xFFFF);
    }
    if (c < cols) {
      Dequantize16(a + c, row_scale, col_scales + c, bias != nullptr ? bias + c : nullptr, o + c,
                   tail_mask);
    }
  }
}

}  // namespace octet
