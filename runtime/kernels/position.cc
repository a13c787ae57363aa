// The prepare-time tables of kernels/position.h: RoPE inverse frequencies and
// ALiBi slopes. Formulas and evaluation order are documented in the header.
#include "kernels/position.h"

namespace octet {

namespace {
bool PositiveFinite(float x) { return x > 0.0f && x <= 3.4028235e38f; }  // false for NaN
}  // namespace

const char* RopeFreqParamsError(const RopeFreqParams& p) {
  if (p.rotary_dim < 2 || p.rotary_dim % 2 != 0) return "rope.rotary_dim must be even and >= 2";
  if (!(p.theta > 1.0f) || !PositiveFinite(p.theta)) return "rope.theta must be finite and > 1";
  if (p.scaling > RopeScalingKind::kLongRope || !PositiveFinite(p.factor) ||
      !PositiveFinite(p.low_freq_factor) || !PositiveFinite(p.high_freq_factor)) {
    return "rope scaling parameters must be known, finite and > 0";
  }
  if (p.scaling == RopeScalingKind::kLlama3 &&
      (p.original_max_positions == 0 || p.high_freq_factor == p.low_freq_factor)) {
    return "rope scaling llama3 needs original_max_positions > 0 and high_freq_factor != "
           "low_freq_factor";
  }
  if (p.scaling == RopeScalingKind::kLongRope) {
    if (p.ext_factors == nullptr) return "rope scaling longrope needs its factors";
    for (size_t i = 0; i < p.rotary_dim / 2; ++i) {
      if (!PositiveFinite(p.ext_factors[i])) return "rope factors must be finite and > 0";
    }
  }
  return nullptr;
}

void rope_inv_freq(const RopeFreqParams& p, float* inv_freq) {
  const size_t half = p.rotary_dim / 2;
  const float two_pi = static_cast<float>(2.0 * 3.14159265358979323846);
  const float low_wavelen = static_cast<float>(static_cast<double>(p.original_max_positions) /
                                               static_cast<double>(p.low_freq_factor));
  const float high_wavelen = static_cast<float>(static_cast<double>(p.original_max_positions) /
                                                static_cast<double>(p.high_freq_factor));
  const float smooth_range = static_cast<float>(static_cast<double>(p.high_freq_factor) -
                                                static_cast<double>(p.low_freq_factor));
  const float original = static_cast<float>(p.original_max_positions);
  for (size_t i = 0; i < half; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(p.rotary_dim);
    const float power = static_cast<float>(ScalarPow(p.theta, exponent));
    const float inv = 1.0f / power;
    switch (p.scaling) {
      case RopeScalingKind::kNone:
        inv_freq[i] = inv;
        break;
      case RopeScalingKind::kLinear:
        inv_freq[i] = inv / p.factor;
        break;
      case RopeScalingKind::kLlama3: {
        const float wavelen = (1.0f / inv) * two_pi;
        if (wavelen < high_wavelen) {
          inv_freq[i] = inv;
        } else if (wavelen > low_wavelen) {
          inv_freq[i] = inv / p.factor;
        } else {
          const float smooth = ((1.0f / wavelen) * original - p.low_freq_factor) / smooth_range;
          inv_freq[i] = ((1.0f - smooth) * inv) / p.factor + smooth * inv;
        }
        break;
      }
      case RopeScalingKind::kLongRope:
        inv_freq[i] = 1.0f / (p.ext_factors[i] * power);
        break;
    }
  }
}

void alibi_slopes(size_t num_heads, float* slopes) {
  size_t m = 1;  // the largest power of two <= num_heads
  while (m * 2 <= num_heads) m *= 2;
  for (size_t k = 1; k <= m && k <= num_heads; ++k) {
    slopes[k - 1] =
        static_cast<float>(ScalarExp2(-8.0 * static_cast<double>(k) / static_cast<double>(m)));
  }
  for (size_t e = 0; m + e < num_heads; ++e) {
    const double k = static_cast<double>(2 * e + 1);  // odd slopes of 2m heads
    slopes[m + e] = static_cast<float>(ScalarExp2(-4.0 * k / static_cast<double>(m)));
  }
}

}  // namespace octet
