// Which compiled variants of a kernel family a sweep test runs on this machine:
// those whose CPU features are present, taken from GetCpuInfo() (so
// OCTET_CPU_DISABLE="avx512vnni,..." forces slower paths) plus the test-only
// variable OCTET_TEST_FORCE_FEATURES="dotprod,i8mm". The latter is for qemu-arm:
// `qemu-arm -cpu max` executes sdot, smmla and sudot in AArch32 state but does
// not report them in AT_HWCAP, so the armhf suite sets it (see
// tests/kernels/CMakeLists.txt) to run those variants anyway. The runtime never
// reads it. A variant that is not run is reported with a MESSAGE naming it and
// the missing features.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "kernels/kernel_table.h"
#include "platform/cpu.h"

namespace octet {
namespace test {

// The CPU's features plus those named in OCTET_TEST_FORCE_FEATURES.
inline uint32_t TestFeatures() {
  uint32_t features = GetCpuInfo().features;
  const char* forced = std::getenv("OCTET_TEST_FORCE_FEATURES");
  if (forced == nullptr) return features;
  for (const char* p = forced; *p != '\0';) {
    const char* end = p;
    while (*end != '\0' && *end != ',') ++end;
    const int length = static_cast<int>(end - p);
    if (length > 0) {
      const uint32_t bit = CpuFeatureFromName(p, length);
      INFO("OCTET_TEST_FORCE_FEATURES: unknown feature '" << std::string(p, length) << "'");
      REQUIRE(bit != 0);
      features |= bit;
    }
    p = (*end == '\0') ? end : end + 1;
  }
  return features;
}

// The variants (of `count` in `variants`) this machine can run; every other one
// is reported, not skipped silently.
template <typename Fn>
std::vector<KernelVariant<Fn>> RunnableVariants(const KernelVariant<Fn>* variants, size_t count) {
  const uint32_t features = TestFeatures();
  std::vector<KernelVariant<Fn>> runnable;
  for (size_t i = 0; i < count; ++i) {
    const uint32_t missing = variants[i].required_features & ~features;
    if (missing != 0) {
      char names[128];
      FormatCpuFeatures(missing, names, sizeof(names));
      MESSAGE("SKIPPED " << std::string(variants[i].name)
                         << ": missing CPU feature(s): " << std::string(names));
      continue;
    }
    runnable.push_back(variants[i]);
  }
  REQUIRE(!runnable.empty());
  return runnable;
}

}  // namespace test
}  // namespace octet
