#include "platform/file_map.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <utility>

namespace octet {

MappedFile::~MappedFile() { Release(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_(std::exchange(other.mapped_, false)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_ = std::exchange(other.mapped_, false);
  }
  return *this;
}

void MappedFile::Release() {
  if (mapped_ && data_ != nullptr) munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
  mapped_ = false;
}

void MappedFile::ReleasePages(const void* begin, size_t bytes) const {
  if (!mapped_ || data_ == nullptr) return;
  const uintptr_t map_begin = reinterpret_cast<uintptr_t>(data_);
  const uintptr_t p = reinterpret_cast<uintptr_t>(begin);
  if (p < map_begin || p - map_begin > size_ || bytes > size_ - (p - map_begin)) return;
  const long page_size = sysconf(_SC_PAGESIZE);
  if (page_size <= 0) return;
  const uintptr_t page = static_cast<uintptr_t>(page_size);
  const uintptr_t first = (p + page - 1) / page * page;  // whole pages only: the
  const uintptr_t end = (p + bytes) / page * page;       // neighbours' bytes stay
  if (end <= first) return;
  madvise(reinterpret_cast<void*>(first), end - first, MADV_DONTNEED);
}

MappedFile MappedFile::Borrow(const void* data, size_t size) {
  MappedFile file;
  file.data_ = static_cast<const uint8_t*>(data);
  file.size_ = size;
  return file;
}

Result<MappedFile> MappedFile::Open(const char* path) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Status::Error(StatusCode::kIo, "cannot open '%s': %s", path, std::strerror(errno));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return Status::Error(StatusCode::kIo, "cannot stat '%s': %s", path, std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return Status::Error(StatusCode::kIo, "'%s' is not a regular file", path);
  }
  if (st.st_size == 0) {
    close(fd);
    return Status::Error(StatusCode::kInvalidModel, "'%s' is empty", path);
  }
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  if (file_size > SIZE_MAX / 2) {
    close(fd);
    return Status::Error(StatusCode::kUnsupported,
                         "'%s' is %llu bytes, more than this %zu-bit build can map", path,
                         static_cast<unsigned long long>(file_size), sizeof(void*) * 8);
  }
  void* addr = mmap(nullptr, static_cast<size_t>(file_size), PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  close(fd);
  if (addr == MAP_FAILED) {
    return Status::Error(StatusCode::kIo, "cannot map '%s' (%llu bytes): %s", path,
                         static_cast<unsigned long long>(file_size), std::strerror(err));
  }
  MappedFile file;
  file.data_ = static_cast<const uint8_t*>(addr);
  file.size_ = static_cast<size_t>(file_size);
  file.mapped_ = true;
  return file;
}

}  // namespace octet
