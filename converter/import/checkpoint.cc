#include "import/checkpoint.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <set>
#include <utility>

#include "import/error.h"
#include "import/float16.h"
#include "import/json_util.h"

namespace octet {
namespace convert {
namespace {

constexpr char kSingleFile[] = "model.safetensors";
constexpr char kIndexFile[] = "model.safetensors.index.json";

// A shard must be a plain file name inside the checkpoint directory.
bool IsPlainFileName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\\') == std::string::npos && name.find('\0') == std::string::npos;
}

}  // namespace

void Checkpoint::Add(SafetensorsFile file, const std::string& display_name) {
  files_.push_back(display_name);
  total_bytes_ += file.file_size();
  for (const Tensor& t : file.tensors()) {
    const auto [it, inserted] = tensors_.emplace(t.name, t);
    if (!inserted) {
      Fail("tensor '", t.name, "' appears in both ", it->second.file, " and ", display_name);
    }
  }
  shards_.push_back(std::move(file));  // the mapping (and its data pointers) moves intact
}

Checkpoint Checkpoint::OpenFile(const std::filesystem::path& file) {
  Checkpoint c;
  const std::string name = file.filename().string();
  c.Add(SafetensorsFile::Open(file, name), name);
  return c;
}

Checkpoint Checkpoint::Open(const std::filesystem::path& dir) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(dir / kSingleFile, ec)) return OpenFile(dir / kSingleFile);
  if (!std::filesystem::is_regular_file(dir / kIndexFile, ec)) {
    if (std::filesystem::exists(dir / "pytorch_model.bin", ec) ||
        std::filesystem::exists(dir / "pytorch_model.bin.index.json", ec)) {
      Fail("the checkpoint has pytorch_model.bin but no ", kSingleFile,
           ": save it as safetensors first (model.save_pretrained(dir, safe_serialization=True))");
    }
    Fail("the checkpoint has neither ", kSingleFile, " nor ", kIndexFile);
  }
  const nlohmann::json index = ReadJsonFile(dir / kIndexFile, kIndexFile);
  const auto map = index.is_object() ? index.find("weight_map") : index.end();
  if (map == index.end() || !map->is_object() || map->empty()) {
    Fail(kIndexFile, " has no weight_map object listing the tensors");
  }
  std::set<std::string> shard_names;
  for (const auto& item : map->items()) {
    if (!item.value().is_string() || !IsPlainFileName(item.value().get<std::string>())) {
      Fail(kIndexFile, ": weight_map entry '", item.key(), "' = ", JsonValueString(item.value()),
           " is not a file name in the checkpoint directory");
    }
    shard_names.insert(item.value().get<std::string>());
  }
  Checkpoint c;
  for (const std::string& shard : shard_names) {
    if (!std::filesystem::is_regular_file(dir / shard, ec)) {
      Fail(kIndexFile, " lists shard ", shard, ", which is missing");
    }
    c.Add(SafetensorsFile::Open(dir / shard, shard), shard);
  }
  // Every tensor the index lists must be where it says. (Tensors a shard holds
  // beyond the index are kept: transformers loads whole shards.)
  for (const auto& item : map->items()) {
    const Tensor* t = c.Find(item.key());
    const std::string shard = item.value().get<std::string>();
    if (t == nullptr || t->file != shard) {
      Fail(kIndexFile, " puts tensor '", item.key(), "' in ", shard, ", which does not hold it");
    }
  }
  return c;
}

const Tensor* Checkpoint::Find(const std::string& name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

std::vector<const Tensor*> Checkpoint::All() const {
  std::vector<const Tensor*> all;
  for (const auto& item : tensors_) all.push_back(&item.second);
  return all;
}

std::string Checkpoint::DTypeSummary() const {
  std::set<std::string> dtypes;
  for (const auto& item : tensors_) {
    if (item.second.IsFloat()) dtypes.insert(item.second.dtype);
  }
  std::string s;
  for (const std::string& d : dtypes) s += (s.empty() ? "" : ", ") + d;
  return s;
}

void Checkpoint::ReadF32(const Tensor& t, uint64_t first, uint64_t count, float* out) {
  if (first > t.numel || count > t.numel - first) {
    Fail("internal: read of elements [", first, ", +", count, ") of tensor '", t.name, "' with ",
         t.numel);
  }
  const uint8_t* src = t.data + first * t.element_size;
  if (t.dtype == "F32") {
    std::memcpy(out, src, count * sizeof(float));
  } else if (t.dtype == "F16" || t.dtype == "BF16") {
    const bool half = t.dtype == "F16";
    for (uint64_t i = 0; i < count; ++i) {
      uint16_t bits;
      std::memcpy(&bits, src + 2 * i, sizeof(bits));  // any alignment
      out[i] = BitsToFloat(half ? HalfToFloatBits(bits) : Bf16ToFloatBits(bits));
    }
  } else {
    Fail("tensor '", t.name, "' in ", t.file, " is ", t.dtype,
         "; octet-convert reads F32, F16 and BF16 tensors");
  }
  if (t.mapped) {  // whole pages only: the neighbours' bytes stay
    const long page_size = sysconf(_SC_PAGESIZE);
    const uintptr_t page = page_size > 0 ? static_cast<uintptr_t>(page_size) : 4096;
    const uintptr_t p = reinterpret_cast<uintptr_t>(src);
    const uintptr_t begin = (p + page - 1) / page * page;
    const uintptr_t end = (p + count * t.element_size) / page * page;
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  }
}

std::vector<float> Checkpoint::ReadAllF32(const Tensor& t) {
  std::vector<float> values(t.numel);
  ReadF32(t, 0, t.numel, values.data());
  return values;
}

}  // namespace convert
}  // namespace octet
