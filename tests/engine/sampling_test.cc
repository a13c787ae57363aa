// Sampling (engine/sampling.h) and Session::Sample: greedy, temperature,
// top-k, top-p, the seeded generator, and generation with the KV cache.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/sampling.h"
#include "engine/session.h"
#include "format/model.h"
#include "support/loaded_model.h"
#include "support/test_models.h"

namespace octet {
namespace {

using testing::AlignedBytes;
using testing::MakeTinyModelBytes;
using testing::TinyModelOptions;

struct Scratch {
  explicit Scratch(uint32_t vocab) : words((SamplingScratchBytes(vocab) + 3) / 4) {}
  void* data() { return words.data(); }
  std::vector<uint32_t> words;
};

// Softmax of logits / temperature in double: the distribution sampling follows.
std::vector<double> Softmax(const std::vector<float>& logits, double temperature) {
  double max = logits[0];
  for (float l : logits) max = std::max(max, static_cast<double>(l));
  std::vector<double> p(logits.size());
  double total = 0;
  for (size_t i = 0; i < logits.size(); ++i) total += p[i] = std::exp((logits[i] - max) / temperature);
  for (double& x : p) x /= total;
  return p;
}

// Counts of `draws` samples.
std::vector<int> Histogram(const std::vector<float>& logits, const SamplingParams& params,
                           uint64_t seed, int draws) {
  const auto vocab = static_cast<uint32_t>(logits.size());
  Scratch scratch(vocab);
  std::vector<int> counts(vocab, 0);
  uint64_t rng = seed;
  for (int i = 0; i < draws; ++i) {
    const int32_t id = SampleToken(logits.data(), vocab, params, &rng, scratch.data());
    REQUIRE(id >= 0);
    REQUIRE(static_cast<uint32_t>(id) < vocab);
    ++counts[static_cast<size_t>(id)];
  }
  return counts;
}

// Pearson's chi-square of counts against probabilities (cells with p > 0).
double ChiSquare(const std::vector<int>& counts, const std::vector<double>& p, int draws) {
  double chi = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == 0) continue;
    const double expected = p[i] * draws;
    chi += (counts[i] - expected) * (counts[i] - expected) / expected;
  }
  return chi;
}

std::vector<float> RandomLogits(uint32_t vocab, uint64_t* rng, float scale) {
  std::vector<float> logits(vocab);
  for (float& l : logits) l = static_cast<float>((NextUniform(rng) * 2 - 1) * scale);
  return logits;
}

TEST_CASE("the generator is splitmix64: the same stream on every platform") {
  uint64_t state = 0;
  CHECK(NextRandom(&state) == 0xE220A8397B1DCDAFull);
  CHECK(NextRandom(&state) == 0x6E789E6AA1B965F4ull);
  CHECK(NextRandom(&state) == 0x06C45D188009454Full);
  state = 42;
  CHECK(NextRandom(&state) == 0xBDD732262FEB6E95ull);
  CHECK(NextUniform(&state) == 0x1.477f199d93378p-3);  // exactly representable: 53 bits
  uint64_t a = 7, b = 7;
  for (int i = 0; i < 1000; ++i) {
    const double u = NextUniform(&a);
    CHECK(u == NextUniform(&b));
    CHECK(u >= 0.0);
    CHECK(u < 1.0);
  }
}

TEST_CASE("greedy is the argmax, the lowest id on ties, and leaves the random state alone") {
  const std::vector<float> logits = {1.0f, 3.0f, 3.0f, 2.0f, -5.0f};
  Scratch scratch(5);
  CHECK(GreedyToken(logits.data(), 5) == 1);
  for (uint32_t k : {0u, 1u, 2u, 5u}) {
    for (float p : {1.0f, 0.5f, 1e-6f}) {
      SamplingParams params;
      params.temperature = 0;
      params.top_k = k;
      params.top_p = p;
      uint64_t rng = 123;
      CHECK(SampleToken(logits.data(), 5, params, &rng, scratch.data()) == 1);
      CHECK(rng == 123);
    }
  }
  const float single = 0.5f;
  uint64_t rng = 1;
  CHECK(SampleToken(&single, 1, SamplingParams(), &rng, scratch.data()) == 0);
}

TEST_CASE("top-k 1 and a tiny top-p are greedy at any temperature") {
  uint64_t gen = 5;
  for (int trial = 0; trial < 200; ++trial) {
    const uint32_t vocab = 2 + static_cast<uint32_t>(NextRandom(&gen) % 100);
    const std::vector<float> logits = RandomLogits(vocab, &gen, 4.0f);
    const int32_t greedy = GreedyToken(logits.data(), vocab);
    Scratch scratch(vocab);
    for (float t : {0.05f, 1.0f, 10.0f, 100.0f}) {
      SamplingParams top1;
      top1.temperature = t;
      top1.top_k = 1;
      SamplingParams nucleus;
      nucleus.temperature = t;
      nucleus.top_p = 1e-7f;
      uint64_t rng = static_cast<uint64_t>(trial);
      CHECK(SampleToken(logits.data(), vocab, top1, &rng, scratch.data()) == greedy);
      CHECK(SampleToken(logits.data(), vocab, nucleus, &rng, scratch.data()) == greedy);
    }
  }
}

TEST_CASE("sampling frequencies follow the softmax of logits / temperature") {
  const std::vector<float> logits = {0.5f, -1.0f, 2.0f, 0.0f, 1.0f, -0.5f};
  const int draws = 200000;
  for (float t : {0.7f, 1.0f, 2.5f}) {
    CAPTURE(t);
    SamplingParams params;
    params.temperature = t;
    const std::vector<int> counts = Histogram(logits, params, 2024, draws);
    const double chi = ChiSquare(counts, Softmax(logits, t), draws);
    MESSAGE("chi-square (5 degrees of freedom) at temperature " << t << ": " << chi);
    CHECK(chi < 30.0);  // P(chi2_5 > 30) ~ 1.5e-5; the seed is fixed anyway
  }
}

TEST_CASE("top-k keeps the k most likely tokens, renormalized") {
  const std::vector<float> logits = {0.5f, -1.0f, 2.0f, 0.0f, 1.0f, -0.5f, 1.0f};
  const int draws = 100000;
  SamplingParams params;
  params.top_k = 3;  // 2.0 (id 2), then 1.0 (ids 4 and 6): ties keep the lower ids
  const std::vector<int> counts = Histogram(logits, params, 99, draws);
  std::vector<double> p = Softmax(logits, 1.0);
  double kept = p[2] + p[4] + p[6];
  for (size_t i = 0; i < p.size(); ++i) {
    const bool in = i == 2 || i == 4 || i == 6;
    if (!in) CHECK(counts[i] == 0);
    p[i] = in ? p[i] / kept : 0.0;
  }
  CHECK(ChiSquare(counts, p, draws) < 25.0);  // 2 degrees of freedom
  params.top_k = 2;  // the tie at 1.0 goes to the lower id
  const std::vector<int> two = Histogram(logits, params, 99, 20000);
  CHECK(two[6] == 0);
  CHECK(two[4] > 0);
  CHECK(two[2] + two[4] == 20000);
  params.top_k = 100;  // larger than the vocabulary: no limit
  const std::vector<int> all = Histogram(logits, params, 99, 20000);
  for (int c : all) CHECK(c > 0);
}

TEST_CASE("top-p keeps the smallest most likely set reaching p, after top-k") {
  // Weights 4, 16, 1, 8, 2 (logits log2-spaced): sorted id 1 (16/31), id 3 (8/31),
  // id 0 (4/31), id 4 (2/31), id 2 (1/31); cumulative .516, .774, .903, .968, 1.
  const float l2 = std::log(2.0f);
  const std::vector<float> logits = {2 * l2, 4 * l2, 0.0f, 3 * l2, l2};
  const int draws = 60000;
  struct Case {
    float p;
    std::vector<int> kept;
  };
  for (const Case& c : {Case{0.4f, {1}}, Case{0.6f, {1, 3}}, Case{0.74f, {1, 3}},
                        Case{0.8f, {1, 3, 0}}, Case{0.9f, {1, 3, 0}},
                        Case{0.95f, {1, 3, 0, 4}}, Case{1.0f, {0, 1, 2, 3, 4}}}) {
    CAPTURE(c.p);
    SamplingParams params;
    params.top_p = c.p;
    const std::vector<int> counts = Histogram(logits, params, 11, draws);
    std::vector<double> p = Softmax(logits, 1.0);
    double total = 0;
    for (int id : c.kept) total += p[static_cast<size_t>(id)];
    for (size_t i = 0; i < p.size(); ++i) {
      bool in = false;
      for (int id : c.kept) in = in || static_cast<size_t>(id) == i;
      if (!in) CHECK(counts[i] == 0);
      p[i] = in ? p[i] / total : 0.0;
    }
    CHECK(ChiSquare(counts, p, draws) < 25.0);
  }
  // top-k first: the top 2 renormalize to (2/3, 1/3): p = 0.6 keeps id 1, 0.7 both.
  SamplingParams both;
  both.top_k = 2;
  both.top_p = 0.6f;
  const std::vector<int> counts = Histogram(logits, both, 3, 5000);
  CHECK(counts[1] == 5000);
  both.top_p = 0.7f;
  const std::vector<int> more = Histogram(logits, both, 3, 5000);
  CHECK(more[1] + more[3] == 5000);
  CHECK(more[3] > 0);
}

TEST_CASE("the same seed gives the same tokens; another seed other tokens") {
  uint64_t gen = 77;
  const std::vector<float> logits = RandomLogits(50, &gen, 1.0f);
  Scratch scratch(50);
  SamplingParams params;
  params.temperature = 1.3f;
  params.top_k = 20;
  params.top_p = 0.95f;
  auto draw = [&](uint64_t seed) {
    std::vector<int32_t> ids;
    uint64_t rng = seed;
    for (int i = 0; i < 64; ++i) ids.push_back(SampleToken(logits.data(), 50, params, &rng, scratch.data()));
    return ids;
  };
  CHECK(draw(5) == draw(5));
  CHECK(draw(5) != draw(6));
}

using Loaded = testing::LoadedModel;

TinyModelOptions Fp32(fb::Family family, uint32_t layers) {
  TinyModelOptions o;
  o.family = family;
  o.layers = layers;
  o.int8 = false;
  return o;
}

TEST_CASE("Session::Sample reads the last real row of each sequence") {
  Loaded m(Fp32(fb::Family::Llama, 2));
  const uint32_t vocab = m.model.architecture().vocab_size();
  Result<Session> session = Session::Create(m.model, SessionLimits{2, 4, 2});
  REQUIRE(session.ok());
  int32_t out[2] = {-1, -1};
  uint64_t rng = 0;
  SamplingParams greedy;
  greedy.temperature = 0;
  CHECK(session->Sample(greedy, &rng, out).code() == StatusCode::kFailedPrecondition);  // no Run yet
  const int32_t ids[8] = {3, 9, 0, 0, 4, 5, 6, 7};
  const uint32_t lengths[2] = {2, 4};
  REQUIRE(session->Run(ids, lengths, 2, 4).ok());
  REQUIRE(session->Sample(greedy, &rng, out).ok());
  const OutputView o = session->output();
  CHECK(out[0] == GreedyToken(o.data + 1 * vocab, vocab));
  CHECK(out[1] == GreedyToken(o.data + 7 * vocab, vocab));
  SamplingParams bad;
  bad.top_p = 0;
  CHECK(session->Sample(bad, &rng, out).code() == StatusCode::kInvalidArgument);
  bad = SamplingParams();
  bad.temperature = -1;
  CHECK(session->Sample(bad, &rng, out).code() == StatusCode::kInvalidArgument);
  CHECK(session->Sample(greedy, nullptr, out).code() == StatusCode::kInvalidArgument);
  // After a Step: the single row.
  REQUIRE(session->Step(out, 2).ok());
  REQUIRE(session->Sample(greedy, &rng, out).ok());
  CHECK(out[0] == GreedyToken(session->output().data, vocab));
  CHECK(out[1] == GreedyToken(session->output().data + vocab, vocab));

  Loaded bert(Fp32(fb::Family::Bert, 1));
  Result<Session> encoder = Session::Create(bert.model, SessionLimits{1, 4, 0});
  REQUIRE(encoder.ok());
  REQUIRE(encoder->Run(ids, lengths, 1, 4).ok());
  CHECK(encoder->Sample(greedy, &rng, out).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("greedy generation with Step equals the argmax chain of full recomputation") {
  Loaded m(Fp32(fb::Family::Llama, 2));
  const uint32_t vocab = m.model.architecture().vocab_size();
  const uint32_t steps = 7;
  const std::vector<std::vector<int32_t>> prompts = {{4, 17, 9}, {12, 5, 28, 1, 19}};
  Result<Session> session = Session::Create(m.model, SessionLimits{2, 5, steps});
  REQUIRE(session.ok());
  std::vector<int32_t> ids(2 * 5, 0);
  uint32_t lengths[2];
  for (uint32_t b = 0; b < 2; ++b) {
    lengths[b] = static_cast<uint32_t>(prompts[b].size());
    for (uint32_t s = 0; s < lengths[b]; ++s) ids[b * 5 + s] = prompts[b][s];
  }
  REQUIRE(session->Run(ids.data(), lengths, 2, 5).ok());
  SamplingParams greedy;
  greedy.temperature = 0;
  uint64_t rng = 0;
  std::vector<std::vector<int32_t>> full = prompts;
  int32_t next[2];
  for (uint32_t t = 0; t < steps; ++t) {
    REQUIRE(session->Sample(greedy, &rng, next).ok());
    for (uint32_t b = 0; b < 2; ++b) full[b].push_back(next[b]);
    if (t + 1 < steps) REQUIRE(session->Step(next, 2).ok());
  }
  // Recompute every sequence in one pass: each generated token is the argmax
  // at the position before it.
  for (uint32_t b = 0; b < 2; ++b) {
    const auto n = static_cast<uint32_t>(full[b].size());
    Result<Session> check = Session::Create(m.model, SessionLimits{1, n, 0});
    REQUIRE(check.ok());
    REQUIRE(check->Run(full[b].data(), &n, 1, n).ok());
    for (uint32_t pos = lengths[b] - 1; pos + 1 < n; ++pos) {
      CAPTURE(b);
      CAPTURE(pos);
      CHECK(GreedyToken(check->output().data + static_cast<size_t>(pos) * vocab, vocab) ==
            full[b][pos + 1]);
    }
  }
}

}  // namespace
}  // namespace octet
