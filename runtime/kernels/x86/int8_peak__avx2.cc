// int8_peak__avx2: 8 independent vpmaddubsw + vpmaddwd + vpaddd ymm chains, the
// AVX2 int8 kernels' multiply-add sequence. See int8_peak.h.
#include <immintrin.h>
#include <stdint.h>

#include "kernels/int8_peak.h"

namespace octet {

uint64_t int8_peak__avx2(uint64_t iterations) {
  __m256i a = _mm256_set1_epi8(1), b = _mm256_set1_epi8(1), ones = _mm256_set1_epi16(1);
  __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0,
          c7 = c0;
  for (uint64_t i = 0; i < iterations; ++i) {
    __asm__("" : "+x"(a), "+x"(b));
#define OCTET_PEAK_STEP(c) \
  c = _mm256_add_epi32(c, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), ones))
    OCTET_PEAK_STEP(c0);
    OCTET_PEAK_STEP(c1);
    OCTET_PEAK_STEP(c2);
    OCTET_PEAK_STEP(c3);
    OCTET_PEAK_STEP(c4);
    OCTET_PEAK_STEP(c5);
    OCTET_PEAK_STEP(c6);
    OCTET_PEAK_STEP(c7);
#undef OCTET_PEAK_STEP
  }
  const __m256i s = _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(c0, c1), _mm256_add_epi32(c2, c3)),
                                     _mm256_add_epi32(_mm256_add_epi32(c4, c5), _mm256_add_epi32(c6, c7)));
  alignas(32) int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
  volatile int32_t sink = lanes[0];
  (void)sink;
  return iterations * 8 * 32 * 2;
}

}  // namespace octet
