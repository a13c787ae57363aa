// qs8_quantize_rows__avx512: AVX-512 (F, BW, VL) variant of qs8_quantize_rows
// (contract in kernels/qs8_quantize_rows.h). The same two passes as the AVX2
// variant (kernels/x86/qs8_quantize_rows__avx2.cc), 16 values per vector, and
// the last cols % 16 with masked loads and stores instead of scalar code:
// masked-off lanes are neither read nor written (their loads give 0, which
// changes neither the max nor anything stored).
//
// The max: |x| as bits, vpmaxsd (signed integer order = float order for finite
// values). The quantization: vmulps by 1 / scale, clamp to [-127, 127],
// vcvtps2dq (MXCSR mode: round to nearest even by default, as rintf), vpmovsdb.
// Rows with max|x| < kQs8QuantizeTinyMax go to the reference (a baseline-ISA
// function: no inline function of core/quant.h is compiled with this file's
// flags, see the AVX2 variant).

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

#include "core/quant.h"
#include "kernels/kernel_inline.h"
#include "kernels/qs8_quantize_rows.h"

namespace octet {
namespace {

// The lanes of the first n (< 16) values.
OCTET_KERNEL_INLINE __mmask16 TailMask(size_t n) { return static_cast<__mmask16>((1u << n) - 1); }

// The bits of max|x[0..n)|.
OCTET_KERNEL_INLINE uint32_t MaxAbsBits(const float* x, size_t n) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF);
  __m512i m = _mm512_setzero_si512();
  size_t c = 0;
  for (; c + 16 <= n; c += 16) {
    m = _mm512_max_epi32(m, _mm512_and_si512(_mm512_loadu_si512(x + c), abs_mask));
  }
  if (c < n) {
    const __m512i bits = _mm512_maskz_loadu_epi32(TailMask(n - c), x + c);
    m = _mm512_max_epi32(m, _mm512_and_si512(bits, abs_mask));
  }
  return static_cast<uint32_t>(_mm512_reduce_max_epi32(m));
}

// 16 values: round_half_even(clamp(v * inv_scale, -127, 127)) as int8.
OCTET_KERNEL_INLINE __m128i Quantize16(__m512 v, __m512 inv_scale) {
  v = _mm512_mul_ps(v, inv_scale);
  v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-127.0f)), _mm512_set1_ps(127.0f));
  return _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(v));
}

}  // namespace

void qs8_quantize_rows__avx512(size_t rows, size_t cols, const float* x, size_t ldx, int8_t* q,
                               size_t ldq, float* scales) {
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * ldx;  // [cols]
    int8_t* qr = q + r * ldq;       // [cols]
    const uint32_t max_bits = MaxAbsBits(xr, cols);
    float max_abs;
    __builtin_memcpy(&max_abs, &max_bits, sizeof(max_abs));
    if (!(max_abs >= kQs8QuantizeTinyMax && max_abs <= __FLT_MAX__)) {  // tiny, inf or NaN
      qs8_quantize_rows__ref(1, cols, xr, ldx, qr, ldq, scales + r);
      continue;
    }
    const float scale = max_abs / static_cast<float>(kQ8Max);
    scales[r] = scale;
    const __m512 inv = _mm512_set1_ps(1.0f / scale);
    size_t c = 0;
    for (; c + 16 <= cols; c += 16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(qr + c),
                       Quantize16(_mm512_loadu_ps(xr + c), inv));
    }
    if (c < cols) {
      const __mmask16 mask = TailMask(cols - c);
      _mm_mask_storeu_epi8(qr + c, mask, Quantize16(_mm512_maskz_loadu_ps(mask, xr + c), inv));
    }
  }
}

}  // namespace octet
