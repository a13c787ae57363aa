// f32_attention: fp32 attention for one sequence, all heads, tiled with an online
// softmax (the fp32 model path; the int8 kernels take the same AttentionParams).
// What is computed, which keys are visible and the biases: kernels/attention_params.h.
//
//   q    [q_len, num_heads, head_dim]      row i at q + i * ldq     (ldq >= num_heads * head_dim)
//   k, v [kv_len, num_kv_heads, head_dim]  row j at k + j * ldk, v + j * ldv (position-major,
//                                          like the KV cache; K and V may share rows)
//   out  [q_len, num_heads, head_dim]      row i at out + i * ldo   (ldo >= num_heads * head_dim)
//   scratch: f32_attention_scratch_floats(params) floats, caller-owned, no alignment needed
//
// out must not overlap k, v or scratch. It may be q itself (out == q and ldo == ldq):
// a (row, head) result is stored after the last read of that query.
//
// The algorithm, per query row i and head h: keys [lo, hi) of AttentionKeyRange, in
// tiles of `tile` keys starting at lo. For each tile: the logits of its visible keys
// into scratch, their maximum m_t; if m_t exceeds the running maximum m, the running
// sum l and the accumulator a[head_dim] are multiplied by exp(m - m_t) and m = m_t;
// then l += exp(s_j - m) and a += exp(s_j - m) v_j for each visible key. At the end
// out = a / l (zeros when no key was visible). So scratch is one tile of logits plus
// one accumulator (the vector variants: a block of rows of each), whatever kv_len:
// never a [q_len x kv_len] buffer.
//
// Numerics (fp32 throughout; exp from kernels/scalar_math.h, rounded from double): dot
// products and the weighted sum of V accumulate in float in increasing key and
// dimension order. Every (row, head) depends only on its own query, so a row gives
// bit-identical results whether it is computed in a prefill of many rows or alone
// (decoding with q_len = 1 and q_pos0 = its position).
//
// The vector variants (__avx512, __avx2, __neon: kernels/f32_attention_vector.h)
// run blocks of query rows against key tiles as two small GEMMs (Q K^T and P V)
// with the same online softmax, the vector Exp of kernels/f32_vector_math.h and
// fused multiply-adds; tiles start at multiples of `tile`. They keep the
// row-independence above (bit-identical per variant across prefill, chunks and
// decoding; not bit-identical to the reference). Error bound, tested by
// tests/kernels/f32_attention_test.cc over head_dim 1..128, lengths 1..300, GQA,
// masks, windows and biases: max |out - out_ref| <= 1e-5 max |v| (the reference's
// own bound against exact attention is the same; about 1e-6 is seen).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "kernels/attention_params.h"

namespace octet {

typedef void (*F32AttentionFn)(const AttentionParams& params, const float* q, size_t ldq,
                               const float* k, size_t ldk, const float* v, size_t ldv, float* out,
                               size_t ldo, float* scratch);

// The reference: plain loops, the definition of the result.
void f32_attention__ref(const AttentionParams& params, const float* q, size_t ldq, const float* k,
                        size_t ldk, const float* v, size_t ldv, float* out, size_t ldo,
                        float* scratch);
// Vector variants: blocks of 32, 16 and 8 query rows (two vectors of lanes).
void f32_attention__avx512(const AttentionParams& params, const float* q, size_t ldq,
                           const float* k, size_t ldk, const float* v, size_t ldv, float* out,
                           size_t ldo, float* scratch);
void f32_attention__avx2(const AttentionParams& params, const float* q, size_t ldq, const float* k,
                         size_t ldk, const float* v, size_t ldv, float* out, size_t ldo,
                         float* scratch);
void f32_attention__neon(const AttentionParams& params, const float* q, size_t ldq, const float* k,
                         size_t ldk, const float* v, size_t ldv, float* out, size_t ldo,
                         float* scratch);

// Attention probabilities of one head, for inspection (`octet run --attention-map`),
// not for the forward pass: probs [q_len, kv_len], row i at probs + i * ldp (ldp >=
// kv_len), gets softmax_j(logit(i, head, j)), 0 for masked keys, an all-zero row for
// a query that sees no key. The logits are those f32_attention__ref computes; each
// row is normalized in place (the caller's buffer is the only memory used).
void f32_attention_probs__ref(const AttentionParams& params, size_t head, const float* q,
                              size_t ldq, const float* k, size_t ldk, float* probs, size_t ldp);

namespace {  // internal linkage: see kernels/scalar_math.h

// Query rows per block of the vector variants, at most.
constexpr size_t kF32AttentionMaxRows = 32;

// Floats of scratch every variant accepts: kF32AttentionMaxRows rows of
// transposed queries, tile logits and accumulators (the reference uses the first
// tile + head_dim). Independent of q_len and kv_len.
inline size_t f32_attention_scratch_floats(const AttentionParams& params) {
  return kF32AttentionMaxRows * (AttentionTile(params) + 2 * params.head_dim);
}

// logit(i, h, j) for query row qh [head_dim] at position pos and key row kj [head_dim].
inline float F32AttentionLogit(const AttentionParams& p, const float* qh, const float* kj, size_t h,
                               size_t pos, size_t j) {
  float dot = 0.0f;
  for (size_t d = 0; d < p.head_dim; ++d) dot += qh[d] * kj[d];
  const float s = dot * p.scale;
  return (p.softcap > 0.0f ? SoftCap(s, p.softcap) : s) + AttentionBias(p, h, pos, j);
}

inline float F32AttentionExp(float x) { return static_cast<float>(ScalarExp(x)); }

}  // namespace
}  // namespace octet
