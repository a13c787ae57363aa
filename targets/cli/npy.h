// Writes NumPy .npy files (format version 1.0): the magic "\x93NUMPY", the
// version, a little-endian uint16 header length, then an ASCII Python dict
// {'descr': '<f4', 'fortran_order': False, 'shape': (...), } padded with
// spaces and a final '\n' so the data starts on a 64-byte boundary, then the
// raw little-endian float32 values in C (row-major) order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace octet {
namespace cli {

// The header bytes (magic through the '\n') for a float32 C-order array.
std::string NpyFloat32Header(const std::vector<uint64_t>& shape);

// Writes `data` (product(shape) floats) to `path`, replacing it.
// Throws Failure naming the path and the OS error.
void WriteNpyFloat32(const std::string& path, const float* data,
                     const std::vector<uint64_t>& shape);

}  // namespace cli
}  // namespace octet
