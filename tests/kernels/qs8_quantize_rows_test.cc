// Every qs8_quantize_rows variant compiled into this build against the
// reference, bit for bit (q and the scales' bits, padding included): lengths
// 1..300 and 4096, padded strides, and the values where rounding or flushing
// would show: ties (x.5), -0.0, all-zero rows, huge values, subnormal elements
// and rows, rows at the tiny-row bound. Which variants run: see
// runnable_variants.h.
//
// Buffers are sized exactly ((rows - 1) * stride + cols), so with ASan any read
// or write past a row's end is an error; padding holds canaries that must survive.

#include <cfloat>
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
#include "kernels/qs8_quantize_rows.h"
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

constexpr int8_t kQCanary = 0x5A;
constexpr uint32_t kScaleCanary = 0x7FBADBAD;  // a NaN no kernel produces

// The kinds of rows the quantize sweep draws from; value(rng, c, n) gives x[c].
enum class RowKind {
  kRandom,        // normal, spread over magnitudes
  kTiesScale1,    // max 127: scale 1, x = k + 0.5 are exact ties
  kTiesScale2,    // max 254: scale 2, odd x give ties at x / 2
  kSignedZeros,   // 0.0, -0.0 and a few values
  kAllZero,       // 0.0 and -0.0 only: scale 1
  kHuge,          // around FLT_MAX
  kSubnormalsIn,  // a normal max, the rest subnormal
  kAllSubnormal,  // every element subnormal and nonzero (the tiny-row path)
  kTinyNormal,    // max around 2^-110, below the tiny-row bound
  kAtTinyBound,   // max just at or above 2^-100, subnormals beside it
};

const RowKind kRowKinds[] = {RowKind::kRandom,       RowKind::kTiesScale1,   RowKind::kTiesScale2,
                             RowKind::kSignedZeros,  RowKind::kAllZero,      RowKind::kHuge,
                             RowKind::kSubnormalsIn, RowKind::kAllSubnormal, RowKind::kTinyNormal,
                             RowKind::kAtTinyBound};

// A row of kind `kind`, n values.
std::vector<float> MakeRow(RowKind kind, size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  std::vector<float> row(n);
  const size_t at = rng() % n;  // where the row's max goes, for the kinds that place one
  for (size_t c = 0; c < n; ++c) {
    float v = 0.0f;
    switch (kind) {
      case RowKind::kRandom:
        v = std::ldexp(unit(rng), exponent(rng));
        break;
      case RowKind::kTiesScale1:
        v = (c == at) ? 127.0f : static_cast<float>(static_cast<int>(rng() % 254) - 127) + 0.5f;
        break;
      case RowKind::kTiesScale2:
        v = (c == at) ? -254.0f : static_cast<float>(2 * static_cast<int>(rng() % 254) - 253);
        break;
      case RowKind::kSignedZeros:
        v = (rng() % 3 == 0) ? unit(rng) : ((rng() & 1) ? -0.0f : 0.0f);
        break;
      case RowKind::kAllZero:
        v = (rng() & 1) ? -0.0f : 0.0f;
        break;
      case RowKind::kHuge:
        v = (c == at) ? -FLT_MAX : unit(rng) * FLT_MAX;
        break;
      case RowKind::kSubnormalsIn:
        v = (c == at) ? unit(rng) : FromBits((rng() & 0x807FFFFF) | 1);
        break;
      case RowKind::kAllSubnormal:
        v = FromBits((rng() & 0x807FFFFF) | 1);
        break;
      case RowKind::kTinyNormal:
        v = std::ldexp(unit(rng), -110);
        if (v == 0.0f) v = 0x1p-120f;
        break;
      case RowKind::kAtTinyBound:
        v = (c == at)
                ? ((rng() & 1) ? kQs8QuantizeTinyMax : std::nextafter(kQs8QuantizeTinyMax, 1.0f))
                : FromBits(rng() & 0x807FFFFF);  // subnormal or zero
        break;
    }
    row[c] = v;
  }
  return row;
}

// Runs fn on x ([rows, ldx]) and returns q ([rows, ldq], canaries in the
// padding) and the scales.
struct Quantized {
  std::vector<int8_t> q;
  std::vector<uint32_t> scale_bits;
};

Quantized RunQuantize(Qs8QuantizeRowsFn fn, size_t rows, size_t cols, const std::vector<float>& x,
                      size_t ldx, size_t ldq) {
  Quantized out;
  out.q.assign(Extent(rows, cols, ldq), kQCanary);
  std::vector<float> scales(rows, FromBits(kScaleCanary));
  fn(rows, cols, x.data(), ldx, out.q.data(), ldq, scales.data());
  for (float s : scales) out.scale_bits.push_back(Bits(s));
  return out;
}

std::vector<KernelVariant<Qs8QuantizeRowsFn>> QuantizeVariants() {
  size_t count = 0;
  const KernelVariant<Qs8QuantizeRowsFn>* variants = Qs8QuantizeRowsVariants(&count);
  return test::RunnableVariants(variants, count);
}

// Checks every variant on x against the reference; false after the first difference.
bool CheckQuantize(const std::vector<KernelVariant<Qs8QuantizeRowsFn>>& variants, size_t rows,
                   size_t cols, const std::vector<float>& x, size_t ldx, size_t ldq) {
  const Quantized expected = RunQuantize(qs8_quantize_rows__ref, rows, cols, x, ldx, ldq);
  for (const KernelVariant<Qs8QuantizeRowsFn>& variant : variants) {
    const Quantized got = RunQuantize(variant.fn, rows, cols, x, ldx, ldq);
    for (size_t r = 0; r < rows; ++r) {
      if (got.scale_bits[r] != expected.scale_bits[r]) {
        FAIL_CHECK(std::string(variant.name)
                   << " rows=" << rows << " cols=" << cols << ": scale[" << r << "] bits "
                   << got.scale_bits[r] << ", reference " << expected.scale_bits[r]);
        return false;
      }
    }
    for (size_t i = 0; i < got.q.size(); ++i) {
      if (got.q[i] != expected.q[i]) {
        FAIL_CHECK(std::string(variant.name)
                   << " rows=" << rows << " cols=" << cols << " ldx=" << ldx << " ldq=" << ldq
                   << ": q[" << i / ldq << ", " << i % ldq << "] = " << int(got.q[i])
                   << ", reference " << int(expected.q[i]) << " (x = " << x[i / ldq * ldx + i % ldq]
                   << ")" << std::string(i % ldq >= cols ? " (padding)" : ""));
        return false;
      }
    }
  }
  return true;
}

TEST_CASE("qs8_quantize_rows__ref is QuantizeRowSymmetric and rounds ties to even") {
  // max 127: scale 1, so q = round_half_even(x).
  const std::vector<float> x = {127.0f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 126.5f, -0.0f};
  const int8_t expected[] = {127, 0, 2, 2, 0, -2, -2, 126, 0};
  std::vector<int8_t> q(x.size());
  float scale = 0.0f;
  qs8_quantize_rows__ref(1, x.size(), x.data(), x.size(), q.data(), x.size(), &scale);
  CHECK(scale == 1.0f);
  for (size_t i = 0; i < x.size(); ++i) CHECK(int(q[i]) == int(expected[i]));
  std::vector<int8_t> q2(x.size());
  CHECK(QuantizeRowSymmetric(x.data(), x.size(), q2.data()) == scale);
  CHECK(q2 == q);
}

TEST_CASE("qs8_quantize_rows variants match the reference bit for bit") {
  const std::vector<KernelVariant<Qs8QuantizeRowsFn>> variants = QuantizeVariants();
  std::mt19937 rng(20240613);
  size_t checks = 0;
  for (size_t cols : SweepLengths()) {
    CAPTURE(cols);
    for (RowKind kind : kRowKinds) {
      CAPTURE(static_cast<int>(kind));
      // One row with tight strides; three rows (of this kind, a random row and
      // an all-zero one) with odd padded strides.
      {
        const std::vector<float> x = MakeRow(kind, cols, rng);
        CHECK(CheckQuantize(variants, 1, cols, x, cols, cols));
      }
      const size_t ldx = cols + 3;
      const size_t ldq = cols + 5;
      std::vector<float> x(Extent(3, cols, ldx));  // [3, ldx]
      const RowKind kinds[3] = {kind, RowKind::kRandom, RowKind::kAllZero};
      for (size_t r = 0; r < 3; ++r) {
        const std::vector<float> row = MakeRow(kinds[r], cols, rng);
        std::copy(row.begin(), row.end(), x.begin() + r * ldx);
        if (r < 2) {
          for (size_t c = cols; c < ldx; ++c) x[r * ldx + c] = 1e30f;  // padding: must not count
        }
      }
      CHECK(CheckQuantize(variants, 3, cols, x, ldx, ldq));
      checks += 2;
    }
  }
  std::vector<std::string> names;
  for (const auto& variant : variants) names.push_back(variant.name);
  MESSAGE(checks << " calls checked with" << Names(names));
}

// Rows a malformed model can produce: an inf or a NaN anywhere gives zeros and
// a NaN scale; a subnormal row whose scale underflows counts as all-zero (scale
// 1). Found by the session fuzzer (tests/fuzz/corpus/session-nan-*).
TEST_CASE("qs8_quantize_rows: inf, NaN and underflowing rows are defined and bit-exact") {
  const auto variants = QuantizeVariants();
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float tiny = std::numeric_limits<float>::denorm_min();
  for (size_t cols : {1, 7, 8, 33, 64}) {
    for (float bad : {inf, -inf, nan, -nan}) {
      for (size_t at : {size_t{0}, cols / 2, cols - 1}) {
        std::vector<float> x(cols, 0.5f);
        x[at] = bad;
        CAPTURE(cols);
        CAPTURE(at);
        const Quantized q = RunQuantize(qs8_quantize_rows__ref, 1, cols, x, cols, cols);
        float scale;
        std::memcpy(&scale, &q.scale_bits[0], sizeof(scale));
        CHECK(scale != scale);
        for (size_t c = 0; c < cols; ++c) CHECK(q.q[c] == 0);
        CHECK(CheckQuantize(variants, 1, cols, x, cols, cols));
      }
    }
    std::vector<float> x(cols, tiny);
    x[0] = -3 * tiny;
    const Quantized q = RunQuantize(qs8_quantize_rows__ref, 1, cols, x, cols, cols);
    CHECK(q.scale_bits[0] == Bits(1.0f));
    for (size_t c = 0; c < cols; ++c) CHECK(q.q[c] == 0);
    CHECK(CheckQuantize(variants, 1, cols, x, cols, cols));
  }
}

}  // namespace
}  // namespace octet
