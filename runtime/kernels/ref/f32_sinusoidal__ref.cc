#include "kernels/position.h"

namespace octet {

void f32_sinusoidal__ref(const F32SinusoidalParams& p, float* out, size_t ldo) {
  const size_t dim = p.dim;
  const size_t sentinel = (dim + 1) / 2;  // kSplit: sin columns, the rest are cos
  for (size_t r = 0; r < p.len; ++r) {
    float* row = out + r * ldo;  // [dim]
    const double position = static_cast<double>(p.pos0 + r);
    for (size_t c = 0; c < sentinel; ++c) {
      const double exponent = static_cast<double>(2 * c) / static_cast<double>(dim);
      const double angle = position / ScalarPow(10000.0, exponent);
      double sin_angle = 0.0, cos_angle = 0.0;
      ScalarSinCos(angle, &sin_angle, &cos_angle);
      if (p.kind == SinusoidalKind::kInterleaved) {
        row[2 * c] = static_cast<float>(sin_angle);
        if (2 * c + 1 < dim) row[2 * c + 1] = static_cast<float>(cos_angle);
      } else {
        row[c] = static_cast<float>(sin_angle);
        if (sentinel + c < dim) row[sentinel + c] = static_cast<float>(cos_angle);
      }
    }
  }
}

}  // namespace octet
