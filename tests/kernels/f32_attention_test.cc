// Every f32_attention variant this machine runs (the reference and the vector
// ones of the kernel table), and f32_attention_probs__ref, against a naive
// reference written here from the definition (kernels/attention_params.h): the
// whole [q_len, kv_len] score matrix of a head, in double, masks and biases
// evaluated independently of the kernel's helpers, a standard softmax. The vector
// variants are also compared with f32_attention__ref directly, with the same
// tolerance (their bound in kernels/f32_attention.h), and must keep its
// row-independence: decode steps and chunks equal the full pass bit for bit.
//
// Tolerance: max |out - reference| <= kTolerance * max |v| with kTolerance = 1e-5.
// The output is a convex combination of rows of V, so errors scale with max |v|.
// In fp32 (unit roundoff u = 6e-8) the kernel's error has two parts: the logits
// (dot products of up to 80 terms: an absolute error of a few u times the sum of
// |q_d k_d| scale, ~1e-6 at the largest inputs here, which moves each weight by
// that much relative), and the sums over up to 4096 keys of the weights and of
// weight * v (rounding errors that grow like sqrt(kv_len) u with random signs;
// kv_len u is the worst case). The largest error seen over the suite is reported
// by a MESSAGE: about 1e-6 on x86, aarch64 and armv7, 10x below the bound.
//
// Buffers are sized exactly ((rows - 1) * stride + used columns), so with ASan
// any read past a row of q, k or v, or a write past out or scratch, is an error.
// Keys a query cannot see are filled with NaN where the test can arrange it: a
// kernel that read them (instead of skipping them) would produce NaN.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "kernels/f32_attention.h"
#include "kernels/kernel_table.h"
#include "kernels/position.h"
#include "runnable_variants.h"

namespace octet {
namespace {

constexpr double kTolerance = 1e-5;
constexpr float kCanary = 12345.0f;  // out padding: must survive every call
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// The largest error / max |v| seen by any comparison, for the final MESSAGE.
double g_worst_relative_error = 0.0;

// The variant under test (RunKernel and the bit-for-bit checks call it).
F32AttentionFn g_kernel = f32_attention__ref;

// The variants this machine runs, fastest first, the reference last.
std::vector<KernelVariant<F32AttentionFn>> Variants() {
  size_t count = 0;
  const KernelVariant<F32AttentionFn>* variants = F32AttentionVariants(&count);
  return test::RunnableVariants(variants, count);
}

// T5's bucket from the published formula, in double (real arithmetic, plus a
// 1e-9 nudge so exact integer quotients, like log(16/8)/log(128/8)*8 = 2, land on
// the integer as in PyTorch). Independent of kernels/position.h on purpose.
uint32_t ReferenceT5Bucket(int64_t relative, bool bidirectional, uint32_t num_buckets,
                           uint32_t max_distance) {
  uint32_t bucket = 0;
  int64_t n = 0;
  if (bidirectional) {
    num_buckets /= 2;
    if (relative > 0) bucket = num_buckets;
    n = relative < 0 ? -relative : relative;
  } else {
    n = relative < 0 ? -relative : 0;
  }
  const int64_t max_exact = num_buckets / 2;
  if (n < max_exact) return bucket + static_cast<uint32_t>(n);
  const double large = static_cast<double>(max_exact) +
                       std::floor(std::log(static_cast<double>(n) / max_exact) /
                                      std::log(static_cast<double>(max_distance) / max_exact) *
                                      static_cast<double>(num_buckets - max_exact) +
                                  1e-9);
  return bucket + static_cast<uint32_t>(std::min(large, num_buckets - 1.0));
}

bool ReferenceVisible(const AttentionParams& p, size_t i, size_t j) {
  const size_t pos = p.q_pos0 + i;
  if (j >= p.kv_len || j >= p.kv_valid) return false;
  if (p.causal && j > pos) return false;
  if (p.window != 0 && j + p.window <= pos) return false;  // j <= pos - window
  if (!p.causal && p.window_ahead != 0 && j > pos + p.window_ahead) return false;
  if (p.key_mask != nullptr && p.key_mask[j] == 0) return false;
  return true;
}

double ReferenceBias(const AttentionParams& p, size_t h, size_t i, size_t j) {
  const double pos = static_cast<double>(p.q_pos0 + i);
  double bias = 0.0;
  if (p.alibi_slopes != nullptr) bias -= p.alibi_slopes[h] * std::fabs(pos - j);
  if (p.t5_bias != nullptr) {
    const int64_t relative = static_cast<int64_t>(j) - static_cast<int64_t>(p.q_pos0 + i);
    bias += p.t5_bias[ReferenceT5Bucket(relative, p.t5_bidirectional, p.t5_num_buckets,
                                        p.t5_max_distance) *
                          p.num_heads +
                      h];
  }
  return bias;
}

// Softmax probabilities of head h, [q_len, kv_len] in double: 0 where masked, an
// all-zero row when a query sees no key.
std::vector<double> ReferenceProbs(const AttentionParams& p, size_t h, const float* q, size_t ldq,
                                   const float* k, size_t ldk) {
  const size_t group = p.num_heads / p.num_kv_heads;
  const size_t g = h / group;
  std::vector<double> probs(p.q_len * p.kv_len, 0.0);  // [q_len, kv_len]
  for (size_t i = 0; i < p.q_len; ++i) {
    double* row = &probs[i * p.kv_len];
    double max = -std::numeric_limits<double>::infinity();
    for (size_t j = 0; j < p.kv_len; ++j) {
      if (!ReferenceVisible(p, i, j)) continue;
      double dot = 0.0;
      for (size_t d = 0; d < p.head_dim; ++d) {
        dot +=
            static_cast<double>(q[i * ldq + h * p.head_dim + d]) * k[j * ldk + g * p.head_dim + d];
      }
      double logit = static_cast<double>(p.scale) * dot;
      if (p.softcap > 0.0f) logit = p.softcap * std::tanh(logit / p.softcap);
      row[j] = logit + ReferenceBias(p, h, i, j);
      max = std::max(max, row[j]);
    }
    if (max == -std::numeric_limits<double>::infinity()) continue;
    double sum = 0.0;
    for (size_t j = 0; j < p.kv_len; ++j) {
      row[j] = ReferenceVisible(p, i, j) ? std::exp(row[j] - max) : 0.0;
      sum += row[j];
    }
    for (size_t j = 0; j < p.kv_len; ++j) row[j] /= sum;
  }
  return probs;
}

// out [q_len, num_heads, head_dim] in double.
std::vector<double> ReferenceAttention(const AttentionParams& p, const float* q, size_t ldq,
                                       const float* k, size_t ldk, const float* v, size_t ldv) {
  const size_t group = p.num_heads / p.num_kv_heads;
  const size_t row = p.num_heads * p.head_dim;
  std::vector<double> out(p.q_len * row, 0.0);
  for (size_t h = 0; h < p.num_heads; ++h) {
    const std::vector<double> probs = ReferenceProbs(p, h, q, ldq, k, ldk);
    const size_t g = h / group;
    for (size_t i = 0; i < p.q_len; ++i) {
      for (size_t j = 0; j < p.kv_len; ++j) {
        const double w = probs[i * p.kv_len + j];
        if (w == 0.0) continue;
        for (size_t d = 0; d < p.head_dim; ++d) {
          out[i * row + h * p.head_dim + d] += w * v[j * ldv + g * p.head_dim + d];
        }
      }
    }
  }
  return out;
}

// Inputs of one call. K and V either live in separate buffers or share rows
// ([k | v | pad], as a fused KV projection would write them).
struct Data {
  std::vector<float> q;   // [q_len, ldq]
  std::vector<float> kv;  // k and v
  std::vector<float> v_separate;
  const float* k = nullptr;
  const float* v = nullptr;
  size_t ldq = 0, ldk = 0, ldv = 0;
  float max_abs_v = 0.0f;
};

float Uniform(std::mt19937& rng, float amplitude) {
  return std::uniform_real_distribution<float>(-amplitude, amplitude)(rng);
}

Data MakeData(const AttentionParams& p, std::mt19937& rng, float qk_amplitude, bool fused_kv) {
  Data data;
  const size_t q_row = p.num_heads * p.head_dim;
  const size_t kv_row = p.num_kv_heads * p.head_dim;
  data.ldq = q_row + 3;
  data.q.resize((p.q_len - 1) * data.ldq + q_row);
  for (float& x : data.q) x = Uniform(rng, qk_amplitude);
  if (fused_kv) {
    data.ldk = data.ldv = 2 * kv_row + 1;
    data.kv.resize((p.kv_len - 1) * data.ldk + 2 * kv_row);
    for (size_t j = 0; j < p.kv_len; ++j) {
      for (size_t c = 0; c < kv_row; ++c) {
        data.kv[j * data.ldk + c] = Uniform(rng, qk_amplitude);
        data.kv[j * data.ldk + kv_row + c] = Uniform(rng, 1.0f);
      }
      if (j + 1 < p.kv_len) data.kv[j * data.ldk + 2 * kv_row] = kNaN;  // padding column
    }
    data.k = data.kv.data();
    data.v = data.kv.data() + kv_row;
  } else {
    data.ldk = kv_row;
    data.ldv = kv_row + 2;
    data.kv.resize(p.kv_len * kv_row);
    data.v_separate.resize((p.kv_len - 1) * data.ldv + kv_row);
    for (float& x : data.kv) x = Uniform(rng, qk_amplitude);
    for (float& x : data.v_separate) x = Uniform(rng, 1.0f);
    data.k = data.kv.data();
    data.v = data.v_separate.data();
  }
  for (size_t j = 0; j < p.kv_len; ++j) {
    for (size_t c = 0; c < kv_row; ++c) {
      data.max_abs_v = std::max(data.max_abs_v, std::fabs(data.v[j * data.ldv + c]));
    }
  }
  return data;
}

// Writes NaN into every value of key row j (k and v), for keys no query may read.
void PoisonKey(Data* data, const AttentionParams& p, size_t j) {
  const size_t kv_row = p.num_kv_heads * p.head_dim;
  float* k = const_cast<float*>(data->k) + j * data->ldk;
  float* v = const_cast<float*>(data->v) + j * data->ldv;
  for (size_t c = 0; c < kv_row; ++c) k[c] = v[c] = kNaN;
}

// Runs the kernel with exactly the scratch it asks for; out has a row stride
// with padding filled with kCanary. Returns out, [q_len, ldo].
std::vector<float> RunKernel(const AttentionParams& p, const Data& data, size_t* ldo) {
  const size_t row = p.num_heads * p.head_dim;
  *ldo = row + 5;
  std::vector<float> out((p.q_len - 1) * *ldo + row, kCanary);
  std::vector<float> scratch(f32_attention_scratch_floats(p), kNaN);
  g_kernel(p, data.q.data(), data.ldq, data.k, data.ldk, data.v, data.ldv, out.data(), *ldo,
           scratch.data());
  return out;
}

std::string Describe(const AttentionParams& p) {
  std::ostringstream s;
  s << "heads " << p.num_heads << "/" << p.num_kv_heads << " head_dim " << p.head_dim << " q_len "
    << p.q_len << " kv_len " << p.kv_len << " q_pos0 " << p.q_pos0 << " causal " << p.causal
    << " window " << p.window << " kv_valid "
    << (p.kv_valid > p.kv_len ? std::string("all") : std::to_string(p.kv_valid)) << " key_mask "
    << (p.key_mask != nullptr) << " alibi " << (p.alibi_slopes != nullptr) << " t5 "
    << (p.t5_bias != nullptr) << (p.t5_bidirectional ? " (bidirectional)" : "") << " tile "
    << AttentionTile(p);
  return s.str();
}

// Compares out with the reference; checks padding and finiteness. Returns the
// error relative to max |v|.
double Compare(const AttentionParams& p, const Data& data, const std::vector<float>& out,
               size_t ldo) {
  const std::vector<double> ref =
      ReferenceAttention(p, data.q.data(), data.ldq, data.k, data.ldk, data.v, data.ldv);
  const size_t row = p.num_heads * p.head_dim;
  double max_error = 0.0;
  for (size_t i = 0; i < p.q_len; ++i) {
    for (size_t c = 0; c < ldo && i * ldo + c < out.size(); ++c) {
      const float got = out[i * ldo + c];
      if (c >= row) {
        if (got != kCanary) FAIL_CHECK(Describe(p) << ": padding of out row " << i << " written");
        continue;
      }
      if (!std::isfinite(got)) {
        FAIL_CHECK(Describe(p) << ": out[" << i << ", " << c << "] = " << got);
        return 1.0;
      }
      max_error = std::max(max_error, std::fabs(got - ref[i * row + c]));
    }
  }
  const double relative = max_error / std::max(data.max_abs_v, 1e-30f);
  g_worst_relative_error = std::max(g_worst_relative_error, relative);
  INFO(Describe(p));
  CHECK(relative <= kTolerance);
  if (g_kernel != f32_attention__ref) {
    const F32AttentionFn kernel = g_kernel;
    g_kernel = f32_attention__ref;
    size_t ref_ldo = 0;
    const std::vector<float> ref_out = RunKernel(p, data, &ref_ldo);
    g_kernel = kernel;
    double max_difference = 0.0;
    for (size_t i = 0; i < p.q_len; ++i) {
      for (size_t c = 0; c < row; ++c) {
        max_difference = std::max(max_difference, std::fabs(static_cast<double>(out[i * ldo + c]) -
                                                            ref_out[i * ref_ldo + c]));
      }
    }
    CHECK(max_difference / std::max(data.max_abs_v, 1e-30f) <= kTolerance);
  }
  return relative;
}

double RunAndCompare(const AttentionParams& p, const Data& data) {
  size_t ldo = 0;
  const std::vector<float> out = RunKernel(p, data, &ldo);
  return Compare(p, data, out, ldo);
}

AttentionParams Shape(size_t heads, size_t kv_heads, size_t head_dim, size_t q_len, size_t kv_len) {
  AttentionParams p;
  p.num_heads = heads;
  p.num_kv_heads = kv_heads;
  p.head_dim = head_dim;
  p.q_len = q_len;
  p.kv_len = kv_len;
  p.q_pos0 = kv_len - q_len;  // the queries are the last q_len positions
  p.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  return p;
}

TEST_CASE("f32_attention matches the naive reference over heads, head_dim, lengths, tiles") {
  for (const KernelVariant<F32AttentionFn>& kernel : Variants()) {
    g_kernel = kernel.fn;
    INFO(std::string(kernel.name));
    struct Heads {
      size_t heads, kv_heads;
    };
    const Heads kHeads[] = {{4, 4}, {8, 2}, {4, 1}};  // MHA, GQA 4:1, MQA
    const size_t kHeadDims[] = {1, 8, 32, 64, 80, 128};
    struct Lengths {
      size_t q_len, kv_len;
    };
    const Lengths kLengths[] = {{1, 1},   {1, 300},   {17, 17},  {16, 16},  {64, 64},
                                {65, 65}, {130, 130}, {20, 150}, {300, 300}};
    // Cases above this many multiply-adds (q_len * kv_len * heads * head_dim) are
    // left out to keep the suite fast under qemu; every axis still reaches its
    // largest value in some case.
    constexpr size_t kBudget = 1500000;
    std::mt19937 rng(7);
    size_t cases = 0;
    for (const Heads& heads : kHeads) {
      for (size_t head_dim : kHeadDims) {
        for (const Lengths& lengths : kLengths) {
          if (lengths.q_len * lengths.kv_len * heads.heads * head_dim > kBudget) continue;
          for (size_t tile : {16, 64}) {
            for (bool causal : {false, true}) {
              AttentionParams p =
                  Shape(heads.heads, heads.kv_heads, head_dim, lengths.q_len, lengths.kv_len);
              p.tile = tile;
              p.causal = causal;
              const Data data = MakeData(p, rng, cases % 2 ? 2.0f : 1.0f, cases % 3 == 0);
              RunAndCompare(p, data);
              ++cases;
            }
          }
        }
      }
    }
    MESSAGE(cases << " cases; worst error so far " << g_worst_relative_error << " x max|v|");
    CHECK(cases > 150);
  }
  g_kernel = f32_attention__ref;
}

TEST_CASE("f32_attention decode steps reproduce the full causal pass bit for bit") {
  for (const KernelVariant<F32AttentionFn>& kernel : Variants()) {
    g_kernel = kernel.fn;
    INFO(std::string(kernel.name));
    std::vector<float> slopes(8);
    alibi_slopes(8, slopes.data());
    std::mt19937 rng(11);
    std::vector<float> t5_table(32 * 8);
    for (float& x : t5_table) x = Uniform(rng, 2.0f);
    for (int variant = 0; variant < 4; ++variant) {
      AttentionParams p = Shape(8, 2, 16, 150, 150);
      p.causal = true;
      if (variant == 1) {
        p.window = 5;
        p.tile = 16;
      }
      if (variant == 2) p.alibi_slopes = slopes.data();
      if (variant == 3) {
        p.t5_bias = t5_table.data();
        p.t5_num_buckets = 32;
        p.t5_max_distance = 128;
        p.scale = 1.0f;
      }
      const Data data = MakeData(p, rng, 1.5f, variant == 1);
      size_t ldo = 0;
      const std::vector<float> full = RunKernel(p, data, &ldo);
      Compare(p, data, full, ldo);
      const size_t row = p.num_heads * p.head_dim;
      for (size_t t = 0; t < p.kv_len; ++t) {
        // Step t: one query at position t over the t + 1 cached keys.
        AttentionParams step = p;
        step.q_len = 1;
        step.q_pos0 = t;
        step.kv_len = t + 1;
        std::vector<float> out(row);
        std::vector<float> scratch(f32_attention_scratch_floats(step));
        g_kernel(step, data.q.data() + t * data.ldq, data.ldq, data.k, data.ldk, data.v, data.ldv,
                 out.data(), row, scratch.data());
        INFO(Describe(p) << " step " << t);
        CHECK(std::memcmp(out.data(), &full[t * ldo], row * sizeof(float)) == 0);
      }
      // A chunked prefill: rows 50..86 as one call over the first 87 keys.
      AttentionParams chunk = p;
      chunk.q_len = 37;
      chunk.q_pos0 = 50;
      chunk.kv_len = 87;
      std::vector<float> out((chunk.q_len - 1) * ldo + row);
      std::vector<float> scratch(f32_attention_scratch_floats(chunk));
      g_kernel(chunk, data.q.data() + 50 * data.ldq, data.ldq, data.k, data.ldk, data.v, data.ldv,
               out.data(), ldo, scratch.data());
      for (size_t i = 0; i < chunk.q_len; ++i) {
        CHECK(std::memcmp(&out[i * ldo], &full[(50 + i) * ldo], row * sizeof(float)) == 0);
      }
    }
  }
  g_kernel = f32_attention__ref;
}

TEST_CASE("f32_attention sliding windows, and hidden keys are never read") {
  for (const KernelVariant<F32AttentionFn>& kernel : Variants()) {
    g_kernel = kernel.fn;
    INFO(std::string(kernel.name));
    std::mt19937 rng(13);
    for (size_t window : {1, 3, 64, 1000}) {
      for (size_t tile : {16, 64}) {
        // A causal prefill over 200 positions.
        AttentionParams p = Shape(4, 2, 8, 200, 200);
        p.causal = true;
        p.window = window;
        p.tile = tile;
        RunAndCompare(p, MakeData(p, rng, 1.5f, false));
        // Decoding at position 250 with 40 keys of padding after kv_valid: every
        // key outside the window and past kv_valid is NaN.
        AttentionParams step = Shape(4, 2, 8, 1, 300);
        step.causal = true;
        step.window = window;
        step.tile = tile;
        step.q_pos0 = 250;
        step.kv_valid = 251;
        Data data = MakeData(step, rng, 1.5f, true);
        for (size_t j = 0; j < step.kv_len; ++j) {
          if (j >= step.kv_valid || j + window <= step.q_pos0) PoisonKey(&data, step, j);
        }
        RunAndCompare(step, data);
      }
    }
    // Without causal the window only bounds from below: later keys stay visible.
    AttentionParams p = Shape(2, 2, 8, 50, 90);
    p.window = 7;
    p.q_pos0 = 20;
    RunAndCompare(p, MakeData(p, rng, 1.5f, false));
    // A band around each query (an encoder's local layer): keys more than
    // window - 1 before or window_ahead after the query are never read.
    for (const auto& [window, ahead] : std::vector<std::pair<size_t, size_t>>{
             {65, 64}, {3, 2}, {1, 5}, {200, 1}}) {
      for (size_t tile : {16, 64}) {
        AttentionParams band = Shape(4, 2, 8, 300, 300);
        band.window = window;
        band.window_ahead = ahead;
        band.tile = tile;
        RunAndCompare(band, MakeData(band, rng, 1.5f, false));
        // One query row (at 150) reading 300 keys: the others are NaN.
        AttentionParams one = Shape(4, 2, 8, 1, 300);
        one.window = window;
        one.window_ahead = ahead;
        one.tile = tile;
        one.q_pos0 = 150;
        Data data = MakeData(one, rng, 1.5f, true);
        for (size_t j = 0; j < one.kv_len; ++j) {
          if (j + window <= 150 || j > 150 + ahead) PoisonKey(&data, one, j);
        }
        RunAndCompare(one, data);
      }
    }
    // window_ahead is for encoders: a causal mask already hides every later key.
    AttentionParams causal_band = Shape(2, 2, 8, 40, 40);
    causal_band.causal = true;
    causal_band.window = 5;
    causal_band.window_ahead = 3;
    RunAndCompare(causal_band, MakeData(causal_band, rng, 1.5f, false));
    // A causal prefill never reads keys after its last query.
    AttentionParams prefill = Shape(4, 1, 8, 60, 130);
    prefill.causal = true;
    prefill.q_pos0 = 30;  // queries 30..89
    Data data = MakeData(prefill, rng, 1.5f, false);
    for (size_t j = 90; j < prefill.kv_len; ++j) PoisonKey(&data, prefill, j);
    RunAndCompare(prefill, data);
  }
  g_kernel = f32_attention__ref;
}

TEST_CASE("f32_attention padding: kv_valid and a key mask") {
  for (const KernelVariant<F32AttentionFn>& kernel : Variants()) {
    g_kernel = kernel.fn;
    INFO(std::string(kernel.name));
    std::mt19937 rng(17);
    for (bool causal : {false, true}) {
      for (size_t tile : {16, 64}) {
        // Right padding: keys from kv_valid on are never read.
        AttentionParams p = Shape(4, 4, 8, 70, 70);
        p.causal = causal;
        p.tile = tile;
        p.kv_valid = 45;
        Data data = MakeData(p, rng, 1.5f, false);
        for (size_t j = p.kv_valid; j < p.kv_len; ++j) PoisonKey(&data, p, j);
        RunAndCompare(p, data);
        // Left padding through the key mask (the first 23 keys), plus holes.
        AttentionParams left = Shape(8, 2, 8, 90, 90);
        left.causal = causal;
        left.tile = tile;
        std::vector<uint8_t> mask(left.kv_len, 1);
        for (size_t j = 0; j < 23; ++j) mask[j] = 0;
        for (size_t j = 40; j < 90; j += 7) mask[j] = 0;
        left.key_mask = mask.data();
        Data left_data = MakeData(left, rng, 1.5f, true);
        for (size_t j = 0; j < left.kv_len; ++j) {
          if (mask[j] == 0) PoisonKey(&left_data, left, j);
        }
        RunAndCompare(left, left_data);
      }
    }
  }
  g_kernel = f32_attention__ref;
}

TEST_CASE("f32_attention ALiBi and T5 relative biases") {
  for (const KernelVariant<F32AttentionFn>& kernel : Variants()) {
    g_kernel = kernel.fn;
    INFO(std::string(kernel.name));
    std::mt19937 rng(19);
    for (size_t heads : {4, 6, 8}) {
      std::vector<float> slopes(heads);
      alibi_slopes(heads, slopes.data());
      for (bool causal : {false, true}) {
        for (size_t tile : {16, 64}) {
          AttentionParams p = Shape(heads, heads / 2, 8, 120, 120);
          p.causal = causal;
          p.tile = tile;
          p.alibi_slopes = slopes.data();
          RunAndCompare(p, MakeData(p, rng, 1.5f, tile == 16));
          // Decoding far into the sequence, where the biases are large.
          AttentionParams step = Shape(heads, heads / 2, 8, 1, 300);
          step.causal = true;
          step.tile = tile;
          step.alibi_slopes = slopes.data();
          RunAndCompare(step, MakeData(step, rng, 1.5f, false));
        }
      }
    }
    for (uint32_t num_buckets : {32, 8}) {
      for (uint32_t max_distance : {128, 20}) {
        for (bool bidirectional : {true, false}) {
          const size_t heads = 4;
          std::vector<float> table(num_buckets * heads);  // [num_buckets, heads]
          for (float& x : table) x = Uniform(rng, 3.0f);
          for (size_t tile : {16, 64}) {
            // The encoder is bidirectional and not causal; the decoder both causal.
            AttentionParams p = Shape(heads, heads, 8, 200, 200);
            p.scale = 1.0f;
            p.causal = !bidirectional;
            p.tile = tile;
            p.t5_bias = table.data();
            p.t5_num_buckets = num_buckets;
            p.t5_max_distance = max_distance;
            p.t5_bidirectional = bidirectional;
            RunAndCompare(p, MakeData(p, rng, 0.7f, false));
            // Cross-like shape: fewer queries than keys, at the end.
            AttentionParams q_short = p;
            q_short.q_len = 3;
            q_short.q_pos0 = 197;
            RunAndCompare(q_short, MakeData(q_short, rng, 0.7f, true));
          }
        }
      }
    }
  }
  g_kernel = f32_attention__ref;
}

TEST_CASE("f32_attention soft-capped logits (Gemma 2), with windows, biases and decode steps") {
  for (const KernelVariant<F32AttentionFn>& kernel : Variants()) {
    g_kernel = kernel.fn;
    INFO(std::string(kernel.name));
    std::mt19937 rng(23);
    std::vector<float> slopes(4);
    alibi_slopes(4, slopes.data());
    for (float cap : {0.5f, 3.0f}) {
      for (size_t tile : {16, 64}) {
        AttentionParams p = Shape(4, 2, 16, 90, 90);
        p.causal = true;
        p.tile = tile;
        p.softcap = cap;
        RunAndCompare(p, MakeData(p, rng, 1.5f, false));
        p.window = 7;
        RunAndCompare(p, MakeData(p, rng, 1.5f, tile == 16));
        p.window = 0;
        p.alibi_slopes = slopes.data();
        RunAndCompare(p, MakeData(p, rng, 1.5f, false));
        AttentionParams step = Shape(4, 2, 16, 1, 200);
        step.causal = true;
        step.tile = tile;
        step.softcap = cap;
        RunAndCompare(step, MakeData(step, rng, 1.5f, false));
      }
    }
  }
  g_kernel = f32_attention__ref;
}

TEST_CASE("f32_attention rows that see no key give zeros, not NaN") {
  for (const KernelVariant<F32AttentionFn>& kernel : Variants()) {
    g_kernel = kernel.fn;
    INFO(std::string(kernel.name));
    std::mt19937 rng(23);
    std::vector<uint8_t> none(40, 0);
    for (int variant = 0; variant < 4; ++variant) {
      AttentionParams p = Shape(4, 2, 8, 10, 40);
      p.tile = 16;
      if (variant == 0) p.kv_valid = 0;
      if (variant == 1) p.key_mask = none.data();
      if (variant == 2) {  // the window has moved past every key
        p.causal = true;
        p.window = 3;
        p.q_pos0 = 45;
      }
      if (variant == 3) {  // masked beyond every visible tile: keys 0..15 masked, causal rows 0..15
        std::vector<uint8_t> mask(40, 1);
        for (size_t j = 0; j < 16; ++j) mask[j] = 0;
        p.key_mask = mask.data();
        p.causal = true;
        p.q_pos0 = 0;
        Data data = MakeData(p, rng, 1.0f, false);
        size_t ldo = 0;
        const std::vector<float> out = RunKernel(p, data, &ldo);
        for (size_t i = 0; i < p.q_len; ++i) {
          for (size_t c = 0; c < p.num_heads * p.head_dim; ++c) CHECK(out[i * ldo + c] == 0.0f);
        }
        continue;
      }
      Data data = MakeData(p, rng, 1.0f, false);
      for (size_t j = 0; j < p.kv_len; ++j) PoisonKey(&data, p, j);
      size_t ldo = 0;
      const std::vector<float> out = RunKernel(p, data, &ldo);
      INFO("variant " << variant);
      for (size_t i = 0; i < p.q_len; ++i) {
        for (size_t c = 0; c < p.num_heads * p.head_dim; ++c) CHECK(out[i * ldo + c] == 0.0f);
      }
      std::vector<float> probs(p.q_len * p.kv_len, kNaN);
      f32_attention_probs__ref(p, 1, data.q.data(), data.ldq, data.k, data.ldk, probs.data(),
                               p.kv_len);
      for (float x : probs) CHECK(x == 0.0f);
    }
    // Padded query rows of a batch (positions past the sequence) stay finite.
    AttentionParams p = Shape(4, 4, 8, 30, 30);
    p.causal = true;
    p.kv_valid = 12;
    RunAndCompare(p, MakeData(p, rng, 1.0f, false));
  }
  g_kernel = f32_attention__ref;
}

TEST_CASE("f32_attention scratch does not grow with the sequence") {
  for (const KernelVariant<F32AttentionFn>& kernel : Variants()) {
    g_kernel = kernel.fn;
    INFO(std::string(kernel.name));
    AttentionParams shortp = Shape(32, 8, 128, 16, 16);
    AttentionParams longp = Shape(32, 8, 128, 4096, 4096);
    CHECK(f32_attention_scratch_floats(shortp) == f32_attention_scratch_floats(longp));
    CHECK(f32_attention_scratch_floats(longp) ==
          kF32AttentionMaxRows * (kAttentionDefaultTile + 2 * 128));
    CHECK(f32_attention_scratch_floats(longp) < 4096u * 4096u / 1000u);
    longp.tile = 16;
    CHECK(f32_attention_scratch_floats(longp) == kF32AttentionMaxRows * (16 + 2 * 128));

    // The last 1024 queries of a 4096-token bidirectional pass, and a decode step
    // at position 4095, each with exactly that scratch, against the reference on a
    // sample of rows.
    std::mt19937 rng(29);
    AttentionParams p = Shape(1, 1, 4, 1024, 4096);
    const Data data = MakeData(p, rng, 2.0f, false);
    size_t ldo = 0;
    const std::vector<float> out = RunKernel(p, data, &ldo);
    const size_t row = p.num_heads * p.head_dim;
    size_t checked = 0;
    for (size_t i = 0; i < p.q_len; i += (i < 1000 ? 97 : 7)) {
      AttentionParams one = p;  // query i alone (rows are independent)
      one.q_len = 1;
      one.q_pos0 = p.q_pos0 + i;
      Data one_data = data;
      one_data.q.assign(data.q.begin() + i * data.ldq, data.q.begin() + i * data.ldq + row);
      const std::vector<float> out_row(out.begin() + i * ldo, out.begin() + i * ldo + row);
      Compare(one, one_data, out_row, ldo);
      ++checked;
    }
    CHECK(checked > 10);
    AttentionParams step = Shape(8, 2, 64, 1, 4096);  // q_pos0 = 4095
    step.causal = true;
    RunAndCompare(step, MakeData(step, rng, 2.0f, true));
  }
  g_kernel = f32_attention__ref;
}

TEST_CASE("f32_attention output may overwrite q") {
  for (const KernelVariant<F32AttentionFn>& kernel : Variants()) {
    g_kernel = kernel.fn;
    INFO(std::string(kernel.name));
    std::mt19937 rng(31);
    AttentionParams p = Shape(8, 2, 16, 40, 40);
    p.causal = true;
    Data data = MakeData(p, rng, 1.5f, false);
    size_t ldo = 0;
    const std::vector<float> expected = RunKernel(p, data, &ldo);
    std::vector<float> scratch(f32_attention_scratch_floats(p));
    g_kernel(p, data.q.data(), data.ldq, data.k, data.ldk, data.v, data.ldv, data.q.data(),
             data.ldq, scratch.data());
    for (size_t i = 0; i < p.q_len; ++i) {
      CHECK(std::memcmp(&data.q[i * data.ldq], &expected[i * ldo],
                        p.num_heads * p.head_dim * sizeof(float)) == 0);
    }
  }
  g_kernel = f32_attention__ref;
}

TEST_CASE("f32_attention_probs__ref gives the softmax the output is made of") {
  g_kernel = f32_attention__ref;
  std::mt19937 rng(37);
  std::vector<float> slopes(4);
  alibi_slopes(4, slopes.data());
  for (int variant = 0; variant < 3; ++variant) {
    AttentionParams p = Shape(4, 2, 8, 50, 70);
    p.causal = variant != 0;
    if (variant == 1) {
      p.window = 9;
      p.kv_valid = 60;
    }
    if (variant == 2) p.alibi_slopes = slopes.data();
    const Data data = MakeData(p, rng, 2.0f, false);
    size_t ldo = 0;
    const std::vector<float> out = RunKernel(p, data, &ldo);
    const size_t ldp = p.kv_len + 3;
    for (size_t h = 0; h < p.num_heads; ++h) {
      std::vector<float> probs((p.q_len - 1) * ldp + p.kv_len, kCanary);
      f32_attention_probs__ref(p, h, data.q.data(), data.ldq, data.k, data.ldk, probs.data(), ldp);
      const std::vector<double> ref =
          ReferenceProbs(p, h, data.q.data(), data.ldq, data.k, data.ldk);
      const size_t g = h / (p.num_heads / p.num_kv_heads);
      for (size_t i = 0; i < p.q_len; ++i) {
        double sum = 0.0;
        double ref_sum = 0.0;  // 1, or 0 for a query that sees no key
        double max_error = 0.0;
        for (size_t j = 0; j < p.kv_len; ++j) {
          const float x = probs[i * ldp + j];
          sum += x;
          ref_sum += ref[i * p.kv_len + j];
          max_error = std::max(max_error, std::fabs(x - ref[i * p.kv_len + j]));
          if (ref[i * p.kv_len + j] == 0.0) CHECK(x == 0.0f);
        }
        if (i + 1 < p.q_len) CHECK(probs[i * ldp + p.kv_len] == kCanary);
        INFO(Describe(p) << " head " << h << " row " << i);
        CHECK(max_error <= 1e-6);
        CHECK(std::fabs(sum - ref_sum) <= 1e-5);
        // P times V is the kernel's output.
        for (size_t d = 0; d < p.head_dim; ++d) {
          double pv = 0.0;
          for (size_t j = 0; j < p.kv_len; ++j) {
            pv += probs[i * ldp + j] * data.v[j * data.ldv + g * p.head_dim + d];
          }
          CHECK(std::fabs(pv - out[i * ldo + h * p.head_dim + d]) <= kTolerance * data.max_abs_v);
        }
      }
    }
  }
  MESSAGE("worst attention error over the suite so far: "
          << g_worst_relative_error << " x max|v| (bound " << kTolerance << ")");
}

TEST_CASE("T5RelativeBucket matches hand-computed buckets for 32 buckets, max distance 128") {
  // Bidirectional: 16 buckets per direction, max_exact 8; from n = 8 on, bucket
  // 8 + floor(8 log(n / 8) / log 16) = 8 + floor(2 log2(n / 8)), which steps at
  // n = 8 * 2^(k/2): 8, 11.3, 16, 22.6, 32, 45.3, 64, 90.5 (and 128, clamped to 15).
  // Keys after the query (relative position > 0) add 16.
  struct Step {
    int64_t first_n;
    uint32_t bucket;
  };
  const Step kBidirectional[] = {{8, 8},   {12, 9},  {16, 10}, {23, 11},
                                 {32, 12}, {46, 13}, {64, 14}, {91, 15}};
  // Causal: 32 buckets, max_exact 16; bucket 16 + floor(16 log(n / 16) / log 8),
  // stepping at n = 16 * 2^(3k/16): 18.2, 20.7, 23.6, 26.9, 30.6, 34.9, 39.7,
  // 45.3, 51.5, 58.7, 66.8, 76.1, 86.7, 98.7, 112.4. Keys after the query: 0.
  const Step kCausal[] = {{16, 16}, {19, 17}, {21, 18}, {24, 19}, {27, 20}, {31, 21},
                          {35, 22}, {40, 23}, {46, 24}, {52, 25}, {59, 26}, {67, 27},
                          {77, 28}, {87, 29}, {99, 30}, {113, 31}};
  auto from_steps = [](const Step* steps, size_t count, int64_t n) {
    uint32_t bucket = static_cast<uint32_t>(n);  // below the first step: exact
    for (size_t s = 0; s < count; ++s) {
      if (n >= steps[s].first_n) bucket = steps[s].bucket;
    }
    return bucket;
  };
  for (int64_t r = -1000; r <= 1000; ++r) {
    const int64_t n = r < 0 ? -r : r;
    const uint32_t bidirectional = (r > 0 ? 16u : 0u) + from_steps(kBidirectional, 8, n);
    const uint32_t causal = r > 0 ? 0u : from_steps(kCausal, 16, n);
    INFO("relative position " << r);
    CHECK(T5RelativeBucket(r, true, 32, 128) == bidirectional);
    CHECK(T5RelativeBucket(r, false, 32, 128) == causal);
  }
  // Spot values, straight from the definition.
  CHECK(T5RelativeBucket(0, true, 32, 128) == 0);
  CHECK(T5RelativeBucket(1, true, 32, 128) == 17);
  CHECK(T5RelativeBucket(-16, true, 32, 128) == 10);  // log(2) / log(16) * 8 = 2 exactly
  CHECK(T5RelativeBucket(16, true, 32, 128) == 26);
  CHECK(T5RelativeBucket(-127, true, 32, 128) == 15);
  CHECK(T5RelativeBucket(-100000, false, 32, 128) == 31);
  CHECK(T5RelativeBucket(5, false, 32, 128) == 0);
}

TEST_CASE("T5RelativeBucket agrees with the formula in double over other configurations") {
  for (uint32_t num_buckets : {8, 16, 32, 64, 128}) {
    for (uint32_t max_distance : {16, 20, 64, 100, 128, 256, 1000}) {
      for (bool bidirectional : {true, false}) {
        const uint32_t max_exact = (bidirectional ? num_buckets / 2 : num_buckets) / 2;
        if (max_distance <= max_exact) continue;
        for (int64_t r = -3 * static_cast<int64_t>(max_distance);
             r <= 3 * static_cast<int64_t>(max_distance); ++r) {
          const uint32_t got = T5RelativeBucket(r, bidirectional, num_buckets, max_distance);
          const uint32_t expected = ReferenceT5Bucket(r, bidirectional, num_buckets, max_distance);
          if (got != expected) {
            FAIL_CHECK("num_buckets " << num_buckets << " max_distance " << max_distance
                                      << " bidirectional " << bidirectional << " r " << r << ": "
                                      << got << ", formula " << expected);
          }
        }
      }
    }
  }
}

TEST_CASE("AttentionParamsError names what is wrong") {
  AttentionParams p = Shape(8, 2, 16, 4, 4);
  CHECK(AttentionParamsError(p) == nullptr);
  p.num_kv_heads = 3;
  CHECK(AttentionParamsError(p) != nullptr);
  p.num_kv_heads = 0;
  CHECK(AttentionParamsError(p) != nullptr);
  p = Shape(8, 2, 16, 4, 4);
  float table[8] = {};
  p.t5_bias = table;
  p.t5_num_buckets = 2;
  p.t5_bidirectional = true;
  CHECK(AttentionParamsError(p) != nullptr);
  p.t5_bidirectional = false;
  CHECK(AttentionParamsError(p) == nullptr);
}

}  // namespace
}  // namespace octet
