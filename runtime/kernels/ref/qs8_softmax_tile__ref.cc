// qs8_softmax_tile__ref: the reference (contract in kernels/qs8_softmax_tile.h),
// the scalar code ops/qs8_attention.cc ran before the kernel existed: exp in
// double (ScalarExp) rounded to float, sums and maxima in key order, masked
// logits marked -inf in work.
#include "core/quant.h"
#include "kernels/qs8_softmax_tile.h"
#include "kernels/scalar_math.h"

namespace octet {

float qs8_softmax_tile__ref(const Qs8SoftmaxTileParams& a, float* running_max, float* running_sum,
                            float* correction, float* work, uint8_t* p) {
  constexpr float kMasked = -__builtin_inff();
  float* s = work;  // [n]: s_t, then w_t; kMasked where hidden
  float tile_max = kMasked;
  for (size_t t = 0; t < a.n; ++t) {
    if (t < a.lo || t >= a.hi || (a.key_mask != nullptr && a.key_mask[t] == 0)) {
      s[t] = kMasked;
      continue;
    }
    s[t] = static_cast<float>(a.qk[t]) * (a.q_scale * a.k_scales[t]);
    if (a.bias != nullptr) s[t] += a.bias[t];
    tile_max = s[t] > tile_max ? s[t] : tile_max;
  }
  if (!(tile_max > kMasked)) {  // no visible key in this tile for this row
    for (size_t t = 0; t < a.n; ++t) p[t] = 0;
    return 0.0f;
  }
  if (tile_max > *running_max) {
    // exp(-inf) = 0 on the row's first visible tile, when the sum is 0.
    const float c = static_cast<float>(ScalarExp(*running_max - tile_max));
    *correction = c;
    *running_sum *= c;
    *running_max = tile_max;
  }
  // e_t, the sum, and w_t = e_t * v_scale in place of s_t.
  float w_max = 0.0f;
  for (size_t t = 0; t < a.n; ++t) {
    if (s[t] == kMasked) continue;
    const float e = static_cast<float>(ScalarExp(s[t] - *running_max));
    *running_sum += e;
    const float w = e * a.v_scales[t];
    s[t] = w;
    w_max = w > w_max ? w : w_max;
  }
  const float inv = w_max > 0.0f ? 255.0f / w_max : 0.0f;
  for (size_t t = 0; t < a.n; ++t) {
    if (s[t] == kMasked) {
      p[t] = 0;
      continue;
    }
    float x = s[t] * inv;
    x = x > 255.0f ? 255.0f : (x >= 0.0f ? x : 0.0f);  // NaN (malformed model) -> 0
    p[t] = static_cast<uint8_t>(RoundHalfEven(x));
  }
  return w_max / 255.0f;  // the real weight that P = 1 stands for
}

}  // namespace octet
