#include "kernels/int8_peak.h"

#include "platform/cpu.h"

namespace octet {

Int8PeakFn SelectInt8Peak(const char** name) {
  const CpuInfo& cpu = GetCpuInfo();
  (void)cpu;
#if defined(OCTET_KERNELS_X86)
  if (cpu.Has(kCpuX86Avx512Vnni | kCpuX86Avx2)) {
    *name = "vpdpbusd zmm";
    return int8_peak__avx512vnni;
  }
  if (cpu.Has(kCpuX86Avx2)) {
    *name = "vpmaddubsw+vpmaddwd+vpaddd ymm";
    return int8_peak__avx2;
  }
#endif
  *name = "none for this ISA yet";
  return nullptr;
}

}  // namespace octet
