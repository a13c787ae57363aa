#include "core/alloc.h"

#include <atomic>
#include <cstdlib>

namespace octet {
namespace {

std::atomic<uint64_t> g_count{0};
std::atomic<uint64_t> g_fail_at{0};  // 0: never
std::atomic<bool> g_failed{false};

// True when this call is the one the test asked to fail.
bool InjectFailure() {
  const uint64_t count = g_count.fetch_add(1, std::memory_order_relaxed) + 1;
  const uint64_t fail_at = g_fail_at.load(std::memory_order_relaxed);
  if (fail_at == 0 || count != fail_at) return false;
  g_failed.store(true, std::memory_order_relaxed);
  return true;
}

}  // namespace

void* Allocate(size_t bytes, size_t alignment) {
  if (InjectFailure()) return nullptr;
  if (bytes == 0) bytes = 1;
  if (alignment <= alignof(std::max_align_t)) return std::malloc(bytes);
  void* memory = nullptr;
  if (posix_memalign(&memory, alignment, bytes) != 0) return nullptr;
  return memory;
}

void Free(void* memory) { std::free(memory); }

namespace alloc_testing {

void FailNthAllocation(uint64_t nth) {
  g_fail_at.store(nth, std::memory_order_relaxed);
  g_failed.store(false, std::memory_order_relaxed);
  g_count.store(0, std::memory_order_relaxed);
}

uint64_t AllocationCount() { return g_count.load(std::memory_order_relaxed); }

bool InjectedFailure() { return g_failed.load(std::memory_order_relaxed); }

}  // namespace alloc_testing
}  // namespace octet
