#include "kernels/f32_attention.h"

namespace octet {

void f32_attention__ref(const AttentionParams& p, const float* q, size_t ldq, const float* k,
                        size_t ldk, const float* v, size_t ldv, float* out, size_t ldo,
                        float* scratch) {
  const float kMasked = -__builtin_inff();
  const size_t head_dim = p.head_dim;
  const size_t group = AttentionGroup(p);  // query heads per kv head
  const size_t tile = AttentionTile(p);
  size_t h_begin = 0, h_end = 0;
  AttentionHeads(p, &h_begin, &h_end);
  float* scores = scratch;      // [tile] logits of one key tile, kMasked if masked
  float* acc = scratch + tile;  // [head_dim] unnormalized output of one (row, head)
  for (size_t i = 0; i < p.q_len; ++i) {
    const size_t pos = p.q_pos0 + i;
    size_t lo = 0, hi = 0;
    AttentionKeyRange(p, i, &lo, &hi);
    // kv head h / group, counted without a division (AArch32 has none).
    size_t kv_head = 0, in_group = 0;
    for (size_t h = 0; h < h_begin; ++h) {
      if (++in_group == group) {
        in_group = 0;
        ++kv_head;
      }
    }
    for (size_t h = h_begin; h < h_end; ++h) {
      const float* qh = q + i * ldq + h * head_dim;  // [head_dim]
      const size_t kv_offset = kv_head * head_dim;
      if (++in_group == group) {
        in_group = 0;
        ++kv_head;
      }
      float running_max = kMasked;
      float running_sum = 0.0f;
      for (size_t d = 0; d < head_dim; ++d) acc[d] = 0.0f;
      for (size_t t0 = lo; t0 < hi; t0 += tile) {
        const size_t n = hi - t0 < tile ? hi - t0 : tile;
        float tile_max = kMasked;
        for (size_t t = 0; t < n; ++t) {
          const size_t j = t0 + t;
          if (p.key_mask != nullptr && p.key_mask[j] == 0) {
            scores[t] = kMasked;
            continue;
          }
          const float s = F32AttentionLogit(p, qh, k + j * ldk + kv_offset, h, pos, j);
          scores[t] = s;
          tile_max = s > tile_max ? s : tile_max;
        }
        if (!(tile_max > kMasked)) continue;  // every key of the tile is masked
        if (tile_max > running_max) {
          // exp(-inf) = 0 on the first visible tile, when acc and the sum are 0.
          const float correction = F32AttentionExp(running_max - tile_max);
          running_sum *= correction;
          for (size_t d = 0; d < head_dim; ++d) acc[d] *= correction;
          running_max = tile_max;
        }
        for (size_t t = 0; t < n; ++t) {
          if (scores[t] == kMasked) continue;
          const float w = F32AttentionExp(scores[t] - running_max);
          running_sum += w;
          const float* vj = v + (t0 + t) * ldv + kv_offset;  // [head_dim]
          for (size_t d = 0; d < head_dim; ++d) acc[d] += w * vj[d];
        }
      }
      float* o = out + i * ldo + h * head_dim;  // [head_dim]
      if (running_sum > 0.0f) {
        for (size_t d = 0; d < head_dim; ++d) o[d] = acc[d] / running_sum;
      } else {
        for (size_t d = 0; d < head_dim; ++d) o[d] = 0.0f;
      }
    }
  }
}

}  // namespace octet
