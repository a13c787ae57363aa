// Every qu8s8_pv variant compiled into this build against qu8s8_pv__ref, with
// tolerance 0: random values over a sweep of shapes and strides, the extremes
// (A all 255 against B all -128 and all 127), and the K bound. Which variants
// run: see runnable_variants.h (OCTET_CPU_DISABLE, OCTET_TEST_FORCE_FEATURES).
//
// Buffers are sized exactly ((rows - 1) * stride + cols), so with ASan any read
// past the end of a row of A or of the last row of B, or write past C, is an
// error; the padding of C's rows holds a canary that must survive.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "kernels/kernel_table.h"
#include "kernels/qu8s8_pv.h"
#include "runnable_variants.h"

namespace octet {
namespace {

// The variants this machine can run (runnable_variants.h).
std::vector<KernelVariant<Qu8s8PvFn>> RunnableVariants() {
  size_t count = 0;
  const KernelVariant<Qu8s8PvFn>* variants = Qu8s8PvVariants(&count);
  return test::RunnableVariants(variants, count);
}

constexpr int32_t kCanary = 0x5A5A5A5A;  // C padding: must survive every kernel

struct Shape {
  size_t M, N, K;
  size_t lda, ldb, ldc;
};

// Elements in a [rows, cols] matrix with row stride ld, exactly.
size_t Extent(size_t rows, size_t cols, size_t ld) { return (rows - 1) * ld + cols; }

// Random bytes, 1/8 each 0x00, 0xFF, 0x80 and 0x7F: as uint8 (A) 0 and 255, as
// int8 (B) -128 and 127 are over-represented. Matrices are cut from it at random
// offsets, which is much faster than drawing every byte (the sweep checks ~10^5
// shapes, under qemu too); padding bytes are random as well, so a kernel that
// reads them gets a wrong result.
class BytePool {
 public:
  explicit BytePool(uint32_t seed) : rng_(seed), bytes_(size_t{1} << 20) {
    const uint8_t extremes[4] = {0x00, 0xFF, 0x80, 0x7F};
    for (uint8_t& b : bytes_) {
      const uint32_t r = rng_();
      b = (r & 7) < 4 ? extremes[r & 3] : static_cast<uint8_t>(r >> 8);
    }
  }

  // `count` elements of T (uint8_t or int8_t) from a random offset.
  template <typename T>
  std::vector<T> Take(size_t count) {
    REQUIRE(count <= bytes_.size());
    std::vector<T> v(count);
    const size_t offset = rng_() % (bytes_.size() - count + 1);
    std::memcpy(v.data(), bytes_.data() + offset, count);
    return v;
  }

 private:
  std::mt19937 rng_;
  std::vector<uint8_t> bytes_;
};

// Runs the variant on (A, B) and compares C, padding included, with `expected`
// (same layout). Returns false, after reporting the first difference, if they differ.
bool MatchesExpected(const KernelVariant<Qu8s8PvFn>& variant, const Shape& s,
                     const std::vector<uint8_t>& A, const std::vector<int8_t>& B,
                     const std::vector<int32_t>& expected) {
  std::vector<int32_t> C(expected.size(), kCanary);  // [M, ldc], last row N long
  variant.fn(s.M, s.N, s.K, A.data(), s.lda, B.data(), s.ldb, C.data(), s.ldc);
  for (size_t i = 0; i < C.size(); ++i) {
    if (C[i] != expected[i]) {
      FAIL_CHECK(std::string(variant.name)
                 << " M=" << s.M << " N=" << s.N << " K=" << s.K << " lda=" << s.lda
                 << " ldb=" << s.ldb << " ldc=" << s.ldc << ": C[" << i / s.ldc << ", " << i % s.ldc
                 << "] = " << C[i] << ", reference " << expected[i]
                 << std::string(i % s.ldc >= s.N ? " (padding)" : ""));
      return false;
    }
  }
  return true;
}

// The reference's C for one shape (canaries in the padding).
std::vector<int32_t> Reference(const Shape& s, const std::vector<uint8_t>& A,
                               const std::vector<int8_t>& B) {
  std::vector<int32_t> expected(Extent(s.M, s.N, s.ldc), kCanary);  // [M, ldc]
  qu8s8_pv__ref(s.M, s.N, s.K, A.data(), s.lda, B.data(), s.ldb, expected.data(), s.ldc);
  return expected;
}

// Checks every variant on one shape with the given A and B.
void CheckShape(const std::vector<KernelVariant<Qu8s8PvFn>>& variants, const Shape& s,
                const std::vector<uint8_t>& A, const std::vector<int8_t>& B) {
  const std::vector<int32_t> expected = Reference(s, A, B);
  for (const KernelVariant<Qu8s8PvFn>& variant : variants) {
    CHECK(MatchesExpected(variant, s, A, B, expected));
  }
}

// Tight strides, then padded ones (odd, so rows start at every alignment).
std::vector<Shape> Layouts(size_t M, size_t N, size_t K) {
  return {{M, N, K, K, N, N}, {M, N, K, K + 5, N + 19, N + 3}};
}

const size_t kM[] = {1, 2, 3, 4, 5, 7, 8, 9};
const size_t kN[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 80, 96, 128, 129};

// 1..300, then around and past the drivers' blocks of 256 values of k.
std::vector<size_t> SweepK() {
  std::vector<size_t> ks;
  for (size_t k = 1; k <= 300; ++k) ks.push_back(k);
  for (size_t k : {511, 512, 513, 1000}) ks.push_back(k);
  return ks;
}

std::string Names(const std::vector<KernelVariant<Qu8s8PvFn>>& variants) {
  std::string names;
  for (const KernelVariant<Qu8s8PvFn>& variant : variants) names += std::string(" ") + variant.name;
  return names;
}

TEST_CASE("qu8s8_pv variants match the reference over the shape sweep") {
  const std::vector<KernelVariant<Qu8s8PvFn>> variants = RunnableVariants();
  BytePool pool(20240612);
  size_t shapes = 0;
  for (size_t M : kM) {
    for (size_t N : kN) {
      for (size_t K : SweepK()) {
        for (const Shape& s : Layouts(M, N, K)) {
          const std::vector<uint8_t> A = pool.Take<uint8_t>(Extent(M, K, s.lda));  // [M, lda]
          const std::vector<int8_t> B = pool.Take<int8_t>(Extent(K, N, s.ldb));    // [K, ldb]
          CheckShape(variants, s, A, B);
          ++shapes;
        }
      }
    }
  }
  MESSAGE(shapes << " shapes checked with" << Names(variants));
}

// A all 255 against B all `b`: every sum is 255 * b * K.
void CheckExtremes(const std::vector<KernelVariant<Qu8s8PvFn>>& variants, const Shape& s,
                   int8_t b) {
  const std::vector<uint8_t> A(Extent(s.M, s.K, s.lda), 255);  // [M, lda]
  const std::vector<int8_t> B(Extent(s.K, s.N, s.ldb), b);     // [K, ldb]
  const std::vector<int32_t> expected = Reference(s, A, B);
  CHECK(expected[0] == 255 * b * static_cast<int32_t>(s.K));
  for (const KernelVariant<Qu8s8PvFn>& variant : variants) {
    CHECK(MatchesExpected(variant, s, A, B, expected));
  }
}

TEST_CASE("qu8s8_pv variants match the reference at the extremes") {
  const std::vector<KernelVariant<Qu8s8PvFn>> variants = RunnableVariants();
  const size_t kK[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 63, 64, 65, 255, 256, 257, 1000};
  size_t shapes = 0;
  for (size_t M : kM) {
    for (size_t N : kN) {
      for (size_t K : kK) {
        for (const Shape& s : Layouts(M, N, K)) {
          CheckExtremes(variants, s, -128);
          CheckExtremes(variants, s, 127);
          ++shapes;
        }
      }
    }
  }
  MESSAGE(shapes << " shapes checked twice with" << Names(variants));
}

TEST_CASE("qu8s8_pv variants are exact at the K bound") {
  const std::vector<KernelVariant<Qu8s8PvFn>> variants = RunnableVariants();
  constexpr size_t K = kQu8s8PvMaxK;
  // The usual shape (one query row, head_dim 64), a full 4-row tile of the
  // widest head_dim, and row and column edges with odd strides.
  const Shape shapes[] = {
      {1, 64, K, K, 64, 64}, {4, 128, K, K, 128, 128}, {5, 65, K, K + 3, 67, 70}};
  std::mt19937 rng(65536);
  for (const Shape& s : shapes) {
    CAPTURE(s.M);
    CAPTURE(s.N);
    CheckExtremes(variants, s, -128);  // every sum is -2139095040
    CheckExtremes(variants, s, 127);
    std::vector<uint8_t> A(Extent(s.M, K, s.lda));  // [M, lda]
    std::vector<int8_t> B(Extent(K, s.N, s.ldb));   // [K, ldb]
    for (uint8_t& v : A) v = static_cast<uint8_t>(rng());
    for (int8_t& v : B) v = static_cast<int8_t>(static_cast<uint8_t>(rng()));
    CheckShape(variants, s, A, B);
  }
}

}  // namespace
}  // namespace octet
