#include "common/alloc_counter.h"

#include <atomic>
#include <cerrno>
#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define OCTET_ALLOC_COUNTER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OCTET_ALLOC_COUNTER_SANITIZER 1
#endif
#endif

namespace octet {
namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace

uint64_t HeapAllocationCount() { return g_allocations.load(std::memory_order_relaxed); }

}  // namespace octet

#if defined(OCTET_ALLOC_COUNTER_SANITIZER)

// Declared here: GCC ships no sanitizer/allocator_interface.h, but both GCC's
// and clang's sanitizer runtimes export this function.
extern "C" int __sanitizer_install_malloc_and_free_hooks(
    void (*malloc_hook)(const volatile void*, size_t), void (*free_hook)(const volatile void*));

namespace {
void OnMalloc(const volatile void*, size_t) {
  octet::g_allocations.fetch_add(1, std::memory_order_relaxed);
}
void OnFree(const volatile void*) {}

struct InstallHooks {
  InstallHooks() { active = __sanitizer_install_malloc_and_free_hooks(OnMalloc, OnFree) != 0; }
  bool active = false;
};
InstallHooks g_hooks;
}  // namespace

namespace octet {
bool HeapAllocationCounterActive() { return g_hooks.active; }
}  // namespace octet

#else  // glibc interposition

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* ptr, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void __libc_free(void* ptr);

void* malloc(size_t size) {
  octet::g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(size);
}
void* calloc(size_t count, size_t size) {
  octet::g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(count, size);
}
void* realloc(void* ptr, size_t size) {
  octet::g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(ptr, size);
}
void free(void* ptr) { __libc_free(ptr); }
void* memalign(size_t alignment, size_t size) {
  octet::g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_memalign(alignment, size);
}
void* aligned_alloc(size_t alignment, size_t size) {
  octet::g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) {
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  octet::g_allocations.fetch_add(1, std::memory_order_relaxed);
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr && size != 0) return ENOMEM;
  *out = p;
  return 0;
}
}  // extern "C"

namespace octet {
bool HeapAllocationCounterActive() { return true; }
}  // namespace octet

#endif
