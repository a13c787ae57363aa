#include "platform/cpu.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__aarch64__) || defined(__arm__)
#include <sys/auxv.h>
#endif

namespace octet {
namespace {

struct FeatureName {
  uint32_t bit;
  const char* name;
};
constexpr FeatureName kFeatureNames[] = {
    {kCpuX86Avx2, "avx2"},   {kCpuX86Avx512Vnni, "avx512vnni"}, {kCpuArmNeon, "neon"},
    {kCpuArmDotProd, "dotprod"}, {kCpuArmI8mm, "i8mm"},
};

#if defined(__x86_64__) || defined(__i386__)
uint64_t ReadXcr0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

uint32_t DetectX86() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
  const bool osxsave = (ecx >> 27) & 1;
  const bool fma = (ecx >> 12) & 1;
  const bool avx = (ecx >> 28) & 1;
  if (!osxsave || !avx) return 0;
  const uint64_t xcr0 = ReadXcr0();
  const bool os_ymm = (xcr0 & 0x6) == 0x6;     // SSE + AVX state
  const bool os_zmm = (xcr0 & 0xE6) == 0xE6;   // + opmask, ZMM_Hi256, Hi16_ZMM
  if (__get_cpuid_max(0, nullptr) < 7) return 0;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  uint32_t features = 0;
  const bool avx2 = (ebx >> 5) & 1;
  if (avx2 && fma && os_ymm) features |= kCpuX86Avx2;
  const bool avx512f = (ebx >> 16) & 1;
  const bool avx512bw = (ebx >> 30) & 1;
  const bool avx512vl = (ebx >> 31) & 1;
  const bool avx512vnni = (ecx >> 11) & 1;
  if (avx512f && avx512bw && avx512vl && avx512vnni && os_zmm && (features & kCpuX86Avx2)) {
    features |= kCpuX86Avx512Vnni;
  }
  return features;
}
#endif

#if defined(__aarch64__)
uint32_t DetectArm() {
  // Bits from the kernel's uapi asm/hwcap.h (arm64), spelled out so that old
  // headers still build.
  constexpr unsigned long kHwcapAsimd = 1ul << 1;
  constexpr unsigned long kHwcapAsimdDp = 1ul << 20;
  constexpr unsigned long kHwcap2I8mm = 1ul << 13;
  const unsigned long hwcap = getauxval(AT_HWCAP);
  const unsigned long hwcap2 = getauxval(AT_HWCAP2);
  uint32_t features = 0;
  if (hwcap & kHwcapAsimd) features |= kCpuArmNeon;
  if ((features & kCpuArmNeon) && (hwcap & kHwcapAsimdDp)) features |= kCpuArmDotProd;
  if ((features & kCpuArmNeon) && (hwcap2 & kHwcap2I8mm)) features |= kCpuArmI8mm;
  return features;
}
#elif defined(__arm__)
uint32_t DetectArm() {
  // arm32 uapi asm/hwcap.h: HWCAP_NEON (12), HWCAP_ASIMDDP (24), HWCAP_I8MM (27).
  constexpr unsigned long kHwcapNeon = 1ul << 12;
  constexpr unsigned long kHwcapAsimdDp = 1ul << 24;
  constexpr unsigned long kHwcapI8mm = 1ul << 27;
  const unsigned long hwcap = getauxval(AT_HWCAP);
  uint32_t features = 0;
  if (hwcap & kHwcapNeon) features |= kCpuArmNeon;
  if ((features & kCpuArmNeon) && (hwcap & kHwcapAsimdDp)) features |= kCpuArmDotProd;
  if ((features & kCpuArmNeon) && (hwcap & kHwcapI8mm)) features |= kCpuArmI8mm;
  return features;
}
#endif

uint32_t ParseFeatureList(const char* list) {
  uint32_t mask = 0;
  const char* p = list;
  while (*p != '\0') {
    const char* end = p;
    while (*end != '\0' && *end != ',' && *end != ' ') ++end;
    mask |= CpuFeatureFromName(p, static_cast<int>(end - p));
    p = (*end == '\0') ? end : end + 1;
  }
  return mask;
}

}  // namespace

uint32_t CpuFeatureFromName(const char* name, int length) {
  for (const FeatureName& f : kFeatureNames) {
    if (static_cast<int>(std::strlen(f.name)) == length && std::strncmp(f.name, name, length) == 0) {
      return f.bit;
    }
  }
  return 0;
}

CpuInfo DetectCpuInfo() {
  CpuInfo info;
#if defined(__x86_64__) || defined(__i386__)
  info.features = DetectX86();
#elif defined(__aarch64__) || defined(__arm__)
  info.features = DetectArm();
#endif
  return info;
}

const CpuInfo& GetCpuInfo() {
  static const CpuInfo info = [] {
    CpuInfo detected = DetectCpuInfo();
    if (const char* disable = std::getenv("OCTET_CPU_DISABLE")) {
      detected.features &= ~ParseFeatureList(disable);
    }
    return detected;
  }();
  return info;
}

void FormatCpuFeatures(uint32_t features, char* out, int size) {
  if (size <= 0) return;
  out[0] = '\0';
  int used = 0;
  for (const FeatureName& f : kFeatureNames) {
    if ((features & f.bit) == 0) continue;
    const int n = std::snprintf(out + used, size - used, "%s%s", used ? " " : "", f.name);
    if (n < 0 || n >= size - used) break;
    used += n;
  }
  if (used == 0) std::snprintf(out, size, "(none)");
}

}  // namespace octet
