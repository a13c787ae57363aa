// The int8 tuner's techniques (converter/quantize/rounding.h) on constructed
// cases whose outcome is known: an outlier channel that smoothing must tame, a
// layer where compensated rounding must beat round to nearest, a row where
// clipping must win, and the error measure against a hand computation.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "quantize/rounding.h"
#include "quantize/tuner.h"

namespace octet {
namespace convert {
namespace {

// n rows of k Gaussian inputs; channel `outlier` (if any) scaled by `gain`.
ProductInputs Inputs(size_t n, size_t k, uint32_t seed, int outlier = -1, float gain = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  ProductInputs x;
  x.k = k;
  x.rows.resize(n * k);
  x.abs_max.assign(k, 0.0f);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < k; ++j) {
      float v = normal(rng);
      if (static_cast<int>(j) == outlier) v *= gain;
      x.rows[i * k + j] = v;
      x.abs_max[j] = std::fmax(x.abs_max[j], std::fabs(v));
    }
  }
  return x;
}

std::vector<float> Weights(size_t rows, size_t cols, uint32_t seed, float std = 0.05f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, std);
  std::vector<float> w(rows * cols);
  for (float& v : w) v = normal(rng);
  return w;
}

TEST_CASE("smoothing removes an outlier input channel's damage") {
  // Channel 3 is 50x the others: a row's int8 scale is set by it and the
  // other 63 channels keep about 2 levels. Smoothing moves the outlier into
  // the weights and the product error must fall by an order of magnitude.
  const size_t k = 64, rows = 48;
  const ProductInputs x = Inputs(512, k, 7, 3, 50.0f);
  const std::vector<float> w = Weights(rows, k, 8);
  const double plain = ProductError(x, w.data(), rows, QuantizeRows(w.data(), rows, k), nullptr);
  const std::vector<float> s = SmoothingFactors(x.abs_max, ColumnAbsMax(w.data(), rows, k), 0.5);
  CHECK(s[3] > 4.0f * s[0]);  // the outlier channel is divided the most
  std::vector<float> ws = w, inv(k);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t j = 0; j < k; ++j) ws[r * k + j] *= s[j];
  }
  for (size_t j = 0; j < k; ++j) inv[j] = 1.0f / s[j];
  const double smoothed =
      ProductError(x, w.data(), rows, QuantizeRows(ws.data(), rows, k), inv.data());
  MESSAGE("product error: plain " << plain << ", smoothed " << smoothed);
  CHECK(smoothed < 0.1 * plain);

  // Without an outlier, the same factors change little: no false win.
  const ProductInputs flat = Inputs(512, k, 9);
  const double flat_plain =
      ProductError(flat, w.data(), rows, QuantizeRows(w.data(), rows, k), nullptr);
  CHECK(flat_plain < 0.01 * plain);
}

TEST_CASE("smoothing factors: zero channels stay 1, alpha moves between the sides") {
  const std::vector<float> xm = {4.0f, 0.0f, 1.0f}, wm = {1.0f, 2.0f, 0.0f};
  const std::vector<float> s = SmoothingFactors(xm, wm, 0.5);
  CHECK(s[0] == doctest::Approx(2.0));
  CHECK(s[1] == 1.0f);
  CHECK(s[2] == 1.0f);
  CHECK(SmoothingFactors(xm, wm, 1.0)[0] == doctest::Approx(4.0));
  CHECK(SmoothingFactors(xm, wm, 0.0)[0] == doctest::Approx(1.0));
}

TEST_CASE("compensated rounding beats round to nearest on correlated inputs") {
  // Strongly correlated input channels (a low-rank signal plus noise): the
  // error of one rounded column can be cancelled by its neighbours. GPTQ must
  // lower the product error on the calibration rows and on fresh rows from
  // the same distribution, with the same per-row scales (the file's format).
  const size_t k = 96, rows = 64, n = 2048;
  auto correlated = [&](uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const std::vector<float> basis = Weights(4, k, 99, 1.0f);
    ProductInputs x;
    x.k = k;
    x.rows.resize(n * k);
    x.abs_max.assign(k, 0.0f);
    for (size_t i = 0; i < n; ++i) {
      float c[4];
      for (float& v : c) v = normal(rng);
      for (size_t j = 0; j < k; ++j) {
        float v = 0.1f * normal(rng);
        for (int b = 0; b < 4; ++b) v += c[b] * basis[b * k + j];
        x.rows[i * k + j] = v;
        x.abs_max[j] = std::fmax(x.abs_max[j], std::fabs(v));
      }
    }
    return x;
  };
  const ProductInputs calib = correlated(1), fresh = correlated(2);
  const std::vector<float> w = Weights(rows, k, 3);
  const QuantizedMatrix rtn = QuantizeRows(w.data(), rows, k);
  const std::vector<float> h = InputHessian(calib);
  const QuantizedMatrix gptq = CompensatedRounding(w.data(), rows, k, rtn.scales, h.data());
  CHECK(gptq.scales == rtn.scales);
  size_t below = 0;  // -128 is never produced (core/quant.h)
  for (int8_t v : gptq.values) below += v < -127 ? 1 : 0;
  CHECK(below == 0);
  // Weights only (fp32 inputs): the objective GPTQ minimizes.
  const double e_rtn = ProductError(calib, w.data(), rows, rtn, nullptr, false);
  const double e_gptq = ProductError(calib, w.data(), rows, gptq, nullptr, false);
  const double f_rtn = ProductError(fresh, w.data(), rows, rtn, nullptr, false);
  const double f_gptq = ProductError(fresh, w.data(), rows, gptq, nullptr, false);
  MESSAGE("weight-only product error: rtn " << e_rtn << " gptq " << e_gptq << "; fresh rows: rtn "
                                            << f_rtn << " gptq " << f_gptq);
  CHECK(e_gptq < 0.5 * e_rtn);
  CHECK(f_gptq < 0.5 * f_rtn);
  // The weights themselves move further from w (that is the point).
  CHECK(gptq.sqnr_db < rtn.sqnr_db);
}

// The tuner's blocked factorization and triangular inverse (fp32 products,
// double diagonal blocks) against the definitions, in double: sizes below one
// block, across blocks and past a strip of trailing rows (512).
TEST_CASE("blocked Cholesky factor and lower-triangular inverse in fp32") {
  for (size_t n : {5, 128, 300, 700}) {
    CAPTURE(n);
    // A = X Xᵀ / m + I/10, X [n, m] from the weights' generator: well conditioned.
    const size_t m = n + 17;
    const std::vector<float> x = Weights(n, m, static_cast<uint32_t>(n));
    std::vector<float> a(n * n);
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) {
        double v = i == j ? 0.1 : 0.0;
        for (size_t t = 0; t < m; ++t) v += static_cast<double>(x[i * m + t]) * x[j * m + t] / m;
        a[i * n + j] = static_cast<float>(v);
      }
    }
    std::vector<float> l = a;
    REQUIRE(CholeskyLower(l.data(), n));
    double worst = 0, scale = 0;
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) {
        if (j > i) CHECK(l[i * n + j] == 0.0f);
        double v = 0;
        for (size_t t = 0; t <= std::min(i, j); ++t) v += static_cast<double>(l[i * n + t]) * l[j * n + t];
        worst = std::max(worst, std::fabs(v - a[i * n + j]));
        scale = std::max(scale, std::fabs(static_cast<double>(a[i * n + j])));
      }
    }
    CHECK(worst <= 1e-5 * scale);
    std::vector<float> inv = l;
    InvertLower(inv.data(), n);
    double off = 0;
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) {
        double v = 0;
        for (size_t t = j; t <= i; ++t) v += static_cast<double>(l[i * n + t]) * inv[t * n + j];
        off = std::max(off, std::fabs(v - (i == j ? 1.0 : 0.0)));
      }
    }
    MESSAGE("n " << n << ": |L Lᵀ - A| " << worst << " of " << scale << ", |L L⁻¹ - I| " << off);
    CHECK(off <= 1e-4);
  }
  // Not positive definite: refused.
  std::vector<float> bad = {1, 2, 2, 1};
  CHECK_FALSE(CholeskyLower(bad.data(), 2));
}

TEST_CASE("compensated rounding of uncorrelated inputs is round to nearest") {
  // A diagonal Hessian has nothing to compensate with: each column's error
  // moves nowhere, so the result is the plain rounding, value for value.
  const size_t k = 16, rows = 8;
  std::vector<float> h(k * k, 0.0f);
  for (size_t j = 0; j < k; ++j) h[j * k + j] = 1.0f + static_cast<float>(j);
  const std::vector<float> w = Weights(rows, k, 5);
  const QuantizedMatrix rtn = QuantizeRows(w.data(), rows, k);
  const QuantizedMatrix gptq = CompensatedRounding(w.data(), rows, k, rtn.scales, h.data());
  CHECK(gptq.values == rtn.values);
}

TEST_CASE("clipping wins on a row with one extreme weight") {
  // 63 small weights and one 40x larger: max-scaled rounding leaves the small
  // ones at 3 levels; a clipped scale rounds them finely and loses a little
  // on the large one. With an identity Hessian (plain weight error) the
  // search must pick a scale below max/127 and lower the error.
  const size_t k = 64;
  std::vector<float> w = Weights(1, k, 11, 0.01f);
  w[5] = 0.4f;
  const std::vector<float> clipped = ClipScales(w.data(), 1, k, nullptr, nullptr, 0.5, 26);
  const float full = 0.4f / 127.0f;
  CHECK(clipped[0] <= full);
  const QuantizedMatrix a = RoundWithScales(w.data(), 1, k, {full});
  const QuantizedMatrix b = RoundWithScales(w.data(), 1, k, clipped);
  CHECK(b.sqnr_db >= a.sqnr_db);
  // A Gaussian row gains nothing from clipping its max a lot: the choice
  // stays within the top of the range.
  const std::vector<float> g = Weights(1, 256, 12);
  const std::vector<float> gs = ClipScales(g.data(), 1, 256, nullptr, nullptr, 0.5, 26);
  float gmax = 0;
  for (float v : g) gmax = std::fmax(gmax, std::fabs(v));
  CHECK(gs[0] >= 0.7f * gmax / 127.0f);
}

TEST_CASE("product error: the runtime's int8 product against fp32, by hand") {
  // One input row [1, 2] and one weight row [3, -4]: the row quantizes to
  // [64, 127] (scale 2/127; 63.5 rounds to even), the weights to [95, -127]
  // (scale 4/127). The int8 product is (64*95 - 127*127) * (2/127) * (4/127).
  ProductInputs x;
  x.k = 2;
  x.rows = {1.0f, 2.0f};
  x.abs_max = {1.0f, 2.0f};
  const std::vector<float> w = {3.0f, -4.0f};
  const QuantizedMatrix q = QuantizeRows(w.data(), 1, 2);
  REQUIRE(q.values == std::vector<int8_t>{95, -127});
  const double got = (64.0 * 95 - 127.0 * 127) * (2.0f / 127.0f) * static_cast<double>(q.scales[0]);
  const double want = 1.0 * 3 + 2.0 * -4;
  CHECK(ProductError(x, w.data(), 1, q, nullptr) == doctest::Approx((got - want) * (got - want)));
}

TEST_CASE("keep-fp32 patterns") {
  CHECK(GlobMatch("layers.*.ffn.down.weight", "layers.12.ffn.down.weight"));
  CHECK_FALSE(GlobMatch("layers.*.ffn.down.weight", "layers.1.ffn.up.weight"));
  CHECK(GlobMatch("token_embedding", "token_embedding"));
  CHECK_FALSE(GlobMatch("token_embedding", "token_embedding2"));
  CHECK(GlobMatch("*", "lm_head"));
  CHECK(GlobMatch("layers.?.attn.*", "layers.3.attn.o.weight"));
  CHECK_FALSE(GlobMatch("layers.?.attn.*", "layers.10.attn.o.weight"));
  CHECK(GlobMatch("*down*", "decoder.layers.0.ffn.down.weight"));
}

}  // namespace
}  // namespace convert
}  // namespace octet
