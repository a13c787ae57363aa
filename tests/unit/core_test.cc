#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/arena.h"
#include "core/checked_math.h"
#include "core/quant.h"
#include "core/result.h"
#include "platform/cpu.h"
#include "platform/file_map.h"

namespace octet {
namespace {

Result<int> ParsePositive(int v) {
  if (v <= 0) return Status::Error(StatusCode::kInvalidArgument, "%d is not positive", v);
  return std::move(v);
}

Status UsesMacros(int v, int* out) {
  OCTET_ASSIGN_OR_RETURN(int parsed, ParsePositive(v));
  OCTET_CHECK_OR_RETURN(parsed < 100, StatusCode::kUnsupported, "%d is too large", parsed);
  *out = parsed;
  return Status::Ok();
}

TEST_CASE("Status carries a code and a formatted message without allocating") {
  Status ok;
  CHECK(ok.ok());
  Status s = Status::Error(StatusCode::kInvalidModel, "tensor '%s' has %d dims", "w", 9);
  CHECK_FALSE(s.ok());
  CHECK(s.code() == StatusCode::kInvalidModel);
  CHECK(std::string(s.message()) == "tensor 'w' has 9 dims");
  s.WithContext("model.octet");
  CHECK(std::string(s.message()) == "model.octet: tensor 'w' has 9 dims");
  const std::string long_text(1000, 'x');
  Status truncated = Status::Error(StatusCode::kIo, "%s", long_text.c_str());
  CHECK(std::strlen(truncated.message()) == Status::kMaxMessage - 1);
  CHECK(std::string(StatusCodeName(StatusCode::kUnsupported)) == "unsupported");
}

TEST_CASE("Result and the check-and-return macros") {
  int out = 0;
  CHECK(UsesMacros(5, &out).ok());
  CHECK(out == 5);
  Status negative = UsesMacros(-1, &out);
  CHECK(negative.code() == StatusCode::kInvalidArgument);
  CHECK(std::string(negative.message()) == "-1 is not positive");
  CHECK(UsesMacros(500, &out).code() == StatusCode::kUnsupported);
  Result<int> from_ok_status{Status::Ok()};
  CHECK_FALSE(from_ok_status.ok());
  CHECK(from_ok_status.status().code() == StatusCode::kInternal);
}

TEST_CASE("checked size arithmetic refuses overflow") {
  uint64_t out = 0;
  CHECK(CheckedMul(1ull << 32, 1ull << 31, &out));
  CHECK_FALSE(CheckedMul(1ull << 32, 1ull << 32, &out));
  CHECK_FALSE(CheckedAdd(~0ull, 1, &out));
  CHECK(CheckedAlignUp(65, 64, &out));
  CHECK(out == 128);
  CHECK_FALSE(CheckedAlignUp(~0ull - 3, 64, &out));
  CHECK(RangeInside(10, 5, 15));
  CHECK_FALSE(RangeInside(10, 6, 15));
  CHECK_FALSE(RangeInside(~0ull, 2, 15));
  CHECK_FALSE(RangeInside(16, 0, 15));
}

TEST_CASE("ArenaLayout aligns, never overlaps, and flags overflow") {
  ArenaLayout layout;
  const size_t a = layout.Reserve(10);
  const size_t b = layout.Reserve(1, 8);
  const size_t c = layout.Reserve(100);
  CHECK(a == 0);
  CHECK(b == 16);
  CHECK(c == 64);
  CHECK(layout.size() == 164);
  CHECK(layout.ok());
  layout.Reserve(SIZE_MAX - 10);
  CHECK_FALSE(layout.ok());
  ArenaLayout bad_alignment;
  bad_alignment.Reserve(8, 3);
  CHECK_FALSE(bad_alignment.ok());
}

TEST_CASE("Arena allocates once, aligned, or wraps caller memory") {
  Arena arena;
  REQUIRE(arena.Allocate(1000).ok());
  CHECK(arena.owns_memory());
  CHECK(reinterpret_cast<uintptr_t>(arena.base()) % kArenaAlignment == 0);
  std::memset(arena.base(), 0xab, 1000);  // the whole size is usable (ASan checks)
  Arena moved = std::move(arena);
  CHECK(moved.size() == 1000);
  CHECK(arena.base() == nullptr);

  alignas(64) static uint8_t buffer[256];
  Arena wrapped;
  REQUIRE(wrapped.Wrap(buffer, sizeof(buffer)).ok());
  CHECK_FALSE(wrapped.owns_memory());
  CHECK(wrapped.At<uint8_t>(64) == buffer + 64);
  CHECK(wrapped.Wrap(buffer + 1, 8).code() == StatusCode::kInvalidArgument);
  CHECK(Arena().Allocate(SIZE_MAX - 8).code() == StatusCode::kOutOfMemory);
}

TEST_CASE("symmetric row quantization: range, rounding, zero rows") {
  const float x[] = {0.5f, -1.0f, 0.25f, 1.0f / 254.0f, -1.0f / 254.0f, 0.0f};
  int8_t q[6];
  const float scale = QuantizeRowSymmetric(x, 6, q);
  CHECK(scale == doctest::Approx(1.0f / 127.0f));
  CHECK(q[0] == 64);   // 63.5 rounds half to even -> 64
  CHECK(q[1] == -127);
  CHECK(q[2] == 32);   // 31.75 -> 32
  CHECK(q[3] == 0);    // 0.5 -> 0 (half to even)
  CHECK(q[4] == 0);    // -0.5 -> -0
  CHECK(q[5] == 0);
  const float zeros[4] = {0, 0, 0, 0};
  int8_t qz[4] = {1, 1, 1, 1};
  CHECK(QuantizeRowSymmetric(zeros, 4, qz) == 1.0f);
  CHECK(qz[0] == 0);
  CHECK(DequantizeAcc(-254, 0.5f, 0.25f) == doctest::Approx(-31.75f));
  CHECK(SaturateQ8(1000) == 127);
  CHECK(SaturateQ8(-1000) == -127);
}

TEST_CASE("CPU features: names round-trip and the environment only removes") {
  char text[128];
  FormatCpuFeatures(kCpuX86Avx2 | kCpuArmI8mm, text, sizeof(text));
  CHECK(std::string(text) == "avx2 i8mm");
  FormatCpuFeatures(0, text, sizeof(text));
  CHECK(std::string(text) == "(none)");
  CHECK(CpuFeatureFromName("dotprod", 7) == kCpuArmDotProd);
  CHECK(CpuFeatureFromName("dotpro", 6) == 0);
  const CpuInfo detected = DetectCpuInfo();
  CHECK((GetCpuInfo().features & ~detected.features) == 0);
  FormatCpuFeatures(GetCpuInfo().features, text, sizeof(text));
  MESSAGE("CPU features in use: " << text);
#if defined(__aarch64__)
  CHECK(detected.Has(kCpuArmNeon));  // Advanced SIMD is architectural on AArch64
#endif
}

TEST_CASE("MappedFile reports missing, empty and non-regular files") {
  Result<MappedFile> missing = MappedFile::Open("/nonexistent-octet-file");
  CHECK(missing.status().code() == StatusCode::kIo);
  Result<MappedFile> directory = MappedFile::Open("/");
  CHECK(directory.status().code() == StatusCode::kIo);
}

// ReleasePages only drops this process's copies of a read-only file mapping:
// the bytes read back unchanged, in the released pages and around them, and a
// borrowed buffer (anonymous memory, which MADV_DONTNEED would zero) is never touched.
TEST_CASE("MappedFile::ReleasePages: file bytes read back unchanged, borrowed memory untouched") {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t size = 8 * page + 100;
  std::vector<uint8_t> pattern(size);
  for (size_t i = 0; i < size; ++i) pattern[i] = static_cast<uint8_t>(i * 7 + i / 251);
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/octet-release-XXXXXX";
  const int fd = mkstemp(&path[0]);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, pattern.data(), size) == static_cast<ssize_t>(size));
  close(fd);
  {
    Result<MappedFile> file = MappedFile::Open(path.c_str());
    REQUIRE(file.ok());
    const MappedFile& map = file.value();
    CHECK(std::memcmp(map.data(), pattern.data(), size) == 0);  // every page resident
    map.ReleasePages(map.data() + 100, 5 * page);                // pages 1..4 (whole ones)
    map.ReleasePages(map.data(), size);                          // all of it
    map.ReleasePages(map.data() + size - 10, 1000);              // past the end: ignored
    map.ReleasePages(pattern.data(), page);                      // outside the mapping: ignored
    CHECK(std::memcmp(map.data(), pattern.data(), size) == 0);
  }
  unlink(path.c_str());

  std::vector<uint8_t> memory(4 * page + page);  // aligned to a page inside
  uint8_t* aligned = memory.data() + (page - reinterpret_cast<uintptr_t>(memory.data()) % page);
  std::memcpy(aligned, pattern.data(), 4 * page);
  const MappedFile borrowed = MappedFile::Borrow(aligned, 4 * page);
  borrowed.ReleasePages(aligned, 4 * page);
  CHECK(std::memcmp(aligned, pattern.data(), 4 * page) == 0);
}

}  // namespace
}  // namespace octet
