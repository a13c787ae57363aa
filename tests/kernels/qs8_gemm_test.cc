// Every qs8_gemm variant compiled into this build against qs8_gemm__ref, with
// tolerance 0, over a sweep of shapes and strides and at the K bound. Which
// variants run: see runnable_variants.h (OCTET_CPU_DISABLE,
// OCTET_TEST_FORCE_FEATURES).
//
// Buffers are sized exactly ((rows - 1) * stride + cols), so with ASan any read
// past the end of a row of A or B, or write past C, is an error.

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "kernels/kernel_table.h"
#include "kernels/qs8_gemm.h"
#include "runnable_variants.h"

namespace octet {
namespace {

// The variants this machine can run (runnable_variants.h).
std::vector<KernelVariant<Qs8GemmFn>> RunnableVariants() {
  size_t count = 0;
  const KernelVariant<Qs8GemmFn>* variants = Qs8GemmVariants(&count);
  return test::RunnableVariants(variants, count);
}

// Random int8 with the extremes -128 and 127 over-represented (1/8 each).
int8_t RandomInt8(std::mt19937& rng) {
  const uint32_t r = rng();
  switch (r & 7) {
    case 0:
      return -128;
    case 1:
      return 127;
    default:
      return static_cast<int8_t>(static_cast<uint8_t>(r >> 8));
  }
}

// A [rows, cols] int8 matrix with row stride ld, in a buffer of exactly
// (rows - 1) * ld + cols bytes. The padding bytes are random too: a kernel that
// reads them gets a wrong result.
std::vector<int8_t> RandomMatrix(size_t rows, size_t cols, size_t ld, std::mt19937& rng) {
  std::vector<int8_t> m((rows - 1) * ld + cols);
  for (int8_t& v : m) v = RandomInt8(rng);
  return m;
}

constexpr int32_t kCanary = 0x5A5A5A5A;  // C padding: must survive every kernel

struct Shape {
  size_t M, N, K;
  size_t lda, ldb, ldc;
};

// Runs fn on (A, B) and compares C, padding included, with `expected` (same
// layout). Returns false, after reporting the first difference, if they differ.
bool MatchesExpected(const KernelVariant<Qs8GemmFn>& variant, const Shape& s,
                     const std::vector<int8_t>& A, const std::vector<int8_t>& B,
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

// Checks every variant on one shape with the given A and B.
void CheckShape(const std::vector<KernelVariant<Qs8GemmFn>>& variants, const Shape& s,
                const std::vector<int8_t>& A, const std::vector<int8_t>& B) {
  std::vector<int32_t> expected((s.M - 1) * s.ldc + s.N, kCanary);  // [M, ldc]
  qs8_gemm__ref(s.M, s.N, s.K, A.data(), s.lda, B.data(), s.ldb, expected.data(), s.ldc);
  for (const KernelVariant<Qs8GemmFn>& variant : variants) {
    CHECK(MatchesExpected(variant, s, A, B, expected));
  }
}

TEST_CASE("qs8_gemm variants match the reference over the shape sweep") {
  const std::vector<KernelVariant<Qs8GemmFn>> variants = RunnableVariants();
  const size_t kMN[] = {1, 2, 3, 4, 5, 7, 8, 9, 17, 33};
  const size_t kK[] = {1,  2,  3,  4,  5,  7,   8,   9,   15,  16,  17,  31,
                       32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 300, 1000};
  std::mt19937 rng(20240611);
  size_t shapes = 0;
  for (size_t M : kMN) {
    for (size_t N : kMN) {
      for (size_t K : kK) {
        // Tight strides, then padded ones (row ends not 16-byte multiples).
        const Shape layouts[] = {{M, N, K, K, K, N}, {M, N, K, K + 5, K + 19, N + 3}};
        for (const Shape& s : layouts) {
          const std::vector<int8_t> A = RandomMatrix(s.M, s.K, s.lda, rng);  // [M, lda]
          const std::vector<int8_t> B = RandomMatrix(s.N, s.K, s.ldb, rng);  // [N, ldb]
          CheckShape(variants, s, A, B);
          ++shapes;
        }
      }
    }
  }
  std::string names;
  for (const KernelVariant<Qs8GemmFn>& variant : variants) names += std::string(" ") + variant.name;
  MESSAGE(shapes << " shapes checked with" << names);
}

TEST_CASE("qs8_gemm variants are exact at the K bound") {
  const std::vector<KernelVariant<Qs8GemmFn>> variants = RunnableVariants();
  constexpr size_t K = kQs8GemmMaxK;
  const Shape s = {5, 6, K, K, K + 1, 7};        // row and column edges, an odd ldb
  std::vector<int8_t> A((s.M - 1) * s.lda + K);  // [M, lda]
  std::vector<int8_t> B((s.N - 1) * s.ldb + K);  // [N, ldb]

  SUBCASE("all -128: every sum is 2^30") {
    for (int8_t& v : A) v = -128;
    for (int8_t& v : B) v = -128;
    std::vector<int32_t> C((s.M - 1) * s.ldc + s.N);  // [M, ldc]
    qs8_gemm__ref(s.M, s.N, K, A.data(), s.lda, B.data(), s.ldb, C.data(), s.ldc);
    CHECK(C[0] == (1 << 30));
    CheckShape(variants, s, A, B);
  }
  SUBCASE("-128 by 127: every sum is -128 * 127 * 65536") {
    for (int8_t& v : A) v = -128;
    for (int8_t& v : B) v = 127;
    std::vector<int32_t> C((s.M - 1) * s.ldc + s.N);  // [M, ldc]
    qs8_gemm__ref(s.M, s.N, K, A.data(), s.lda, B.data(), s.ldb, C.data(), s.ldc);
    CHECK(C[0] == -128 * 127 * 65536);
    CheckShape(variants, s, A, B);
  }
  SUBCASE("random") {
    std::mt19937 rng(65536);
    for (int8_t& v : A) v = RandomInt8(rng);
    for (int8_t& v : B) v = RandomInt8(rng);
    CheckShape(variants, s, A, B);
  }
}

}  // namespace
}  // namespace octet
