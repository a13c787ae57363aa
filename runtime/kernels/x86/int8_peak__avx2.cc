// int8_peak__avx2: 8 independent vpmaddubsw + vpmaddwd + vpaddd ymm chains, the
// AVX2 int8 kernels' multiply-add sequence. See int8_peak.h.
#include <immintrin.h>
#include <stdint.h>

#include "kernels/int8_peak.h"

namespace octet {

uint64_t int8_peak__avx2(uint64_t iterations) {
  const __m256i a = _mm256_set1_epi8(1), b = _mm256_set1_epi8(1), ones = _mm256_set1_epi16(1);
  __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0,
          c7 = c0;
  // Inline asm: with intrinsics the compiler computes the common product once.
#define OCTET_PEAK_STEP(c)                                                     \
  do {                                                                         \
    __m256i t;                                                                 \
    __asm__("vpmaddubsw %[b], %[a], %[t]\n\t"                                 \
            "vpmaddwd %[ones], %[t], %[t]\n\t"                                \
            "vpaddd %[t], %[acc], %[acc]"                                      \
            : [acc] "+x"(c), [t] "=&x"(t)                                      \
            : [a] "x"(a), [b] "x"(b), [ones] "x"(ones));                       \
  } while (0)
  for (uint64_t i = 0; i < iterations; ++i) {
    OCTET_PEAK_STEP(c0);
    OCTET_PEAK_STEP(c1);
    OCTET_PEAK_STEP(c2);
    OCTET_PEAK_STEP(c3);
    OCTET_PEAK_STEP(c4);
    OCTET_PEAK_STEP(c5);
    OCTET_PEAK_STEP(c6);
    OCTET_PEAK_STEP(c7);
  }
#undef OCTET_PEAK_STEP
  const __m256i s = _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(c0, c1), _mm256_add_epi32(c2, c3)),
                                     _mm256_add_epi32(_mm256_add_epi32(c4, c5), _mm256_add_epi32(c6, c7)));
  alignas(32) int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
  volatile int32_t sink = lanes[0];
  (void)sink;
  return iterations * 8 * 32 * 2;
}

}  // namespace octet
