// Sampling the next token from a row of logits (octet run --generate).
//
// Semantics, in this order:
//   1. temperature == 0 (or top_k == 1): greedy. The token is the argmax of the
//      logits, the lowest id on ties. The random state is not advanced.
//   2. Candidates: every id, or with 0 < top_k < vocab the top_k largest logits
//      (ties broken towards the lower id). top_k == 0 means no limit.
//   3. Temperature: weight_i = exp((logit_i - max) / temperature) in float, with
//      max the largest candidate logit (softmax with max subtraction).
//   4. top-p (nucleus, only when top_p < 1): the candidates sorted by
//      decreasing probability (lower id first on ties); keep the smallest prefix
//      whose cumulative probability is >= top_p (at least one token).
//   5. Renormalize over the kept candidates and draw: one uniform u in [0, 1)
//      from the random state; the token is the first kept candidate (in the
//      order of step 4, or increasing id without top-p) whose cumulative
//      weight exceeds u * total.
// Logits may be -INFINITY (masked by a hook) as long as one is finite; NaN and
// +INFINITY are not supported (the engine does not produce them).
//
// The random generator is splitmix64 over a caller-owned uint64_t state (the
// seed is the initial state); each draw takes the top 53 bits of one output,
// so the same seed gives the same stream on every platform. With identical
// logits the chosen tokens are identical too; kernels that round differently
// on another CPU can change a token where two probabilities nearly tie.
//
// No allocation: the caller hands in scratch of SamplingScratchBytes(vocab)
// (a Session plans it: Session::Sample).
#pragma once

#include <cstddef>
#include <cstdint>

namespace octet {

// Called by Session::Sample with one sequence's next-token logits, which it
// may change in place (a mask sets -INFINITY, a bias adds) before the
// semantics above apply; at least one logit must stay finite. Returns 0 to go
// on; anything else makes Sample return kCancelled.
using LogitsHookFn = int (*)(void* user, uint32_t sequence, float* logits, uint32_t vocab);

struct SamplingParams {
  float temperature = 1.0f;  // >= 0; 0 = greedy
  uint32_t top_k = 0;        // 0 = no limit
  float top_p = 1.0f;        // in (0, 1]; 1 = no nucleus cut
  LogitsHookFn logits_hook = nullptr;  // Session::Sample only
  void* logits_hook_user = nullptr;
};

// splitmix64: advances *state and returns the next 64 random bits.
uint64_t NextRandom(uint64_t* state);
// A uniform double in [0, 1): the top 53 bits of NextRandom.
double NextUniform(uint64_t* state);

// Bytes of scratch SampleToken needs for a vocabulary of `vocab` ids.
size_t SamplingScratchBytes(uint32_t vocab);

// The argmax of logits[0..vocab), the lowest id on ties.
int32_t GreedyToken(const float* logits, uint32_t vocab);

// One token from logits[0..vocab) (vocab >= 1) following the semantics above.
// `scratch` is at least SamplingScratchBytes(vocab) bytes, 4-byte aligned.
int32_t SampleToken(const float* logits, uint32_t vocab, const SamplingParams& params,
                    uint64_t* rng_state, void* scratch);

}  // namespace octet
