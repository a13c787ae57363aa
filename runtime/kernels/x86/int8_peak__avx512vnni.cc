// int8_peak__avx512vnni: 16 independent vpdpbusd zmm chains (the instruction's
// latency is ~5-6 cycles at 2 per cycle, so 12 or more hide it). See int8_peak.h.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif
#include <stdint.h>

#include "kernels/int8_peak.h"

namespace octet {

uint64_t int8_peak__avx512vnni(uint64_t iterations) {
  __m512i a = _mm512_set1_epi8(1), b = _mm512_set1_epi8(1);
  __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0,
          c7 = c0, c8 = c0, c9 = c0, c10 = c0, c11 = c0, c12 = c0, c13 = c0, c14 = c0, c15 = c0;
  for (uint64_t i = 0; i < iterations; ++i) {
    // The operands stay in registers (an empty asm with them as inputs/outputs).
    __asm__("" : "+v"(a), "+v"(b));
    c0 = _mm512_dpbusd_epi32(c0, a, b);
    c1 = _mm512_dpbusd_epi32(c1, a, b);
    c2 = _mm512_dpbusd_epi32(c2, a, b);
    c3 = _mm512_dpbusd_epi32(c3, a, b);
    c4 = _mm512_dpbusd_epi32(c4, a, b);
    c5 = _mm512_dpbusd_epi32(c5, a, b);
    c6 = _mm512_dpbusd_epi32(c6, a, b);
    c7 = _mm512_dpbusd_epi32(c7, a, b);
    c8 = _mm512_dpbusd_epi32(c8, a, b);
    c9 = _mm512_dpbusd_epi32(c9, a, b);
    c10 = _mm512_dpbusd_epi32(c10, a, b);
    c11 = _mm512_dpbusd_epi32(c11, a, b);
    c12 = _mm512_dpbusd_epi32(c12, a, b);
    c13 = _mm512_dpbusd_epi32(c13, a, b);
    c14 = _mm512_dpbusd_epi32(c14, a, b);
    c15 = _mm512_dpbusd_epi32(c15, a, b);
  }
  __m512i s = _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(c0, c1), _mm512_add_epi32(c2, c3)),
                               _mm512_add_epi32(_mm512_add_epi32(c4, c5), _mm512_add_epi32(c6, c7)));
  s = _mm512_add_epi32(s, _mm512_add_epi32(
                              _mm512_add_epi32(_mm512_add_epi32(c8, c9), _mm512_add_epi32(c10, c11)),
                              _mm512_add_epi32(_mm512_add_epi32(c12, c13), _mm512_add_epi32(c14, c15))));
  volatile int32_t sink = _mm512_reduce_add_epi32(s);
  (void)sink;
  return iterations * 16 * 64 * 2;
}

}  // namespace octet
