// The gated delta rule of linear attention (engine/mixer_gated_deltanet.cc),
// per value head with a state S [dk, dv] (row-major, stride dv), in fp32:
//
//   f32_delta_step: one token
//     S = exp(g) S;  d = beta (v - S^T k);  S += k d^T;  o = S^T q
//   f32_delta_chunk: m <= kDeltaChunk tokens at once, in the chunked matrix
//     form (G the cumulative g, D[i][j] = exp(G_i - G_j) for j <= i):
//       solve (I + strict(beta k k^T * D)) [U | W] = [beta v | beta exp(G) k]
//       by forward substitution; u = U - W S;
//       o = exp(G) q S + (q k^T * D) u;  S = exp(G_m) S + (exp(G_m - G) k)^T u
//     which is the same rule as m steps (exact in real arithmetic).
//
// Rows: token t's q and k (dk floats), v (dv), beta and g (one float each) sit
// at q + t ld, k + t ld, ..., g + t ld; its o (dv floats) goes to o + t ld.
// o may not overlap q, k, v, beta, g or S.
//
// The references (__ref) sum the chunk's dot products, decays and their
// differences in double; the vector variants (__avx2, __avx512, __neon:
// kernels/f32_delta_rule_vector.h) run every product in float (blocked matrix
// products, fused multiply-adds where the ISA has them) and exp on vectors
// (kernels/f32_vector_math.h), the differences of G still formed in double.
// tests/kernels/f32_delta_rule_test.cc bounds the variants' o and S against the
// references by 2e-5 of the largest |o| and |S| (measured: a few 1e-6), for
// unit-norm q and k, beta in (0, 1) and g in [-30, 0], over shapes with and
// without vector tails.
#pragma once

#include <stddef.h>

namespace octet {

constexpr size_t kDeltaChunk = 64;  // tokens per f32_delta_chunk call, at most

typedef void (*F32DeltaStepFn)(size_t dk, size_t dv, const float* q, const float* k,
                               const float* v, float beta, float g, float* S, float* o);

struct F32DeltaChunkArgs {
  size_t m = 0, dk = 0, dv = 0;  // tokens (1..kDeltaChunk) and the head's dims
  const float* q = nullptr;      // [m, dk] at stride ld (already normalized and scaled)
  const float* k = nullptr;      // [m, dk] at stride ld
  const float* v = nullptr;      // [m, dv] at stride ld
  const float* beta = nullptr;   // [m] at stride ld
  const float* g = nullptr;      // [m] at stride ld: log of each token's decay, <= 0
  size_t ld = 0;
  float* o = nullptr;            // [m, dv] at stride ld, written
  float* S = nullptr;            // [dk, dv], read and updated
  // F32DeltaChunkScratchFloats(dk, dv) floats, 8-byte aligned, the caller's
  // (no allocation inside); nothing in it is kept between calls.
  float* scratch = nullptr;
};
typedef void (*F32DeltaChunkFn)(const F32DeltaChunkArgs& a);

// Scratch for any variant: the reference's q, k, W [64, dk], beta v and o
// [64, dv], two [64, 64] matrices, G (64 doubles) and beta.
inline size_t F32DeltaChunkScratchFloats(size_t dk, size_t dv) {
  return kDeltaChunk * (3 * dk + 2 * dv) + 2 * kDeltaChunk * kDeltaChunk + 3 * kDeltaChunk;
}

void f32_delta_step__ref(size_t dk, size_t dv, const float* q, const float* k, const float* v,
                         float beta, float g, float* S, float* o);
void f32_delta_chunk__ref(const F32DeltaChunkArgs& a);

// Optimized variants; kernel_table.cc lists them with the CPU features each needs.
void f32_delta_step__avx2(size_t dk, size_t dv, const float* q, const float* k, const float* v,
                          float beta, float g, float* S, float* o);
void f32_delta_chunk__avx2(const F32DeltaChunkArgs& a);
void f32_delta_step__avx512(size_t dk, size_t dv, const float* q, const float* k, const float* v,
                            float beta, float g, float* S, float* o);
void f32_delta_chunk__avx512(const F32DeltaChunkArgs& a);
void f32_delta_step__neon(size_t dk, size_t dv, const float* q, const float* k, const float* v,
                          float beta, float g, float* S, float* o);
void f32_delta_chunk__neon(const F32DeltaChunkArgs& a);

}  // namespace octet
