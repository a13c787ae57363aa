// Position encodings (kernels/position.h) against values computed here in double
// from the published formulas, and a few worked by hand.
//
// Tolerances: the kernels round each result once from a double computation
// (kernels/scalar_math.h), so tables and rows are within 1 float ulp of the
// double formula; RoPE adds the two float products and a sum of the rotation,
// so |error| <= 2e-7 * max |x| there. The float32 evaluation order of the RoPE
// frequencies (HF's) is checked bit for bit where it is a plain float expression.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "kernels/position.h"

namespace octet {
namespace {

constexpr double kPi = 3.14159265358979323846;

// |got - expected| <= ulps float ulps of expected.
bool WithinUlps(float got, double expected, int ulps) {
  const float e = static_cast<float>(expected);
  const float ulp = std::nextafter(std::fabs(e), INFINITY) - std::fabs(e);
  return std::fabs(static_cast<double>(got) - expected) <= ulps * static_cast<double>(ulp);
}

std::vector<float> InvFreq(const RopeFreqParams& p) {
  std::vector<float> inv(p.rotary_dim / 2);
  rope_inv_freq(p, inv.data());
  return inv;
}

TEST_CASE("rope_inv_freq: theta^(-2i/d), hand values and the double formula") {
  RopeFreqParams p;
  p.rotary_dim = 8;
  p.theta = 10000.0f;
  // 10000^(0, 1/4, 1/2, 3/4) = 1, 10, 100, 1000 exactly.
  const std::vector<float> inv = InvFreq(p);
  CHECK(inv[0] == 1.0f);
  CHECK(inv[1] == 0.1f);
  CHECK(inv[2] == 0.01f);
  CHECK(inv[3] == 0.001f);
  for (size_t dim : {2, 16, 64, 80, 96, 128, 256}) {
    for (float theta : {10000.0f, 500000.0f, 1000000.0f, 37000.0f}) {
      p.rotary_dim = dim;
      p.theta = theta;
      const std::vector<float> got = InvFreq(p);
      for (size_t i = 0; i < dim / 2; ++i) {
        const double exponent =
            static_cast<double>(static_cast<float>(2 * i) / static_cast<float>(dim));
        // 1 / float(theta^e): two roundings of 2^-24 relative each, so within 2 ulps
        // of the double value; and exactly the float expression of the header.
        INFO("dim " << dim << " theta " << theta << " i " << i);
        CHECK(WithinUlps(got[i], 1.0 / std::pow(static_cast<double>(theta), exponent), 2));
        CHECK(got[i] == 1.0f / static_cast<float>(std::pow(static_cast<double>(theta), exponent)));
      }
    }
  }
}

TEST_CASE("rope_inv_freq: linear scaling divides the frequencies by the factor") {
  RopeFreqParams p;
  p.rotary_dim = 64;
  p.theta = 10000.0f;
  const std::vector<float> base = InvFreq(p);
  p.scaling = RopeScalingKind::kLinear;
  p.factor = 4.0f;
  const std::vector<float> scaled = InvFreq(p);
  for (size_t i = 0; i < base.size(); ++i) CHECK(scaled[i] == base[i] / 4.0f);
}

TEST_CASE("rope_inv_freq: longrope divides each frequency by its factor (1 / (f theta^e))") {
  RopeFreqParams p;
  p.rotary_dim = 8;
  p.theta = 10000.0f;
  const float factors[4] = {1.0f, 1.5f, 3.0f, 40.0f};
  p.scaling = RopeScalingKind::kLongRope;
  p.ext_factors = factors;
  const std::vector<float> got = InvFreq(p);
  for (size_t i = 0; i < 4; ++i) {
    const float power = static_cast<float>(std::pow(10000.0, static_cast<double>(
                                                                 static_cast<float>(2 * i) / 8.0f)));
    CHECK(got[i] == 1.0f / (factors[i] * power));
  }
  CHECK(got[0] == 1.0f);
}

TEST_CASE("f32_rope__ref: attention_factor multiplies cos and sin") {
  const float inv[1] = {1.0f};
  F32RopeParams p;
  p.len = 2;
  p.heads = 1;
  p.head_dim = 3;  // the third value is not rotated
  p.rotary_dim = 2;
  p.inv_freq = inv;
  p.attention_factor = 1.5f;
  float x[6] = {0.25f, -3.0f, 2.0f, 1.0f, 0.0f, 2.0f};
  f32_rope__ref(p, x, 3);
  CHECK(x[0] == 0.375f);  // position 0: cos 1, sin 0, times 1.5
  CHECK(x[1] == -4.5f);
  CHECK(x[2] == 2.0f);
  CHECK(x[3] == doctest::Approx(1.5 * 0.5403023058681398).epsilon(1e-7));
  CHECK(x[4] == doctest::Approx(1.5 * 0.8414709848078965).epsilon(1e-7));
  CHECK(x[5] == 2.0f);
}

TEST_CASE("rope_inv_freq: llama3 scaling, Llama 3.1's configuration and others") {
  struct Config {
    size_t dim;
    float theta, factor, low, high;
    uint32_t original;
  };
  const Config kConfigs[] = {
      {128, 500000.0f, 8.0f, 1.0f, 4.0f, 8192},  // Llama 3.1 / 3.2
      {64, 500000.0f, 32.0f, 1.0f, 4.0f, 8192},  // Llama 3.2 1B-like head_dim
      {64, 10000.0f, 4.0f, 1.0f, 4.0f, 512},     // a small synthetic model: all three bands
      {32, 10000.0f, 2.0f, 0.5f, 3.0f, 100},
  };
  for (const Config& c : kConfigs) {
    RopeFreqParams p;
    p.rotary_dim = c.dim;
    p.theta = c.theta;
    const std::vector<float> base = InvFreq(p);
    p.scaling = RopeScalingKind::kLlama3;
    p.factor = c.factor;
    p.low_freq_factor = c.low;
    p.high_freq_factor = c.high;
    p.original_max_positions = c.original;
    const std::vector<float> got = InvFreq(p);
    const double low_wavelen = c.original / c.low;
    const double high_wavelen = c.original / c.high;
    int bands[3] = {0, 0, 0};
    for (size_t i = 0; i < base.size(); ++i) {
      INFO("dim " << c.dim << " factor " << c.factor << " i " << i);
      const double inv = base[i];
      const double wavelen = 2.0 * kPi / inv;
      // Well inside a band the float and the double evaluation agree on it.
      const double margin = 1e-4 * wavelen;
      if (wavelen < high_wavelen - margin) {
        CHECK(got[i] == base[i]);  // high frequencies: untouched
        ++bands[0];
      } else if (wavelen > low_wavelen + margin) {
        CHECK(got[i] == base[i] / c.factor);  // low frequencies: divided by factor
        ++bands[2];
      } else if (wavelen > high_wavelen + margin && wavelen < low_wavelen - margin) {
        const double smooth = (c.original / wavelen - c.low) / (c.high - c.low);
        const double expected = (1.0 - smooth) * inv / c.factor + smooth * inv;
        CHECK(std::fabs(got[i] - expected) <= 1e-6 * expected);
        CHECK(got[i] < base[i]);
        CHECK(got[i] > base[i] / c.factor);
        ++bands[1];
      }
    }
    if (c.original == 512) CHECK((bands[0] > 0 && bands[1] > 0 && bands[2] > 0));
  }
}

// The rotation of the header, in double from the kernel's float angle.
void ReferenceRope(const F32RopeParams& p, const std::vector<float>& x, size_t ldx,
                   std::vector<double>* out) {
  out->assign(x.begin(), x.end());
  const size_t half = p.rotary_dim / 2;
  for (size_t r = 0; r < p.len; ++r) {
    for (size_t i = 0; i < half; ++i) {
      const float angle = static_cast<float>(p.pos0 + r) * p.inv_freq[i];
      const double c = std::cos(static_cast<double>(angle));
      const double s = std::sin(static_cast<double>(angle));
      for (size_t h = 0; h < p.heads; ++h) {
        const size_t at = r * ldx + h * p.head_dim;
        const double x1 = x[at + i], x2 = x[at + i + half];
        (*out)[at + i] = x1 * c - x2 * s;
        (*out)[at + i + half] = x2 * c + x1 * s;
      }
    }
  }
}

TEST_CASE("f32_rope__ref rotates pairs (i, i + rotary_dim / 2) by position * inv_freq") {
  // Hand value: one head of 2 values, (1, 0) at position 1 with frequency 1 goes
  // to (cos 1, sin 1); at position 0 nothing moves.
  {
    const float inv[1] = {1.0f};
    F32RopeParams p;
    p.len = 2;
    p.heads = 1;
    p.head_dim = 2;
    p.rotary_dim = 2;
    p.inv_freq = inv;
    float x[4] = {0.25f, -3.0f, 1.0f, 0.0f};
    f32_rope__ref(p, x, 2);
    CHECK(x[0] == 0.25f);
    CHECK(x[1] == -3.0f);
    CHECK(x[2] == doctest::Approx(0.5403023058681398).epsilon(1e-7));
    CHECK(x[3] == doctest::Approx(0.8414709848078965).epsilon(1e-7));
  }
  std::mt19937 rng(41);
  struct Case {
    size_t len, heads, head_dim, rotary_dim, pos0;
    float theta;
  };
  const Case kCases[] = {
      {5, 2, 8, 8, 0, 10000.0f},         {7, 3, 64, 64, 100, 10000.0f},
      {4, 2, 128, 128, 5000, 500000.0f}, {3, 4, 80, 40, 33, 10000.0f},  // partial rotary
      {2, 1, 64, 64, 30000, 1e6f},       {6, 2, 96, 24, 1, 10000.0f},
  };
  for (const Case& c : kCases) {
    RopeFreqParams f;
    f.rotary_dim = c.rotary_dim;
    f.theta = c.theta;
    const std::vector<float> inv = InvFreq(f);
    F32RopeParams p;
    p.len = c.len;
    p.heads = c.heads;
    p.head_dim = c.head_dim;
    p.rotary_dim = c.rotary_dim;
    p.pos0 = c.pos0;
    p.inv_freq = inv.data();
    const size_t ldx = c.heads * c.head_dim + 3;
    std::vector<float> x((c.len - 1) * ldx + c.heads * c.head_dim);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    float max_abs = 0.0f;
    for (float& v : x) {
      v = normal(rng);
      max_abs = std::max(max_abs, std::fabs(v));
    }
    std::vector<double> expected;
    ReferenceRope(p, x, ldx, &expected);
    const std::vector<float> original = x;
    f32_rope__ref(p, x.data(), ldx);
    double max_error = 0.0;
    for (size_t r = 0; r < c.len; ++r) {
      for (size_t col = 0; col < ldx && r * ldx + col < x.size(); ++col) {
        const size_t at = r * ldx + col;
        const bool rotated = col < c.heads * c.head_dim && col % c.head_dim < c.rotary_dim;
        if (!rotated) {
          CHECK(std::memcmp(&x[at], &original[at], sizeof(float)) == 0);  // untouched
          continue;
        }
        max_error = std::max(max_error, std::fabs(x[at] - expected[at]));
      }
    }
    INFO("len " << c.len << " heads " << c.heads << " head_dim " << c.head_dim << " rotary "
                << c.rotary_dim << " pos0 " << c.pos0);
    CHECK(max_error <= 2e-7 * max_abs);
  }
}

TEST_CASE("f32_sinusoidal__ref: the paper's interleaved layout and Marian's split one") {
  // Hand values, dim 4, position 1: frequencies 1 and 1/100.
  const double s1 = 0.8414709848078965, c1 = 0.5403023058681398;
  const double s2 = 0.009999833334166664, c2 = 0.9999500004166653;
  float row[8] = {};
  F32SinusoidalParams p;
  p.dim = 4;
  p.len = 2;
  p.pos0 = 0;
  p.kind = SinusoidalKind::kInterleaved;
  f32_sinusoidal__ref(p, row, 4);
  const float interleaved[8] = {0, 1, 0, 1, float(s1), float(c1), float(s2), float(c2)};
  for (int i = 0; i < 8; ++i) CHECK(row[i] == interleaved[i]);
  p.kind = SinusoidalKind::kSplit;
  f32_sinusoidal__ref(p, row, 4);
  const float split[8] = {0, 0, 1, 1, float(s1), float(s2), float(c1), float(c2)};
  for (int i = 0; i < 8; ++i) CHECK(row[i] == split[i]);

  // The formulas in double, over dims (odd ones too), positions and a row stride.
  for (size_t dim : {1, 2, 3, 7, 8, 33, 64, 512}) {
    for (size_t pos0 : {0, 500, 4000}) {
      for (SinusoidalKind kind : {SinusoidalKind::kInterleaved, SinusoidalKind::kSplit}) {
        p.kind = kind;
        p.dim = dim;
        p.pos0 = pos0;
        p.len = 5;
        const size_t ldo = dim + 2;
        std::vector<float> out((p.len - 1) * ldo + dim, 7.0f);
        f32_sinusoidal__ref(p, out.data(), ldo);
        const size_t sentinel = (dim + 1) / 2;
        for (size_t r = 0; r < p.len; ++r) {
          for (size_t col = 0; col < ldo && r * ldo + col < out.size(); ++col) {
            const float got = out[r * ldo + col];
            if (col >= dim) {
              CHECK(got == 7.0f);  // padding untouched
              continue;
            }
            // HF Marian: angle from column j is pos / 10000^(2 (j // 2) / dim).
            size_t c = 0;
            bool use_sin = true;
            if (kind == SinusoidalKind::kInterleaved) {
              c = col / 2;
              use_sin = col % 2 == 0;
            } else {
              use_sin = col < sentinel;
              c = use_sin ? col : col - sentinel;
            }
            const double angle =
                static_cast<double>(pos0 + r) / std::pow(10000.0, static_cast<double>(2 * c) / dim);
            const double expected = use_sin ? std::sin(angle) : std::cos(angle);
            INFO("dim " << dim << " position " << pos0 + r << " column " << col);
            CHECK(WithinUlps(got, expected, 1));
          }
        }
      }
    }
  }
}

TEST_CASE("alibi_slopes: the geometric sequence and the non-power-of-two rule") {
  auto slopes = [](size_t n) {
    std::vector<float> s(n);
    alibi_slopes(n, s.data());
    return s;
  };
  auto pow2 = [](double e) { return static_cast<float>(std::pow(2.0, e)); };
  // Powers of two: 2^(-8k/n), k = 1..n.
  CHECK(slopes(1) == std::vector<float>{pow2(-8)});
  CHECK(slopes(2) == std::vector<float>{pow2(-4), pow2(-8)});
  CHECK(slopes(4) == std::vector<float>{pow2(-2), pow2(-4), pow2(-6), pow2(-8)});
  const std::vector<float> s8 = slopes(8);
  for (size_t k = 1; k <= 8; ++k) CHECK(s8[k - 1] == pow2(-static_cast<double>(k)));
  const std::vector<float> s16 = slopes(16);
  for (size_t k = 1; k <= 16; ++k) CHECK(s16[k - 1] == pow2(-0.5 * k));
  // Otherwise: the slopes of the power of two below, then every other slope of
  // the power of two above (k = 1, 3, 5, ...).
  CHECK(slopes(3) == std::vector<float>{pow2(-4), pow2(-8), pow2(-2)});
  CHECK(slopes(6) ==
        std::vector<float>{pow2(-2), pow2(-4), pow2(-6), pow2(-8), pow2(-1), pow2(-3)});
  const std::vector<float> s12 = slopes(12);
  for (size_t k = 1; k <= 8; ++k) CHECK(s12[k - 1] == pow2(-static_cast<double>(k)));
  CHECK(s12[8] == pow2(-0.5));
  CHECK(s12[9] == pow2(-1.5));
  CHECK(s12[10] == pow2(-2.5));
  CHECK(s12[11] == pow2(-3.5));
  // Every n up to 100 against the rule in double.
  for (size_t n = 1; n <= 100; ++n) {
    size_t m = 1;
    while (m * 2 <= n) m *= 2;
    const std::vector<float> s = slopes(n);
    for (size_t h = 0; h < n; ++h) {
      const double e = h < m ? -8.0 * (h + 1) / m : -4.0 * (2 * (h - m) + 1) / m;
      INFO("n " << n << " head " << h);
      CHECK(s[h] == pow2(e));
    }
  }
}

}  // namespace
}  // namespace octet
