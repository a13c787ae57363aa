#include "core/arena.h"

#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/alloc.h"
#include "core/checked_math.h"

namespace octet {

size_t ArenaLayout::Reserve(size_t bytes, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > 4096) {
    ok_ = false;
    return 0;
  }
  uint64_t start = 0, end = 0;
  if (!CheckedAlignUp(size_, alignment, &start) || !CheckedAdd(start, bytes, &end) ||
      end > SIZE_MAX - kArenaAlignment) {
    ok_ = false;
    return 0;
  }
  size_ = static_cast<size_t>(end);
  return static_cast<size_t>(start);
}

Arena::~Arena() { Release(); }

Arena::Arena(Arena&& other) noexcept
    : base_(other.base_), size_(other.size_), owned_(other.owned_) {
  other.base_ = nullptr;
  other.size_ = 0;
  other.owned_ = false;
}

Arena& Arena::operator=(Arena&& other) noexcept {
  if (this != &other) {
    Release();
    base_ = std::exchange(other.base_, nullptr);
    size_ = std::exchange(other.size_, 0);
    owned_ = std::exchange(other.owned_, false);
  }
  return *this;
}

void Arena::Release() {
  if (owned_) Free(base_);
  base_ = nullptr;
  size_ = 0;
  owned_ = false;
}

Status Arena::Allocate(size_t bytes) {
  Release();
  const size_t rounded = AlignUp(bytes == 0 ? kArenaAlignment : bytes, kArenaAlignment);
  if (rounded < bytes) {
    return Status::Error(StatusCode::kOutOfMemory, "arena of %zu bytes is too large", bytes);
  }
  void* memory = ::octet::Allocate(rounded, kArenaAlignment);
  if (memory == nullptr) {
    return Status::Error(StatusCode::kOutOfMemory, "could not allocate an arena of %zu bytes",
                         bytes);
  }
  base_ = static_cast<uint8_t*>(memory);
  size_ = bytes;
  owned_ = true;
  return Status::Ok();
}

Status Arena::Wrap(void* buffer, size_t bytes) {
  Release();
  if (buffer == nullptr && bytes > 0) {
    return Status(StatusCode::kInvalidArgument, "arena buffer is null");
  }
  if (reinterpret_cast<uintptr_t>(buffer) % kArenaAlignment != 0) {
    return Status::Error(StatusCode::kInvalidArgument, "arena buffer must be %zu-byte aligned",
                         kArenaAlignment);
  }
  base_ = static_cast<uint8_t*>(buffer);
  size_ = bytes;
  owned_ = false;
  return Status::Ok();
}

}  // namespace octet
