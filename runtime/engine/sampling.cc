// Sampling: see sampling.h for the exact semantics.
#include "engine/sampling.h"

#include <algorithm>
#include <cmath>

namespace octet {

uint64_t NextRandom(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double NextUniform(uint64_t* state) {
  // 53 bits fill a double's mantissa exactly: the same value on every platform.
  return static_cast<double>(NextRandom(state) >> 11) * (1.0 / 9007199254740992.0);
}

size_t SamplingScratchBytes(uint32_t vocab) {
  return static_cast<size_t>(vocab) * (sizeof(uint32_t) + sizeof(float));
}

int32_t GreedyToken(const float* logits, uint32_t vocab) {
  uint32_t best = 0;
  for (uint32_t i = 1; i < vocab; ++i) {
    if (logits[i] > logits[best]) best = i;
  }
  return static_cast<int32_t>(best);
}

int32_t SampleToken(const float* logits, uint32_t vocab, const SamplingParams& params,
                    uint64_t* rng_state, void* scratch) {
  if (!(params.temperature > 0.0f) || params.top_k == 1 || vocab <= 1) {
    return GreedyToken(logits, vocab);
  }
  uint32_t* index = static_cast<uint32_t*>(scratch);     // [vocab] candidate ids
  float* weight = reinterpret_cast<float*>(index + vocab);  // [vocab] their weights
  for (uint32_t i = 0; i < vocab; ++i) index[i] = i;
  // A total order: larger logit first, the lower id on ties, NaN (a malformed
  // model's) last: the sorts need a strict weak order.
  const auto before = [logits](uint32_t a, uint32_t b) {
    const float x = logits[a], y = logits[b];
    const bool x_nan = x != x, y_nan = y != y;
    if (x_nan || y_nan) return x_nan == y_nan ? a < b : y_nan;
    return x > y || (x == y && a < b);
  };
  const bool nucleus = params.top_p < 1.0f;
  uint32_t n = vocab;
  if (params.top_k > 0 && params.top_k < vocab) {
    // Partial selection in place: [0, top_k) holds the top_k candidates.
    n = params.top_k;
    std::nth_element(index, index + (n - 1), index + vocab, before);
    // The selection's order depends on the library: fix it (by id) unless
    // top-p sorts anyway.
    if (!nucleus) std::sort(index, index + n);
  }
  if (nucleus) std::sort(index, index + n, before);

  float max = logits[index[0]];
  for (uint32_t j = 1; j < n; ++j) max = std::max(max, logits[index[j]]);
  const float temperature = params.temperature;
  double total = 0.0;
  for (uint32_t j = 0; j < n; ++j) {
    weight[j] = std::exp((logits[index[j]] - max) / temperature);
    total += static_cast<double>(weight[j]);
  }

  uint32_t kept = n;
  if (nucleus) {
    const double threshold = static_cast<double>(params.top_p) * total;
    double cumulative = 0.0;
    for (uint32_t j = 0; j < n; ++j) {
      cumulative += static_cast<double>(weight[j]);
      if (cumulative >= threshold) {
        kept = j + 1;
        total = cumulative;
        break;
      }
    }
  }

  const double target = NextUniform(rng_state) * total;
  double cumulative = 0.0;
  uint32_t last_positive = 0;
  for (uint32_t j = 0; j < kept; ++j) {
    if (weight[j] <= 0.0f) continue;
    cumulative += static_cast<double>(weight[j]);
    last_positive = j;
    if (target < cumulative) return static_cast<int32_t>(index[j]);
  }
  return static_cast<int32_t>(index[last_positive]);  // rounding at the very top
}

}  // namespace octet
