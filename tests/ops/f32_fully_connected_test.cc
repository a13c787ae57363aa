// ops/f32_fully_connected (XNNPACK's f32 fully-connected operator in column
// pieces) against f32_gemm__ref plus the bias, and against itself:
//   - accuracy: every value within the worst-case rounding bound of two fp32
//     dot products of length k plus the bias, whatever their summation order or
//     fused multiply-adds: |y - ref| <= 2 * gamma_(k+1) * (sum_i |in_i * w_i| +
//     |bias|), gamma_j = j * 2^-24 / (1 - j * 2^-24). A wrong column, row,
//     stride or bias is off by far more. The largest error seen is reported by
//     a MESSAGE, as a fraction of the bound and of sum |in * w| + |bias|;
//   - exactness: the pieces for 1, 2, 3 and 4 threads (different column
//     splits) give the same bits, and so does each row computed alone (XNNPACK's
//     1-row kernel) against the same row in a block of rows (chunked prefill
//     and decode steps rely on it);
//   - pieces run at once on a ThreadPool (different pieces, different threads)
//     give the same bits as in order.
// Shapes: odd n and k, n below and above one piece, k of the models' widths;
// rows 1..130 (fewer counts for the large shapes).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "kernels/f32_gemm.h"
#include "ops/f32_fully_connected.h"
#include "platform/thread_pool.h"

namespace octet {
namespace {

struct Shape {
  size_t n, k;
};

// n: tiny, odd, one piece, several pieces with a remainder; k: odd and the
// widths of the models' layers.
constexpr Shape kShapes[] = {{1, 1},    {5, 3},     {37, 13},  {16, 64},   {130, 77},
                             {257, 129}, {768, 768}, {200, 3072}, {1001, 33}};
constexpr size_t kRows[] = {1, 2, 3, 6, 7, 8, 15, 64, 127, 128, 130};

// The row counts a shape is tried with: all of kRows for small ones, a few
// for the large (the checks cost rows * n * k; qemu runs the ARM builds' tests).
std::vector<size_t> RowCounts(const Shape& s) {
  if (s.n * s.k <= 64 * 1024) return std::vector<size_t>(std::begin(kRows), std::end(kRows));
  return {1, 7, 130};
}

std::vector<float> Random(size_t count, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(count);
  for (float& x : v) x = normal(rng);
  return v;
}

// out[rows, n] through every piece of fc, in order, on this thread.
std::vector<float> RunAll(const F32FullyConnected& fc, size_t rows, const float* in) {
  std::vector<float> out(rows * fc.n(), std::nanf(""));  // [rows, n], exactly
  for (size_t p = 0; p < fc.pieces(); ++p) fc.RunPiece(p, rows, in, out.data());
  return out;
}

bool Available() {
  if (const char* why = F32FullyConnectedUnavailable()) {
    MESSAGE("f32_fully_connected unavailable here: " << why);
    return false;
  }
  return true;
}

TEST_CASE("f32_fully_connected is available in builds with XNNPACK") {
#if defined(OCTET_WITH_XNNPACK)
  CHECK(F32FullyConnectedUnavailable() == nullptr);
#else
  CHECK(F32FullyConnectedUnavailable() != nullptr);
  F32FullyConnectedSet set;
  REQUIRE(set.Reserve(1).ok());
  const float w[1] = {1.0f};
  CHECK(set.Add(1, 1, w, nullptr, 1).status().code() == StatusCode::kUnsupported);
#endif
}

TEST_CASE("piece columns: multiples of 16 within the byte budget, two pieces per thread") {
  for (size_t n : {1u, 15u, 16u, 17u, 100u, 768u, 2048u, 3072u, 32000u}) {
    for (size_t k : {1u, 64u, 768u, 3072u, 100000u}) {
      for (size_t threads : {1u, 2u, 3u, 4u, 16u}) {
        CAPTURE(n);
        CAPTURE(k);
        CAPTURE(threads);
        const size_t cols = F32FullyConnectedPieceColumns(n, k, threads);
        REQUIRE(cols >= 1);
        CHECK(cols <= n);
        if (cols < n) {
          CHECK(cols % 16 == 0);
          CHECK((cols == 16 || cols * k * sizeof(float) <= kF32FullyConnectedPieceBytes));
        }
        const size_t pieces = (n + cols - 1) / cols;
        if (threads > 1 && n >= 2 * threads * 16) CHECK(pieces >= 2 * threads);
      }
    }
  }
}

TEST_CASE("f32_fully_connected matches f32_gemm__ref + bias within the rounding bound") {
  if (!Available()) return;
  double worst = 0;     // largest |y - ref| / bound
  double worst_rel = 0;  // largest |y - ref| / (sum |in * w| + |bias|)
  uint32_t seed = 1;
  for (const Shape& s : kShapes) {
    for (bool with_bias : {true, false}) {
      CAPTURE(s.n);
      CAPTURE(s.k);
      CAPTURE(with_bias);
      const std::vector<float> w = Random(s.n * s.k, seed++, 0.05f);  // [n, k]
      const std::vector<float> bias = Random(s.n, seed++, 1.0f);      // [n]
      const std::vector<float> in = Random(130 * s.k, seed++, 1.0f);  // [130, k]
      F32FullyConnectedSet set;
      REQUIRE(set.Reserve(1).ok());
      Result<const F32FullyConnected*> fc =
          set.Add(s.n, s.k, w.data(), with_bias ? bias.data() : nullptr, 1);
      REQUIRE_MESSAGE(fc.ok(), std::string(fc.status().message()));
      CHECK(set.operators() == fc.value()->pieces());
      CHECK(set.packed_bytes() >= s.n * (s.k + 1) * sizeof(float));
      const double u = std::ldexp(1.0, -24);
      const double gamma = (s.k + 1) * u / (1 - (s.k + 1) * u);
      for (size_t rows : RowCounts(s)) {
        CAPTURE(rows);
        const std::vector<float> in_rows(in.begin(), in.begin() + rows * s.k);  // exactly [rows, k]
        const std::vector<float> got = RunAll(*fc.value(), rows, in_rows.data());
        std::vector<float> ref(rows * s.n);  // [rows, n]
        f32_gemm__ref(rows, s.n, s.k, in_rows.data(), s.k, w.data(), s.k, ref.data(), s.n);
        size_t bad = 0;
        for (size_t r = 0; r < rows; ++r) {
          for (size_t c = 0; c < s.n; ++c) {
            double magnitude = 0;
            for (size_t i = 0; i < s.k; ++i) {
              magnitude += std::fabs(static_cast<double>(in_rows[r * s.k + i]) * w[c * s.k + i]);
            }
            float expected = ref[r * s.n + c];
            if (with_bias) {
              expected += bias[c];
              magnitude += std::fabs(bias[c]);
            }
            const double bound = 2 * gamma * magnitude + 1e-30;
            const double error = std::fabs(static_cast<double>(got[r * s.n + c]) - expected);
            if (error / bound > worst) worst = error / bound;
            if (error / (magnitude + 1e-30) > worst_rel) worst_rel = error / (magnitude + 1e-30);
            if (!(error <= bound)) ++bad;
          }
        }
        CHECK(bad == 0);
      }
    }
  }
  MESSAGE("largest error against f32_gemm__ref: " << worst << " of the rounding bound, "
          << worst_rel << " x (sum |in * w| + |bias|)");
}

TEST_CASE("f32_fully_connected: the same bits for every thread count's pieces and row count") {
  if (!Available()) return;
  uint32_t seed = 100;
  for (const Shape& s : kShapes) {
    CAPTURE(s.n);
    CAPTURE(s.k);
    const std::vector<float> w = Random(s.n * s.k, seed++, 0.05f);
    const std::vector<float> bias = Random(s.n, seed++, 1.0f);
    const std::vector<float> in = Random(130 * s.k, seed++, 1.0f);
    F32FullyConnectedSet set;
    REQUIRE(set.Reserve(4).ok());
    const F32FullyConnected* by_threads[4] = {};
    for (size_t t = 0; t < 4; ++t) {
      Result<const F32FullyConnected*> fc = set.Add(s.n, s.k, w.data(), bias.data(), t + 1);
      REQUIRE_MESSAGE(fc.ok(), std::string(fc.status().message()));
      by_threads[t] = fc.value();
    }
    for (size_t rows : RowCounts(s)) {
      CAPTURE(rows);
      const std::vector<float> one = RunAll(*by_threads[0], rows, in.data());
      for (size_t t = 1; t < 4; ++t) {
        CAPTURE(t + 1);
        const std::vector<float> many = RunAll(*by_threads[t], rows, in.data());
        CHECK(std::memcmp(many.data(), one.data(), one.size() * sizeof(float)) == 0);
      }
      // Each row alone: XNNPACK's 1-row kernel, the same bits.
      size_t differ = 0;
      for (size_t r = 0; r < rows; ++r) {
        const std::vector<float> alone = RunAll(*by_threads[0], 1, in.data() + r * s.k);
        if (std::memcmp(alone.data(), one.data() + r * s.n, s.n * sizeof(float)) != 0) ++differ;
      }
      CHECK(differ == 0);
    }
  }
}

TEST_CASE("f32_fully_connected: inputs and outputs at wider row strides, the same bits") {
  if (!Available()) return;
  uint32_t seed = 300;
  for (const Shape& s : {Shape{37, 13}, Shape{257, 129}, Shape{1001, 33}}) {
    CAPTURE(s.n);
    CAPTURE(s.k);
    const size_t ldi = s.k + 5, ldo = s.n + 7, rows = 19;
    const std::vector<float> w = Random(s.n * s.k, seed++, 0.05f);
    const std::vector<float> bias = Random(s.n, seed++, 1.0f);
    const std::vector<float> in = Random(rows * s.k, seed++, 1.0f);
    std::vector<float> wide_in(rows * ldi, std::nanf(""));  // NaN between rows: must not be read
    for (size_t r = 0; r < rows; ++r) {
      std::memcpy(&wide_in[r * ldi], &in[r * s.k], s.k * sizeof(float));
    }
    F32FullyConnectedSet set;
    REQUIRE(set.Reserve(2).ok());
    Result<const F32FullyConnected*> plain = set.Add(s.n, s.k, w.data(), bias.data(), 2);
    Result<const F32FullyConnected*> wide =
        set.Add(s.n, s.k, w.data(), bias.data(), 2, ldi, ldo);
    REQUIRE(plain.ok());
    REQUIRE(wide.ok());
    CHECK(plain.value()->in_stride() == s.k);
    CHECK(plain.value()->out_stride() == s.n);
    CHECK(wide.value()->in_stride() == ldi);
    CHECK(wide.value()->out_stride() == ldo);
    const std::vector<float> expected = RunAll(*plain.value(), rows, in.data());
    std::vector<float> out(rows * ldo, -7.0f);
    for (size_t p = 0; p < wide.value()->pieces(); ++p) {
      wide.value()->RunPiece(p, rows, wide_in.data(), out.data());
    }
    size_t differ = 0, touched = 0;
    for (size_t r = 0; r < rows; ++r) {
      if (std::memcmp(&out[r * ldo], &expected[r * s.n], s.n * sizeof(float)) != 0) ++differ;
      for (size_t c = s.n; c < ldo; ++c) touched += out[r * ldo + c] != -7.0f ? 1 : 0;
    }
    CHECK(differ == 0);
    CHECK(touched == 0);  // the columns past n are the caller's
  }
  F32FullyConnectedSet set;
  REQUIRE(set.Reserve(1).ok());
  const std::vector<float> w(6, 1.0f);
  CHECK_FALSE(set.Add(3, 2, w.data(), nullptr, 1, /*in_stride=*/1, 0).ok());  // below k
}

TEST_CASE("f32_fully_connected: told each piece's rows once they are packed, all of them once") {
  if (!Available()) return;
  const size_t n = 1001, k = 129;
  const std::vector<float> w = Random(n * k, 17, 0.05f);
  struct Seen {
    const float* base;
    std::vector<std::pair<size_t, size_t>> spans;  // [first float, count)
  } seen{w.data(), {}};
  F32PackedRows done;
  done.fn = [](const void* ctx, const float* rows, size_t bytes) {
    Seen* s = static_cast<Seen*>(const_cast<void*>(ctx));
    s->spans.push_back({static_cast<size_t>(rows - s->base), bytes / sizeof(float)});
  };
  done.ctx = &seen;
  F32FullyConnectedSet set;
  REQUIRE(set.Reserve(1).ok());
  Result<const F32FullyConnected*> fc = set.Add(n, k, w.data(), nullptr, 3, 0, 0, done);
  REQUIRE(fc.ok());
  REQUIRE(seen.spans.size() == fc.value()->pieces());
  size_t next = 0;
  for (const auto& [first, count] : seen.spans) {
    CHECK(first == next);
    next = first + count;
  }
  CHECK(next == n * k);
}

TEST_CASE("f32_fully_connected: pieces run at once on a thread pool") {
  if (!Available()) return;
  const size_t n = 1001, k = 129, rows = 37;
  const std::vector<float> w = Random(n * k, 7, 0.05f);
  const std::vector<float> bias = Random(n, 8, 1.0f);
  const std::vector<float> in = Random(rows * k, 9, 1.0f);
  F32FullyConnectedSet set;
  REQUIRE(set.Reserve(1).ok());
  Result<const F32FullyConnected*> made = set.Add(n, k, w.data(), bias.data(), 3);
  REQUIRE(made.ok());
  const F32FullyConnected& fc = *made.value();
  REQUIRE(fc.pieces() >= 6);
  const std::vector<float> serial = RunAll(fc, rows, in.data());
  Result<ThreadPool*> created = ThreadPool::Create(3);
  REQUIRE(created.ok());
  ThreadPool* pool = created.value();
  for (int round = 0; round < 20; ++round) {
    std::vector<float> out(rows * n, std::nanf(""));
    auto task = [&](size_t p, size_t) { fc.RunPiece(p, rows, in.data(), out.data()); };
    pool->For(fc.pieces(), task);
    CHECK(std::memcmp(out.data(), serial.data(), out.size() * sizeof(float)) == 0);
  }
  delete pool;
}

}  // namespace
}  // namespace octet
