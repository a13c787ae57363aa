// What the CPU we run on can do, read once from the hardware and the OS:
// x86 cpuid + xgetbv (the OS must save the wide registers), ARM getauxval.
#pragma once

#include <cstdint>

namespace octet {

enum CpuFeature : uint32_t {
  kCpuX86Avx2 = 1u << 0,        // AVX2 + FMA, OS saves ymm
  kCpuX86Avx512Vnni = 1u << 1,  // AVX512 F/BW/VL + VNNI, OS saves zmm and opmasks
  kCpuArmNeon = 1u << 8,        // Advanced SIMD (always on aarch64; HWCAP_NEON on arm32)
  kCpuArmDotProd = 1u << 9,     // sdot/udot (armv8.2 dotprod)
  kCpuArmI8mm = 1u << 10,       // smmla (armv8.6 i8mm)
};

struct CpuInfo {
  uint32_t features = 0;  // CpuFeature bits
  bool Has(uint32_t mask) const { return (features & mask) == mask; }
};

// The machine's features, detected once (thread-safe). The environment variable
// OCTET_CPU_DISABLE="avx512vnni,dotprod,..." removes features (never adds them),
// so a test can force the slower paths on a fast machine.
const CpuInfo& GetCpuInfo();

// Detection without the cache or the environment override.
CpuInfo DetectCpuInfo();

// "avx2 avx512vnni" style list of the set bits, for logs and `octet inspect`.
// Writes at most `size` bytes including the terminating zero.
void FormatCpuFeatures(uint32_t features, char* out, int size);

// Parses one feature name ("avx2", "avx512vnni", "neon", "dotprod", "i8mm"); 0 if unknown.
uint32_t CpuFeatureFromName(const char* name, int length);

}  // namespace octet
