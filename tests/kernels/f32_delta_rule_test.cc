// The gated delta rule kernels (kernels/f32_delta_rule.h): the references
// against the rule computed in double token by token, and every variant this
// CPU runs against the references, within the header's bound (2e-5 of the
// largest |o| and |S|), over shapes with vector tails (dk, dv of 1, 8, 17,
// 37, 45, 128), chunks of 1 to 64 tokens, mild and strong decays (where the
// cumulative decay underflows), several chunks in a row carrying S, and rows at
// a stride with canaries between them that must survive.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "kernels/f32_delta_rule.h"
#include "kernels/kernel_table.h"
#include "runnable_variants.h"

namespace octet {
namespace {

constexpr float kCanary = -12345.678f;
constexpr double kBound = 2e-5;

// Tokens in rows of stride ld: q | k | v | beta | g | o | canaries.
struct Rows {
  size_t n, dk, dv, ld;
  std::vector<float> data;
  float* q(size_t t) { return data.data() + t * ld; }
  float* k(size_t t) { return q(t) + dk; }
  float* v(size_t t) { return k(t) + dk; }
  float* beta(size_t t) { return v(t) + dv; }
  float* g(size_t t) { return beta(t) + 1; }
  float* o(size_t t) { return g(t) + 1; }
};

Rows MakeRows(size_t n, size_t dk, size_t dv, float g_low, uint32_t seed) {
  Rows r{n, dk, dv, 2 * dk + 2 * dv + 2 + 3, {}};
  r.data.assign(n * r.ld, kCanary);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(dk));
  for (size_t t = 0; t < n; ++t) {
    for (size_t part = 0; part < 2; ++part) {
      float* x = part == 0 ? r.q(t) : r.k(t);
      double ss = 0.0;
      for (size_t d = 0; d < dk; ++d) {
        x[d] = normal(rng);
        ss += static_cast<double>(x[d]) * x[d];
      }
      const float inv = static_cast<float>(1.0 / std::sqrt(ss + 1e-6)) * (part == 0 ? q_scale : 1.0f);
      for (size_t d = 0; d < dk; ++d) x[d] *= inv;
    }
    for (size_t e = 0; e < dv; ++e) r.v(t)[e] = normal(rng);
    *r.beta(t) = unit(rng);
    *r.g(t) = g_low * unit(rng);
  }
  return r;
}

std::vector<float> MakeState(size_t dk, size_t dv, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  std::vector<float> S(dk * dv);
  for (float& s : S) s = normal(rng);
  return S;
}

// The rule token by token in double: o rows into `o` [n, dv], S updated.
void TruthSteps(Rows& r, std::vector<double>& S, std::vector<double>& o) {
  const size_t dk = r.dk, dv = r.dv;
  o.assign(r.n * dv, 0.0);
  std::vector<double> d(dv);
  for (size_t t = 0; t < r.n; ++t) {
    const double decay = std::exp(static_cast<double>(*r.g(t)));
    for (double& s : S) s *= decay;
    for (size_t e = 0; e < dv; ++e) {
      double kv = 0.0;
      for (size_t i = 0; i < dk; ++i) kv += r.k(t)[i] * S[i * dv + e];
      d[e] = *r.beta(t) * (r.v(t)[e] - kv);
    }
    for (size_t i = 0; i < dk; ++i) {
      for (size_t e = 0; e < dv; ++e) S[i * dv + e] += r.k(t)[i] * d[e];
    }
    for (size_t e = 0; e < dv; ++e) {
      double acc = 0.0;
      for (size_t i = 0; i < dk; ++i) acc += r.q(t)[i] * S[i * dv + e];
      o[t * dv + e] = acc;
    }
  }
}

template <typename A, typename B>
double RelErr(const A& got, const B& want) {
  double err = 0.0, scale = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i])));
    scale = std::max(scale, std::fabs(static_cast<double>(want[i])));
  }
  return scale > 0.0 ? err / scale : err;
}

std::vector<float> OutputOf(Rows& r) {
  std::vector<float> o(r.n * r.dv);
  for (size_t t = 0; t < r.n; ++t) std::copy(r.o(t), r.o(t) + r.dv, o.begin() + t * r.dv);
  return o;
}

void CheckCanaries(Rows& r) {
  for (size_t t = 0; t < r.n; ++t) {
    for (size_t c = 0; c < 3; ++c) REQUIRE(r.o(t)[r.dv + c] == kCanary);
  }
}

// Runs n tokens through `chunk` in pieces of at most `piece` tokens (or token
// by token through `step` when chunk is null).
void RunRule(F32DeltaStepFn step, F32DeltaChunkFn chunk, size_t piece, Rows& r,
             std::vector<float>& S) {
  if (chunk == nullptr) {
    for (size_t t = 0; t < r.n; ++t) {
      step(r.dk, r.dv, r.q(t), r.k(t), r.v(t), *r.beta(t), *r.g(t), S.data(), r.o(t));
    }
    return;
  }
  std::vector<double> scratch_d((F32DeltaChunkScratchFloats(r.dk, r.dv) + 1) / 2 + 1);
  std::vector<float> canary_tail(8, kCanary);
  for (size_t t0 = 0; t0 < r.n; t0 += piece) {
    F32DeltaChunkArgs a;
    a.m = std::min(piece, r.n - t0);
    a.dk = r.dk;
    a.dv = r.dv;
    a.q = r.q(t0);
    a.k = r.k(t0);
    a.v = r.v(t0);
    a.beta = r.beta(t0);
    a.g = r.g(t0);
    a.ld = r.ld;
    a.o = r.o(t0);
    a.S = S.data();
    a.scratch = reinterpret_cast<float*>(scratch_d.data());
    chunk(a);
  }
}

struct Case {
  size_t dk, dv, n, piece;
  float g_low;
};

const Case kCases[] = {
    {128, 128, 150, 64, -0.5f}, {128, 128, 64, 64, -30.0f}, {37, 45, 70, 64, -0.5f},
    {17, 8, 33, 7, -3.0f},      {1, 1, 9, 4, -0.5f},        {8, 17, 64, 64, -30.0f},
    {45, 37, 5, 64, -0.1f},     {64, 128, 130, 64, -1.0f},
};

TEST_CASE("f32_delta_step__ref and f32_delta_chunk__ref equal the rule in double") {
  double worst_step = 0.0, worst_chunk = 0.0;
  uint32_t seed = 1;
  for (const Case& c : kCases) {
    INFO("dk " << c.dk << " dv " << c.dv << " n " << c.n << " piece " << c.piece << " g >= "
               << c.g_low);
    Rows rows = MakeRows(c.n, c.dk, c.dv, c.g_low, seed);
    const std::vector<float> S0 = MakeState(c.dk, c.dv, seed + 100);
    ++seed;
    std::vector<double> S_truth(S0.begin(), S0.end()), o_truth;
    TruthSteps(rows, S_truth, o_truth);
    for (int chunked = 0; chunked < 2; ++chunked) {
      std::vector<float> S = S0;
      RunRule(&f32_delta_step__ref, chunked ? &f32_delta_chunk__ref : nullptr, c.piece, rows, S);
      CheckCanaries(rows);
      const double err = std::max(RelErr(OutputOf(rows), o_truth), RelErr(S, S_truth));
      CHECK(err <= kBound);
      (chunked ? worst_chunk : worst_step) = std::max(chunked ? worst_chunk : worst_step, err);
    }
  }
  MESSAGE("references against double: step " << worst_step << ", chunk " << worst_chunk
                                              << " of the largest |o| and |S|");
}

TEST_CASE("f32_delta_step and f32_delta_chunk variants meet the bound against the references") {
  size_t step_count = 0, chunk_count = 0;
  const KernelVariant<F32DeltaStepFn>* step_list = F32DeltaStepVariants(&step_count);
  const KernelVariant<F32DeltaChunkFn>* chunk_list = F32DeltaChunkVariants(&chunk_count);
  const auto steps = test::RunnableVariants(step_list, step_count);
  const auto chunks = test::RunnableVariants(chunk_list, chunk_count);
  REQUIRE(steps.size() == chunks.size());
  for (size_t v = 0; v < steps.size(); ++v) {
    double worst_step = 0.0, worst_chunk = 0.0;
    uint32_t seed = 11;
    for (const Case& c : kCases) {
      INFO(std::string(steps[v].name) << ", " << std::string(chunks[v].name) << ": dk " << c.dk << " dv " << c.dv << " n "
                         << c.n << " piece " << c.piece << " g >= " << c.g_low);
      Rows rows = MakeRows(c.n, c.dk, c.dv, c.g_low, seed);
      const std::vector<float> S0 = MakeState(c.dk, c.dv, seed + 100);
      ++seed;
      for (int chunked = 0; chunked < 2; ++chunked) {
        std::vector<float> S_ref = S0, S_got = S0;
        RunRule(&f32_delta_step__ref, chunked ? &f32_delta_chunk__ref : nullptr, c.piece, rows,
                S_ref);
        const std::vector<float> o_ref = OutputOf(rows);
        RunRule(steps[v].fn, chunked ? chunks[v].fn : nullptr, c.piece, rows, S_got);
        CheckCanaries(rows);
        const double err = std::max(RelErr(OutputOf(rows), o_ref), RelErr(S_got, S_ref));
        CHECK(err <= kBound);
        (chunked ? worst_chunk : worst_step) = std::max(chunked ? worst_chunk : worst_step, err);
      }
    }
    MESSAGE(std::string(steps[v].name) << " " << worst_step << ", " << std::string(chunks[v].name) << " " << worst_chunk
                          << " of the largest |o| and |S| against the references");
  }
}

}  // namespace
}  // namespace octet
