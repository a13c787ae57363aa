#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/f32_elementwise.h"

namespace octet {
namespace {

std::vector<float> RandomRow(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.5f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

TEST_CASE("f32 layer norm and RMS norm match a double-precision definition") {
  for (size_t n : {1u, 7u, 64u, 1000u}) {
    CAPTURE(n);
    const std::vector<float> x = RandomRow(2 * n, 3, 2.0f);
    const std::vector<float> w = RandomRow(n, 4, 1.0f);
    const std::vector<float> b = RandomRow(n, 5, 1.0f);
    std::vector<float> ln(2 * n), rms(2 * n);
    f32_layernorm__ref(2, n, x.data(), n, w.data(), b.data(), 1e-5f, ln.data(), n);
    f32_rmsnorm__ref(2, n, x.data(), n, w.data(), 1e-6f, rms.data(), n);
    for (size_t r = 0; r < 2; ++r) {
      double mean = 0, var = 0, sq = 0;
      for (size_t i = 0; i < n; ++i) mean += x[r * n + i];
      mean /= n;
      for (size_t i = 0; i < n; ++i) {
        var += (x[r * n + i] - mean) * (x[r * n + i] - mean);
        sq += static_cast<double>(x[r * n + i]) * x[r * n + i];
      }
      var /= n;
      for (size_t i = 0; i < n; ++i) {
        const double e_ln = (x[r * n + i] - mean) / std::sqrt(var + 1e-5) * w[i] + b[i];
        const double e_rms = x[r * n + i] / std::sqrt(sq / n + 1e-6) * w[i];
        CHECK(std::fabs(ln[r * n + i] - e_ln) <= 1e-5 * (1 + std::fabs(e_ln)));
        CHECK(std::fabs(rms[r * n + i] - e_rms) <= 1e-5 * (1 + std::fabs(e_rms)));
      }
    }
  }
  // In place (y aliases x), no bias.
  std::vector<float> x = {1.0f, 2.0f, 3.0f, 4.0f};
  const float w[4] = {1, 1, 1, 1};
  f32_layernorm__ref(1, 4, x.data(), 4, w, nullptr, 0.0f, x.data(), 4);
  CHECK(x[0] == doctest::Approx(-1.3416408f));
  CHECK(x[3] == doctest::Approx(1.3416408f));
}

TEST_CASE("f32 activations: GELU (erf, tanh), ReLU, SiLU, gated") {
  const double xs[] = {-6.0, -1.5, -0.1, 0.0, 0.3, 1.0, 4.0};
  for (double xd : xs) {
    CAPTURE(xd);
    float v[4] = {static_cast<float>(xd), static_cast<float>(xd), static_cast<float>(xd),
                  static_cast<float>(xd)};
    f32_activation__ref(F32Activation::kGeluErf, 1, &v[0]);
    f32_activation__ref(F32Activation::kGeluTanh, 1, &v[1]);
    f32_activation__ref(F32Activation::kRelu, 1, &v[2]);
    f32_activation__ref(F32Activation::kSilu, 1, &v[3]);
    const double gelu = 0.5 * xd * (1 + std::erf(xd / std::sqrt(2.0)));
    const double gelu_tanh =
        0.5 * xd * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (xd + 0.044715 * xd * xd * xd)));
    CHECK(v[0] == doctest::Approx(gelu).epsilon(1e-6));
    CHECK(v[1] == doctest::Approx(gelu_tanh).epsilon(1e-6));
    CHECK(v[2] == doctest::Approx(xd > 0 ? xd : 0.0));
    CHECK(v[3] == doctest::Approx(xd / (1 + std::exp(-xd))).epsilon(1e-6));
  }
  float gate[4] = {1.0f, -2.0f, 0.5f, 3.0f};
  const float up[4] = {2.0f, 3.0f, 4.0f, 5.0f};
  f32_gated_activation__ref(F32Activation::kRelu, 2, 2, gate, 2, up, 2);
  CHECK(gate[0] == 2.0f);
  CHECK(gate[1] == 0.0f);
  CHECK(gate[2] == 2.0f);
  CHECK(gate[3] == 15.0f);
  float rows[4] = {1, 2, 3, 4};
  const float bias[2] = {10, 20};
  f32_add_bias__ref(2, 2, rows, 2, bias);
  CHECK(rows[0] == 11);
  CHECK(rows[3] == 24);
}

}  // namespace
}  // namespace octet
