#include "kernels/position.h"

namespace octet {

void f32_rope__ref(const F32RopeParams& p, float* x, size_t ldx) {
  const size_t half = p.rotary_dim / 2;
  for (size_t r = 0; r < p.len; ++r) {
    float* row = x + r * ldx;  // [heads, head_dim]
    const float position = static_cast<float>(p.pos0 + r);
    for (size_t i = 0; i < half; ++i) {
      const float angle = position * p.inv_freq[i];
      double sin_angle = 0.0, cos_angle = 0.0;
      ScalarSinCos(angle, &sin_angle, &cos_angle);
      const float c = static_cast<float>(cos_angle) * p.attention_factor;
      const float s = static_cast<float>(sin_angle) * p.attention_factor;
      for (size_t h = 0; h < p.heads; ++h) {
        float* xh = row + h * p.head_dim;  // [head_dim]
        const float x1 = xh[i];
        const float x2 = xh[i + half];
        xh[i] = x1 * c - x2 * s;
        xh[i + half] = x2 * c + x1 * s;
      }
    }
  }
}

}  // namespace octet
