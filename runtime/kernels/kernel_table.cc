#include "kernels/kernel_table.h"

#include "platform/cpu.h"

namespace octet {
namespace {

// Fastest first; the reference last (it runs everywhere).
const KernelVariant<Qs8GemmFn> kQs8GemmVariants[] = {
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
