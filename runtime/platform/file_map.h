// Read-only file mapping: the model's weights are used in place from the map
// (zero copy), so a model costs address space, not RAM, until it is touched.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/result.h"

namespace octet {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Maps the whole file read-only. Errors name the path and the reason.
  static Result<MappedFile> Open(const char* path);
  // Wraps memory the caller owns and keeps alive (no copy, no ownership).
  static MappedFile Borrow(const void* data, size_t size);
  // Bytes [offset, offset + length) of an open file (length 0: to its end),
  // e.g. an asset inside an APK. Mapped when the range's start falls on a
  // multiple of `alignment` within its page (an mmap offset must be a whole
  // page); otherwise read into memory this object owns, `alignment`-aligned
  // (is_mapped() false). fd stays the caller's; it may be closed afterwards.
  static Result<MappedFile> OpenRange(int fd, uint64_t offset, uint64_t length, size_t alignment);

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool is_mapped() const { return mapped_; }

  // Drops this process's copies of the whole pages inside [begin, begin + bytes)
  // (madvise MADV_DONTNEED): they leave the resident set, and a later read of
  // them faults them in again from the file (the kernel's page cache), with the
  // same bytes: the mapping is read-only, so its pages are never private copies.
  // For a file mapping only; a borrowed buffer is the caller's memory and is
  // left alone, as are ranges outside the mapping. A hint: failures are ignored.
  void ReleasePages(const void* begin, size_t bytes) const;

 private:
  void Release();

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  void* map_base_ = nullptr;  // what munmap or free takes (data_ may start inside it)
  size_t map_size_ = 0;
  bool owned_ = false;        // map_base_ is a heap copy (OpenRange, unaligned)
};

}  // namespace octet
