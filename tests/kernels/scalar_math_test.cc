// kernels/scalar_math.h against the C library in double: each function within a
// few double ulps over its documented range, so results rounded to float are the
// libm ones (checked on large samples, where a tie-breaking difference could show).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>

#include <doctest/doctest.h>

#include "kernels/scalar_math.h"

namespace octet {
namespace {

double RelativeError(double got, double expected) {
  if (got == expected) return 0.0;
  return std::fabs(got - expected) / std::fabs(expected);
}

TEST_CASE("ScalarExp and ScalarExp2 match exp and exp2") {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> wide(-700.0, 700.0);
  std::uniform_real_distribution<double> softmax(-120.0, 0.0);
  double worst = 0.0;
  size_t float_mismatches = 0;
  for (int n = 0; n < 200000; ++n) {
    const double x = n % 2 ? wide(rng) : softmax(rng);
    worst = std::max(worst, RelativeError(ScalarExp(x), std::exp(x)));
    worst = std::max(worst, RelativeError(ScalarExp2(x), std::exp2(x)));
    const float xf = static_cast<float>(x);
    if (static_cast<float>(ScalarExp(xf)) != static_cast<float>(std::exp(double(xf)))) {
      ++float_mismatches;
    }
  }
  MESSAGE("exp: worst relative error " << worst << ", float mismatches " << float_mismatches);
  CHECK(worst < 1e-15);
  CHECK(float_mismatches <= 2);
  CHECK(ScalarExp(0.0) == 1.0);
  CHECK(ScalarExp(-1000.0) == 0.0);
  CHECK(ScalarExp(-INFINITY) == 0.0);
  CHECK(std::isinf(ScalarExp(1000.0)));
  CHECK(std::isnan(ScalarExp(NAN)));
  for (int k = -1022; k <= 1023; ++k) CHECK(ScalarExp2(k) == std::ldexp(1.0, k));
}

TEST_CASE("ScalarLog and ScalarPow match log and pow") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> exponent(-1070.0, 1020.0);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  double worst = 0.0;
  for (int n = 0; n < 200000; ++n) {
    const double x = std::ldexp(mantissa(rng), static_cast<int>(exponent(rng)));
    worst = std::max(worst,
                     std::fabs(ScalarLog(x) - std::log(x)) / std::max(1.0, std::fabs(std::log(x))));
  }
  for (double x = 0.5; x < 2.0; x += 1e-5) {  // around 1, where log is small
    worst = std::max(worst, std::fabs(ScalarLog(x) - std::log(x)));
  }
  MESSAGE("log: worst error " << worst);
  CHECK(worst < 1e-15);
  CHECK(ScalarLog(1.0) == 0.0);
  CHECK(std::isinf(ScalarLog(0.0)));
  CHECK(std::isnan(ScalarLog(-1.0)));
  double worst_pow = 0.0;
  for (double a : {2.0, 10.0, 10000.0, 500000.0, 1e6}) {
    for (double b = -2.0; b <= 2.0; b += 1.0 / 64) {
      worst_pow = std::max(worst_pow, RelativeError(ScalarPow(a, b), std::pow(a, b)));
    }
  }
  MESSAGE("pow: worst relative error " << worst_pow);
  CHECK(worst_pow < 1e-14);
}

TEST_CASE("ScalarSinCos matches sin and cos up to 1.6e6") {
  std::mt19937 rng(7);
  double worst = 0.0;
  size_t float_mismatches = 0;
  for (double range : {4.0, 100.0, 1e4, 1.6e6}) {
    std::uniform_real_distribution<double> dist(-range, range);
    for (int n = 0; n < 100000; ++n) {
      const double x = static_cast<double>(static_cast<float>(dist(rng)));
      double s = 0.0, c = 0.0;
      ScalarSinCos(x, &s, &c);
      worst = std::max(worst, std::fabs(s - std::sin(x)));
      worst = std::max(worst, std::fabs(c - std::cos(x)));
      if (static_cast<float>(s) != static_cast<float>(std::sin(x)) ||
          static_cast<float>(c) != static_cast<float>(std::cos(x))) {
        ++float_mismatches;
      }
    }
  }
  MESSAGE("sin/cos: worst absolute error " << worst << ", float mismatches " << float_mismatches);
  CHECK(worst < 1e-15);
  CHECK(float_mismatches <= 2);
  double s = 1.0, c = 0.0;
  ScalarSinCos(0.0, &s, &c);
  CHECK(s == 0.0);
  CHECK(c == 1.0);
  ScalarSinCos(INFINITY, &s, &c);
  CHECK(std::isnan(s));
  CHECK(std::isnan(c));
}

}  // namespace
}  // namespace octet
