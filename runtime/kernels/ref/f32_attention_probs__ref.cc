#include "kernels/f32_attention.h"

namespace octet {

void f32_attention_probs__ref(const AttentionParams& p, size_t head, const float* q, size_t ldq,
                              const float* k, size_t ldk, float* probs, size_t ldp) {
  const float kMasked = -__builtin_inff();
  const size_t group = AttentionGroup(p);
  size_t kv_head = 0;  // head / group, counted (see AttentionGroup)
  for (size_t next = group; next <= head; next += group) ++kv_head;
  const size_t kv_offset = kv_head * p.head_dim;
  for (size_t i = 0; i < p.q_len; ++i) {
    const size_t pos = p.q_pos0 + i;
    const float* qh = q + i * ldq + head * p.head_dim;  // [head_dim]
    float* row = probs + i * ldp;                       // [kv_len]
    for (size_t j = 0; j < p.kv_len; ++j) row[j] = 0.0f;
    size_t lo = 0, hi = 0;
    AttentionKeyRange(p, i, &lo, &hi);
    // Logits of the visible keys, in place, and their maximum.
    float max = kMasked;
    for (size_t j = lo; j < hi; ++j) {
      if (p.key_mask != nullptr && p.key_mask[j] == 0) {
        row[j] = kMasked;
        continue;
      }
      row[j] = F32AttentionLogit(p, qh, k + j * ldk + kv_offset, head, pos, j);
      max = row[j] > max ? row[j] : max;
    }
    if (!(max > kMasked)) {  // no visible key: zeros
      for (size_t j = lo; j < hi; ++j) row[j] = 0.0f;
      continue;
    }
    float sum = 0.0f;
    for (size_t j = lo; j < hi; ++j) {
      row[j] = row[j] == kMasked ? 0.0f : F32AttentionExp(row[j] - max);
      sum += row[j];
    }
    for (size_t j = lo; j < hi; ++j) row[j] /= sum;
  }
}

}  // namespace octet
