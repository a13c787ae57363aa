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

// No dotprod variant: sdot is signed x signed and P is 0..255 (kernels/qu8s8_pv.h).
const KernelVariant<Qu8s8PvFn> kQu8s8PvVariants[] = {
#if defined(OCTET_KERNELS_X86)
    {"qu8s8_pv_4x64c4__avx512vnni", qu8s8_pv_4x64c4__avx512vnni, kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"qu8s8_pv_4x16c2__avx2", qu8s8_pv_4x16c2__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_I8MM)
    {"qu8s8_pv_4x8c4__neoni8mm", qu8s8_pv_4x8c4__neoni8mm, kCpuArmNeon | kCpuArmI8mm},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"qu8s8_pv_4x8__neon", qu8s8_pv_4x8__neon, kCpuArmNeon},
#endif
    {"qu8s8_pv__ref", qu8s8_pv__ref, 0},
};

// The AVX-512 files need F, BW and VL, which kCpuX86Avx512Vnni includes.
const KernelVariant<Qs8QuantizeRowsFn> kQs8QuantizeRowsVariants[] = {
#if defined(OCTET_KERNELS_X86)
    {"qs8_quantize_rows__avx512", qs8_quantize_rows__avx512, kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"qs8_quantize_rows__avx2", qs8_quantize_rows__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"qs8_quantize_rows__neon", qs8_quantize_rows__neon, kCpuArmNeon},
#endif
    {"qs8_quantize_rows__ref", qs8_quantize_rows__ref, 0},
};

const KernelVariant<Qs8DequantizeRowsFn> kQs8DequantizeRowsVariants[] = {
#if defined(OCTET_KERNELS_X86)
    {"qs8_dequantize_rows__avx512", qs8_dequantize_rows__avx512, kCpuX86Avx512Vnni | kCpuX86Avx2},
    {"qs8_dequantize_rows__avx2", qs8_dequantize_rows__avx2, kCpuX86Avx2},
#endif
#if defined(OCTET_KERNELS_NEON)
    {"qs8_dequantize_rows__neon", qs8_dequantize_rows__neon, kCpuArmNeon},
#endif
    {"qs8_dequantize_rows__ref", qs8_dequantize_rows__ref, 0},
};

// The first (fastest) variant whose features are all present.
template <typename Fn>
const KernelVariant<Fn>& Select(const KernelVariant<Fn>* variants, size_t count,
                                uint32_t cpu_features) {
  for (size_t i = 0; i + 1 < count; ++i) {
    if ((variants[i].required_features & cpu_features) == variants[i].required_features) {
      return variants[i];
    }
  }
  return variants[count - 1];  // the reference runs everywhere
}

}  // namespace

const KernelVariant<Qu8s8PvFn>* Qu8s8PvVariants(size_t* count) {
  *count = sizeof(kQu8s8PvVariants) / sizeof(kQu8s8PvVariants[0]);
  return kQu8s8PvVariants;
}

const KernelVariant<Qs8QuantizeRowsFn>* Qs8QuantizeRowsVariants(size_t* count) {
  *count = sizeof(kQs8QuantizeRowsVariants) / sizeof(kQs8QuantizeRowsVariants[0]);
  return kQs8QuantizeRowsVariants;
}

const KernelVariant<Qs8DequantizeRowsFn>* Qs8DequantizeRowsVariants(size_t* count) {
  *count = sizeof(kQs8DequantizeRowsVariants) / sizeof(kQs8DequantizeRowsVariants[0]);
  return kQs8DequantizeRowsVariants;
}

const KernelVariant<Qs8GemmFn>* Qs8GemmVariants(size_t* count) {
  *count = sizeof(kQs8GemmVariants) / sizeof(kQs8GemmVariants[0]);
  return kQs8GemmVariants;
}

KernelTable SelectKernels(uint32_t cpu_features) {
  KernelTable table{};
  size_t count = 0;
  const KernelVariant<Qs8GemmFn>* gemms = Qs8GemmVariants(&count);
  const KernelVariant<Qs8GemmFn>& gemm = Select(gemms, count, cpu_features);
  table.qs8_gemm = gemm.fn;
  table.qs8_gemm_name = gemm.name;
  const KernelVariant<Qu8s8PvFn>* pvs = Qu8s8PvVariants(&count);
  const KernelVariant<Qu8s8PvFn>& pv = Select(pvs, count, cpu_features);
  table.qu8s8_pv = pv.fn;
  table.qu8s8_pv_name = pv.name;
  const KernelVariant<Qs8QuantizeRowsFn>& quantize =
      Select(Qs8QuantizeRowsVariants(&count), count, cpu_features);
  table.qs8_quantize_rows = quantize.fn;
  table.qs8_quantize_rows_name = quantize.name;
  const KernelVariant<Qs8DequantizeRowsFn>& dequantize =
      Select(Qs8DequantizeRowsVariants(&count), count, cpu_features);
  table.qs8_dequantize_rows = dequantize.fn;
  table.qs8_dequantize_rows_name = dequantize.name;
  return table;
}

const KernelTable& GetKernelTable() {
  static const KernelTable table = SelectKernels(GetCpuInfo().features);
  return table;
}

}  // namespace octet
