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

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool is_mapped() const { return mapped_; }

 private:
  void Release();

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
};

}  // namespace octet
