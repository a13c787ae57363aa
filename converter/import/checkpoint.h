// A Hugging Face checkpoint directory's weights: model.safetensors, or the
// shards that model.safetensors.index.json lists (its weight_map), as one set
// of named tensors. Float tensors read as float32 exactly (F16 and BF16 are
// widened; F32 is used in place).
//
// Ownership: the Checkpoint owns every mapping; Tensor::data stays valid for
// its lifetime (the writer streams F32 tensors from it without a copy).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "import/safetensors.h"

namespace octet {
namespace convert {

class Checkpoint {
 public:
  // Opens `dir`/model.safetensors, else `dir`/model.safetensors.index.json and
  // its shards. Throws Error naming what is missing or malformed.
  static Checkpoint Open(const std::filesystem::path& dir);
  // One safetensors file (tests).
  static Checkpoint OpenFile(const std::filesystem::path& file);

  const Tensor* Find(const std::string& name) const;
  // Every tensor, sorted by name.
  std::vector<const Tensor*> All() const;
  const std::vector<std::string>& files() const { return files_; }
  uint64_t total_bytes() const { return total_bytes_; }
  // The float dtypes present ("F16", "F32, BF16"), for provenance.
  std::string DTypeSummary() const;

  // Elements [first, first + count) of a float tensor, as float32. Throws for
  // non-float dtypes, naming the tensor. The whole pages of the mapping that
  // held them are released after reading (a read-only file mapping: a later
  // read faults them in again, unchanged), so a conversion that reads every
  // tensor once never has the checkpoint in its resident set.
  static void ReadF32(const Tensor& t, uint64_t first, uint64_t count, float* out);
  // The whole tensor as float32.
  static std::vector<float> ReadAllF32(const Tensor& t);

 private:
  void Add(SafetensorsFile file, const std::string& display_name);

  std::vector<SafetensorsFile> shards_;
  std::map<std::string, Tensor> tensors_;
  std::vector<std::string> files_;
  uint64_t total_bytes_ = 0;
};

}  // namespace convert
}  // namespace octet
