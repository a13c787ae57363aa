// Small synthetic Hugging Face checkpoints for the converter tests, written
// from C++: a config.json and safetensors (single file or sharded) in a
// temporary directory. The tensor names here are written out independently of
// the importers, from the transformers layouts, so the tests check the
// importers rather than repeat them.
//
// Values are multiples of 2^-7 in (-1, 1): exact in F32, F16 and BF16, so a
// converted tensor must equal its source bit for bit whatever the stored dtype.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace octet {
namespace testing {

// A fresh directory under the system temp dir, removed with its contents.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// One tensor as stored: raw little-endian bytes of `dtype` ("F32", "F16", "BF16", "I64", ...).
struct RawTensor {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> bytes;
};

// A safetensors file's bytes: header padded to 8 bytes, data in the given order.
std::vector<uint8_t> SafetensorsBytes(const std::vector<RawTensor>& tensors);
void WriteFile(const std::filesystem::path& path, const std::vector<uint8_t>& bytes);
void WriteText(const std::filesystem::path& path, const std::string& text);

struct HfTensor {
  std::string name;
  std::vector<uint64_t> shape;
  std::vector<float> values;  // product(shape)
};

class HfCheckpoint {
 public:
  nlohmann::json config;
  std::vector<HfTensor> tensors;
  std::vector<RawTensor> raw_extras;  // stored as given (e.g. BERT's I64 position_ids)

  // Adds a tensor of deterministic pseudo-random multiples of 2^-7.
  HfTensor& Add(const std::string& name, std::vector<uint64_t> shape);
  // Adds a copy of `other`'s values under a new name (tied duplicates).
  HfTensor& AddCopy(const std::string& name, const std::string& other);
  HfTensor* Find(const std::string& name);
  const HfTensor& Get(const std::string& name) const;  // throws when absent
  void Remove(const std::string& name);
  void Rename(const std::string& from, const std::string& to);

  // Writes config.json and the weights into `dir`: model.safetensors, or
  // `shards` files plus model.safetensors.index.json. `dtype`: F32, F16 or BF16.
  void Write(const std::filesystem::path& dir, const std::string& dtype = "F32",
             int shards = 1) const;

 private:
  uint32_t seed_ = 1;
};

struct HfOptions {
  uint32_t vocab = 64;
  uint32_t hidden = 32;
  uint32_t layers = 2;
  uint32_t heads = 4;
  uint32_t kv_heads = 4;  // llama family
  uint32_t intermediate = 48;
  uint32_t max_positions = 16;
  bool tied = false;   // llama family, t5 (t5's default is tied: set it)
  bool prefix = true;  // bert. / transformer. / model. prefixes
};

// model_type: bert, distilbert, roberta, xlm-roberta, gpt2, llama, qwen2, qwen3, mistral, phi3,
// gemma, gemma2, gemma3_text, marian, t5, modernbert, lfm2, qwen3_5_text, qwen3_5 (the
// multimodal checkpoint), qwen3_next (dense), rwkv. roberta: max_positions usable positions, a
// table of max_positions + 2 rows.
HfCheckpoint MakeHfCheckpoint(const std::string& model_type, const HfOptions& options = {});

// Marian's sinusoidal table [rows, dim], as transformers builds it.
std::vector<float> MarianSinusoids(uint32_t rows, uint32_t dim);

// float -> binary16 bits, round to nearest even (test-only reference).
uint16_t FloatToHalfBits(float f);

}  // namespace testing
}  // namespace octet
