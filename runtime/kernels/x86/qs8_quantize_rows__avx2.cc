// qs8_quantize_rows__avx2: AVX2 variant of qs8_quantize_rows (contract in
// kernels/qs8_quantize_rows.h).
//
// Per row, two passes over x. The max: |x| as bits (sign cleared), whose signed
// integer order is the float order for finite values, so vpmaxsd gives the
// exact max (and -0.0 counts as 0, as in quant.h). The scale and 1 / scale are
// then computed in scalar code exactly as quant.h does. The quantization:
// vmulps by 1 / scale, vminps / vmaxps to [-127, 127], vcvtps2dq (rounds in the
// MXCSR mode, round to nearest even by default, as rintf does), then the packs
// to int8; 32 values per step, 8 per step after that, the last cols % 8 with a
// masked load.
//
// Exactness: no value here is a NaN (finite x, finite 1 / scale: rows with
// max|x| < kQs8QuantizeTinyMax go to the reference, qs8_quantize_rows__ref), so
// the clamp is the scalar one; products need no rounding other than the
// multiply's own.
//
// No inline function of core/quant.h is called here: compiled with this file's
// flags, an out-of-line copy (a weak symbol) could be the one the linker keeps
// for the whole binary (see kernels/qs8_gemm_driver.h, "Linkage"). Tiny rows
// call the reference, a function of its own compiled for the baseline ISA.

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "core/quant.h"
#include "kernels/kernel_inline.h"
#include "kernels/qs8_quantize_rows.h"

namespace octet {
namespace {

// The bits of max|x[0..n)|.
OCTET_KERNEL_INLINE uint32_t MaxAbsBits(const float* x, size_t n) {
  const __m256i abs_mask = _mm256_set1_epi32(0x7FFFFFFF);
  __m256i m = _mm256_setzero_si256();
  size_t c = 0;
  for (; c + 8 <= n; c += 8) {
    const __m256i bits = _mm256_castps_si256(_mm256_loadu_ps(x + c));
    m = _mm256_max_epi32(m, _mm256_and_si256(bits, abs_mask));
  }
  __m128i m4 = _mm_max_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
  m4 = _mm_max_epi32(m4, _mm_shuffle_epi32(m4, _MM_SHUFFLE(1, 0, 3, 2)));
  m4 = _mm_max_epi32(m4, _mm_shuffle_epi32(m4, _MM_SHUFFLE(2, 3, 0, 1)));
  uint32_t max_bits = static_cast<uint32_t>(_mm_cvtsi128_si32(m4));
  for (; c < n; ++c) {
    uint32_t bits;
    __builtin_memcpy(&bits, x + c, sizeof(bits));
    bits &= 0x7FFFFFFF;
    max_bits = bits > max_bits ? bits : max_bits;
  }
  return max_bits;
}

// 8 values: round_half_even(clamp(x * inv_scale, -127, 127)) as int32.
OCTET_KERNEL_INLINE __m256i Quantize8(__m256 x, __m256 inv_scale) {
  const __m256 v = _mm256_mul_ps(x, inv_scale);
  const __m256 clamped =
      _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f));
  return _mm256_cvtps_epi32(clamped);
}

// The 8 int8 of Quantize8's result, in order, in the low 8 bytes.
OCTET_KERNEL_INLINE __m128i Narrow8(__m256i i) {
  const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(i, i), _mm256_setzero_si256());
  // Bytes 0..3 of each half are values 0..3 and 4..7.
  return _mm_unpacklo_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
}

// Quantizes x[0..n) with inv_scale into q.
OCTET_KERNEL_INLINE void QuantizeRow(const float* x, size_t n, float inv_scale, int8_t* q) {
  const __m256 inv = _mm256_set1_ps(inv_scale);
  size_t c = 0;
  for (; c + 32 <= n; c += 32) {
    // The packs work within 128-bit halves: the groups of 4 values come out in
    // the order 0, 2, 4, 6 | 1, 3, 5, 7; vpermd puts them in order.
    const __m256i i01 = _mm256_packs_epi32(Quantize8(_mm256_loadu_ps(x + c), inv),
                                           Quantize8(_mm256_loadu_ps(x + c + 8), inv));
    const __m256i i23 = _mm256_packs_epi32(Quantize8(_mm256_loadu_ps(x + c + 16), inv),
                                           Quantize8(_mm256_loadu_ps(x + c + 24), inv));
    const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(i01, i23),
                                                      _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + c), bytes);
  }
  for (; c + 8 <= n; c += 8) {
    const __m128i bytes = Narrow8(Quantize8(_mm256_loadu_ps(x + c), inv));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q + c), bytes);
  }
  if (c < n) {
    // The last n % 8: vmaskmovps reads only the lanes < rem (the others are 0),
    // and only rem bytes are copied out.
    const size_t rem = n - c;
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(rem)),
                                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    int8_t bytes[16];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(bytes),
                     Narrow8(Quantize8(_mm256_maskload_ps(x + c, mask), inv)));
    for (size_t t = 0; t < rem; ++t) q[c + t] = bytes[t];
  }
}

}  // namespace

void qs8_quantize_rows__avx2(size_t rows, size_t cols, const float* x, size_t ldx, int8_t* q,
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
    QuantizeRow(xr, cols, 1.0f / scale, qr);
  }
}

}  // namespace octet
