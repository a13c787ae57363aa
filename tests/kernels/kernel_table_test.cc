// The dispatch table: which qs8_gemm variant a feature set selects.
//
// OCTET_EXPECT_QS8_GEMM=<name> makes the table for this machine assert the
// variant it chose; CI sets it when it runs the suite under a known qemu CPU
// model (tests/kernels/CMakeLists.txt), e.g. qs8_gemm_4x4c16__neon on
// `-cpu cortex-a72`, qs8_gemm_4x4c16__neondot on `-cpu cortex-a76`.

#include <cstdint>
#include <cstdlib>
#include <string>

#include <doctest/doctest.h>

#include "kernels/kernel_table.h"
#include "kernels/qs8_gemm.h"
#include "platform/cpu.h"

// doctest prints a const char* as a pointer: names are wrapped in std::string, and
// function pointers compared inside CHECK((...)), which it does not decompose.
namespace octet {
namespace {

constexpr uint32_t kAllCpuFeatures =
    kCpuX86Avx2 | kCpuX86Avx512Vnni | kCpuArmNeon | kCpuArmDotProd | kCpuArmI8mm;

TEST_CASE("qs8_gemm variant list is named and ends with the reference") {
  size_t count = 0;
  const KernelVariant<Qs8GemmFn>* variants = Qs8GemmVariants(&count);
  REQUIRE(count >= 1);
  for (size_t i = 0; i < count; ++i) {
    INFO(std::string(variants[i].name));
    CHECK(std::string(variants[i].name).rfind("qs8_gemm_", 0) == 0);
    CHECK((variants[i].fn != nullptr));
    CHECK((variants[i].required_features & ~kAllCpuFeatures) == 0);
    CHECK((variants[i].required_features == 0) == (i + 1 == count));
  }
  CHECK((variants[count - 1].fn == &qs8_gemm__ref));
  CHECK(std::string(variants[count - 1].name) == "qs8_gemm__ref");
}

TEST_CASE("SelectKernels without features picks the reference") {
  const KernelTable table = SelectKernels(0);
  CHECK((table.qs8_gemm == &qs8_gemm__ref));
  CHECK(std::string(table.qs8_gemm_name) == "qs8_gemm__ref");
}

TEST_CASE("SelectKernels with every feature picks the first variant") {
  size_t count = 0;
  const KernelVariant<Qs8GemmFn>* variants = Qs8GemmVariants(&count);
  const KernelTable table = SelectKernels(kAllCpuFeatures);
  CHECK((table.qs8_gemm == variants[0].fn));
  CHECK(std::string(table.qs8_gemm_name) == std::string(variants[0].name));
}

TEST_CASE("GetKernelTable picks the expected qs8_gemm variant") {
  char features[128];
  FormatCpuFeatures(GetCpuInfo().features, features, sizeof(features));
  const KernelTable& table = GetKernelTable();
  MESSAGE("CPU features: " << std::string(features)
                           << "; qs8_gemm: " << std::string(table.qs8_gemm_name));
  CHECK((table.qs8_gemm == SelectKernels(GetCpuInfo().features).qs8_gemm));
  if (const char* expected = std::getenv("OCTET_EXPECT_QS8_GEMM")) {
    CHECK(std::string(table.qs8_gemm_name) == std::string(expected));
  }
}

}  // namespace
}  // namespace octet
