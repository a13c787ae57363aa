#include "ops/qs8_attention.h"

namespace octet {
namespace {

size_t AlignUp64(size_t n) { return (n + 63) & ~static_cast<size_t>(63); }

// Where the scratch's pieces sit (bytes), for a tile and head_dim.
struct ScratchLayout {
  size_t logits = 0;    // f32 [rows, tile]: the softmax kernel's work (s_j, then w_j)
  size_t qk = 0;        // int32 [rows, tile]: S
  size_t k_scales = 0;  // f32 [tile]: the tile's K scales of one kv head
  size_t v_scales = 0;  // f32 [tile]: its V scales
  size_t bias = 0;      // f32 [tile]: one row's biases (ALiBi, T5)
  size_t p = 0;         // uint8 [rows, tile]: P
  size_t pv = 0;        // int32 [rows, head_dim]: P · V of one tile
  size_t acc = 0;       // f32 [rows, head_dim]: the running output
  size_t bytes = 0;
};

ScratchLayout Layout(size_t tile, size_t head_dim) {
  const size_t rows = kQs8AttentionRows;
  ScratchLayout l;
  size_t at = 0;
  l.logits = at;
  at = AlignUp64(at + rows * tile * sizeof(float));
  l.qk = at;
  at = AlignUp64(at + rows * tile * sizeof(int32_t));
  l.k_scales = at;
  at = AlignUp64(at + tile * sizeof(float));
  l.v_scales = at;
  at = AlignUp64(at + tile * sizeof(float));
  l.bias = at;
  at = AlignUp64(at + tile * sizeof(float));
  l.p = at;
  at = AlignUp64(at + rows * tile);
  l.pv = at;
  at = AlignUp64(at + rows * head_dim * sizeof(int32_t));
  l.acc = at;
  at = AlignUp64(at + rows * head_dim * sizeof(float));
  l.bytes = at;
  return l;
}

}  // namespace

size_t qs8_attention_scratch_bytes(const AttentionParams& params) {
  return Layout(AttentionTile(params), params.head_dim).bytes;
}

const char* Qs8AttentionParamsError(const AttentionParams& p) {
  if (const char* error = AttentionParamsError(p)) return error;
  if (p.head_dim > kQs8AttentionMaxHeadDim) return "head_dim exceeds the int8 attention's limit";
  if (AttentionTile(p) > kQs8AttentionMaxTile) return "the attention tile exceeds 4096 keys";
  return nullptr;
}

void qs8_attention(const Qs8AttentionKernels& kernels, const AttentionParams& p, const int8_t* q,
                   size_t ldq, const float* q_scales, const int8_t* k, size_t ldk,
                   const float* k_scales, const int8_t* v, size_t ldv, const float* v_scales,
                   float* out, size_t ldo, void* scratch) {
  const size_t head_dim = p.head_dim, heads = p.num_heads, kv_heads = p.num_kv_heads;
  const size_t group = AttentionGroup(p);
  const size_t tile = AttentionTile(p);
  size_t h_begin = 0, h_end = 0;
  AttentionHeads(p, &h_begin, &h_end);
  const ScratchLayout layout = Layout(tile, head_dim);
  uint8_t* base = static_cast<uint8_t*>(scratch);
  float* logits = reinterpret_cast<float*>(base + layout.logits);           // [rows, tile]
  int32_t* qk = reinterpret_cast<int32_t*>(base + layout.qk);               // [rows, tile]
  float* tile_k_scales = reinterpret_cast<float*>(base + layout.k_scales);  // [tile]
  float* tile_v_scales = reinterpret_cast<float*>(base + layout.v_scales);  // [tile]
  float* tile_bias = reinterpret_cast<float*>(base + layout.bias);          // [tile]
  const bool has_bias = p.alibi_slopes != nullptr || p.t5_bias != nullptr;
  uint8_t* probs = base + layout.p;                            // [rows, tile]
  int32_t* pv = reinterpret_cast<int32_t*>(base + layout.pv);  // [rows, head_dim]
  float* acc = reinterpret_cast<float*>(base + layout.acc);    // [rows, head_dim]
  constexpr float kMasked = -__builtin_inff();
  float running_max[kQs8AttentionRows], running_sum[kQs8AttentionRows];
  float q_scale[kQs8AttentionRows], p_scale[kQs8AttentionRows];
  size_t lo[kQs8AttentionRows], hi[kQs8AttentionRows];

  for (size_t i0 = 0; i0 < p.q_len; i0 += kQs8AttentionRows) {
    const size_t rows = p.q_len - i0 < kQs8AttentionRows ? p.q_len - i0 : kQs8AttentionRows;
    // The block's keys: the union of its rows' ranges, from the first aligned tile.
    size_t block_lo = static_cast<size_t>(-1), block_hi = 0;
    for (size_t r = 0; r < rows; ++r) {
      AttentionKeyRange(p, i0 + r, &lo[r], &hi[r]);
      if (lo[r] >= hi[r]) continue;
      block_lo = lo[r] < block_lo ? lo[r] : block_lo;
      block_hi = hi[r] > block_hi ? hi[r] : block_hi;
    }
    for (size_t h = h_begin; h < h_end; ++h) {
      const size_t kv_head = h / group;
      const size_t kv_offset = kv_head * head_dim;
      for (size_t r = 0; r < rows; ++r) {
        running_max[r] = kMasked;
        running_sum[r] = 0.0f;
        q_scale[r] = q_scales[(i0 + r) * heads + h] * p.scale;
        for (size_t d = 0; d < head_dim; ++d) acc[r * head_dim + d] = 0.0f;
      }
      const int8_t* qh = q + i0 * ldq + h * head_dim;  // rows at stride ldq
      size_t t0 = block_lo < block_hi ? block_lo - block_lo % tile : block_hi;
      for (; t0 < block_hi; t0 += tile) {
        const size_t n = block_hi - t0 < tile ? block_hi - t0 : tile;
        // S = Q · Kᵀ for the block's rows and the tile's keys.
        kernels.qk(rows, n, head_dim, qh, ldq, k + t0 * ldk + kv_offset, ldk, qk, tile);
        // The tile's K and V scales of kv head g, contiguous for the softmax kernel.
        for (size_t t = 0; t < n; ++t) {
          tile_k_scales[t] = k_scales[(t0 + t) * kv_heads + kv_head];
          tile_v_scales[t] = v_scales[(t0 + t) * kv_heads + kv_head];
        }
        bool any = false;
        for (size_t r = 0; r < rows; ++r) {
          // The row's softmax update and P (kernels/qs8_softmax_tile.h).
          Qs8SoftmaxTileParams sp;
          sp.n = n;
          sp.lo = lo[r] > t0 ? (lo[r] - t0 < n ? lo[r] - t0 : n) : 0;
          sp.hi = hi[r] > t0 ? (hi[r] - t0 < n ? hi[r] - t0 : n) : 0;
          sp.key_mask = p.key_mask != nullptr ? p.key_mask + t0 : nullptr;
          sp.qk = qk + r * tile;
          sp.q_scale = q_scale[r];
          sp.k_scales = tile_k_scales;
          sp.v_scales = tile_v_scales;
          if (p.softcap > 0.0f) {
            // The softmax kernel's logit is qk * q_scale * k_scale + bias. Capped
            // logits go whole through its bias, with q_scale 0 (the product is
            // then exactly 0): one formula for every ISA's kernel.
            const size_t pos = p.q_pos0 + i0 + r;
            const int32_t* row_qk = qk + r * tile;
            for (size_t t = sp.lo; t < sp.hi; ++t) {
              const float s = static_cast<float>(row_qk[t]) * (q_scale[r] * tile_k_scales[t]);
              tile_bias[t] = SoftCap(s, p.softcap);
              if (has_bias) tile_bias[t] += AttentionBias(p, h, pos, t0 + t);
            }
            sp.q_scale = 0.0f;
            sp.bias = tile_bias;
          } else if (has_bias) {
            const size_t pos = p.q_pos0 + i0 + r;
            for (size_t t = sp.lo; t < sp.hi; ++t) tile_bias[t] = AttentionBias(p, h, pos, t0 + t);
            sp.bias = tile_bias;
          }
          float correction = 1.0f;
          p_scale[r] = kernels.softmax(sp, &running_max[r], &running_sum[r], &correction,
                                       logits + r * tile, probs + r * tile);
          if (correction != 1.0f) {
            // The running max grew: rescale what the accumulator holds (0 on the
            // row's first visible tile, when the correction is 0).
            float* a = acc + r * head_dim;
            for (size_t d = 0; d < head_dim; ++d) a[d] *= correction;
          }
          any = any || p_scale[r] > 0.0f;
        }
        if (!any) continue;
        // P · V for the block's rows (rows without visible keys have P = 0).
        kernels.pv(rows, head_dim, n, probs, tile, v + t0 * ldv + kv_offset, ldv, pv, head_dim);
        for (size_t r = 0; r < rows; ++r) {
          if (!(p_scale[r] > 0.0f)) continue;
          float* a = acc + r * head_dim;
          const int32_t* c = pv + r * head_dim;
          for (size_t d = 0; d < head_dim; ++d) a[d] += static_cast<float>(c[d]) * p_scale[r];
        }
      }
      for (size_t r = 0; r < rows; ++r) {
        float* o = out + (i0 + r) * ldo + h * head_dim;  // [head_dim]
        const float* a = acc + r * head_dim;
        if (running_sum[r] > 0.0f) {
          for (size_t d = 0; d < head_dim; ++d) o[d] = a[d] / running_sum[r];
        } else {
          for (size_t d = 0; d < head_dim; ++d) o[d] = 0.0f;
        }
      }
    }
  }
}

}  // namespace octet
