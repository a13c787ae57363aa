#include "memory.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>

namespace octet {
namespace convert {

void ReturnFreedMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

void KeepFreedMemoryWithinPhases(uint64_t bytes) {
#if defined(__GLIBC__)
  const uint64_t keep = std::max<uint64_t>(bytes, uint64_t{32} << 20);
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(std::min<uint64_t>(keep, uint64_t{1} << 30)));
#else
  (void)bytes;
#endif
}

}  // namespace convert
}  // namespace octet
