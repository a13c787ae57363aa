// ops/qs8_attention against f32_attention__ref (accuracy, with every softmax
// variant) and against itself (exactness): for each softmax variant, every
// compiled pair of Q·Kᵀ and P·V variants that this CPU runs gives bit-identical
// outputs; the vector softmax variants stay within the header's bound of the
// reference softmax; a row computed alone (a decode step) equals the same row
// computed in a prefill block; keys a query cannot see do not change anything; a
// query that sees no key gets zeros.
//
// Accuracy: Q, K and V are quantized per (token, head) with 127 levels and P
// with 255 per tile, so the error is that of 8-bit data, not of fp32. The data
// is deliberately sharp (logits with a standard deviation of ~2.3): a rounding
// error of ~0.3% RMS per element of Q and K moves a logit by ~0.02, i.e. each
// weight by ~2%, which dominates when a window leaves a few keys. The bar is
// docs/design.md's end-to-end one, a cosine similarity >= 0.998 per (row, head)
// against fp32 attention on the unquantized data, plus a max error <= 0.03 *
// max |v|. The worst values seen are reported by a MESSAGE (x86: cosine 0.99897,
// error 0.016 max |v|, one row of a 13-key window; the median row is far closer).
//
// Buffers are sized exactly, so with ASan a read past the last row of q, k, v
// or their scales, or a write past out, is an error.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "core/quant.h"
#include "kernels/f32_attention.h"
#include "kernels/kernel_table.h"
#include "kernels/position.h"
#include "ops/qs8_attention.h"
#include "platform/cpu.h"

namespace octet {
namespace {

struct Case {
  size_t heads = 2, kv_heads = 1, head_dim = 16;
  size_t q_len = 5, kv_len = 5, q_pos0 = 0;
  bool causal = false;
  size_t window = 0;
  size_t window_ahead = 0;  // an encoder's band: later keys seen
  size_t kv_valid = static_cast<size_t>(-1);
  bool key_mask = false, alibi = false, t5 = false;
  size_t tile = 0;
  float softcap = 0.0f;  // Gemma 2's logit soft-capping
  uint32_t seed = 1;
};

std::string Describe(const Case& c) {
  std::ostringstream s;
  s << "heads=" << c.heads << "/" << c.kv_heads << " hd=" << c.head_dim << " q_len=" << c.q_len
    << " kv_len=" << c.kv_len << " pos0=" << c.q_pos0 << " causal=" << c.causal
    << " window=" << c.window << "+" << c.window_ahead << " kv_valid=" << static_cast<long long>(c.kv_valid)
    << " mask=" << c.key_mask << " alibi=" << c.alibi << " t5=" << c.t5 << " tile=" << c.tile << " softcap=" << c.softcap;
  return s.str();
}

// The data of one case: float q, k, v and their per-(token, head) int8 forms.
struct Data {
  AttentionParams p;
  std::vector<float> q, k, v;  // [len, heads * head_dim]
  std::vector<int8_t> q8, k8, v8;
  std::vector<float> q_scales, k_scales, v_scales;  // [len, heads]
  std::vector<uint8_t> mask;
  std::vector<float> slopes, t5_bias;
};

void Quantize(const std::vector<float>& x, size_t rows, size_t heads, size_t hd,
              std::vector<int8_t>* q, std::vector<float>* scales) {
  q->assign(x.size(), 0);
  scales->assign(rows * heads, 0.0f);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t h = 0; h < heads; ++h) {
      const size_t at = (r * heads + h) * hd;
      (*scales)[r * heads + h] = QuantizeRowSymmetric(x.data() + at, hd, q->data() + at);
    }
  }
}

Data Make(const Case& c) {
  std::mt19937 rng(c.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Data d;
  AttentionParams& p = d.p;
  p.num_heads = c.heads;
  p.num_kv_heads = c.kv_heads;
  p.head_dim = c.head_dim;
  p.q_len = c.q_len;
  p.kv_len = c.kv_len;
  p.q_pos0 = c.q_pos0;
  p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.head_dim)));
  p.causal = c.causal;
  p.window = c.window;
  p.window_ahead = c.window_ahead;
  p.kv_valid = c.kv_valid;
  p.tile = c.tile;
  p.softcap = c.softcap;
  auto fill = [&](std::vector<float>* x, size_t rows, size_t heads, float gain) {
    x->resize(rows * heads * c.head_dim);
    for (float& f : *x) f = gain * normal(rng);
  };
  fill(&d.q, c.q_len, c.heads, 1.5f);  // logits of a few units: a peaked but not one-hot softmax
  fill(&d.k, c.kv_len, c.kv_heads, 1.5f);
  fill(&d.v, c.kv_len, c.kv_heads, 1.0f);
  // Tokens of very different magnitudes, as real K/V rows have.
  for (size_t j = 0; j < c.kv_len; j += 3) {
    for (size_t i = 0; i < c.kv_heads * c.head_dim; ++i) d.v[j * c.kv_heads * c.head_dim + i] *= 4;
  }
  Quantize(d.q, c.q_len, c.heads, c.head_dim, &d.q8, &d.q_scales);
  Quantize(d.k, c.kv_len, c.kv_heads, c.head_dim, &d.k8, &d.k_scales);
  Quantize(d.v, c.kv_len, c.kv_heads, c.head_dim, &d.v8, &d.v_scales);
  if (c.key_mask) {
    d.mask.resize(c.kv_len);
    for (size_t j = 0; j < c.kv_len; ++j) d.mask[j] = (rng() % 4) != 0;
    p.key_mask = d.mask.data();
  }
  if (c.alibi) {
    d.slopes.resize(c.heads);
    alibi_slopes(c.heads, d.slopes.data());
    p.alibi_slopes = d.slopes.data();
  }
  if (c.t5) {
    p.t5_num_buckets = 8;
    p.t5_max_distance = 20;
    p.t5_bidirectional = !c.causal;
    d.t5_bias.resize(8 * c.heads);
    for (float& b : d.t5_bias) b = normal(rng);
    p.t5_bias = d.t5_bias.data();
  }
  return d;
}

std::vector<float> RunQs8(const Qs8AttentionKernels& kernels, const Data& d,
                          const AttentionParams& p) {
  const size_t qd = p.num_heads * p.head_dim, kvd = p.num_kv_heads * p.head_dim;
  std::vector<float> out(p.q_len * qd, -1.0f);
  std::vector<uint8_t> scratch(qs8_attention_scratch_bytes(p) + 64);
  void* aligned = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
  qs8_attention(kernels, p, d.q8.data(), qd, d.q_scales.data(), d.k8.data(), kvd, d.k_scales.data(),
                d.v8.data(), kvd, d.v_scales.data(), out.data(), qd, aligned);
  return out;
}

std::vector<float> RunF32(const Data& d) {
  const AttentionParams& p = d.p;
  const size_t qd = p.num_heads * p.head_dim, kvd = p.num_kv_heads * p.head_dim;
  std::vector<float> out(p.q_len * qd);
  std::vector<float> scratch(f32_attention_scratch_floats(p));
  f32_attention__ref(p, d.q.data(), qd, d.k.data(), kvd, d.v.data(), kvd, out.data(), qd,
                     scratch.data());
  return out;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

double MaxAbs(const std::vector<float>& x) {
  // Plain comparisons: fmax reductions crash the aarch64 cross GCC 12's vectorizer.
  double max = 0.0;
  for (float f : x) {
    const double a = std::fabs(static_cast<double>(f));
    if (a > max) max = a;
  }
  return max;
}

// The qs8_softmax_tile variants this CPU runs (the reference last); the others
// are reported.
std::vector<KernelVariant<Qs8SoftmaxTileFn>> SoftmaxVariants() {
  const uint32_t features = GetCpuInfo().features;
  size_t count = 0;
  const KernelVariant<Qs8SoftmaxTileFn>* variants = Qs8SoftmaxTileVariants(&count);
  std::vector<KernelVariant<Qs8SoftmaxTileFn>> runnable;
  for (size_t i = 0; i < count; ++i) {
    if ((variants[i].required_features & features) != variants[i].required_features) {
      MESSAGE("SKIPPED " << std::string(variants[i].name) << ": the CPU lacks its features");
      continue;
    }
    runnable.push_back(variants[i]);
  }
  return runnable;
}

Qs8AttentionKernels TableKernels() {
  const KernelTable& t = GetKernelTable();
  return Qs8AttentionKernels{t.qs8_gemm, t.qu8s8_pv, t.qs8_softmax_tile};
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  uint32_t seed = 1;
  auto add = [&](Case c) {
    c.seed = seed++;
    cases.push_back(c);
  };
  for (size_t hd : {1, 7, 16, 64, 80, 128}) {
    Case c;
    c.head_dim = hd;
    c.q_len = 9;
    c.kv_len = 9;
    add(c);
  }
  for (size_t tile : {1, 4, 16, 64}) {
    Case c;
    c.heads = 4;
    c.kv_heads = 2;
    c.head_dim = 32;
    c.q_len = 70;
    c.kv_len = 70;
    c.causal = true;
    c.tile = tile;
    add(c);
    c.causal = false;
    c.key_mask = true;
    add(c);
    c.key_mask = false;
    c.causal = true;
    c.window = 13;
    add(c);
  }
  {
    Case c;  // a decode-shaped call: one query after a long cache
    c.heads = 8;
    c.kv_heads = 2;
    c.head_dim = 64;
    c.q_len = 1;
    c.kv_len = 300;
    c.q_pos0 = 299;
    c.causal = true;
    add(c);
    c.q_len = 3;  // a short chunk
    c.q_pos0 = 297;
    add(c);
  }
  {
    Case c;  // padding: keys from kv_valid on
    c.q_len = 12;
    c.kv_len = 12;
    c.kv_valid = 7;
    add(c);
    c.kv_valid = 0;  // no key at all: zeros
    add(c);
  }
  {
    Case c;
    c.heads = 4;
    c.kv_heads = 4;
    c.q_len = 20;
    c.kv_len = 20;
    c.causal = true;
    c.alibi = true;
    add(c);
    c.alibi = false;
    c.t5 = true;
    add(c);
    c.causal = false;
    add(c);
  }
  {
    Case c;  // soft-capped logits (caps below the logits' range), with a window and a bias
    c.heads = 4;
    c.kv_heads = 2;
    c.head_dim = 32;
    c.q_len = 40;
    c.kv_len = 40;
    c.causal = true;
    c.softcap = 2.0f;
    c.tile = 16;
    add(c);
    c.window = 6;
    add(c);
    c.alibi = true;
    c.softcap = 0.5f;
    add(c);
    c.alibi = false;
    c.q_len = 1;  // a decode step
    c.kv_len = 40;
    c.q_pos0 = 39;
    add(c);
  }
  {
    Case c;  // a window that has moved past the padding-limited keys: rows see nothing
    c.q_len = 10;
    c.kv_len = 10;
    c.causal = true;
    c.window = 2;
    c.kv_valid = 3;
    add(c);
  }
  for (size_t tile : {16, 64}) {
    Case c;  // an encoder's band around each query (12 keys before, 9 after), then only later keys bounded
    c.heads = 4;
    c.kv_heads = 2;
    c.head_dim = 32;
    c.q_len = 70;
    c.kv_len = 70;
    c.tile = tile;
    c.window = 13;
    c.window_ahead = 9;
    add(c);
    c.window = 0;
    add(c);
  }
  return cases;
}

TEST_CASE("qs8_attention is close to fp32 attention on the unquantized data") {
  for (const KernelVariant<Qs8SoftmaxTileFn>& softmax : SoftmaxVariants()) {
    CAPTURE(std::string(softmax.name));
    const Qs8AttentionKernels ref{qs8_gemm__ref, qu8s8_pv__ref, softmax.fn};
    double worst_cos = 1.0, worst_err = 0.0;
    for (const Case& c : Cases()) {
      CAPTURE(Describe(c));
      const Data d = Make(c);
      REQUIRE(Qs8AttentionParamsError(d.p) == nullptr);
      const std::vector<float> got = RunQs8(ref, d, d.p);
      const std::vector<float> want = RunF32(d);
      const double max_v = MaxAbs(d.v);
      for (size_t i = 0; i < c.q_len; ++i) {
        for (size_t h = 0; h < c.heads; ++h) {
          double dot = 0.0, ng = 0.0, nw = 0.0, err = 0.0;
          for (size_t e = 0; e < c.head_dim; ++e) {
            const size_t at = (i * c.heads + h) * c.head_dim + e;
            REQUIRE(std::isfinite(got[at]));
            dot += static_cast<double>(got[at]) * want[at];
            ng += static_cast<double>(got[at]) * got[at];
            nw += static_cast<double>(want[at]) * want[at];
            const double diff = std::fabs(static_cast<double>(got[at]) - want[at]);
            if (diff > err) err = diff;
          }
          if (nw == 0.0) {
            CHECK(ng == 0.0);  // no visible key: zeros, as fp32 gives
            continue;
          }
          const double cos = dot / std::sqrt(ng * nw);
          CHECK(cos >= 0.998);
          CHECK(err <= 0.03 * max_v);
          if (cos < worst_cos) worst_cos = cos;
          if (err / max_v > worst_err) worst_err = err / max_v;
        }
      }
    }
    MESSAGE(std::string(softmax.name)
            << ": worst cosine " << worst_cos << ", worst max error / max|v| " << worst_err);
  }
}

TEST_CASE("qs8_attention is bit-identical whichever integer kernels run it") {
  const uint32_t features = GetCpuInfo().features;
  size_t n_gemm = 0, n_pv = 0;
  const KernelVariant<Qs8GemmFn>* gemms = Qs8GemmVariants(&n_gemm);
  const KernelVariant<Qu8s8PvFn>* pvs = Qu8s8PvVariants(&n_pv);
  size_t combinations = 0;
  for (const KernelVariant<Qs8SoftmaxTileFn>& softmax : SoftmaxVariants()) {
    CAPTURE(std::string(softmax.name));
    const Qs8AttentionKernels ref{qs8_gemm__ref, qu8s8_pv__ref, softmax.fn};
    for (const Case& c : Cases()) {
      CAPTURE(Describe(c));
      const Data d = Make(c);
      const std::vector<float> want = RunQs8(ref, d, d.p);
      for (size_t g = 0; g < n_gemm; ++g) {
        if ((gemms[g].required_features & features) != gemms[g].required_features) continue;
        for (size_t v = 0; v < n_pv; ++v) {
          if ((pvs[v].required_features & features) != pvs[v].required_features) continue;
          CAPTURE(gemms[g].name);
          CAPTURE(pvs[v].name);
          const Qs8AttentionKernels kernels{gemms[g].fn, pvs[v].fn, softmax.fn};
          CHECK(SameBits(RunQs8(kernels, d, d.p), want));
          ++combinations;
        }
      }
    }
  }
  MESSAGE(combinations << " (softmax, case, Q·Kᵀ, P·V) combinations bit-identical");
}

// The header's bound: the vector softmax variants move single P values by one
// level, where the reference's scaled weight lies next to a rounding boundary;
// everything else agrees to float rounding.
TEST_CASE("the vector softmax variants stay close to the reference softmax") {
  for (const KernelVariant<Qs8SoftmaxTileFn>& softmax : SoftmaxVariants()) {
    if (softmax.fn == &qs8_softmax_tile__ref) continue;
    CAPTURE(std::string(softmax.name));
    double worst = 0.0;
    size_t differ = 0, total = 0;
    for (const Case& c : Cases()) {
      CAPTURE(Describe(c));
      const Data d = Make(c);
      const std::vector<float> want =
          RunQs8(Qs8AttentionKernels{qs8_gemm__ref, qu8s8_pv__ref, qs8_softmax_tile__ref}, d, d.p);
      const std::vector<float> got =
          RunQs8(Qs8AttentionKernels{qs8_gemm__ref, qu8s8_pv__ref, softmax.fn}, d, d.p);
      const double max_v = MaxAbs(d.v);
      for (size_t i = 0; i < got.size(); ++i) {
        const double diff = std::fabs(static_cast<double>(got[i]) - want[i]);
        CHECK(diff <= 0.005 * max_v);
        if (diff > 0.0) ++differ;
        if (max_v > 0.0 && diff / max_v > worst) worst = diff / max_v;
      }
      total += got.size();
    }
    MESSAGE(std::string(softmax.name)
            << ": " << differ << " of " << total
            << " outputs differ from the reference softmax's, by at most " << worst << " max|v|");
  }
}

TEST_CASE("a row computed alone equals the same row of a block (decode == prefill)") {
  const Qs8AttentionKernels kernels = TableKernels();
  for (const Case& c : Cases()) {
    CAPTURE(Describe(c));
    const Data d = Make(c);
    const std::vector<float> block = RunQs8(kernels, d, d.p);
    const size_t qd = c.heads * c.head_dim;
    for (size_t i = 0; i < c.q_len; ++i) {
      Data one = d;
      one.p.q_len = 1;
      one.p.q_pos0 = c.q_pos0 + i;
      one.q8.assign(d.q8.begin() + i * qd, d.q8.begin() + (i + 1) * qd);
      one.q_scales.assign(d.q_scales.begin() + i * c.heads, d.q_scales.begin() + (i + 1) * c.heads);
      if (!d.mask.empty()) one.p.key_mask = one.mask.data();
      if (!d.slopes.empty()) one.p.alibi_slopes = one.slopes.data();
      if (!d.t5_bias.empty()) one.p.t5_bias = one.t5_bias.data();
      const std::vector<float> row = RunQs8(kernels, one, one.p);
      CHECK(std::memcmp(row.data(), block.data() + i * qd, qd * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("keys a query cannot see change nothing") {
  const Qs8AttentionKernels kernels = TableKernels();
  for (const Case& c : Cases()) {
    if (!(c.key_mask || c.kv_valid < c.kv_len)) continue;
    CAPTURE(Describe(c));
    const Data d = Make(c);
    const std::vector<float> want = RunQs8(kernels, d, d.p);
    Data changed = d;
    if (!d.mask.empty()) changed.p.key_mask = changed.mask.data();
    const size_t kvd = c.kv_heads * c.head_dim;
    for (size_t j = 0; j < c.kv_len; ++j) {
      const bool hidden = j >= c.kv_valid || (!d.mask.empty() && d.mask[j] == 0);
      if (!hidden) continue;
      for (size_t e = 0; e < kvd; ++e) {
        changed.k8[j * kvd + e] = 127;
        changed.v8[j * kvd + e] = -128;
      }
      for (size_t h = 0; h < c.kv_heads; ++h) {
        changed.k_scales[j * c.kv_heads + h] = 1e3f;
        changed.v_scales[j * c.kv_heads + h] = 1e3f;
      }
    }
    CHECK(SameBits(RunQs8(kernels, changed, changed.p), want));
  }
}

// The probabilities of qs8_attention_probs, recomputed in double from the int8
// operands as ops/qs8_attention.h defines them: [heads, q_len, kv_len].
std::vector<double> NaiveQs8Probs(const Data& d) {
  const AttentionParams& p = d.p;
  const size_t group = p.num_heads / p.num_kv_heads;
  const size_t qd = p.num_heads * p.head_dim, kvd = p.num_kv_heads * p.head_dim;
  std::vector<double> probs(p.num_heads * p.q_len * p.kv_len, 0.0);
  for (size_t h = 0; h < p.num_heads; ++h) {
    const size_t g = h / group;
    for (size_t i = 0; i < p.q_len; ++i) {
      const size_t pos = p.q_pos0 + i;
      double* row = probs.data() + (h * p.q_len + i) * p.kv_len;
      std::vector<double> logit(p.kv_len, -INFINITY);
      double max = -INFINITY;
      for (size_t j = 0; j < p.kv_len; ++j) {
        const bool visible = j < p.kv_valid && (!p.causal || j <= pos) &&
                             (p.window == 0 || j + p.window > pos) &&
                             (p.causal || p.window_ahead == 0 || j <= pos + p.window_ahead) &&
                             (p.key_mask == nullptr || p.key_mask[j] != 0);
        if (!visible) continue;
        int64_t dot = 0;
        for (size_t e = 0; e < p.head_dim; ++e) {
          dot += d.q8[i * qd + h * p.head_dim + e] * d.k8[j * kvd + g * p.head_dim + e];
        }
        logit[j] = static_cast<double>(dot) * d.q_scales[i * p.num_heads + h] * p.scale *
                   d.k_scales[j * p.num_kv_heads + g];
        if (p.softcap > 0.0f) logit[j] = p.softcap * std::tanh(logit[j] / p.softcap);
        logit[j] += AttentionBias(p, h, pos, j);
        max = std::max(max, logit[j]);
      }
      if (max == -INFINITY) continue;
      double sum = 0;
      for (size_t j = 0; j < p.kv_len; ++j) {
        if (logit[j] != -INFINITY) sum += row[j] = std::exp(logit[j] - max);
      }
      for (size_t j = 0; j < p.kv_len; ++j) row[j] /= sum;
    }
  }
  return probs;
}

TEST_CASE("qs8_attention_probs: the softmax qs8_attention computes, before P's quantization") {
  const Qs8AttentionKernels kernels = TableKernels();
  double worst_naive = 0, worst_output = 0;
  for (const Case& c : Cases()) {
    CAPTURE(Describe(c));
    const Data d = Make(c);
    const AttentionParams& p = d.p;
    const size_t qd = p.num_heads * p.head_dim, kvd = p.num_kv_heads * p.head_dim;
    const size_t ldp = p.kv_len + 3;  // a row stride wider than the row
    std::vector<float> probs(p.num_heads * p.q_len * ldp, -7.0f);
    for (size_t h = 0; h < p.num_heads; ++h) {
      qs8_attention_probs(p, h, d.q8.data(), qd, d.q_scales.data(), d.k8.data(), kvd,
                          d.k_scales.data(), probs.data() + h * p.q_len * ldp, ldp);
    }
    const std::vector<double> naive = NaiveQs8Probs(d);
    const std::vector<float> out = RunQs8(kernels, d, p);
    double max_v = 0;
    for (size_t e = 0; e < d.v8.size(); ++e) {
      max_v = std::max(max_v, std::fabs(d.v8[e] * static_cast<double>(d.v_scales[e / p.head_dim])));
    }
    for (size_t h = 0; h < p.num_heads; ++h) {
      const size_t g = h / (p.num_heads / p.num_kv_heads);
      for (size_t i = 0; i < p.q_len; ++i) {
        const float* row = probs.data() + (h * p.q_len + i) * ldp;
        const double* want = naive.data() + (h * p.q_len + i) * p.kv_len;
        double sum = 0, want_sum = 0;
        for (size_t j = 0; j < p.kv_len; ++j) {
          worst_naive = std::max(worst_naive, std::fabs(row[j] - want[j]));
          REQUIRE(std::fabs(row[j] - want[j]) <= 1e-6);
          if (want[j] == 0.0) CHECK(row[j] == 0.0f);  // masked keys: exactly 0
          sum += row[j];
          want_sum += want[j];
        }
        for (size_t j = p.kv_len; j < ldp; ++j) CHECK(row[j] == -7.0f);  // untouched
        if (want_sum == 0.0) {
          CHECK(sum == 0.0);  // a query that sees nothing: an all-zero row
        } else {
          CHECK(std::fabs(sum - 1.0) <= 1e-5);
        }
        // The kernel's output is these probabilities times the dequantized V,
        // up to P's 8-bit rounding per tile (ops/qs8_attention.h: one step's
        // worst case is 0.005 max |v|).
        for (size_t e = 0; e < p.head_dim; ++e) {
          double mix = 0;
          for (size_t j = 0; j < p.kv_len; ++j) {
            mix += row[j] * d.v8[j * kvd + g * p.head_dim + e] *
                   static_cast<double>(d.v_scales[j * p.num_kv_heads + g]);
          }
          const double error = std::fabs(mix - out[i * qd + h * p.head_dim + e]) / max_v;
          worst_output = std::max(worst_output, error);
          CHECK(error <= 0.005);
        }
      }
    }
  }
  MESSAGE("largest |probs - double recomputation| " << worst_naive
          << "; largest |probs . v - qs8_attention| / max|v| " << worst_output);
}

TEST_CASE("qs8_attention scratch does not grow with the sequence") {
  AttentionParams p;
  p.num_heads = 8;
  p.num_kv_heads = 2;
  p.head_dim = 64;
  p.q_len = 4096;
  p.kv_len = 4096;
  const size_t bytes = qs8_attention_scratch_bytes(p);
  p.q_len = p.kv_len = 1;
  CHECK(qs8_attention_scratch_bytes(p) == bytes);
  CHECK(bytes < 32 * 1024);  // kQs8AttentionRows rows of one key tile: fits in L1
  p.head_dim = kQs8AttentionMaxHeadDim + 1;
  CHECK(Qs8AttentionParamsError(p) != nullptr);
}

}  // namespace
}  // namespace octet
