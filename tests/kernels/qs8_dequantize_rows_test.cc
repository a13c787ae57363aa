// Every qs8_dequantize_rows variant compiled into this build against the
// reference, bit for bit (outputs compared as bits, padding included): lengths
// 1..300 and 4096, padded strides, with and without a bias, and the values
// where rounding, flushing or fusing would show: int32 extremes and values
// past 2^24, zero, subnormal, huge and negative scales, subnormal, signed-zero
// and cancelling biases (zero and subnormal results). Which variants run: see
// runnable_variants.h.
//
// Buffers are sized exactly ((rows - 1) * stride + cols), so with ASan any read
// or write past a row's end is an error; padding holds canaries that must survive.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "core/quant.h"
#include "kernels/kernel_table.h"
#include "kernels/qs8_dequantize_rows.h"
#include "runnable_variants.h"

namespace octet {
namespace {

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b;
}

float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof(f));
  return f;
}

size_t Extent(size_t rows, size_t cols, size_t ld) { return (rows - 1) * ld + cols; }

// 1..300, then a long row.
std::vector<size_t> SweepLengths() {
  std::vector<size_t> lengths;
  for (size_t n = 1; n <= 300; ++n) lengths.push_back(n);
  lengths.push_back(4096);
  return lengths;
}

std::string Names(const std::vector<std::string>& names) {
  std::string all;
  for (const std::string& name : names) all += " " + name;
  return all;
}

constexpr uint32_t kOutCanary = 0x7FBADBAD;

std::vector<KernelVariant<Qs8DequantizeRowsFn>> DequantizeVariants() {
  size_t count = 0;
  const KernelVariant<Qs8DequantizeRowsFn>* variants = Qs8DequantizeRowsVariants(&count);
  return test::RunnableVariants(variants, count);
}

struct DequantizeCase {
  size_t rows, cols, lda, ldo;
  std::vector<int32_t> acc;                         // [rows, lda]
  std::vector<float> row_scales, col_scales, bias;  // bias empty: none
};

std::vector<uint32_t> RunDequantize(Qs8DequantizeRowsFn fn, const DequantizeCase& t) {
  std::vector<float> out(Extent(t.rows, t.cols, t.ldo), FromBits(kOutCanary));  // [rows, ldo]
  fn(t.rows, t.cols, t.acc.data(), t.lda, t.row_scales.data(), t.col_scales.data(),
     t.bias.empty() ? nullptr : t.bias.data(), out.data(), t.ldo);
  std::vector<uint32_t> bits;
  for (float f : out) bits.push_back(Bits(f));
  return bits;
}

bool CheckDequantize(const std::vector<KernelVariant<Qs8DequantizeRowsFn>>& variants,
                     const DequantizeCase& t) {
  const std::vector<uint32_t> expected = RunDequantize(qs8_dequantize_rows__ref, t);
  for (const KernelVariant<Qs8DequantizeRowsFn>& variant : variants) {
    const std::vector<uint32_t> got = RunDequantize(variant.fn, t);
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] != expected[i]) {
        const size_t r = i / t.ldo, c = i % t.ldo;
        FAIL_CHECK(std::string(variant.name)
                   << " rows=" << t.rows << " cols=" << t.cols << " bias=" << !t.bias.empty()
                   << ": out[" << r << ", " << c << "] = " << FromBits(got[i]) << " (bits "
                   << got[i] << "), reference " << FromBits(expected[i]) << " (bits " << expected[i]
                   << ")" << std::string(c >= t.cols ? " (padding)" : ""));
        return false;
      }
    }
  }
  return true;
}

// The kinds of values the dequantize sweep draws from.
enum class ScaleKind { kTypical, kTiny, kMixed };

int32_t RandomAcc(std::mt19937& rng) {
  switch (rng() % 8) {
    case 0:
      return std::numeric_limits<int32_t>::min();
    case 1:
      return std::numeric_limits<int32_t>::max();
    case 2:
      return 0;
    case 3:  // odd values past 2^24: the conversion rounds, ties included
      return static_cast<int32_t>((1u << 24) + (rng() % 64)) * ((rng() & 1) ? 1 : -1);
    case 4:
      return static_cast<int32_t>(rng() % 3) - 1;
    default:
      return static_cast<int32_t>(rng());
  }
}

float RandomScale(ScaleKind kind, std::mt19937& rng) {
  std::uniform_real_distribution<float> unit(0.5f, 1.0f);
  switch (kind) {
    case ScaleKind::kTypical:
      return std::ldexp(unit(rng), -static_cast<int>(rng() % 20));
    case ScaleKind::kTiny:  // products near and below FLT_MIN, subnormal scales
      return std::ldexp(unit(rng), -static_cast<int>(60 + rng() % 90));
    case ScaleKind::kMixed:
    default:
      switch (rng() % 6) {
        case 0:
          return 0.0f;
        case 1:
          return FromBits((rng() & 0x007FFFFF) | 1);  // subnormal
        case 2:
          return std::ldexp(unit(rng), 100);  // huge: products overflow to inf
        case 3:
          return -std::ldexp(unit(rng), -10);
        default:
          return std::ldexp(unit(rng), -static_cast<int>(rng() % 140));
      }
  }
}

// A bias: typical, zeros, subnormals, and values that cancel out[r, c] of row 0
// to a subnormal or zero result.
float RandomBias(std::mt19937& rng, float product) {
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  const bool can_cancel = std::isfinite(product) && product != 0.0f;
  switch (rng() % 7) {
    case 0:
      return 0.0f;
    case 1:
      return -0.0f;
    case 2:
      return FromBits(rng() & 0x807FFFFF);  // subnormal
    case 3:
      return can_cancel ? -product : unit(rng);  // exact cancellation
    case 4:  // a few ulps from cancelling: subnormal or tiny results
      return can_cancel ? FromBits(Bits(-product) + (rng() % 5) - 2) : unit(rng);
    default:
      return unit(rng);
  }
}

TEST_CASE("qs8_dequantize_rows__ref rounds the product before adding the bias") {
  // 3 * 0.33333334f = 1.0000000298..: rounded, 1; minus 1, exactly 0. A fused
  // multiply-add would give 2.98e-8.
  const int32_t acc = 3;
  const float row_scale = 1.0f;
  const float col_scale = 1.0f / 3.0f;
  const float bias = -1.0f;
  volatile float product = static_cast<float>(acc) * (row_scale * col_scale);
  const float unfused = product + bias;
  REQUIRE(unfused == 0.0f);
  const std::vector<KernelVariant<Qs8DequantizeRowsFn>> variants = DequantizeVariants();
  for (const KernelVariant<Qs8DequantizeRowsFn>& variant : variants) {
    // 9 columns: a whole vector of 8 and a tail (16 and 4 as well).
    const size_t cols = 17;
    std::vector<int32_t> a(cols, acc);
    std::vector<float> col_scales(cols, col_scale), biases(cols, bias), out(cols, 1.0f);
    variant.fn(1, cols, a.data(), cols, &row_scale, col_scales.data(), biases.data(), out.data(),
               cols);
    for (size_t c = 0; c < cols; ++c) {
      INFO(std::string(variant.name) << " column " << c);
      CHECK(Bits(out[c]) == Bits(unfused));
    }
  }
}

TEST_CASE("qs8_dequantize_rows variants match the reference bit for bit") {
  const std::vector<KernelVariant<Qs8DequantizeRowsFn>> variants = DequantizeVariants();
  std::mt19937 rng(20240614);
  const ScaleKind kinds[] = {ScaleKind::kTypical, ScaleKind::kTiny, ScaleKind::kMixed};
  size_t checks = 0;
  for (size_t cols : SweepLengths()) {
    CAPTURE(cols);
    for (ScaleKind kind : kinds) {
      for (bool with_bias : {false, true}) {
        for (size_t rows : {size_t{1}, size_t{3}}) {
          DequantizeCase t;
          t.rows = rows;
          t.cols = cols;
          t.lda = rows == 1 ? cols : cols + 7;
          t.ldo = rows == 1 ? cols : cols + 2;
          t.acc.resize(Extent(rows, cols, t.lda));
          for (int32_t& v : t.acc) v = RandomAcc(rng);
          for (size_t r = 0; r < rows; ++r) t.row_scales.push_back(RandomScale(kind, rng));
          for (size_t c = 0; c < cols; ++c) t.col_scales.push_back(RandomScale(kind, rng));
          if (with_bias) {
            for (size_t c = 0; c < cols; ++c) {
              const float product = DequantizeAcc(t.acc[c], t.row_scales[0], t.col_scales[c]);
              t.bias.push_back(RandomBias(rng, product));
            }
          }
          CHECK(CheckDequantize(variants, t));
          ++checks;
        }
      }
    }
  }
  std::vector<std::string> names;
  for (const auto& variant : variants) names.push_back(variant.name);
  MESSAGE(checks << " calls checked with" << Names(names));
}

}  // namespace
}  // namespace octet
