// ModelWriter: builds a .octet file (layout in runtime/format/octet_model.fbs).
// Used by octet-convert and by the tests to make models. Host-only code: it
// throws std::runtime_error with a one-line message on misuse or I/O failure.
//
// Tensor data is not copied unless asked (AddTensorCopy): the caller keeps the
// bytes alive until Write(), so a converter can stream a multi-GiB checkpoint
// from its own mmap into the file. A null data pointer writes zeros as a
// sparse hole (tests use it for files over 2 GiB). A tensor that must be
// computed (widened from F16, transposed) can come from a producer that fills
// a buffer at write time, so that only one such tensor is in memory at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "octet_model_generated.h"

namespace octet {

struct QuantParams {
  fb::QuantScheme scheme = fb::QuantScheme::None;
  uint32_t axis = 0;
  uint32_t block_size = 0;
  std::vector<float> scales;
  std::vector<int32_t> zero_points;  // empty = symmetric
};

class ModelWriter {
 public:
  ModelWriter();
  ~ModelWriter();
  ModelWriter(ModelWriter&&) noexcept;
  ModelWriter& operator=(ModelWriter&&) noexcept;

  void SetArchitecture(const fb::ArchitectureT& architecture);
  void SetProvenance(const fb::ProvenanceT& provenance);
  void SetMemoryPlan(const fb::MemoryPlanT& plan);
  void SetTokenizerKind(fb::TokenizerKind kind);
  // The compiled tokenizer (converter/tokenize/compile_tokenizer.h); nullptr clears it.
  void SetCompiledTokenizer(std::unique_ptr<fb::TokenizerSpecT> spec);

  // Adds a tensor whose bytes (product(shape) * sizeof(dtype)) stay owned by the caller.
  void AddTensor(const std::string& name, fb::DType dtype, const std::vector<uint32_t>& shape,
                 const void* data, QuantParams quant = QuantParams());
  // Same, but the writer keeps its own copy of the bytes.
  void AddTensorCopy(const std::string& name, fb::DType dtype, const std::vector<uint32_t>& shape,
                     const void* data, QuantParams quant = QuantParams());
  // An int8 matrix [N, K] already packed for the int8 GEMM kernels
  // (qs8_pack_weights__ref: `size` bytes, layout PackedQs8N16K4); copied.
  void AddPackedQs8Copy(const std::string& name, const std::vector<uint32_t>& shape,
                        const void* packed, uint64_t size, QuantParams quant);
  // Same, made during Write() by `produce` (exactly `size` bytes; what it
  // reads must outlive the writes): no copy held. RereadHeldBytesFrom makes
  // it a read of the file, as it does copies.
  void AddPackedQs8Producer(const std::string& name, const std::vector<uint32_t>& shape,
                            uint64_t size, std::function<void(void* out)> produce,
                            QuantParams quant);
  // Same, but the bytes are made during Write(): `produce` fills exactly
  // product(shape) * sizeof(dtype) bytes (suitably aligned for any type) and
  // may throw; the writer frees the buffer once the bytes are written.
  using Producer = std::function<void(void* out)>;
  void AddTensorProducer(const std::string& name, fb::DType dtype,
                         const std::vector<uint32_t>& shape, Producer produce,
                         QuantParams quant = QuantParams());
  // Tensor.input_bits of an int8 matrix already added: 16 makes the runtime quantize
  // its products' inputs as two int8 digits (core/quant.h QuantizeRowTwoDigits).
  void SetInputBits(const std::string& name, uint8_t bits);
  // A tokenizer file carried verbatim (copied).
  void AddTokenizerFile(const std::string& name, const void* data, uint64_t size);

  // Called after each tensor or blob is written: items and bytes done so far, and the totals.
  using Progress = std::function<void(size_t items_done, size_t items_total,
                                      uint64_t bytes_done, uint64_t bytes_total)>;

  // Writes the file (replacing it). Throws on any failure.
  void Write(const std::string& path, const Progress& progress = nullptr) const;
  // Frees the bytes the writer holds (its copies: AddTensorCopy, AddPackedQs8Copy,
  // tokenizer files; and AddPackedQs8Producer's sources): later writes read them back from `path`, a file this
  // writer has just written (Write) and that stays unchanged until the last of
  // them. A converter writes a file twice, the second time with a report
  // measured on the first, without holding the int8 matrices meanwhile.
  void RereadHeldBytesFrom(const std::string& path);
  // The whole file in memory (tests, fuzz seeds). Sparse tensors become zeros.
  std::vector<uint8_t> WriteToBuffer() const;
  // The same bytes into memory allocate(size) returns (size: the file's; the
  // memory must hold that many bytes; allocate throws when it cannot).
  void WriteToMemory(const std::function<uint8_t*(uint64_t size)>& allocate) const;

 private:
  struct Item;
  struct Layout;
  Layout Plan() const;
  static const void* Bytes(const Item& item, std::vector<uint64_t>& scratch);
  void AddItem(Item item);

  std::unique_ptr<fb::ArchitectureT> architecture_;
  std::unique_ptr<fb::ProvenanceT> provenance_;
  std::unique_ptr<fb::MemoryPlanT> memory_plan_;
  fb::TokenizerKind tokenizer_kind_ = fb::TokenizerKind::None;
  std::unique_ptr<fb::TokenizerSpecT> compiled_tokenizer_;
  std::vector<Item> tensors_;
  std::vector<Item> blobs_;
};

}  // namespace octet
