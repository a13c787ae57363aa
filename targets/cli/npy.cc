#include "cli/npy.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cli/args.h"

namespace octet {
namespace cli {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "WriteNpyFloat32 writes memory as-is and declares '<f4' (little-endian)");

std::string NpyFloat32Header(const std::vector<uint64_t>& shape) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) dict += ", ";
    dict += std::to_string(shape[i]);
  }
  if (shape.size() == 1) dict += ",";  // a one-element Python tuple
  dict += "), }";

  constexpr size_t kPreamble = 10;  // magic (6) + version (2) + header length (2)
  constexpr size_t kAlignment = 64;
  size_t total = kPreamble + dict.size() + 1;  // + the final '\n'
  total = (total + kAlignment - 1) / kAlignment * kAlignment;
  const size_t header_length = total - kPreamble;  // < 65536 for any rank we write
  dict.append(header_length - dict.size() - 1, ' ');
  dict.push_back('\n');

  std::string header("\x93NUMPY\x01\x00", 8);
  header.push_back(static_cast<char>(header_length & 0xff));
  header.push_back(static_cast<char>(header_length >> 8));
  return header + dict;
}

void WriteNpyFloat32(const std::string& path, const float* data,
                     const std::vector<uint64_t>& shape) {
  uint64_t count = 1;
  for (uint64_t d : shape) count *= d;
  const std::string header = NpyFloat32Header(shape);

  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    throw Failure("cannot write " + path + ": " + std::strerror(errno));
  }
  bool ok = std::fwrite(header.data(), 1, header.size(), file) == header.size();
  if (ok && count > 0) ok = std::fwrite(data, sizeof(float), count, file) == count;
  int error = ok ? 0 : errno;
  if (std::fclose(file) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (!ok) {
    std::remove(path.c_str());
    throw Failure("cannot write " + path + ": " + std::strerror(error != 0 ? error : EIO));
  }
}

}  // namespace cli
}  // namespace octet
