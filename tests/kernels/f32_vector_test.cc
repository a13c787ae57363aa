// The vector float kernels (kernels/f32_vector_kernels.h on each ISA) against
// their references and against double-precision truth, with the error bounds
// their headers state: kernels/f32_vector_math.h (exp, GELU, SiLU),
// kernels/f32_elementwise.h (norms, activations, adds), kernels/qs8_softmax_tile.h
// and kernels/position.h (RoPE). Every variant this CPU runs is checked (see
// runnable_variants.h; the others are reported as SKIPPED), over dense sweeps of
// the inputs and their edges: n = 0 and tails of every length below the widest
// vector, strides, in-place calls, large, small, negative, infinite and NaN
// inputs, exp's underflow to 0, GELU for large |x|, rows the norms hand to the
// reference. Elements past n and row padding hold canaries that must survive.
// The worst errors seen are reported by MESSAGEs.

#include <cfloat>
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

#include "kernels/f32_elementwise.h"
#include "kernels/kernel_table.h"
#include "kernels/position.h"
#include "kernels/qs8_softmax_tile.h"
#include "runnable_variants.h"

namespace octet {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kCanary = -12345.678f;
constexpr size_t kMaxLanes = 16;  // the widest vector (AVX-512)

// exp's absolute error below 2^-126 (f32_vector_math.h): a subnormal step, or on
// AArch32, which flushes subnormals to zero, 2^-126.
#if defined(__arm__)
constexpr double kTinyExp = 0x1p-126;
#else
constexpr double kTinyExp = 0x1p-149;
#endif

// Results below this magnitude may be 0 (f32_elementwise.h): AArch32 NEON
// flushes subnormal intermediates to zero.
#if defined(__arm__)
constexpr double kFlushed = 0x1p-119;
#else
constexpr double kFlushed = 0.0;
#endif

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b;
}

// Both NaN, or the same bits.
bool SameFloat(float a, float b) { return (a != a && b != b) || Bits(a) == Bits(b); }

// A runnable variant, its name as a string (doctest prints a const char* as a pointer).
template <typename Fn>
struct Variant {
  std::string name;
  Fn fn;
};

template <typename Fn>
std::vector<Variant<Fn>> Runnable(const KernelVariant<Fn>* (*list)(size_t*)) {
  size_t count = 0;
  const KernelVariant<Fn>* variants = list(&count);
  std::vector<Variant<Fn>> runnable;
  for (const KernelVariant<Fn>& v : test::RunnableVariants(variants, count)) {
    runnable.push_back({v.name, v.fn});
  }
  return runnable;
}

// Lengths: every n up to three widest vectors and a few long ones.
std::vector<size_t> Lengths() {
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 3 * kMaxLanes + 1; ++n) lengths.push_back(n);
  for (size_t n : {63, 64, 65, 127, 129, 768, 1000, 3072, 4099}) lengths.push_back(n);
  return lengths;
}

// Inputs for the activations: a dense grid over [-20, 20], magnitudes from 1e-30
// to 1e30 of both signs, and the edges.
std::vector<float> ActivationInputs() {
  std::vector<float> x;
  for (int i = -200000; i <= 200000; ++i) x.push_back(static_cast<float>(i) * 1e-4f);
  for (double m = 1e-30; m < 1e30; m *= 1.07) {
    x.push_back(static_cast<float>(m));
    x.push_back(static_cast<float>(-m));
  }
  const float edges[] = {0.0f,    -0.0f,    FLT_MIN, -FLT_MIN, FLT_TRUE_MIN, -FLT_TRUE_MIN,
                         FLT_MAX, -FLT_MAX, kInf,    -kInf,    kNaN,         -kNaN,
                         14.5f,   -14.5f,   20.5f,   -20.5f,   88.72f,       -88.72f,
                         103.9f,  -103.9f,  105.0f,  -105.0f,  1e5f,         -1e5f};
  for (float e : edges) x.push_back(e);
  return x;
}

// ---------------------------------------------------------------------------
// Truth in double and the per-activation bounds of kernels/f32_elementwise.h
// (against the reference) and kernels/f32_vector_math.h (against the truth).

double TrueActivation(F32Activation act, double x) {
  switch (act) {
    case F32Activation::kGeluErf:
      return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
    case F32Activation::kGeluTanh: {
      const double u = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
      return x / (1.0 + std::exp(-2.0 * u));
    }
    case F32Activation::kRelu:
      return x > 0.0 ? x : 0.0;
    case F32Activation::kSilu:
      return x / (1.0 + std::exp(-x));
  }
  return 0.0;
}

// The bound of |y - y_ref| (f32_elementwise.h).
double BoundAgainstRef(F32Activation act, float x, float ref) {
  const double ax = std::fabs(static_cast<double>(x));
  const double ay = std::fabs(static_cast<double>(ref));
  switch (act) {
    case F32Activation::kGeluErf:
      return 0x1p-22 * (ax > 1.0 ? ax : 1.0);
    case F32Activation::kGeluTanh:
      return 0x1p-21 * ay + 0x1p-22 * ax + kFlushed;
    case F32Activation::kSilu:
      return 0x1p-20 * ay + (kFlushed > 0x1p-126 ? kFlushed : 0x1p-126);
    case F32Activation::kRelu:
      return 0.0;
  }
  return 0.0;
}

std::string ActName(F32Activation act) {
  switch (act) {
    case F32Activation::kGeluErf:
      return "gelu_erf";
    case F32Activation::kGeluTanh:
      return "gelu_tanh";
    case F32Activation::kRelu:
      return "relu";
    case F32Activation::kSilu:
      return "silu";
  }
  return "?";
}

const F32Activation kActivations[] = {F32Activation::kGeluErf, F32Activation::kGeluTanh,
                                      F32Activation::kRelu, F32Activation::kSilu};

// Checks y (a variant's) against ref (the reference's) for inputs x: non-finite
// results as the reference's, finite ones within BoundAgainstRef. *worst: the
// largest |y - ref| / BoundAgainstRef seen (the fraction of the bound used; for
// ReLU, whose bound is 0, the largest |y - ref|).
void CheckActivation(const std::string& name, F32Activation act, const std::vector<float>& x,
                     const std::vector<float>& y, const std::vector<float>& ref, double* worst) {
  size_t failures = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(ref[i]) || !std::isfinite(y[i])) {
      if (!SameFloat(y[i], ref[i]) && failures++ < 5) {
        FAIL_CHECK(name << " " << ActName(act) << "(" << x[i] << ") = " << y[i] << ", reference "
                        << ref[i]);
      }
      continue;
    }
    const double diff = std::fabs(static_cast<double>(y[i]) - ref[i]);
    const double bound = BoundAgainstRef(act, x[i], ref[i]);
    if (diff > bound && failures++ < 5) {
      FAIL_CHECK(name << " " << ActName(act) << "(" << x[i] << ") = " << y[i] << ", reference "
                      << ref[i] << ": |diff| " << diff << " > bound " << bound);
    }
    const double used = bound > 0.0 ? diff / bound : diff;
    if (used > *worst) *worst = used;
  }
  CHECK(failures == 0);
}

TEST_CASE("f32_activation variants are within their bounds of the reference and the truth") {
  const auto variants = Runnable(F32ActivationVariants);
  const std::vector<float> x = ActivationInputs();
  for (F32Activation act : kActivations) {
    std::vector<float> ref = x;
    f32_activation__ref(act, ref.size(), ref.data());
    for (const auto& variant : variants) {
      std::vector<float> y = x;
      variant.fn(act, y.size(), y.data());
      double worst_ref = 0.0, worst_true = 0.0;
      CheckActivation(variant.name, act, x, y, ref, &worst_ref);
      // Against the truth (f32_vector_math.h's bounds, for the vector variants):
      // relative for SiLU and GELU-tanh, absolute per max(1, |x|) for GELU-erf,
      // where results are normal.
      for (size_t i = 0; i < x.size(); ++i) {
        if (variant.fn == &f32_activation__ref) break;
        const double t = TrueActivation(act, x[i]);
        if (!std::isfinite(t) || std::fabs(t) < 0x1p-126 || std::fabs(t) < kFlushed ||
            !std::isfinite(y[i])) {
          continue;
        }
        const double err = std::fabs(static_cast<double>(y[i]) - t);
        const double rel = act == F32Activation::kGeluErf
                               ? err / std::fmax(1.0, std::fabs(static_cast<double>(x[i])))
                               : err / std::fabs(t);
        if (act == F32Activation::kSilu) {
          if (!(rel <= 0x1p-21)) FAIL_CHECK(variant.name << " silu(" << x[i] << ") rel " << rel);
        } else if (act == F32Activation::kGeluErf) {
          if (!(rel <= 0x1p-22)) FAIL_CHECK(variant.name << " gelu(" << x[i] << ") err " << rel);
          // Relative where the result is normal: 2^-20 from x = -5 on, 2^-16 below.
          const double relative = err / std::fabs(t);
          const double relative_bound = x[i] >= -5.0f ? 0x1p-20 : 0x1p-16;
          if (std::fabs(x[i]) < 14.5f && !(relative <= relative_bound)) {
            FAIL_CHECK(variant.name << " gelu(" << x[i] << ") relative error " << relative);
          }
        } else if (act == F32Activation::kGeluTanh && std::fabs(x[i]) < 10.0f) {
          // The truth's u is exact, the kernels' a float: compare where u's
          // rounding (relative 2^-23, times |2u| in sigmoid's exponent) is small.
          const double u2 =
              2.0 * std::sqrt(2.0 / M_PI) * std::fabs(x[i] + 0.044715 * double(x[i]) * x[i] * x[i]);
          if (!(rel <= 0x1p-21 + 0x1p-22 * u2)) {
            FAIL_CHECK(variant.name << " gelu_tanh(" << x[i] << ") rel " << rel);
          }
        }
        if (act != F32Activation::kGeluTanh && rel > worst_true) worst_true = rel;
      }
      std::string truth;
      if (variant.fn != &f32_activation__ref &&
          (act == F32Activation::kGeluErf || act == F32Activation::kSilu)) {
        std::ostringstream o;
        o << "; against the truth " << worst_true
          << (act == F32Activation::kGeluErf ? " per max(1, |x|)" : " relative");
        truth = o.str();
      }
      MESSAGE(variant.name << " " << ActName(act) << ": " << worst_ref
                           << " of the bound against the reference" << truth);
    }
  }
}

TEST_CASE("f32_activation variants: every length, nothing past n is written") {
  const auto variants = Runnable(F32ActivationVariants);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (size_t n : Lengths()) {
    CAPTURE(n);
    std::vector<float> x(n + kMaxLanes, kCanary);
    for (size_t i = 0; i < n; ++i) x[i] = normal(rng);
    for (F32Activation act : kActivations) {
      std::vector<float> ref = x;
      f32_activation__ref(act, n, ref.data());
      for (const auto& variant : variants) {
        std::vector<float> y = x;
        variant.fn(act, n, y.data());
        double worst = 0.0;
        CheckActivation(variant.name, act, std::vector<float>(x.begin(), x.begin() + n),
                        std::vector<float>(y.begin(), y.begin() + n),
                        std::vector<float>(ref.begin(), ref.begin() + n), &worst);
        for (size_t i = n; i < y.size(); ++i) REQUIRE(Bits(y[i]) == Bits(kCanary));
      }
    }
  }
}

TEST_CASE("f32_gated_activation variants: act(x) * up, rows at strides") {
  const auto variants = Runnable(F32GatedActivationVariants);
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (size_t n : Lengths()) {
    CAPTURE(n);
    const size_t rows = 3, ldx = n + 5, ldu = n + 2;
    std::vector<float> x(rows * ldx, kCanary), up(rows * ldu, kCanary);
    for (size_t r = 0; r < rows; ++r) {
      for (size_t i = 0; i < n; ++i) {
        x[r * ldx + i] = normal(rng);
        up[r * ldu + i] = normal(rng);
      }
    }
    for (F32Activation act : kActivations) {
      std::vector<float> ref = x;
      f32_gated_activation__ref(act, rows, n, ref.data(), ldx, up.data(), ldu);
      for (const auto& variant : variants) {
        std::vector<float> y = x;
        variant.fn(act, rows, n, y.data(), ldx, up.data(), ldu);
        for (size_t r = 0; r < rows; ++r) {
          for (size_t i = 0; i < ldx; ++i) {
            const size_t at = r * ldx + i;
            if (i >= n) {
              REQUIRE(Bits(y[at]) == Bits(kCanary));
              continue;
            }
            // The activation's bound times |up|, and the product's rounding.
            float act_ref = x[at];
            f32_activation__ref(act, 1, &act_ref);
            const double u = std::fabs(static_cast<double>(up[r * ldu + i]));
            const double bound = BoundAgainstRef(act, x[at], act_ref) * u +
                                 0x1p-23 * std::fabs(static_cast<double>(ref[at]));
            const double diff = std::fabs(static_cast<double>(y[at]) - ref[at]);
            if (!(diff <= bound)) {
              FAIL_CHECK(variant.name << " " << ActName(act) << " x=" << x[at] << " up="
                                      << up[r * ldu + i] << ": " << y[at] << " vs " << ref[at]);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("f32_add and f32_add_bias variants are bit-identical to the reference") {
  const auto adds = Runnable(F32AddVariants);
  const auto biases = Runnable(F32AddBiasVariants);
  std::mt19937 rng(13);
  std::normal_distribution<float> normal(0.0f, 100.0f);
  for (size_t n : Lengths()) {
    CAPTURE(n);
    std::vector<float> y(n + kMaxLanes, kCanary), x(n);
    for (size_t i = 0; i < n; ++i) {
      y[i] = normal(rng);
      x[i] = normal(rng);
    }
    std::vector<float> want = y;
    f32_add__ref(n, want.data(), x.data());
    for (const auto& variant : adds) {
      std::vector<float> got = y;
      variant.fn(n, got.data(), x.data());
      CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
      std::vector<float> self = y;  // y += y, in place
      std::vector<float> self_want = y;
      f32_add__ref(n, self_want.data(), self_want.data());
      variant.fn(n, self.data(), self.data());
      CHECK(std::memcmp(self.data(), self_want.data(), self.size() * sizeof(float)) == 0);
    }
    const size_t rows = 3, ld = n + 3;
    std::vector<float> m(rows * ld, kCanary);
    for (size_t r = 0; r < rows; ++r) {
      for (size_t i = 0; i < n; ++i) m[r * ld + i] = normal(rng);
    }
    std::vector<float> m_want = m;
    f32_add_bias__ref(rows, n, m_want.data(), ld, x.data());
    for (const auto& variant : biases) {
      std::vector<float> got = m;
      variant.fn(rows, n, got.data(), ld, x.data());
      CHECK(std::memcmp(got.data(), m_want.data(), got.size() * sizeof(float)) == 0);
    }
  }
}

// ---------------------------------------------------------------------------
// Norms.

enum class RowKind {
  kNormal,
  kOffset,
  kNarrow,
  kConstant,
  kWide,
  kHuge,
  kWithInf,
  kWithNaN,
  kZero
};
const RowKind kRowKinds[] = {RowKind::kNormal,   RowKind::kOffset,  RowKind::kNarrow,
                             RowKind::kConstant, RowKind::kWide,    RowKind::kHuge,
                             RowKind::kWithInf,  RowKind::kWithNaN, RowKind::kZero};

void FillRow(RowKind kind, size_t n, std::mt19937& rng, float* row) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (size_t i = 0; i < n; ++i) {
    const float z = normal(rng);
    switch (kind) {
      case RowKind::kNormal:
        row[i] = 0.5f + 2.0f * z;
        break;
      case RowKind::kOffset:  // mean far from 0 against the spread
        row[i] = 1000.0f + z;
        break;
      case RowKind::kNarrow:  // variance below eps
        row[i] = 1e-4f * z;
        break;
      case RowKind::kConstant:
        row[i] = 3.0f;
        break;
      case RowKind::kWide:  // magnitudes from 1e-20 to 1e15
        row[i] = z * std::pow(10.0f, static_cast<float>(static_cast<int>(rng() % 36) - 20));
        break;
      case RowKind::kHuge:  // squares overflow float: the reference's row
        row[i] = z * 1e25f;
        break;
      case RowKind::kWithInf:
        row[i] = i == n / 2 ? -kInf : z;
        break;
      case RowKind::kWithNaN:
        row[i] = i == n / 3 ? kNaN : z;
        break;
      case RowKind::kZero:
        row[i] = 0.0f;
        break;
    }
  }
}

struct NormCase {
  size_t rows, ldx, ldy;
  bool in_place, bias;
  float eps;
};

// Whether a row's float sums serve it (f32_elementwise.h), from its double
// statistics: 1 yes, 0 no (the reference's row), -1 too close to the edge to say.
int Usable(double ssq, double v) {
  if (!(ssq <= 0.25 * FLT_MAX) || !(v >= 0x1p-58)) {
    return (!(ssq <= 4.0 * FLT_MAX) || !(v >= 0x1p-62)) ? 0 : -1;
  }
  return 1;
}

TEST_CASE("f32_layernorm and f32_rmsnorm variants are within their bounds of the reference") {
  const auto layernorms = Runnable(F32LayerNormVariants);
  const auto rmsnorms = Runnable(F32RmsNormVariants);
  std::mt19937 rng(17);
  double worst_ln = 0.0, worst_rms = 0.0;
  size_t calls = 0;
  for (size_t n : Lengths()) {
    for (RowKind kind : kRowKinds) {
      for (int shape = 0; shape < 3; ++shape) {
        // One tight row; three rows at padded strides; two rows in place, eps = 0.
        const NormCase c = shape == 0   ? NormCase{1, n, n, false, true, 1e-5f}
                           : shape == 1 ? NormCase{3, n + 3, n + 5, false, false, 1e-6f}
                                        : NormCase{2, n + 1, n + 1, true, true, 0.0f};
        CAPTURE(n);
        CAPTURE(static_cast<int>(kind));
        CAPTURE(shape);
        std::vector<float> x(c.rows * c.ldx, kCanary);  // [rows, ldx]
        for (size_t r = 0; r < c.rows; ++r) {
          FillRow(r == 1 ? RowKind::kNormal : kind, n, rng, x.data() + r * c.ldx);
        }
        std::vector<float> w(n), b(n);
        for (size_t i = 0; i < n; ++i) {
          w[i] = 0.5f + static_cast<float>(rng() % 1000) * 1e-3f;
          b[i] = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) * 1e-3f;
        }
        const float* bias = c.bias ? b.data() : nullptr;
        // y: [rows, ldy] of canaries, or x itself for in-place calls.
        auto run_ln = [&](F32LayerNormFn fn) {
          std::vector<float> y = c.in_place ? x : std::vector<float>(c.rows * c.ldy, kCanary);
          fn(c.rows, n, c.in_place ? y.data() : x.data(), c.ldx, w.data(), bias, c.eps, y.data(),
             c.ldy);
          return y;
        };
        auto run_rms = [&](F32RmsNormFn fn) {
          std::vector<float> y = c.in_place ? x : std::vector<float>(c.rows * c.ldy, kCanary);
          fn(c.rows, n, c.in_place ? y.data() : x.data(), c.ldx, w.data(), c.eps, y.data(), c.ldy);
          return y;
        };
        const std::vector<float> ln_ref = run_ln(f32_layernorm__ref);
        const std::vector<float> rms_ref = run_rms(f32_rmsnorm__ref);
        for (int which = 0; which < 2; ++which) {
          const std::vector<float>& want = which == 0 ? ln_ref : rms_ref;
          const size_t count = which == 0 ? layernorms.size() : rmsnorms.size();
          for (size_t v = 0; v < count; ++v) {
            const std::string& name = which == 0 ? layernorms[v].name : rmsnorms[v].name;
            const std::vector<float> y =
                which == 0 ? run_ln(layernorms[v].fn) : run_rms(rmsnorms[v].fn);
            ++calls;
            for (size_t r = 0; r < c.rows; ++r) {
              // The row's statistics in double, for the bounds.
              const float* xr = x.data() + r * c.ldx;
              double mean = 0.0, ssq_centered = 0.0, ssq = 0.0;
              for (size_t i = 0; i < n; ++i) mean += xr[i];
              mean /= static_cast<double>(n);
              for (size_t i = 0; i < n; ++i) {
                ssq_centered += (xr[i] - mean) * (xr[i] - mean);
                ssq += static_cast<double>(xr[i]) * xr[i];
              }
              const double var = ssq_centered / static_cast<double>(n);
              const double sd = std::sqrt(var + c.eps);
              const int usable = which == 0 ? Usable(ssq_centered, var + c.eps)
                                            : Usable(ssq, ssq / static_cast<double>(n) + c.eps);
              for (size_t i = 0; i < c.ldy; ++i) {
                const size_t at = r * c.ldy + i;
                if (i >= n) {  // padding: canaries, or x's own in place
                  REQUIRE(Bits(y[at]) == Bits(want[at]));
                  continue;
                }
                if (usable == 0) {
                  if (!SameFloat(y[at], want[at])) {
                    FAIL_CHECK(name << " row " << r << " [" << i << "] = " << y[at]
                                    << ", reference " << want[at] << " (a reference row)");
                    break;
                  }
                  continue;
                }
                if (usable < 0) continue;
                const double diff = std::fabs(static_cast<double>(y[at]) - want[at]);
                double unit, bound;
                if (which == 0) {
                  unit = std::fabs(w[i]) * (std::fabs(xr[i] - mean) + std::fabs(mean) + sd) / sd +
                         (bias != nullptr ? std::fabs(b[i]) : 0.0);
                  bound = 0x1p-20 * unit;
                } else {
                  unit = std::fabs(static_cast<double>(want[at]));
                  bound = 0x1p-21 * unit + 0x1p-100 * std::fabs(w[i]);
                }
                if (!(diff <= bound)) {
                  FAIL_CHECK(name << " row " << r << " [" << i << "] = " << y[at] << ", reference "
                                  << want[at] << ": |diff| " << diff << " > " << bound);
                  break;
                }
                double& worst = which == 0 ? worst_ln : worst_rms;
                if (unit > 0.0 && diff / unit > worst) worst = diff / unit;
              }
            }
          }
        }
      }
    }
  }
  MESSAGE(calls << " calls; worst layer norm error " << worst_ln
                << " (in the bound's units), worst RMS norm error " << worst_rms << " (relative)");
}

// ---------------------------------------------------------------------------
// qs8_softmax_tile.

struct TileOut {
  float p_scale = 0.0f, max = 0.0f, sum = 0.0f, correction = 1.0f;
  std::vector<float> work;
  std::vector<uint8_t> p;
};

TileOut RunTile(Qs8SoftmaxTileFn fn, const Qs8SoftmaxTileParams& params, float max, float sum) {
  TileOut out;
  out.max = max;
  out.sum = sum;
  out.work.assign(params.n + kMaxLanes, kCanary);
  out.p.assign(params.n + kMaxLanes, 0xA5);
  out.p_scale = fn(params, &out.max, &out.sum, &out.correction, out.work.data(), out.p.data());
  return out;
}

double RelErr(double got, double want) {
  if (got == want) return 0.0;
  return std::fabs(got - want) / std::fabs(want);
}

TEST_CASE("qs8_softmax_tile: exp through the kernel, against the truth") {
  // With qk = 0, unit scales and the logits as the bias, s_t is the bias
  // exactly; one logit of 0 makes the max 0, so work[t] = e_t = exp(x_t).
  const auto variants = Runnable(Qs8SoftmaxTileVariants);
  std::vector<float> xs;
  for (int i = 0; i <= 1040000; ++i) xs.push_back(-static_cast<float>(i) * 1e-4f);  // [-104, 0]
  for (float e : {-87.3365f, -87.34f, -100.0f, -103.97f, -103.98f, -104.0f, -104.5f, -150.0f,
                  -1e10f, -kInf, -FLT_MIN, -FLT_TRUE_MIN, -0.0f}) {
    xs.push_back(e);
  }
  const size_t tile = 1024;
  for (const auto& variant : variants) {
    double worst_ulp = 0.0, worst_tiny = 0.0;
    size_t failures = 0;
    for (size_t at = 0; at < xs.size(); at += tile - 1) {
      const size_t n = xs.size() - at < tile - 1 ? xs.size() - at + 1 : tile;
      std::vector<float> bias(n), ones(n, 1.0f);
      std::vector<int32_t> qk(n, 0);
      bias[0] = 0.0f;
      for (size_t t = 1; t < n; ++t) bias[t] = xs[at + t - 1];
      Qs8SoftmaxTileParams params;
      params.n = n;
      params.lo = 0;
      params.hi = n;
      params.qk = qk.data();
      params.q_scale = 1.0f;
      params.k_scales = ones.data();
      params.bias = bias.data();
      params.v_scales = ones.data();
      const TileOut out = RunTile(variant.fn, params, -kInf, 0.0f);
      REQUIRE(out.max == 0.0f);
      REQUIRE(out.correction == 0.0f);
      double sum = 0.0;
      for (size_t t = 0; t < n; ++t) {
        if (bias[t] == -kInf) {  // a hidden key: work is unspecified, p 0
          CHECK(out.p[t] == 0);
          continue;
        }
        const double want = std::exp(static_cast<double>(bias[t]));
        const double got = out.work[t];
        sum += want;
        if (want >= 0x1p-126) {
          const double ulp =
              std::fabs(got - want) / (0x1p-23 * std::pow(2.0, std::floor(std::log2(want))));
          if (ulp > worst_ulp) worst_ulp = ulp;
          if (!(ulp <= 2.0) && failures++ < 5) {
            FAIL_CHECK(variant.name << " exp(" << bias[t] << ") = " << got << ", " << ulp
                                    << " ulp");
          }
        } else {
          // Below the normal range: within a subnormal step, or flushed to 0 on AArch32.
          const double err = std::fabs(got - want);
          if (err > worst_tiny) worst_tiny = err;
          if (!(err < kTinyExp) && failures++ < 5) {
            FAIL_CHECK(variant.name << " exp(" << bias[t] << ") = " << got << ", want " << want);
          }
        }
      }
      CHECK(RelErr(out.sum, sum) <= 0x1p-21 + static_cast<double>(n) * 0x1p-24);
      CHECK(out.p_scale == 1.0f / 255.0f);  // w_max = e^0 = 1
    }
    CHECK(failures == 0);
    MESSAGE(variant.name << ": exp's worst error " << worst_ulp << " ulp, below 2^-126 "
                         << worst_tiny);
  }
}

TEST_CASE("qs8_softmax_tile variants match the reference within the header's bounds") {
  const auto variants = Runnable(Qs8SoftmaxTileVariants);
  std::mt19937 rng(19);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  size_t calls = 0, flips = 0, values = 0;
  for (size_t n : Lengths()) {
    if (n == 0) continue;
    for (int trial = 0; trial < 12; ++trial) {
      CAPTURE(n);
      CAPTURE(trial);
      std::vector<int32_t> qk(n);
      std::vector<float> ks(n), vs(n), bias(n);
      std::vector<uint8_t> mask(n);
      for (size_t t = 0; t < n; ++t) {
        qk[t] = static_cast<int32_t>(normal(rng) * 20000.0f);
        ks[t] = 0.5f + 0.01f * static_cast<float>(rng() % 100);
        vs[t] = (trial % 4 == 3 && t % 7 == 0) ? 0.0f
                                               : 0.01f + 0.001f * static_cast<float>(rng() % 100);
        bias[t] = normal(rng);
        mask[t] = (rng() % 5) != 0;
      }
      if (trial == 5) {
        for (size_t t = 0; t < n; t += 3) bias[t] = -kInf;  // -inf logits are not visible
      }
      Qs8SoftmaxTileParams params;
      params.n = n;
      params.lo = trial % 3 == 0 ? 0 : rng() % n;
      params.hi = trial % 3 == 0 ? n : params.lo + rng() % (n - params.lo + 1);
      params.key_mask = (trial & 1) ? mask.data() : nullptr;
      params.qk = qk.data();
      params.q_scale = 1e-4f * (1.0f + static_cast<float>(trial));
      params.k_scales = ks.data();
      params.bias = (trial % 4 >= 2) ? bias.data() : nullptr;
      params.v_scales = vs.data();
      // The running state before: none, a lower max, a higher max.
      const float maxes[] = {-kInf, -30.0f, 30.0f};
      const float sums[] = {0.0f, 2.5f, 7.0f};
      const float start_max = maxes[trial % 3], start_sum = sums[trial % 3];
      const TileOut want = RunTile(qs8_softmax_tile__ref, params, start_max, start_sum);
      for (const auto& variant : variants) {
        CAPTURE(variant.name);
        const TileOut got = RunTile(variant.fn, params, start_max, start_sum);
        ++calls;
        CHECK(Bits(got.max) == Bits(want.max));
        CHECK(std::fabs(static_cast<double>(got.correction) - want.correction) <=
              0x1p-21 * want.correction + kTinyExp);
        CHECK(RelErr(got.sum, want.sum) <= 0x1p-21 + static_cast<double>(n) * 0x1p-24);
        CHECK(RelErr(got.p_scale, want.p_scale) <= 0x1p-21);
        for (size_t t = 0; t < n + kMaxLanes; ++t) {
          if (t >= n) {
            REQUIRE(got.p[t] == 0xA5);  // nothing past n
            REQUIRE(Bits(got.work[t]) == Bits(kCanary));
            continue;
          }
          const int dp = static_cast<int>(got.p[t]) - static_cast<int>(want.p[t]);
          REQUIRE(dp >= -1);
          REQUIRE(dp <= 1);
          flips += dp != 0;
          ++values;
          const bool visible = t >= params.lo && t < params.hi &&
                               (params.key_mask == nullptr || params.key_mask[t] != 0) &&
                               !(params.bias != nullptr && params.bias[t] == -kInf);
          if (!visible) {
            REQUIRE(got.p[t] == 0);
          } else if (want.p_scale > 0.0f) {
            // w_t: relative where e_t is normal; below, e_t's error times v_scale and
            // the product's rounding (a subnormal step each, or AArch32's flush).
            const double w_diff = std::fabs(static_cast<double>(got.work[t]) - want.work[t]);
            REQUIRE(w_diff <= 0x1p-21 * std::fabs(want.work[t]) + kTinyExp * (vs[t] + 1.0));
          }
        }
      }
    }
  }
  MESSAGE(calls << " calls, " << flips << " of " << values
                << " P values one level from the reference's");
}

TEST_CASE("qs8_softmax_tile: no visible key leaves the running state alone") {
  const auto variants = Runnable(Qs8SoftmaxTileVariants);
  const size_t n = 37;
  std::vector<int32_t> qk(n, 100);
  std::vector<float> ones(n, 1.0f), bias(n, -kInf);
  std::vector<uint8_t> none(n, 0);
  for (const auto& variant : variants) {
    CAPTURE(variant.name);
    Qs8SoftmaxTileParams params;
    params.n = n;
    params.qk = qk.data();
    params.q_scale = 1.0f;
    params.k_scales = ones.data();
    params.v_scales = ones.data();
    for (int how = 0; how < 3; ++how) {
      params.lo = how == 0 ? 20 : 0;  // an empty range, every key masked, every logit -inf
      params.hi = how == 0 ? 10 : n;
      params.key_mask = how == 1 ? none.data() : nullptr;
      params.bias = how == 2 ? bias.data() : nullptr;
      const TileOut out = RunTile(variant.fn, params, 1.5f, 3.0f);
      CHECK(out.p_scale == 0.0f);
      CHECK(out.max == 1.5f);
      CHECK(out.sum == 3.0f);
      CHECK(out.correction == 1.0f);
      for (size_t t = 0; t < n; ++t) CHECK(out.p[t] == 0);
    }
  }
}

// ---------------------------------------------------------------------------
// RoPE.

TEST_CASE("f32_rope variants equal the reference") {
  const auto variants = Runnable(F32RopeVariants);
  std::mt19937 rng(23);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  struct RopeCase {
    size_t heads, head_dim, rotary_dim, len, pos0, pad;
  };
  const RopeCase cases[] = {
      {1, 2, 2, 1, 0, 0},        {2, 8, 8, 3, 5, 1},         {4, 64, 64, 5, 100, 0},
      {3, 128, 128, 2, 4000, 7}, {2, 80, 40, 4, 17, 3},      {1, 256, 256, 2, 70000, 0},
      {2, 130, 130, 2, 9, 0},    {2, 64, 34, 3, 1000000, 2}, {1, 46, 46, 1, 16777000, 0},
      {8, 16, 10, 6, 0, 5},      {1, 258, 258, 1, 3, 1}};
  double worst = 0.0;
  for (const RopeCase& c : cases) {
    CAPTURE(c.head_dim);
    CAPTURE(c.rotary_dim);
    CAPTURE(c.pos0);
    RopeFreqParams fp;
    fp.rotary_dim = c.rotary_dim;
    std::vector<float> inv_freq(c.rotary_dim / 2);
    rope_inv_freq(fp, inv_freq.data());
    F32RopeParams p;
    p.len = c.len;
    p.heads = c.heads;
    p.head_dim = c.head_dim;
    p.rotary_dim = c.rotary_dim;
    p.pos0 = c.pos0;
    p.inv_freq = inv_freq.data();
    const size_t ldx = c.heads * c.head_dim + c.pad;
    std::vector<float> x(c.len * ldx);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = (i % ldx) < c.heads * c.head_dim ? normal(rng) : kCanary;
    std::vector<float> want = x;
    f32_rope__ref(p, want.data(), ldx);
    const size_t half = c.rotary_dim / 2;
    for (const auto& variant : variants) {
      CAPTURE(variant.name);
      std::vector<float> got = x;
      variant.fn(p, got.data(), ldx);
      for (size_t r = 0; r < c.len; ++r) {
        for (size_t h = 0; h < c.heads; ++h) {
          const size_t base = r * ldx + h * c.head_dim;
          for (size_t d = 0; d < c.head_dim; ++d) {
            const size_t at = base + d;
            if (d >= c.rotary_dim) {
              REQUIRE(Bits(got[at]) == Bits(x[at]));  // not rotated
              continue;
            }
            const size_t i = d < half ? d : d - half;
            const double scale = std::fabs(x[base + i]) + std::fabs(x[base + i + half]);
            const double diff = std::fabs(static_cast<double>(got[at]) - want[at]);
            // Bit-identical; AArch32 NEON flushes subnormal products (position.h).
#if defined(__arm__)
            REQUIRE(diff <= 0x1p-125);
#else
            REQUIRE(Bits(got[at]) == Bits(want[at]));
#endif
            if (scale > 0.0 && diff / scale > worst) worst = diff / scale;
          }
        }
        for (size_t at = r * ldx + c.heads * c.head_dim; at < (r + 1) * ldx; ++at) {
          REQUIRE(Bits(got[at]) == Bits(kCanary));
        }
      }
    }
  }
  MESSAGE("worst RoPE difference " << worst << " (|x1| + |x2|)");
}

TEST_CASE("f32_rope variants equal the reference with a LongRope attention_factor") {
  const auto variants = Runnable(F32RopeVariants);
  std::mt19937 rng(29);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  const float shorts[3] = {1.0f, 1.7f, 9.5f};
  RopeFreqParams fp;
  fp.rotary_dim = 6;
  fp.scaling = RopeScalingKind::kLongRope;
  fp.ext_factors = shorts;
  float inv_freq[3];
  rope_inv_freq(fp, inv_freq);
  F32RopeParams p;
  p.len = 5;
  p.heads = 3;
  p.head_dim = 12;  // half of each head passes through
  p.rotary_dim = 6;
  p.pos0 = 130;
  p.inv_freq = inv_freq;
  p.attention_factor = 1.1832159f;
  std::vector<float> x(p.len * p.heads * p.head_dim);
  for (float& v : x) v = normal(rng);
  std::vector<float> want = x;
  f32_rope__ref(p, want.data(), p.heads * p.head_dim);
  for (const auto& variant : variants) {
    CAPTURE(variant.name);
    std::vector<float> got = x;
    variant.fn(p, got.data(), p.heads * p.head_dim);
    for (size_t i = 0; i < x.size(); ++i) {
#if defined(__arm__)
      REQUIRE(std::fabs(static_cast<double>(got[i]) - want[i]) <= 0x1p-125);
#else
      REQUIRE(Bits(got[i]) == Bits(want[i]));
#endif
    }
  }
}

}  // namespace
}  // namespace octet
