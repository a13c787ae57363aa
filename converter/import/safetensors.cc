#include "import/safetensors.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "import/error.h"
#include "import/json_util.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "octet-convert reads safetensors (little-endian) in place: build it on a little-endian host"
#endif

namespace octet {
namespace convert {
namespace {

// The format's own limit on the header (safetensors refuses larger ones).
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

struct DTypeInfo {
  const char* name;
  size_t size;
};

// Every dtype the safetensors format defines. The converter reads only the
// float ones; the others are accepted in the header so that buffers an
// importer ignores (BERT's int64 position_ids) do not stop a conversion.
constexpr DTypeInfo kDTypes[] = {
    {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
    {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
    {"U32", 4},  {"F32", 4}, {"F64", 8}, {"I64", 8},     {"U64", 8},
};

uint64_t ReadLe64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

bool ReadUint(const nlohmann::json& value, uint64_t* out) {
  if (value.is_number_unsigned()) {
    *out = value.get<uint64_t>();
    return true;
  }
  if (value.is_number_integer() && value.get<int64_t>() >= 0) {
    *out = static_cast<uint64_t>(value.get<int64_t>());
    return true;
  }
  return false;
}

Tensor ParseEntry(const std::string& name, const nlohmann::json& entry, const uint8_t* data,
                  uint64_t data_size, const std::string& file) {
  const std::string where = file + ": tensor '" + name + "'";
  if (!entry.is_object()) Fail(where, " in the header is not an object");
  Tensor t;
  t.name = name;
  t.file = file;
  const auto dtype = entry.find("dtype");
  if (dtype == entry.end() || !dtype->is_string()) Fail(where, " has no dtype string");
  t.dtype = dtype->get<std::string>();
  t.element_size = SafetensorsDTypeSize(t.dtype);
  if (t.element_size == 0) Fail(where, " has unknown dtype '", t.dtype, "'");

  const auto shape = entry.find("shape");
  if (shape == entry.end() || !shape->is_array()) Fail(where, " has no shape array");
  uint64_t numel = 1;
  bool overflow = false;
  for (const nlohmann::json& d : *shape) {
    uint64_t dim = 0;
    if (!ReadUint(d, &dim)) Fail(where, " has a shape entry that is not a non-negative integer");
    t.shape.push_back(dim);
    if (dim != 0 && numel > std::numeric_limits<uint64_t>::max() / dim) overflow = true;
    numel *= dim;
  }
  if (overflow || numel > std::numeric_limits<uint64_t>::max() / t.element_size) {
    Fail(where, " has shape ", ShapeString(t.shape), ", too large to address");
  }
  t.numel = numel;

  const auto offsets = entry.find("data_offsets");
  uint64_t begin = 0, end = 0;
  if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2 ||
      !ReadUint((*offsets)[0], &begin) || !ReadUint((*offsets)[1], &end)) {
    Fail(where, " needs data_offsets [begin, end] of two non-negative integers");
  }
  if (begin > end) Fail(where, " has data_offsets [", begin, ", ", end, "] with begin > end");
  const uint64_t needed = numel * t.element_size;
  if (end - begin != needed) {
    Fail(where, ": data_offsets [", begin, ", ", end, "] hold ", end - begin, " bytes, but ",
         t.dtype, " ", ShapeString(t.shape), " needs ", needed);
  }
  if (end > data_size) {
    Fail(file, " is truncated or corrupt: tensor '", name, "' ends at byte ", end,
         " of the data, which has only ", data_size, " bytes");
  }
  t.data = data + begin;
  t.size = needed;
  return t;
}

}  // namespace

size_t SafetensorsDTypeSize(const std::string& dtype) {
  for (const DTypeInfo& d : kDTypes) {
    if (dtype == d.name) return d.size;
  }
  return 0;
}

void ParseSafetensorsHeader(const std::string& header, const uint8_t* data, uint64_t data_size,
                            const std::string& display_name, std::vector<Tensor>* tensors,
                            std::map<std::string, std::string>* metadata) {
  const nlohmann::json root = ParseJson(header, display_name + ": the header");
  if (!root.is_object()) Fail(display_name, ": the header is not a JSON object");
  for (const auto& item : root.items()) {
    if (item.key() == "__metadata__") {
      if (!item.value().is_object()) Fail(display_name, ": __metadata__ is not an object");
      for (const auto& m : item.value().items()) {
        if (m.value().is_string()) (*metadata)[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    tensors->push_back(ParseEntry(item.key(), item.value(), data, data_size, display_name));
  }
}

SafetensorsFile SafetensorsFile::Open(const std::filesystem::path& path,
                                      const std::string& display_name) {
  std::error_code ec;
  const uintmax_t on_disk = std::filesystem::file_size(path, ec);
  if (!ec && on_disk < 8) {
    Fail(display_name, " is truncated: ", on_disk, " bytes, less than the 8-byte header length");
  }
  Result<MappedFile> mapped = MappedFile::Open(path.c_str());
  if (!mapped.ok()) Fail(display_name, ": ", mapped.status().message());
  SafetensorsFile file;
  file.map_ = std::move(mapped).value();
  const uint8_t* bytes = file.map_.data();
  const uint64_t size = file.map_.size();
  if (size < 8) {
    Fail(display_name, " is truncated: ", size, " bytes, less than the 8-byte header length");
  }
  const uint64_t header_size = ReadLe64(bytes);
  if (header_size > size - 8) {
    Fail(display_name, " is truncated or not safetensors: its header claims ", header_size,
         " bytes, the file has ", size - 8, " after the length");
  }
  if (header_size > kMaxHeaderBytes) {
    Fail(display_name, ": the header claims ", header_size, " bytes, over the format's limit of ",
         kMaxHeaderBytes);
  }
  const std::string header(reinterpret_cast<const char*>(bytes + 8),
                           static_cast<size_t>(header_size));
  ParseSafetensorsHeader(header, bytes + 8 + header_size, size - 8 - header_size, display_name,
                         &file.tensors_, &file.metadata_);
  for (Tensor& t : file.tensors_) t.mapped = file.map_.is_mapped();
  return file;
}

}  // namespace convert
}  // namespace octet
