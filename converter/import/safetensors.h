// A safetensors file, mapped read-only and checked before anyone reads a weight.
//
// Layout: [u64 little-endian N][N bytes of JSON header][data]. The header maps
// each tensor name to {"dtype", "shape", "data_offsets": [begin, end)} with
// offsets relative to the start of the data; "__metadata__" holds strings.
// Open() checks every entry: a known dtype, a shape of non-negative integers,
// begin <= end, end - begin == product(shape) x sizeof(dtype), and the bytes
// inside the file (a truncated file fails here, naming the file).
//
// Ownership: a SafetensorsFile owns its mapping; the Tensor views it hands out
// point into that mapping and live as long as the file object.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "platform/file_map.h"

namespace octet {
namespace convert {

// One tensor of a checkpoint, as stored (not converted).
struct Tensor {
  std::string name;
  std::string dtype;            // safetensors spelling: "F32", "F16", "BF16", "I64", ...
  size_t element_size = 0;      // bytes per element
  std::vector<uint64_t> shape;  // outermost first; empty = scalar
  uint64_t numel = 1;
  const uint8_t* data = nullptr;  // inside the mapping; any alignment
  uint64_t size = 0;              // bytes
  std::string file;               // file name of the shard that holds it (for messages)
  bool mapped = false;            // data is in a read-only file mapping (SafetensorsFile::Open):
                                  // Checkpoint::ReadF32 releases its pages after reading

  bool IsFloat() const { return dtype == "F32" || dtype == "F16" || dtype == "BF16"; }
};

class SafetensorsFile {
 public:
  // Maps and checks `path`. Messages name the file by `display_name`.
  static SafetensorsFile Open(const std::filesystem::path& path, const std::string& display_name);

  const std::vector<Tensor>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  uint64_t file_size() const { return map_.size(); }

 private:
  MappedFile map_;
  std::vector<Tensor> tensors_;  // in header order
  std::map<std::string, std::string> metadata_;
};

// Bytes per element of a safetensors dtype name; 0 for names the format does not define.
size_t SafetensorsDTypeSize(const std::string& dtype);

// Parses a safetensors header (the JSON text) against a data segment of
// `data_size` bytes, filling `tensors` (data pointers relative to `data`).
// Separate from Open() so that tests and fuzzers can feed headers directly.
void ParseSafetensorsHeader(const std::string& header, const uint8_t* data, uint64_t data_size,
                            const std::string& display_name, std::vector<Tensor>* tensors,
                            std::map<std::string, std::string>* metadata);

}  // namespace convert
}  // namespace octet
