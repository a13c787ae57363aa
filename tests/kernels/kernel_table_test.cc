// The dispatch table: which qs8_gemm and qu8s8_pv variants a feature set selects.
//
// OCTET_EXPECT_QS8_GEMM=<name> and OCTET_EXPECT_QU8S8_PV=<name> make the table
// for this machine assert the variants it chose; CI sets them when it runs the
// suite under a known qemu CPU model (tests/kernels/CMakeLists.txt), e.g.
// qs8_gemm_4x4c16__neon on `-cpu cortex-a72`, qs8_gemm_4x4c16__neondot and
// qu8s8_pv_4x8__neon on `-cpu cortex-a76`.

#include <cstdint>
#include <cstdlib>
#include <string>

#include <doctest/doctest.h>

#include "kernels/kernel_table.h"
#include "kernels/qs8_dequantize_rows.h"
#include "kernels/qs8_gemm.h"
#include "kernels/qs8_quantize_rows.h"
#include "kernels/qu8s8_pv.h"
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

TEST_CASE("qu8s8_pv variant list is named and ends with the reference") {
  size_t count = 0;
  const KernelVariant<Qu8s8PvFn>* variants = Qu8s8PvVariants(&count);
  REQUIRE(count >= 1);
  for (size_t i = 0; i < count; ++i) {
    INFO(std::string(variants[i].name));
    CHECK(std::string(variants[i].name).rfind("qu8s8_pv_", 0) == 0);
    CHECK((variants[i].fn != nullptr));
    CHECK((variants[i].required_features & ~kAllCpuFeatures) == 0);
    CHECK((variants[i].required_features == 0) == (i + 1 == count));
  }
  CHECK((variants[count - 1].fn == &qu8s8_pv__ref));
  CHECK(std::string(variants[count - 1].name) == "qu8s8_pv__ref");
}

// The variants of a family: named <prefix>..., the reference (`ref`, named
// <prefix>_ref) last and alone in needing no feature.
template <typename Fn>
void CheckVariantList(const KernelVariant<Fn>* variants, size_t count, const std::string& prefix,
                      Fn ref) {
  REQUIRE(count >= 1);
  for (size_t i = 0; i < count; ++i) {
    INFO(std::string(variants[i].name));
    CHECK(std::string(variants[i].name).rfind(prefix, 0) == 0);
    CHECK((variants[i].fn != nullptr));
    CHECK((variants[i].required_features & ~kAllCpuFeatures) == 0);
    CHECK((variants[i].required_features == 0) == (i + 1 == count));
  }
  CHECK((variants[count - 1].fn == ref));
  CHECK(std::string(variants[count - 1].name) == prefix + "_ref");
}

TEST_CASE("qs8_quantize_rows and qs8_dequantize_rows variant lists end with the reference") {
  size_t count = 0;
  const KernelVariant<Qs8QuantizeRowsFn>* quantize = Qs8QuantizeRowsVariants(&count);
  CheckVariantList(quantize, count, "qs8_quantize_rows_", &qs8_quantize_rows__ref);
  const KernelVariant<Qs8DequantizeRowsFn>* dequantize = Qs8DequantizeRowsVariants(&count);
  CheckVariantList(dequantize, count, "qs8_dequantize_rows_", &qs8_dequantize_rows__ref);
  const KernelTable none = SelectKernels(0);
  CHECK((none.qs8_quantize_rows == &qs8_quantize_rows__ref));
  CHECK((none.qs8_dequantize_rows == &qs8_dequantize_rows__ref));
  const KernelTable all = SelectKernels(kAllCpuFeatures);
  CHECK((all.qs8_quantize_rows == Qs8QuantizeRowsVariants(&count)[0].fn));
  CHECK((all.qs8_dequantize_rows == Qs8DequantizeRowsVariants(&count)[0].fn));
}

TEST_CASE("qs8_packed_check variant list ends with the reference") {
  size_t count = 0;
  const KernelVariant<Qs8PackedCheckFn>* variants = Qs8PackedCheckVariants(&count);
  CheckVariantList(variants, count, "qs8_packed_check_", &qs8_packed_check__ref);
  CHECK((SelectKernels(0).qs8_packed_check == &qs8_packed_check__ref));
  CHECK((SelectKernels(kAllCpuFeatures).qs8_packed_check == variants[0].fn));
}

// A float family's list (named prefix + "_<isa>", the reference last) and the
// table's choice of it without features (the reference) and with all (the first).
template <typename Fn>
void CheckFloatFamily(const KernelVariant<Fn>* (*list)(size_t*), const std::string& prefix, Fn ref,
                      Fn KernelTable::*field, const char* KernelTable::*name) {
  INFO(prefix);
  size_t count = 0;
  const KernelVariant<Fn>* variants = list(&count);
  CheckVariantList(variants, count, prefix, ref);
  const KernelTable none = SelectKernels(0);
  CHECK((none.*field == ref));
  CHECK(std::string(none.*name) == prefix + "_ref");
  const KernelTable all = SelectKernels(kAllCpuFeatures);
  CHECK((all.*field == variants[0].fn));
  CHECK(std::string(all.*name) == std::string(variants[0].name));
  const KernelTable& table = GetKernelTable();
  CHECK((table.*field == SelectKernels(GetCpuInfo().features).*field));
}

TEST_CASE("the float kernel lists end with the reference and fill the table") {
  CheckFloatFamily(F32LayerNormVariants, "f32_layernorm_", &f32_layernorm__ref,
                   &KernelTable::f32_layernorm, &KernelTable::f32_layernorm_name);
  CheckFloatFamily(F32RmsNormVariants, "f32_rmsnorm_", &f32_rmsnorm__ref, &KernelTable::f32_rmsnorm,
                   &KernelTable::f32_rmsnorm_name);
  CheckFloatFamily(F32ActivationVariants, "f32_activation_", &f32_activation__ref,
                   &KernelTable::f32_activation, &KernelTable::f32_activation_name);
  CheckFloatFamily(F32GatedActivationVariants, "f32_gated_activation_", &f32_gated_activation__ref,
                   &KernelTable::f32_gated_activation, &KernelTable::f32_gated_activation_name);
  CheckFloatFamily(F32AddBiasVariants, "f32_add_bias_", &f32_add_bias__ref,
                   &KernelTable::f32_add_bias, &KernelTable::f32_add_bias_name);
  CheckFloatFamily(F32AddVariants, "f32_add_", &f32_add__ref, &KernelTable::f32_add,
                   &KernelTable::f32_add_name);
  CheckFloatFamily(F32RopeVariants, "f32_rope_", &f32_rope__ref, &KernelTable::f32_rope,
                   &KernelTable::f32_rope_name);
  CheckFloatFamily(Qs8SoftmaxTileVariants, "qs8_softmax_tile_", &qs8_softmax_tile__ref,
                   &KernelTable::qs8_softmax_tile, &KernelTable::qs8_softmax_tile_name);
  CheckFloatFamily(F32DeltaStepVariants, "f32_delta_step_", &f32_delta_step__ref,
                   &KernelTable::f32_delta_step, &KernelTable::f32_delta_step_name);
  CheckFloatFamily(F32DeltaChunkVariants, "f32_delta_chunk_", &f32_delta_chunk__ref,
                   &KernelTable::f32_delta_chunk, &KernelTable::f32_delta_chunk_name);
  MESSAGE("float kernels: " << std::string(GetKernelTable().f32_activation_name) << ", "
                            << std::string(GetKernelTable().qs8_softmax_tile_name) << ", ...");
}

TEST_CASE("SelectKernels without features picks the reference") {
  const KernelTable table = SelectKernels(0);
  CHECK((table.qs8_gemm == &qs8_gemm__ref));
  CHECK(std::string(table.qs8_gemm_name) == "qs8_gemm__ref");
  CHECK((table.qu8s8_pv == &qu8s8_pv__ref));
  CHECK(std::string(table.qu8s8_pv_name) == "qu8s8_pv__ref");
}

TEST_CASE("SelectKernels with every feature picks the first variant") {
  size_t count = 0;
  const KernelVariant<Qs8GemmFn>* variants = Qs8GemmVariants(&count);
  const KernelTable table = SelectKernels(kAllCpuFeatures);
  CHECK((table.qs8_gemm == variants[0].fn));
  CHECK(std::string(table.qs8_gemm_name) == std::string(variants[0].name));
  const KernelVariant<Qu8s8PvFn>* pv_variants = Qu8s8PvVariants(&count);
  CHECK((table.qu8s8_pv == pv_variants[0].fn));
  CHECK(std::string(table.qu8s8_pv_name) == std::string(pv_variants[0].name));
}

TEST_CASE("SelectKernels with dotprod but no i8mm picks the NEON baseline for qu8s8_pv") {
  // sdot is signed x signed: no qu8s8_pv variant uses it (kernels/qu8s8_pv.h).
  const KernelTable table = SelectKernels(kCpuArmNeon | kCpuArmDotProd);
  size_t count = 0;
  const KernelVariant<Qu8s8PvFn>* variants = Qu8s8PvVariants(&count);
  for (size_t i = 0; i < count; ++i) {
    if (variants[i].required_features == kCpuArmNeon) {
      CHECK(std::string(table.qu8s8_pv_name) == std::string(variants[i].name));
      return;
    }
  }
  CHECK(std::string(table.qu8s8_pv_name) == "qu8s8_pv__ref");  // not an ARM build
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

TEST_CASE("GetKernelTable picks the expected qu8s8_pv variant") {
  const KernelTable& table = GetKernelTable();
  MESSAGE("qu8s8_pv: " << std::string(table.qu8s8_pv_name));
  CHECK((table.qu8s8_pv == SelectKernels(GetCpuInfo().features).qu8s8_pv));
  if (const char* expected = std::getenv("OCTET_EXPECT_QU8S8_PV")) {
    CHECK(std::string(table.qu8s8_pv_name) == std::string(expected));
  }
}

}  // namespace
}  // namespace octet
