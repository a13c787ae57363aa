// Model: a loaded, verified .octet file. Immutable after Load, so one Model can
// serve many sessions on many threads. Weights are used in place from the
// mapping (zero copy): TensorView::data points into the file.
//
// Canonical tensor names (the converter writes them, the engine reads them)
// are the role table's (format/tensor_roles.h); the loader checks the
// embedding tables and the head against the architecture, and every layer index.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/result.h"
#include "octet_model_generated.h"
#include "platform/file_map.h"

namespace octet {

// The format this build writes and reads. Readers reject a newer major.
constexpr uint16_t kFormatMajor = 1;
constexpr uint16_t kFormatMinor = 9;  // 1.1: packed int8 matrices (Tensor.layout); 1.2: compiled tokenizer;
                                      // 1.3: 16-bit inputs of int8 matrices (Tensor.input_bits);
                                      // 1.4: Qwen3, Gemma 1-3, Phi-3 (Q/K norms, soft-capping,
                                      // sliding/global layers, sandwich norms, LongRope,
                                      // position offset); 1.5: a token mixer per layer
                                      // (Architecture.layer_mixers); 1.6: ModernBERT (a
                                      // band of sliding_window_ahead later tokens, no norm
                                      // before layer 0's attention); 1.7: LFM2 (short
                                      // convolutions: TokenMixer.ShortConv, ShortConv);
                                      // 1.8: Qwen3.5 (TokenMixer.GatedDeltaNet,
                                      // LinearAttention, Attention.output_gate);
                                      // 1.9: RWKV-4 (TokenMixer.RwkvTimeMix, ChannelMixer,
                                      // per-layer and final norm epsilons)
constexpr uint64_t kDataAlignment = 64;
constexpr int kMaxTensorRank = 8;

// Sanity limits on what a file may claim; generous for edge models, small
// enough that no product of them overflows a 64-bit size.
constexpr uint32_t kMaxVocab = 1u << 24;
constexpr uint32_t kMaxHidden = 1u << 16;
constexpr uint32_t kMaxIntermediate = 1u << 20;
constexpr uint32_t kMaxLayers = 1024;
constexpr uint32_t kMaxHeads = 1024;
constexpr uint32_t kMaxHeadDim = 1024;
constexpr uint32_t kMaxPositions = 1u << 24;
constexpr uint32_t kMaxShortConvKernel = 64;  // ShortConv.kernel
constexpr uint32_t kMaxConvKernel = 64;       // LinearAttention.conv_kernel
constexpr uint32_t kMaxLinearHeadDim = 1024;  // LinearAttention.key_dim, value_dim
constexpr uint32_t kMaxTensorNameLength = 256;

size_t DTypeSize(fb::DType dtype);  // 0 for unknown values
const char* DTypeName(fb::DType dtype);

struct TensorView {
  const char* name = nullptr;
  fb::DType dtype = fb::DType::F32;
  int rank = 0;
  uint32_t shape[kMaxTensorRank] = {0};
  uint64_t numel = 0;
  const void* data = nullptr;             // inside the mapped file, 64-byte aligned
  uint64_t size = 0;                      // bytes
  const fb::Quantization* quant = nullptr;  // null when not quantized
  // RowMajor, or PackedQs8N16K4: an int8 [N, K] matrix in the int8 GEMM's packed
  // tiles (kernels/qs8_packed_gemm.h), whose row sums the loader has checked.
  fb::TensorLayout layout = fb::TensorLayout::RowMajor;
  // Bits of the activations a product quantizes for this matrix: 8, or 16 (I8
  // rank-2 only; two int8 digits, core/quant.h QuantizeRowTwoDigits).
  uint8_t input_bits = 8;
};

class Model {
 public:
  Model() = default;
  ~Model();
  Model(Model&& other) noexcept;
  Model& operator=(Model&& other) noexcept;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // Maps `path` and verifies it (FlatBuffers Verifier, then semantic checks).
  static Result<Model> Load(const char* path);
  // Verifies a model held in memory the caller owns and keeps alive while the
  // Model lives (no copy). `data` must be 64-byte aligned.
  static Result<Model> FromBuffer(const void* data, size_t size);
  // Bytes [offset, offset + length) of an open file (length 0: to its end),
  // mapped when aligned, else copied (platform/file_map.h OpenRange).
  static Result<Model> FromFileRange(int fd, uint64_t offset, uint64_t length);

  const fb::Model& root() const { return *root_; }
  const fb::Architecture& architecture() const { return *root_->architecture(); }

  size_t num_tensors() const { return num_tensors_; }
  const TensorView& tensor(size_t i) const { return tensors_[i]; }
  // Binary search by name; nullptr when absent.
  const TensorView* Find(const char* name) const;

  const uint8_t* file_data() const { return file_.data(); }
  uint64_t file_size() const { return file_.size(); }
  uint64_t data_offset() const { return data_offset_; }  // start of the data segment in the file
  uint64_t data_size() const { return root_->data_size(); }
  bool is_mapped() const { return file_.is_mapped(); }

  // Hints that the bytes [data, data + bytes) of a tensor will not be read for a
  // while (e.g. weights a session has copied into its own layout): when the
  // model is a file mapping, the whole pages among them leave the resident set
  // (MappedFile::ReleasePages); a later read faults them in again, unchanged.
  // Does nothing for a model in a caller's buffer.
  void ReleasePages(const void* data, size_t bytes) const { file_.ReleasePages(data, bytes); }

  // The compiled tokenizer (verified at load); nullptr when the file has none.
  const fb::TokenizerSpec* tokenizer_spec() const {
    return root_->tokenizer() ? root_->tokenizer()->compiled() : nullptr;
  }

  // Bytes of a tokenizer blob; fills *size. nullptr when `index` is out of range.
  const uint8_t* blob(size_t index, uint64_t* size) const;

 private:
  static Result<Model> Verify(MappedFile file);
  void Release();

  MappedFile file_;
  const fb::Model* root_ = nullptr;
  uint64_t data_offset_ = 0;
  TensorView* tensors_ = nullptr;  // [num_tensors_], sorted by name; one allocation
  size_t num_tensors_ = 0;
};

}  // namespace octet
