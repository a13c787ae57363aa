// The runtime's one heap allocation function.
//
// Heap memory of runtime/ comes from Allocate (directly, or through New,
// NewArray, Vector, OCTET_ALLOCATED_THROUGH_ALLOCATE; docs/design.md §3a lists
// what does not yet). Nothing throws and nothing aborts: a null return is
// reported by the caller as a Status of kind kOutOfMemory with a message that
// says what could not be allocated. Allocations happen while loading and
// preparing (model, session, tokenizer, generation buffers), never in a
// forward pass or a decode step (docs/design.md §3a).
//
// Tests can make the Nth allocation fail (alloc_testing below) to check that
// every failure path returns a status and leaks nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace octet {

// `bytes` of memory aligned to `alignment` (a power of two), or null when the
// allocation fails. Allocate(0) returns a unique non-null pointer (or null).
void* Allocate(size_t bytes, size_t alignment = alignof(std::max_align_t));
// Frees memory from Allocate; null is a no-op.
void Free(void* memory);

// A T constructed in memory from Allocate, or null.
template <typename T, typename... Args>
T* New(Args&&... args) {
  void* memory = Allocate(sizeof(T), alignof(T));
  return memory == nullptr ? nullptr : new (memory) T(std::forward<Args>(args)...);
}

template <typename T>
void Delete(T* object) {
  if (object == nullptr) return;
  object->~T();
  Free(object);
}

// n uninitialized elements of a trivial T (as new T[n] makes them), or null
// (also when n * sizeof(T) overflows). Freed with Free (OwnedArray does it).
template <typename T>
T* NewArray(size_t n) {
  static_assert(std::is_trivial_v<T>, "NewArray holds trivial types");
  if (n > SIZE_MAX / sizeof(T)) return nullptr;
  return static_cast<T*>(Allocate(n * sizeof(T), alignof(T)));
}

struct Deleter {
  template <typename T>
  void operator()(T* object) const {
    Delete(object);
  }
};
struct ArrayDeleter {
  template <typename T>
  void operator()(T* array) const {
    Free(array);
  }
};

// Owning pointers to objects from New and arrays from NewArray.
template <typename T>
using Owned = std::unique_ptr<T, Deleter>;
template <typename T>
using OwnedArray = std::unique_ptr<T[], ArrayDeleter>;

// Inside a class: `new (std::nothrow) T`, `new (std::nothrow) T[n]` and
// `delete` of that class go through Allocate / Free (a throwing `new T` does
// not compile). For types made with new-expressions across the code base.
#define OCTET_ALLOCATED_THROUGH_ALLOCATE                                         \
  static void* operator new(size_t bytes, const std::nothrow_t&) noexcept {      \
    return ::octet::Allocate(bytes);                                             \
  }                                                                              \
  static void* operator new[](size_t bytes, const std::nothrow_t&) noexcept {    \
    return ::octet::Allocate(bytes);                                             \
  }                                                                              \
  static void* operator new(size_t, void* at) noexcept { return at; }            \
  static void operator delete(void* memory) noexcept { ::octet::Free(memory); }  \
  static void operator delete[](void* memory) noexcept { ::octet::Free(memory); }

// Test-only control of Allocate, compiled in but inert until set. Counts are
// process-wide (atomics): tests that use it run the code under test on one
// thread at a time.
namespace alloc_testing {
// The nth call of Allocate from now on (1 = the next) returns null; 0 turns
// injection off. Resets the count.
void FailNthAllocation(uint64_t nth);
// Calls of Allocate since the last FailNthAllocation.
uint64_t AllocationCount();
// Whether the injected failure has happened.
bool InjectedFailure();
}  // namespace alloc_testing

}  // namespace octet
