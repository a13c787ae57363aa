// Small synthetic models for tests, fuzz seeds and the demo: built with the
// real writer, so every test exercises the same path as octet-convert.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "octet_model_generated.h"
#include "write/model_writer.h"

namespace octet {
namespace testing {

struct TinyModelOptions {
  fb::Family family = fb::Family::Llama;  // Llama (decoder), Bert-like (encoder), T5 (enc-dec)
  uint32_t vocab = 32;
  uint32_t hidden = 16;
  uint32_t layers = 1;       // decoder layers for decoder-only, encoder layers otherwise
  bool int8 = true;          // int8 per-channel weights, else F32
  bool tied = false;         // no lm_head tensor when tied
  bool tokenizer = true;     // carry a small tokenizer.json blob
  uint32_t seed = 1;
  uint32_t max_positions = 0;  // learned or RoPE positions; 0 = the family's default
  uint32_t position_offset = 0;  // learned positions: the first token's row (RoBERTa: 2)
  float layer_stddev = 0.02f;  // of the layers' weight matrices (larger: peakier attention)
  // int8 models with layers: the matrices that products read (not the
  // embeddings, but a decoder's tied table, the head) in the GEMM's packed
  // tiles, as octet-convert writes them.
  bool packed = false;
  // int8 models: every matrix that products read takes 16-bit inputs
  // (Tensor.input_bits 16: two int8 digits per value).
  bool two_digit_inputs = false;
  // Decoders: the token mixer of each layer (Architecture.layer_mixers); empty:
  // the family's (Lfm2: short convolutions in even layers, attention in odd
  // ones; the others: attention). Layers get the tensors of their mixer
  // (token-shift layers none: tests add their shift vectors).
  std::vector<fb::TokenMixer> mixers;
  uint32_t conv_kernel = 3;  // ShortConv layers' taps
  bool conv_bias = false;    // and their biases
  // Decoders: every layer's channel mixer (Architecture.channel_mixer; the
  // family's when not set: Rwkv's channel mix, the feed-forward elsewhere).
  // RwkvChannelMix layers get its tensors instead of ffn.*.
  bool set_channel_mixer = false;
  fb::ChannelMixer channel_mixer = fb::ChannelMixer::FeedForward;
};

// The architecture table for a tiny model of the given family.
fb::ArchitectureT TinyArchitecture(const TinyModelOptions& options);

// A writer filled with a complete tiny model. The writer owns copies of all data.
ModelWriter MakeTinyModelWriter(const TinyModelOptions& options);

// The file bytes of MakeTinyModelWriter(options).
std::vector<uint8_t> MakeTinyModelBytes(const TinyModelOptions& options = TinyModelOptions());

// Bytes in a 64-byte aligned buffer (Model::FromBuffer needs the alignment).
class AlignedBytes {
 public:
  explicit AlignedBytes(const std::vector<uint8_t>& bytes);
  explicit AlignedBytes(size_t size);
  ~AlignedBytes();
  AlignedBytes(const AlignedBytes&) = delete;
  AlignedBytes& operator=(const AlignedBytes&) = delete;
  uint8_t* data() { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// A unique path under the system temp dir; the file is removed by the destructor.
class TempFile {
 public:
  explicit TempFile(const std::string& suffix = ".octet");
  ~TempFile();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace testing
}  // namespace octet
