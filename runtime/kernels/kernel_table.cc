#include "kernels/kernel_table.h"

#include "platform/cpu.h"

namespace octet {
namespace {

// Fastest first; the reference last (it runs everywhere). Which ISA files are
// compiled is decided by runtime/kernels/CMakeLists.txt, which sets the
// OCTET_KERNELS_* definitions to match.
const KernelVariant<Qs8GemmFn> kQs8GemmVariants[] = {
#if defined(OCTET_KERNELS_X86)
    // The VNNI file is compiled with AVX512 flags, which imply AVX2 code.
    {"qs8_gemm_4x4c64__avx512vnni", qs8_gemm_4x4c64__avx512vnni, kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"qs8_gemm_4x4c8__avx2", qs8_gemm_4x4c8__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_I8MM)
    {"qs8_gemm_4x4c8__neoni8mm", qs8_gemm_4x4c8__neoni8mm, kCpuArmNeon | kCpuArmI8mm},
#endif
#if defined(OCTET_KERNELS_NEONDOT)
    {"qs8_gemm_4x4c16__neondot", qs8_gemm_4x4c16__neondot, kCpuArmNeon | kCpuArmDotProd},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"qs8_gemm_4x4c16__neon", qs8_gemm_4x4c16__neon, kCpuArmNeon},
#endif
    {"qs8_gemm__ref", qs8_gemm__ref, 0},
};

}  // namespace

const KernelVariant<Qs8GemmFn>* Qs8GemmVariants(size_t* count) {
  *count = sizeof(kQs8GemmVariants) / sizeof(kQs8GemmVariants[0]);
  return kQs8GemmVariants;
}

KernelTable SelectKernels(uint32_t cpu_features) {
  KernelTable table{};
  size_t count = 0;
  const KernelVariant<Qs8GemmFn>* variants = Qs8GemmVariants(&count);
  for (size_t i = 0; i < count; ++i) {
    if ((variants[i].required_features & cpu_features) == variants[i].required_features) {
      table.qs8_gemm = variants[i].fn;
      table.qs8_gemm_name = variants[i].name;
      break;
    }
  }
  return table;
}

const KernelTable& GetKernelTable() {
  static const KernelTable table = SelectKernels(GetCpuInfo().features);
  return table;
}

}  // namespace octet
