// qs8_attention_probs: the int8 attention's probabilities of one head
// (contract in ops/qs8_attention.h), written as plainly as qs8_softmax_tile__ref
// so the two can be read side by side.
#include "kernels/scalar_math.h"
#include "ops/qs8_attention.h"

namespace octet {

void qs8_attention_probs(const AttentionParams& p, size_t head, const int8_t* q, size_t ldq,
                         const float* q_scales, const int8_t* k, size_t ldk, const float* k_scales,
                         float* probs, size_t ldp) {
  constexpr float kMasked = -__builtin_inff();
  const size_t kv_head = head / AttentionGroup(p);
  const size_t kv_offset = kv_head * p.head_dim;
  for (size_t i = 0; i < p.q_len; ++i) {
    const size_t pos = p.q_pos0 + i;
    const int8_t* qh = q + i * ldq + head * p.head_dim;  // [head_dim]
    const float q_scale = q_scales[i * p.num_heads + head] * p.scale;
    float* row = probs + i * ldp;  // [kv_len]
    for (size_t j = 0; j < p.kv_len; ++j) row[j] = 0.0f;
    size_t lo = 0, hi = 0;
    AttentionKeyRange(p, i, &lo, &hi);
    float max = kMasked;
    for (size_t j = lo; j < hi; ++j) {
      if (p.key_mask != nullptr && p.key_mask[j] == 0) {
        row[j] = kMasked;
        continue;
      }
      const int8_t* kj = k + j * ldk + kv_offset;  // [head_dim]
      int32_t dot = 0;
      for (size_t d = 0; d < p.head_dim; ++d) dot += int32_t{qh[d]} * int32_t{kj[d]};
      float s = static_cast<float>(dot) * (q_scale * k_scales[j * p.num_kv_heads + kv_head]);
      if (p.softcap > 0.0f) s = SoftCap(s, p.softcap);
      if (p.alibi_slopes != nullptr || p.t5_bias != nullptr) s += AttentionBias(p, head, pos, j);
      row[j] = s;
      max = s > max ? s : max;
    }
    if (!(max > kMasked)) {  // no visible key (or every logit -inf): zeros
      for (size_t j = lo; j < hi; ++j) row[j] = 0.0f;
      continue;
    }
    float sum = 0.0f;
    for (size_t j = lo; j < hi; ++j) {
      row[j] = row[j] == kMasked ? 0.0f : static_cast<float>(ScalarExp(row[j] - max));
      sum += row[j];
    }
    for (size_t j = lo; j < hi; ++j) row[j] /= sum;
  }
}

}  // namespace octet
