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
  const __m512i a = _mm512_set1_epi8(1), b = _mm512_set1_epi8(1);
  __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0,
          c7 = c0, c8 = c0, c9 = c0, c10 = c0, c11 = c0, c12 = c0, c13 = c0, c14 = c0, c15 = c0;
  // Inline asm: with intrinsics the compiler sees 16 times the same product and
  // computes it once (c += t), which is not what is being measured.
#define OCTET_PEAK_DP(c) __asm__("vpdpbusd %[b], %[a], %[acc]" : [acc] "+v"(c) : [a] "v"(a), [b] "v"(b))
  for (uint64_t i = 0; i < iterations; ++i) {
    OCTET_PEAK_DP(c0);
    OCTET_PEAK_DP(c1);
    OCTET_PEAK_DP(c2);
    OCTET_PEAK_DP(c3);
    OCTET_PEAK_DP(c4);
    OCTET_PEAK_DP(c5);
    OCTET_PEAK_DP(c6);
    OCTET_PEAK_DP(c7);
    OCTET_PEAK_DP(c8);
    OCTET_PEAK_DP(c9);
    OCTET_PEAK_DP(c10);
    OCTET_PEAK_DP(c11);
    OCTET_PEAK_DP(c12);
    OCTET_PEAK_DP(c13);
    OCTET_PEAK_DP(c14);
    OCTET_PEAK_DP(c15);
  }
#undef OCTET_PEAK_DP
  __m512i s = _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(c0, c1), _mm512_add_epi32(c2, c3)),
                               _mm512_add_epi32(_mm512_add_epi32(c4, c5), _mm512_add_epi32(c6, c7)));
  s = _mm512_add_epi32(s, _mm512_add_epi32(
                              _mm512_add_epi32(_mm512_add_epi32(c8, c9), _mm512_add_epi32(c10, c11)),
                              _mm512_add_epi32(_mm512_add_epi32(c12, c13), _mm512_add_epi32(c14, c15))));
  // Stored rather than reduced: GCC 12's _mm512_reduce_add_epi32 warns on its own header.
  alignas(64) int32_t lanes[16];
  _mm512_store_si512(lanes, s);
  volatile int32_t sink = lanes[0] + lanes[15];
  (void)sink;
  return iterations * 16 * 64 * 2;
}

}  // namespace octet
