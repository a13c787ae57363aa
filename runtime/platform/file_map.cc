#include "platform/file_map.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/alloc.h"

namespace octet {

MappedFile::~MappedFile() { Release(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_(std::exchange(other.mapped_, false)),
      map_base_(std::exchange(other.map_base_, nullptr)),
      map_size_(std::exchange(other.map_size_, 0)),
      owned_(std::exchange(other.owned_, false)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_ = std::exchange(other.mapped_, false);
    map_base_ = std::exchange(other.map_base_, nullptr);
    map_size_ = std::exchange(other.map_size_, 0);
    owned_ = std::exchange(other.owned_, false);
  }
  return *this;
}

void MappedFile::Release() {
  if (mapped_ && map_base_ != nullptr) munmap(map_base_, map_size_);
  if (owned_) Free(map_base_);
  data_ = nullptr;
  size_ = 0;
  mapped_ = false;
  map_base_ = nullptr;
  map_size_ = 0;
  owned_ = false;
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
  file.map_base_ = addr;
  file.map_size_ = file.size_;
  return file;
}

Result<MappedFile> MappedFile::OpenRange(int fd, uint64_t offset, uint64_t length,
                                         size_t alignment) {
  if (fd < 0) return Status::Error(StatusCode::kInvalidArgument, "file descriptor %d", fd);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    return Status::Error(StatusCode::kIo, "cannot stat file descriptor %d: %s", fd,
                         std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return Status::Error(StatusCode::kIo, "file descriptor %d is not a regular file", fd);
  }
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  if (offset > file_size) {
    return Status::Error(StatusCode::kInvalidArgument, "offset %llu is past the end of the file "
                         "(%llu bytes)", static_cast<unsigned long long>(offset),
                         static_cast<unsigned long long>(file_size));
  }
  if (length == 0) length = file_size - offset;
  if (length > file_size - offset) {
    return Status::Error(StatusCode::kInvalidArgument, "the range [%llu, +%llu) passes the end of "
                         "the file (%llu bytes)", static_cast<unsigned long long>(offset),
                         static_cast<unsigned long long>(length),
                         static_cast<unsigned long long>(file_size));
  }
  if (length == 0) return Status(StatusCode::kInvalidModel, "the model's range is empty");
  if (length > SIZE_MAX / 2) {
    return Status::Error(StatusCode::kUnsupported, "%llu bytes are more than this %zu-bit build "
                         "can map", static_cast<unsigned long long>(length), sizeof(void*) * 8);
  }
  const long page_size = sysconf(_SC_PAGESIZE);
  const uint64_t page = page_size > 0 ? static_cast<uint64_t>(page_size) : 4096;
  const uint64_t start = offset / page * page;
  const size_t delta = static_cast<size_t>(offset - start);
  MappedFile file;
  file.size_ = static_cast<size_t>(length);
  if (alignment == 0 || delta % alignment == 0) {
    const size_t span = delta + file.size_;
    void* addr = mmap(nullptr, span, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(start));
    if (addr == MAP_FAILED) {
      return Status::Error(StatusCode::kIo, "cannot map %zu bytes of file descriptor %d: %s",
                           span, fd, std::strerror(errno));
    }
    file.map_base_ = addr;
    file.map_size_ = span;
    file.mapped_ = true;
    file.data_ = static_cast<const uint8_t*>(addr) + delta;
    return file;
  }
  // Not aligned in its page: a copy, read with pread (the descriptor's offset is left alone).
  void* memory = Allocate(file.size_, alignment);
  if (memory == nullptr) {
    return Status::Error(StatusCode::kOutOfMemory, "cannot allocate %zu bytes for the model",
                         file.size_);
  }
  file.map_base_ = memory;
  file.owned_ = true;
  file.data_ = static_cast<const uint8_t*>(memory);
  size_t done = 0;
  while (done < file.size_) {
    const ssize_t n = pread(fd, static_cast<uint8_t*>(memory) + done, file.size_ - done,
                            static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Status::Error(StatusCode::kIo, "cannot read file descriptor %d at %llu: %s", fd,
                           static_cast<unsigned long long>(offset + done),
                           n == 0 ? "unexpected end of file" : std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  return file;
}

}  // namespace octet
