#include "engine/causal_conv.h"

namespace octet {

void CausalConvRows(const CausalConv& conv, const float* in, size_t ldi, float* out, size_t ldo,
                    size_t seq, const float* state, size_t lds, bool continues, size_t c0,
                    size_t c1) {
  const size_t taps = conv.taps;
  for (size_t s = 0; s < seq; ++s) {
    float* o = out + s * ldo;
    for (size_t ch = c0; ch < c1; ++ch) o[ch] = conv.bias != nullptr ? conv.bias[ch] : 0.0f;
    // Tap k (oldest first) over the whole channel range: a run the compiler vectorizes.
    for (size_t k = 0; k < taps; ++k) {
      const size_t back = taps - 1 - k;  // the input row s - back
      const float* from = nullptr;
      if (back <= s) {
        from = in + (s - back) * ldi;
      } else if (continues) {
        from = state + (taps - 1 - (back - s)) * lds;
      }
      if (from == nullptr) continue;
      const float* w = conv.weight + k;
      for (size_t ch = c0; ch < c1; ++ch) o[ch] += w[ch * taps] * from[ch];
    }
    if (conv.silu != nullptr) conv.silu(F32Activation::kSilu, c1 - c0, o + c0);
  }
}

void AdvanceConvState(const CausalConv& conv, const float* in, size_t ldi, float* state,
                      size_t lds, size_t p0, size_t last, bool continues, size_t c0, size_t c1) {
  const size_t taps = conv.taps;
  // Row i of the new state holds position last - (taps - 2) + i; read before
  // written: an old row for a position sits at a higher index than its new one.
  for (size_t i = 0; i + 1 < taps; ++i) {
    float* to = state + i * lds;
    if (last + i + 1 < taps - 1) {  // a position before 0
      for (size_t ch = c0; ch < c1; ++ch) to[ch] = 0.0f;
      continue;
    }
    const size_t pos = last + i + 1 - (taps - 1);
    if (pos >= p0) {
      const float* from = in + (pos - p0) * ldi;
      for (size_t ch = c0; ch < c1; ++ch) to[ch] = from[ch];
    } else if (continues) {
      const float* from = state + (pos + taps - 1 - p0) * lds;
      for (size_t ch = c0; ch < c1; ++ch) to[ch] = from[ch];
    } else {
      for (size_t ch = c0; ch < c1; ++ch) to[ch] = 0.0f;
    }
  }
}

}  // namespace octet
