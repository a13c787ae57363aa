// Memory planning and arenas.
//
// A session plans its memory before it runs: ArenaLayout hands out offsets
// (aligned, never overlapping) for every buffer the run will need; Arena then
// holds one allocation of layout.size() bytes (or memory the caller owns) and
// turns offsets into pointers. Nothing is allocated after planning.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace octet {

constexpr size_t kArenaAlignment = 64;  // cache line; also the widest SIMD load (zmm)

class ArenaLayout {
 public:
  // Reserves `bytes` at an `alignment`-aligned offset (a power of two <= 4096)
  // and returns the offset. Overflow is sticky: ok() turns false.
  size_t Reserve(size_t bytes, size_t alignment = kArenaAlignment);
  size_t size() const { return size_; }
  bool ok() const { return ok_; }

 private:
  size_t size_ = 0;
  bool ok_ = true;
};

class Arena {
 public:
  Arena() = default;
  ~Arena();
  Arena(Arena&& other) noexcept;
  Arena& operator=(Arena&& other) noexcept;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // Takes one kArenaAlignment-aligned allocation of `bytes` (0 is allowed).
  Status Allocate(size_t bytes);
  // Uses memory the caller owns (and keeps alive); it must be kArenaAlignment-aligned.
  Status Wrap(void* buffer, size_t bytes);

  uint8_t* base() const { return base_; }
  size_t size() const { return size_; }
  bool owns_memory() const { return owned_; }

  // The buffer at a planned offset. The plan guarantees offset + bytes <= size().
  template <typename T>
  T* At(size_t offset) const {
    return reinterpret_cast<T*>(base_ + offset);
  }

 private:
  void Release();

  uint8_t* base_ = nullptr;
  size_t size_ = 0;
  bool owned_ = false;
};

}  // namespace octet
