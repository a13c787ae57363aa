#include "write/model_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <stdexcept>

#include "format/model.h"

namespace octet {

struct ModelWriter::Item {
  std::string name;
  fb::DType dtype = fb::DType::U8;
  std::vector<uint32_t> shape;
  QuantParams quant;
  const void* data = nullptr;     // caller-owned, or owned.data()
  std::vector<uint8_t> owned;
  Producer produce;               // set: the bytes are made at write time
  uint64_t size = 0;
  uint64_t offset = 0;            // in the data segment, set by Plan()
  fb::TensorLayout layout = fb::TensorLayout::RowMajor;
  uint8_t input_bits = 8;
  bool reread = false;            // a producer RereadHeldBytesFrom also turns into a file read
};

struct ModelWriter::Layout {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<const Item*> items;  // tensors then blobs, with their offsets
  std::vector<uint64_t> offsets;
  uint64_t data_offset = 0;        // of the data segment in the file
  uint64_t file_size = 0;
};

namespace {

[[noreturn]] void Fail(const std::string& message) { throw std::runtime_error(message); }

uint64_t AlignUp64(uint64_t v) { return (v + kDataAlignment - 1) & ~(kDataAlignment - 1); }

}  // namespace

ModelWriter::ModelWriter() = default;
ModelWriter::~ModelWriter() = default;
ModelWriter::ModelWriter(ModelWriter&&) noexcept = default;
ModelWriter& ModelWriter::operator=(ModelWriter&&) noexcept = default;

// The generated object-API types copy deeply.
void ModelWriter::SetArchitecture(const fb::ArchitectureT& architecture) {
  architecture_ = std::make_unique<fb::ArchitectureT>(architecture);
}

void ModelWriter::SetProvenance(const fb::ProvenanceT& provenance) {
  provenance_ = std::make_unique<fb::ProvenanceT>(provenance);
}

void ModelWriter::SetMemoryPlan(const fb::MemoryPlanT& plan) {
  memory_plan_ = std::make_unique<fb::MemoryPlanT>(plan);
}

void ModelWriter::SetTokenizerKind(fb::TokenizerKind kind) { tokenizer_kind_ = kind; }

void ModelWriter::SetCompiledTokenizer(std::unique_ptr<fb::TokenizerSpecT> spec) {
  compiled_tokenizer_ = std::move(spec);
}

void ModelWriter::AddItem(Item item) {
  for (const Item& t : tensors_) {
    if (t.name == item.name) Fail("tensor '" + item.name + "' added twice");
  }
  tensors_.push_back(std::move(item));
}

void ModelWriter::AddTensor(const std::string& name, fb::DType dtype,
                            const std::vector<uint32_t>& shape, const void* data,
                            QuantParams quant) {
  if (name.empty()) Fail("a tensor needs a name");
  if (shape.empty() || shape.size() > static_cast<size_t>(kMaxTensorRank)) {
    Fail("tensor '" + name + "': rank must be 1.." + std::to_string(kMaxTensorRank));
  }
  uint64_t numel = 1;
  for (uint32_t d : shape) {
    if (d == 0) Fail("tensor '" + name + "' has a zero dimension");
    numel *= d;
  }
  if (dtype == fb::DType::I8 && quant.scheme == fb::QuantScheme::None) {
    Fail("tensor '" + name + "' is int8 and needs quantization parameters");
  }
  Item item;
  item.name = name;
  item.dtype = dtype;
  item.shape = shape;
  item.quant = std::move(quant);
  item.data = data;
  item.size = numel * DTypeSize(dtype);
  AddItem(std::move(item));
}

void ModelWriter::AddTensorCopy(const std::string& name, fb::DType dtype,
                                const std::vector<uint32_t>& shape, const void* data,
                                QuantParams quant) {
  AddTensor(name, dtype, shape, nullptr, std::move(quant));
  Item& item = tensors_.back();
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  item.owned.assign(bytes, bytes + item.size);
  item.data = item.owned.data();
}

void ModelWriter::AddPackedQs8Copy(const std::string& name, const std::vector<uint32_t>& shape,
                                   const void* packed, uint64_t size, QuantParams quant) {
  if (shape.size() != 2) Fail("packed tensor '" + name + "' must be a matrix");
  AddTensor(name, fb::DType::I8, shape, nullptr, std::move(quant));
  Item& item = tensors_.back();
  item.layout = fb::TensorLayout::PackedQs8N16K4;
  item.size = size;
  const uint8_t* bytes = static_cast<const uint8_t*>(packed);
  item.owned.assign(bytes, bytes + size);
  item.data = item.owned.data();
}

void ModelWriter::AddPackedQs8Producer(const std::string& name, const std::vector<uint32_t>& shape,
                                       uint64_t size, Producer produce, QuantParams quant) {
  if (shape.size() != 2) Fail("packed tensor '" + name + "' must be a matrix");
  if (!produce) Fail("tensor '" + name + "': empty producer");
  AddTensor(name, fb::DType::I8, shape, nullptr, std::move(quant));
  Item& item = tensors_.back();
  item.layout = fb::TensorLayout::PackedQs8N16K4;
  item.size = size;
  item.produce = std::move(produce);
  item.reread = true;
}

void ModelWriter::AddTensorProducer(const std::string& name, fb::DType dtype,
                                    const std::vector<uint32_t>& shape, Producer produce,
                                    QuantParams quant) {
  if (!produce) Fail("tensor '" + name + "': empty producer");
  AddTensor(name, dtype, shape, nullptr, std::move(quant));
  tensors_.back().produce = std::move(produce);
}

void ModelWriter::SetInputBits(const std::string& name, uint8_t bits) {
  for (Item& t : tensors_) {
    if (t.name != name) continue;
    if (bits != 8 && (bits != 16 || t.dtype != fb::DType::I8 || t.shape.size() != 2)) {
      Fail("tensor '" + name + "': input bits " + std::to_string(bits) +
           " (8, or 16 for an int8 matrix)");
    }
    t.input_bits = bits;
    return;
  }
  Fail("SetInputBits: no tensor '" + name + "'");
}

void ModelWriter::AddTokenizerFile(const std::string& name, const void* data, uint64_t size) {
  Item item;
  item.name = name;
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  item.owned.assign(bytes, bytes + size);
  item.data = item.owned.data();
  item.size = size;
  blobs_.push_back(std::move(item));
}

ModelWriter::Layout ModelWriter::Plan() const {
  if (!architecture_ || !architecture_->attention) {
    Fail("model writer: the architecture (with its attention table) is not set");
  }
  Layout layout;
  uint64_t cursor = 0;
  for (const Item& t : tensors_) {
    layout.items.push_back(&t);
    layout.offsets.push_back(cursor);
    cursor = AlignUp64(cursor + t.size);
  }
  for (const Item& b : blobs_) {
    layout.items.push_back(&b);
    layout.offsets.push_back(cursor);
    cursor = AlignUp64(cursor + b.size);
  }
  const uint64_t data_size = cursor;

  flatbuffers::FlatBufferBuilder& fbb = layout.fbb;
  const auto architecture = fb::Architecture::Pack(fbb, architecture_.get());
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const Item& t = tensors_[i];
    flatbuffers::Offset<fb::Quantization> quant = 0;
    if (t.quant.scheme != fb::QuantScheme::None) {
      quant = fb::CreateQuantizationDirect(fbb, t.quant.scheme, t.quant.axis, t.quant.block_size,
                                           &t.quant.scales,
                                           t.quant.zero_points.empty() ? nullptr
                                                                       : &t.quant.zero_points);
    }
    tensors.push_back(fb::CreateTensorDirect(fbb, t.name.c_str(), t.dtype, &t.shape, quant,
                                             layout.offsets[i], t.size, t.layout,
                                             t.input_bits));
  }
  flatbuffers::Offset<fb::Tokenizer> tokenizer = 0;
  if (!blobs_.empty() || tokenizer_kind_ != fb::TokenizerKind::None || compiled_tokenizer_) {
    std::vector<flatbuffers::Offset<fb::Blob>> files;
    for (size_t i = 0; i < blobs_.size(); ++i) {
      files.push_back(fb::CreateBlobDirect(fbb, blobs_[i].name.c_str(),
                                           layout.offsets[tensors_.size() + i], blobs_[i].size));
    }
    flatbuffers::Offset<fb::TokenizerSpec> compiled = 0;
    if (compiled_tokenizer_) compiled = fb::TokenizerSpec::Pack(fbb, compiled_tokenizer_.get());
    tokenizer = fb::CreateTokenizerDirect(fbb, tokenizer_kind_, &files, compiled);
  }
  flatbuffers::Offset<fb::Provenance> provenance = 0;
  if (provenance_) provenance = fb::Provenance::Pack(fbb, provenance_.get());
  flatbuffers::Offset<fb::MemoryPlan> plan = 0;
  if (memory_plan_) plan = fb::MemoryPlan::Pack(fbb, memory_plan_.get());
  const auto root = fb::CreateModelDirect(fbb, kFormatMajor, kFormatMinor, architecture, &tensors,
                                          tokenizer, provenance, plan,
                                          static_cast<uint32_t>(kDataAlignment), data_size);
  fb::FinishSizePrefixedModelBuffer(fbb, root);
  layout.data_offset = AlignUp64(fbb.GetSize());
  layout.file_size = layout.data_offset + data_size;
  return layout;
}

// The bytes of `item`: its data, or a buffer its producer fills (kept in
// `scratch`); nullptr for a sparse hole.
const void* ModelWriter::Bytes(const Item& item, std::vector<uint64_t>& scratch) {
  if (!item.produce) return item.data;
  scratch.assign((item.size + sizeof(uint64_t) - 1) / sizeof(uint64_t), 0);
  item.produce(scratch.data());
  return scratch.data();
}

void ModelWriter::Write(const std::string& path, const Progress& progress) const {
  const Layout layout = Plan();
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) Fail("cannot create '" + path + "': " + std::strerror(errno));
  auto write_at = [&](const void* data, uint64_t size, uint64_t offset) {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    while (size > 0) {
      const size_t chunk = static_cast<size_t>(std::min<uint64_t>(size, 1u << 30));
      const ssize_t n = pwrite(fd, p, chunk, static_cast<off_t>(offset));
      if (n <= 0) {
        const std::string reason = std::strerror(errno);
        close(fd);
        Fail("cannot write '" + path + "': " + reason);
      }
      p += n;
      size -= static_cast<uint64_t>(n);
      offset += static_cast<uint64_t>(n);
    }
  };
  write_at(layout.fbb.GetBufferPointer(), layout.fbb.GetSize(), 0);
  uint64_t bytes_total = 0, bytes_done = 0;
  for (const Item* item : layout.items) bytes_total += item->size;
  std::vector<uint64_t> scratch;
  for (size_t i = 0; i < layout.items.size(); ++i) {
    const Item* item = layout.items[i];
    const void* bytes = nullptr;
    try {
      bytes = Bytes(*item, scratch);
    } catch (...) {
      close(fd);
      throw;
    }
    if (bytes != nullptr && item->size > 0) {
      write_at(bytes, item->size, layout.data_offset + layout.offsets[i]);
    }
    bytes_done += item->size;
    if (progress) progress(i + 1, layout.items.size(), bytes_done, bytes_total);
  }
  // Padding and sparse tensors are holes: the file reads zeros there.
  if (ftruncate(fd, static_cast<off_t>(layout.file_size)) != 0 || close(fd) != 0) {
    Fail("cannot finish '" + path + "': " + std::strerror(errno));
  }
}

namespace {

// Reads `size` bytes at `offset` of `path` into `out`.
void ReadAt(const std::string& path, uint64_t offset, uint64_t size, void* out) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Fail("cannot read '" + path + "': " + std::strerror(errno));
  uint8_t* p = static_cast<uint8_t*>(out);
  uint64_t done = 0;
  while (done < size) {
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(size - done, 1u << 30));
    const ssize_t n = pread(fd, p + done, chunk, static_cast<off_t>(offset + done));
    if (n <= 0) {
      const std::string reason = n < 0 ? std::strerror(errno) : "the file is shorter";
      close(fd);
      Fail("cannot read '" + path + "': " + reason);
    }
    done += static_cast<uint64_t>(n);
  }
  close(fd);
}

}  // namespace

void ModelWriter::RereadHeldBytesFrom(const std::string& path) {
  const Layout layout = Plan();
  // The file must be what this writer writes now: its size and its header.
  struct stat st;
  std::vector<uint8_t> header(layout.fbb.GetSize());
  if (stat(path.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_size) != layout.file_size) {
    Fail("'" + path + "' is not the file this writer wrote");
  }
  ReadAt(path, 0, header.size(), header.data());
  if (std::memcmp(header.data(), layout.fbb.GetBufferPointer(), header.size()) != 0) {
    Fail("'" + path + "' is not the file this writer wrote");
  }
  // layout.items: tensors_ then blobs_, in order.
  for (size_t i = 0; i < layout.items.size(); ++i) {
    Item& item = i < tensors_.size() ? tensors_[i] : blobs_[i - tensors_.size()];
    if (item.owned.empty() && !item.reread) continue;
    item.reread = false;
    const uint64_t offset = layout.data_offset + layout.offsets[i];
    const uint64_t size = item.size;
    item.produce = [path, offset, size](void* out) { ReadAt(path, offset, size, out); };
    item.data = nullptr;
    std::vector<uint8_t>().swap(item.owned);
  }
}

std::vector<uint8_t> ModelWriter::WriteToBuffer() const {
  std::vector<uint8_t> out;
  WriteToMemory([&out](uint64_t size) {
    out.assign(size, 0);
    return out.data();
  });
  return out;
}

void ModelWriter::WriteToMemory(const std::function<uint8_t*(uint64_t size)>& allocate) const {
  const Layout layout = Plan();
  uint8_t* out = allocate(layout.file_size);
  std::memset(out, 0, layout.file_size);
  std::memcpy(out, layout.fbb.GetBufferPointer(), layout.fbb.GetSize());
  std::vector<uint64_t> scratch;
  for (size_t i = 0; i < layout.items.size(); ++i) {
    const Item* item = layout.items[i];
    uint8_t* to = out + layout.data_offset + layout.offsets[i];
    // A producer writes in place (the data segment's offsets are 64-byte
    // aligned): a tensor as large as the model's largest is made once, not
    // also in a scratch copy.
    if (item->produce && item->size > 0 &&
        reinterpret_cast<uintptr_t>(to) % alignof(std::max_align_t) == 0) {
      item->produce(to);
      continue;
    }
    const void* bytes = Bytes(*item, scratch);
    if (bytes != nullptr && item->size > 0) std::memcpy(to, bytes, item->size);
  }
}

}  // namespace octet
