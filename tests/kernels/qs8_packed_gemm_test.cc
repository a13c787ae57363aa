// qs8_pack_weights__ref and every qs8_packed_gemm variant compiled into this
// build: the packed layout against its definition (kernels/qs8_packed_gemm.h),
// qs8_packed_gemm__ref against qs8_gemm__ref on the unpacked weights, and every
// variant against qs8_packed_gemm__ref with tolerance 0, over a sweep of shapes
// and strides, at the K bound, and with N split into ranges of packed tiles as
// threads split it. Which variants run: runnable_variants.h (a variant this CPU
// cannot run is reported with a SKIPPED message).
//
// Buffers are sized exactly (A: (M - 1) * lda + K bytes, the packed weights
// qs8_pack_weights_size bytes at the end of their vector), so with ASan any read
// past the end of A or of the packed weights, or any write past C, is an error.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "kernels/kernel_table.h"
#include "kernels/qs8_dequantize_rows.h"
#include "kernels/qs8_gemm.h"
#include "kernels/qs8_packed_gemm.h"
#include "runnable_variants.h"

namespace octet {
namespace {

using Variant = KernelVariant<Qs8PackedGemmFn>;

std::vector<Variant> RunnableVariants() {
  size_t count = 0;
  const Variant* variants = Qs8PackedGemmVariants(&count);
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

// [rows, cols] with row stride ld, in exactly (rows - 1) * ld + cols bytes; the
// padding bytes are random too.
std::vector<int8_t> RandomMatrix(size_t rows, size_t cols, size_t ld, std::mt19937& rng) {
  std::vector<int8_t> m((rows - 1) * ld + cols);
  for (int8_t& v : m) v = RandomInt8(rng);
  return m;
}

// Packed weights at the end of a vector, after `offset` bytes (to try misaligned
// buffers): data() + offset is the packed buffer.
struct Packed {
  std::vector<int8_t> bytes;
  size_t offset;
  const int8_t* data() const { return bytes.data() + offset; }
};

Packed Pack(size_t N, size_t K, const std::vector<int8_t>& B, size_t ldb, size_t offset = 0) {
  Packed p{std::vector<int8_t>(offset + qs8_pack_weights_size(N, K), 0x55), offset};
  qs8_pack_weights__ref(N, K, B.data(), ldb, p.bytes.data() + offset);
  return p;
}

constexpr int32_t kCanary = 0x5A5A5A5A;  // C padding: must survive every kernel

struct Shape {
  size_t M, N, K;
  size_t lda, ldc;
};

std::string Describe(const Shape& s) {
  return " M=" + std::to_string(s.M) + " N=" + std::to_string(s.N) + " K=" + std::to_string(s.K) +
         " lda=" + std::to_string(s.lda) + " ldc=" + std::to_string(s.ldc);
}

// Runs every variant and compares C, padding included, with `expected`.
// Returns the number of mismatching variants (each reported once).
int CheckVariants(const std::vector<Variant>& variants, const Shape& s,
                  const std::vector<int8_t>& A, const int8_t* packed,
                  const std::vector<int32_t>& expected) {
  int failures = 0;
  for (const Variant& variant : variants) {
    std::vector<int32_t> C(expected.size(), kCanary);  // [M, ldc], last row N long
    variant.fn(s.M, s.N, s.K, A.data(), s.lda, packed, C.data(), s.ldc);
    for (size_t i = 0; i < C.size(); ++i) {
      if (C[i] != expected[i]) {
        FAIL_CHECK(std::string(variant.name)
                   << Describe(s) << ": C[" << i / s.ldc << ", " << i % s.ldc << "] = " << C[i]
                   << ", expected " << expected[i]
                   << std::string(i % s.ldc >= s.N ? " (padding)" : ""));
        ++failures;
        break;
      }
    }
  }
  return failures;
}

// qs8_gemm__ref on the unpacked B: the definition of the result.
std::vector<int32_t> Expected(const Shape& s, const std::vector<int8_t>& A,
                              const std::vector<int8_t>& B, size_t ldb) {
  std::vector<int32_t> expected((s.M - 1) * s.ldc + s.N, kCanary);  // [M, ldc]
  qs8_gemm__ref(s.M, s.N, s.K, A.data(), s.lda, B.data(), ldb, expected.data(), s.ldc);
  return expected;
}

// Packs B [N, K] (stride ldb) and checks the reference and every variant on A.
void CheckShape(const std::vector<Variant>& variants, const Shape& s, const std::vector<int8_t>& A,
                const std::vector<int8_t>& B, size_t ldb, size_t packed_offset = 0) {
  const Packed packed = Pack(s.N, s.K, B, ldb, packed_offset);
  const std::vector<int32_t> expected = Expected(s, A, B, ldb);
  CHECK(CheckVariants(variants, s, A, packed.data(), expected) == 0);
}

TEST_CASE("qs8_packed_gemm variant list is named and ends with the reference") {
  size_t count = 0;
  const Variant* variants = Qs8PackedGemmVariants(&count);
  REQUIRE(count >= 1);
  constexpr uint32_t kAllCpuFeatures =
      kCpuX86Avx2 | kCpuX86Avx512Vnni | kCpuArmNeon | kCpuArmDotProd | kCpuArmI8mm;
  for (size_t i = 0; i < count; ++i) {
    INFO(std::string(variants[i].name));
    CHECK(std::string(variants[i].name).rfind("qs8_packed_gemm_", 0) == 0);
    CHECK((variants[i].fn != nullptr));
    CHECK((variants[i].required_features & ~kAllCpuFeatures) == 0);
    CHECK((variants[i].required_features == 0) == (i + 1 == count));
  }
  CHECK((variants[count - 1].fn == &qs8_packed_gemm__ref));
  CHECK(std::string(variants[count - 1].name) == "qs8_packed_gemm__ref");
  CHECK((SelectKernels(0).qs8_packed_gemm == &qs8_packed_gemm__ref));
  CHECK((SelectKernels(kAllCpuFeatures).qs8_packed_gemm == variants[0].fn));
  const KernelTable& table = GetKernelTable();
  MESSAGE("qs8_packed_gemm: " << std::string(table.qs8_packed_gemm_name));
  CHECK((table.qs8_packed_gemm == SelectKernels(GetCpuInfo().features).qs8_packed_gemm));
}

TEST_CASE("qs8_pack_weights__ref writes the documented layout") {
  std::mt19937 rng(7);
  for (size_t N : {1, 15, 16, 17, 40}) {
    for (size_t K : {1, 3, 4, 5, 64, 70}) {
      const size_t ldb = K + 3;
      const std::vector<int8_t> B = RandomMatrix(N, K, ldb, rng);  // [N, ldb]
      const Packed packed = Pack(N, K, B, ldb);
      const size_t kp = (K + 3) / 4 * 4;
      const size_t tile_bytes = qs8_packed_tile_bytes(K);
      REQUIRE(tile_bytes == 64 + 16 * kp);
      REQUIRE(qs8_pack_weights_size(N, K) == (N + 15) / 16 * tile_bytes);
      for (size_t n = 0; n < (N + 15) / 16 * 16; ++n) {
        const int8_t* tile = packed.data() + n / 16 * tile_bytes;
        int32_t sum = 0;
        for (size_t k = 0; k < kp; ++k) {
          const int8_t want = n < N && k < K ? B[n * ldb + k] : 0;
          const int8_t got = tile[64 + (k / 4 * 16 + n % 16) * 4 + k % 4];
          if (got != want) {
            FAIL_CHECK("N=" << N << " K=" << K << " w[" << n << ", " << k << "] = " << int{got}
                            << ", expected " << int{want});
            return;
          }
          sum += want;
        }
        int32_t corr;
        std::memcpy(&corr, tile + 4 * (n % 16), sizeof(corr));
        CHECK(corr == -128 * sum);
      }
    }
  }
}

TEST_CASE("qs8_packed_gemm variants match the reference over the shape sweep") {
  const std::vector<Variant> variants = RunnableVariants();
  std::mt19937 rng(20240612);
  std::uniform_int_distribution<size_t> random_k(1, 300);
  const size_t kM[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 33};
  size_t shapes = 0;
  for (size_t M : kM) {
    for (size_t N = 1; N <= 48; ++N) {
      // Each (M, N) gets K = 1..4 in turn (every K % 4 and the smallest K) and two
      // random K up to 300, with tight strides, then padded ones.
      const size_t ks[] = {1 + (M + N) % 4, random_k(rng), random_k(rng)};
      for (size_t K : ks) {
        const Shape layouts[] = {{M, N, K, K, N}, {M, N, K, K + 7, N + 3}};
        for (const Shape& s : layouts) {
          const size_t ldb = s.lda == K ? K : K + 13;
          const std::vector<int8_t> A = RandomMatrix(M, K, s.lda, rng);  // [M, lda]
          const std::vector<int8_t> B = RandomMatrix(N, K, ldb, rng);    // [N, ldb]
          CheckShape(variants, s, A, B, ldb, shapes % 3 == 0 ? 0 : 1 + shapes % 63);
          ++shapes;
        }
      }
    }
  }
  std::string names;
  for (const Variant& variant : variants) names += std::string(" ") + variant.name;
  MESSAGE(shapes << " shapes checked with" << names);
}

TEST_CASE("qs8_packed_gemm variants match the reference at model shapes") {
  const std::vector<Variant> variants = RunnableVariants();
  std::mt19937 rng(768);
  // Decode (M 1..4, 9) on long rows and wide layers; prefill tiles (M 16, 33, 128)
  // on fewer channels, so the reference stays fast under qemu.
  const Shape shapes[] = {
      {1, 3072, 768, 768, 3072}, {2, 3072, 768, 768, 3072}, {3, 768, 3072, 3072, 768},
      {4, 3072, 768, 800, 3100}, {9, 3072, 768, 768, 3072}, {1, 64, 3072, 3072, 64},
      {16, 100, 768, 768, 100},  {33, 48, 3072, 3072, 48},  {128, 48, 768, 768, 48},
      {128, 35, 3072, 3072, 40}, {128, 64, 1023, 1030, 64}, {12, 200, 2049, 2049, 210},
      {5, 40, 4100, 4100, 40},
  };
  for (const Shape& s : shapes) {
    const std::vector<int8_t> A = RandomMatrix(s.M, s.K, s.lda, rng);  // [M, lda]
    const std::vector<int8_t> B = RandomMatrix(s.N, s.K, s.K, rng);    // [N, K]
    CheckShape(variants, s, A, B, s.K);
  }
}

TEST_CASE("qs8_packed_gemm variants are exact at the K bound") {
  const std::vector<Variant> variants = RunnableVariants();
  for (size_t K : {kQs8GemmMaxK, kQs8GemmMaxK - 1}) {
    const Shape s = {5, 20, K, K + 1, 21};         // row and channel edges
    std::vector<int8_t> A((s.M - 1) * s.lda + K);  // [M, lda]
    std::vector<int8_t> B(s.N * K);                // [N, K]
    std::mt19937 rng(static_cast<uint32_t>(K));
    // -128 by -128 (every sum 2^14 K), -128 by 127 (-128 * 127 K), 127 by
    // alternately -128 and 127 channels, random.
    for (int fill = 0; fill < 4; ++fill) {
      for (int8_t& v : A) v = fill == 0 || fill == 1 ? -128 : fill == 2 ? 127 : RandomInt8(rng);
      for (size_t n = 0; n < s.N; ++n) {
        for (size_t k = 0; k < K; ++k) {
          B[n * K + k] = fill == 0   ? -128
                         : fill == 1 ? 127
                         : fill == 2 ? (n % 2 == 0 ? -128 : 127)
                                     : RandomInt8(rng);
        }
      }
      INFO("K = " << K << ", fill " << fill);
      const std::vector<int32_t> expected = Expected(s, A, B, K);
      if (fill == 0) CHECK(expected[0] == static_cast<int32_t>(128 * 128 * K));
      if (fill == 1) CHECK(expected[0] == -128 * 127 * static_cast<int32_t>(K));
      CheckShape(variants, s, A, B, K);
    }
  }
}

TEST_CASE("qs8_packed_gemm variants give the same C with N split into tile ranges") {
  const std::vector<Variant> variants = RunnableVariants();
  std::mt19937 rng(3);
  const Shape shapes[] = {{1, 100, 300, 300, 100}, {7, 100, 300, 301, 104}, {33, 250, 65, 65, 250}};
  for (const Shape& s : shapes) {
    const std::vector<int8_t> A = RandomMatrix(s.M, s.K, s.lda, rng);  // [M, lda]
    const std::vector<int8_t> B = RandomMatrix(s.N, s.K, s.K, rng);    // [N, K]
    const Packed packed = Pack(s.N, s.K, B, s.K);
    const std::vector<int32_t> expected = Expected(s, A, B, s.K);
    const size_t tiles = (s.N + 15) / 16;
    const size_t tile_bytes = qs8_packed_tile_bytes(s.K);
    for (const Variant& variant : variants) {
      for (size_t parts : {2, 3, 5}) {
        // Ranges of tiles [j0, j1) of random sizes, as threads would take them.
        std::vector<int32_t> C(expected.size(), kCanary);  // [M, ldc]
        size_t j0 = 0;
        for (size_t p = 0; p < parts && j0 < tiles; ++p) {
          const size_t left = tiles - j0;
          const size_t j1 = p + 1 == parts ? tiles : j0 + 1 + rng() % left;
          const size_t n = (j1 * 16 < s.N ? j1 * 16 : s.N) - j0 * 16;
          variant.fn(s.M, n, s.K, A.data(), s.lda, packed.data() + j0 * tile_bytes,
                     C.data() + j0 * 16, s.ldc);
          j0 = j1;
        }
        INFO(std::string(variant.name) << Describe(s) << " parts=" << parts);
        CHECK(C == expected);
      }
    }
  }
}

// qs8_packed_gemm_f32: every variant against the definition, qs8_gemm__ref on
// the unpacked weights then qs8_dequantize_rows__ref, bit for bit (padding of
// out included), with and without bias, on random positive scales and biases
// of both signs.

using F32Variant = KernelVariant<Qs8PackedGemmF32Fn>;

std::vector<F32Variant> RunnableF32Variants() {
  size_t count = 0;
  const F32Variant* variants = Qs8PackedGemmF32Variants(&count);
  return test::RunnableVariants(variants, count);
}

std::vector<float> RandomFloats(size_t n, float lo, float hi, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Checks every variant on one shape; s.ldc is out's row stride. Returns failures.
int CheckF32Shape(const std::vector<F32Variant>& variants, const Shape& s,
                  const std::vector<int8_t>& A, const std::vector<int8_t>& B, size_t ldb,
                  std::mt19937& rng) {
  const Packed packed = Pack(s.N, s.K, B, ldb);
  const std::vector<int32_t> acc = Expected(s, A, B, ldb);  // [M, ldc]
  const std::vector<float> row_scales = RandomFloats(s.M, 1e-4f, 0.05f, rng);
  const std::vector<float> col_scales = RandomFloats(s.N, 1e-4f, 0.02f, rng);
  const std::vector<float> bias = RandomFloats(s.N, -3.0f, 3.0f, rng);
  constexpr float kCanaryF = -12345.5f;
  int failures = 0;
  for (bool with_bias : {false, true}) {
    const float* b = with_bias ? bias.data() : nullptr;
    std::vector<float> expected(acc.size(), kCanaryF);  // [M, ldc]
    qs8_dequantize_rows__ref(s.M, s.N, acc.data(), s.ldc, row_scales.data(), col_scales.data(),
                             b, expected.data(), s.ldc);
    for (const F32Variant& variant : variants) {
      std::vector<float> out(expected.size(), kCanaryF);
      variant.fn(s.M, s.N, s.K, A.data(), s.lda, packed.data(), row_scales.data(),
                 col_scales.data(), b, out.data(), s.ldc);
      if (std::memcmp(out.data(), expected.data(), out.size() * sizeof(float)) != 0) {
        size_t i = 0;
        while (std::memcmp(&out[i], &expected[i], sizeof(float)) == 0) ++i;
        FAIL_CHECK(std::string(variant.name)
                   << Describe(s) << (with_bias ? " bias" : " no bias") << ": out["
                   << i / s.ldc << ", " << i % s.ldc << "] = " << out[i] << ", expected "
                   << expected[i]);
        ++failures;
      }
    }
  }
  return failures;
}

TEST_CASE("qs8_packed_gemm_f32: variant list, and the table fuses only where a variant does") {
  size_t count = 0;
  const F32Variant* variants = Qs8PackedGemmF32Variants(&count);
  REQUIRE(count >= 1);
  CHECK((variants[count - 1].fn == &qs8_packed_gemm_f32__ref));
  CHECK((SelectKernels(0).qs8_packed_gemm_f32 == nullptr));
  const KernelTable& table = GetKernelTable();
  MESSAGE("qs8_packed_gemm_f32: " << std::string(table.qs8_packed_gemm_f32_name));
  CHECK((table.qs8_packed_gemm_f32 == SelectKernels(GetCpuInfo().features).qs8_packed_gemm_f32));
  if (table.qs8_packed_gemm_f32 == nullptr) {
    MESSAGE("this CPU has no fused qs8_packed_gemm_f32 variant: the engine calls "
            "qs8_packed_gemm then qs8_dequantize_rows");
  }
}

TEST_CASE("qs8_packed_gemm_f32 variants equal qs8_gemm__ref + qs8_dequantize_rows__ref") {
  const std::vector<F32Variant> variants = RunnableF32Variants();
  std::mt19937 rng(9001);
  std::uniform_int_distribution<size_t> random_k(1, 300);
  size_t shapes = 0;
  for (size_t M : {1, 2, 3, 4, 5, 8, 9, 17}) {
    for (size_t N = 1; N <= 40; N += 3) {
      const size_t K = shapes % 2 == 0 ? 1 + shapes % 4 : random_k(rng);
      const Shape s = shapes % 3 == 0 ? Shape{M, N, K, K, N} : Shape{M, N, K, K + 5, N + 7};
      const std::vector<int8_t> A = RandomMatrix(M, K, s.lda, rng);
      const std::vector<int8_t> B = RandomMatrix(N, K, K, rng);
      CHECK(CheckF32Shape(variants, s, A, B, K, rng) == 0);
      ++shapes;
    }
  }
  // Model shapes, and K past one k block (4096), where partial sums sit in out.
  const Shape model[] = {{1, 768, 768, 768, 768},     {4, 2048, 768, 768, 2050},
                         {128, 96, 768, 768, 96},     {37, 50, 3072, 3072, 64},
                         {6, 40, 4100, 4100, 40},     {9, 33, 8195, 8195, 35}};
  for (const Shape& s : model) {
    const std::vector<int8_t> A = RandomMatrix(s.M, s.K, s.lda, rng);
    const std::vector<int8_t> B = RandomMatrix(s.N, s.K, s.K, rng);
    CHECK(CheckF32Shape(variants, s, A, B, s.K, rng) == 0);
  }
  std::string names;
  for (const F32Variant& variant : variants) names += std::string(" ") + variant.name;
  MESSAGE(shapes << " + " << sizeof(model) / sizeof(model[0]) << " shapes checked with" << names);
}

}  // namespace
}  // namespace octet
