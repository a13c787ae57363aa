// What every attention kernel takes (fp32 now, int8 later) besides its data
// pointers, and the masking and bias rules they all share, so the variants can
// only differ in arithmetic, never in which keys a query sees.
//
// One call covers one sequence and all its heads:
//   out[i, h, :] = sum_j softmax_j(logit(i, h, j)) v[j, g],  g = h / (num_heads / num_kv_heads)
//   logit(i, h, j) = cap(scale * q[i, h] . k[j, g]) + bias(h, p, j)   for visible keys j
// cap(s) = s, or softcap * tanh(s / softcap) when softcap > 0 (Gemma 2's soft-capping,
// SoftCap below).
// Query i sits at absolute position p = q_pos0 + i; key j at absolute position j.
// GQA/MQA: query heads g * group .. g * group + group - 1 read kv head g in place.
//
// Which keys query i sees (everything else is masked, i.e. has weight 0):
//   j < kv_len and j < kv_valid          (keys from kv_valid on are padding)
//   j <= p                               when causal
//   j > p - window                       when window > 0: the last `window`
//                                        positions up to and including p, the
//                                        convention of transformers' current
//                                        sliding-window mask (kv_idx > q_idx - W);
//                                        without causal, later keys stay visible
//   j <= p + window_ahead                when window_ahead > 0 and not causal: a
//                                        band around p (ModernBERT's local layers,
//                                        |p - j| <= 64: window 65, window_ahead 64)
//   key_mask == nullptr or key_mask[j] != 0   (e.g. left padding)
// Without the key mask this is one contiguous range [lo, hi) per query row
// (AttentionKeyRange): kernels never compute a logit outside it, so the key
// tiles a causal mask or a window hides are skipped entirely.
//
// A query that sees no key at all (a padded row, kv_valid = 0, a window that has
// moved past every key) gets an output of zeros, never NaN.
//
// bias(h, p, j) is the sum of the enabled terms:
//   ALiBi:  -alibi_slopes[h] * |p - j|   (for the causal decoders ALiBi was defined
//           for, j <= p and this is the paper's -m (p - j); without causal it is
//           the symmetric form)
//   T5:     t5_bias[T5RelativeBucket(j - p, t5_bidirectional, t5_num_buckets,
//           t5_max_distance) * num_heads + h]   (kernels/position.h)
//
// Kernel headers include only compiler headers and kernels/*.h.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "kernels/position.h"
#include "kernels/scalar_math.h"

namespace octet {

// Keys per tile when params.tile is 0. A tile's logits (256 bytes) and one
// accumulator stay in L1; the rescale when the running maximum grows costs
// head_dim multiplies per tile, a few percent of the tile's work at 64 keys.
// Results depend on the tile size only through float rounding.
constexpr size_t kAttentionDefaultTile = 64;

struct AttentionParams {
  size_t num_heads = 0;     // query heads
  size_t num_kv_heads = 0;  // key/value heads; divides num_heads
  size_t head_dim = 0;      // values per head (q, k, v and out alike)
  size_t q_len = 0;         // query rows
  size_t kv_len = 0;        // key/value rows
  size_t q_pos0 = 0;        // absolute position of query 0 (decoding with a cache:
                            // q_len = 1, q_pos0 = kv_len - 1)
  float scale = 1.0f;       // logit scale (1 / sqrt(head_dim); T5: 1)
  float softcap = 0.0f;     // > 0: scaled logits become softcap * tanh(logit / softcap)
  bool causal = false;      // keys after the query are masked
  size_t window = 0;        // sliding window in positions; 0 = none
  size_t window_ahead = 0;  // without causal: later keys seen; 0 = all of them
  size_t kv_valid = static_cast<size_t>(-1);  // keys j >= kv_valid are padding
  const uint8_t* key_mask = nullptr;          // null or [kv_len]: 0 masks the key
  const float* alibi_slopes = nullptr;        // null or [num_heads] (alibi_slopes())
  const float* t5_bias = nullptr;             // null or [t5_num_buckets, num_heads]
  uint32_t t5_num_buckets = 0;                // T5: relative_attention_num_buckets
  uint32_t t5_max_distance = 0;               // T5: relative_attention_max_distance
  bool t5_bidirectional = false;              // T5: true in the encoder, false in the decoder
  size_t tile = 0;                            // keys per tile; 0 = kAttentionDefaultTile
  // Heads computed: [head_begin, head_end), the others' outputs are not written;
  // head_end 0 = every head. Threads split a call by heads with these.
  size_t head_begin = 0;
  size_t head_end = 0;
};

namespace {  // internal linkage: see kernels/scalar_math.h

// Why p cannot be run, or nullptr. For the op's prepare step: kernels trust
// their parameters.
inline const char* AttentionParamsError(const AttentionParams& p) {
  if (p.num_heads == 0 || p.num_kv_heads == 0 || p.head_dim == 0) {
    return "attention needs at least one head, one kv head and head_dim >= 1";
  }
  if (p.num_heads % p.num_kv_heads != 0) return "num_kv_heads must divide num_heads";
  if (p.t5_bias != nullptr && p.t5_num_buckets < (p.t5_bidirectional ? 4u : 2u)) {
    return "the T5 bias needs at least 2 buckets (4 when bidirectional)";
  }
  return nullptr;
}

// num_heads / num_kv_heads, counted rather than divided: AArch32 before armv7ve
// has no divide instruction, and kernel files may not call the compiler
// runtime's. At most num_heads steps, once per call.
inline size_t AttentionGroup(const AttentionParams& p) {
  size_t group = 1;
  while (group * p.num_kv_heads < p.num_heads) ++group;
  return group;
}

// The heads a call computes: [*begin, *end).
inline void AttentionHeads(const AttentionParams& p, size_t* begin, size_t* end) {
  *end = p.head_end != 0 && p.head_end < p.num_heads ? p.head_end : p.num_heads;
  *begin = p.head_begin < *end ? p.head_begin : *end;
}

inline size_t AttentionTile(const AttentionParams& p) {
  return p.tile != 0 ? p.tile : kAttentionDefaultTile;
}

// The keys query row i may see, key_mask aside: [*lo, *hi), empty when *lo >= *hi.
inline void AttentionKeyRange(const AttentionParams& p, size_t i, size_t* lo, size_t* hi) {
  const size_t pos = p.q_pos0 + i;
  size_t end = p.kv_len < p.kv_valid ? p.kv_len : p.kv_valid;
  if (p.causal && pos + 1 < end) end = pos + 1;
  if (!p.causal && p.window_ahead != 0 && pos + 1 + p.window_ahead < end) {
    end = pos + 1 + p.window_ahead;
  }
  size_t begin = 0;
  if (p.window != 0 && pos + 1 > p.window) begin = pos + 1 - p.window;
  *lo = begin;
  *hi = end;
}

// cap * tanh(s / cap) for cap > 0, in double (tanh from ScalarExp, so every
// kernel and ISA gets the same float). Gemma 2's soft-capping of attention
// logits (AttentionParams::softcap) and of the final logits.
inline float SoftCap(float s, float cap) {
  const double x = static_cast<double>(s) / cap;
  const double e = ScalarExp(-2.0 * (x < 0.0 ? -x : x));  // in [0, 1]
  const double t = (1.0 - e) / (1.0 + e);                 // tanh |x|
  return static_cast<float>(cap * (x < 0.0 ? -t : t));
}

// bias(h, pos, j) of the header comment; 0 when neither ALiBi nor T5 is on.
inline float AttentionBias(const AttentionParams& p, size_t h, size_t pos, size_t j) {
  float bias = 0.0f;
  if (p.alibi_slopes != nullptr) {
    const size_t distance = pos > j ? pos - j : j - pos;
    bias -= p.alibi_slopes[h] * static_cast<float>(distance);
  }
  if (p.t5_bias != nullptr) {
    const int64_t relative = static_cast<int64_t>(j) - static_cast<int64_t>(pos);
    const uint32_t bucket =
        T5RelativeBucket(relative, p.t5_bidirectional, p.t5_num_buckets, p.t5_max_distance);
    bias += p.t5_bias[bucket * p.num_heads + h];
  }
  return bias;
}

}  // namespace
}  // namespace octet
