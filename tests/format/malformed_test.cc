// The loader trusts nothing (docs/design.md §2): every malformed file below must be
// refused with a Status whose message names the problem, and never crash. The
// suite runs under ASan + UBSan (host-asan); inputs are loaded from buffers of
// exactly their size (loader_harness.h), so a read one byte past the end is a
// reported heap-buffer-overflow, not silent luck.
//
// Bad files come from (a) the real writer given bad parameters, (b) a valid
// tiny model unpacked into the generated object API (fb::ModelT), edited into
// what the writer would never produce, packed with the generated builder code
// and joined to its data segment again, and (c) patched bytes.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/checked_math.h"
#include "format/model.h"
#include "fuzz/loader_harness.h"
#include "support/test_models.h"

namespace doctest {
template <>
struct StringMaker<octet::StatusCode> {
  static String convert(octet::StatusCode code) { return octet::StatusCodeName(code); }
};
}  // namespace doctest

namespace octet {
namespace {

using testing::LoadUntrusted;
using testing::MakeTinyModelBytes;
using testing::MakeTinyModelWriter;
using testing::TempFile;
using testing::TinyArchitecture;
using testing::TinyModelOptions;
using testing::WalkLoadedModel;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
constexpr StatusCode kBad = StatusCode::kInvalidModel;

bool Contains(const char* haystack, const std::string& needle) {
  return std::strstr(haystack, needle.c_str()) != nullptr;
}

// doctest prints a char* as a pointer; messages go through std::string.
std::string Text(const Status& status) { return status.message(); }

uint32_t ReadLe32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

void WriteLe32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// Bytes [0, MetadataEnd) are the size prefix and the FlatBuffer.
size_t MetadataEnd(const std::vector<uint8_t>& file) { return 4 + ReadLe32(file.data()); }

TinyModelOptions Options(fb::Family family, bool int8 = true) {
  TinyModelOptions options;
  options.family = family;
  options.int8 = int8;
  return options;
}

// ---------------------------------------------------------------------------
// (b): a valid file split into editable metadata and its data segment.

struct Parts {
  fb::ModelT model;
  std::vector<uint8_t> data;  // the data segment, verbatim
};

Parts Split(const std::vector<uint8_t>& file) {
  Parts parts;
  fb::GetSizePrefixedModel(file.data())->UnPackTo(&parts.model);
  const size_t data_offset = AlignUp(MetadataEnd(file), kDataAlignment);
  parts.data.assign(file.begin() + static_cast<std::ptrdiff_t>(data_offset), file.end());
  return parts;
}

// The file layout of octet_model.fbs; data_size is whatever `model` says.
std::vector<uint8_t> Join(const fb::ModelT& model, const std::vector<uint8_t>& data) {
  flatbuffers::FlatBufferBuilder fbb;
  fb::FinishSizePrefixedModelBuffer(fbb, fb::Model::Pack(fbb, &model));
  std::vector<uint8_t> file(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  file.resize(AlignUp(file.size(), kDataAlignment), 0);
  file.insert(file.end(), data.begin(), data.end());
  return file;
}

// The generated builders assert that required tables are present, so files
// without them are assembled field by field.
std::vector<uint8_t> FinishWithEmptyDataSegment(flatbuffers::FlatBufferBuilder& fbb,
                                                flatbuffers::Offset<fb::Model> root) {
  fb::FinishSizePrefixedModelBuffer(fbb, root);
  std::vector<uint8_t> file(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  file.resize(AlignUp(file.size(), kDataAlignment), 0);
  return file;
}

std::vector<uint8_t> ModelWithoutArchitecture() {
  flatbuffers::FlatBufferBuilder fbb;
  const auto start = fbb.StartTable();
  fbb.AddElement<uint16_t>(fb::Model::VT_FORMAT_MAJOR, kFormatMajor, 0);
  fbb.AddElement<uint32_t>(fb::Model::VT_DATA_ALIGNMENT, kDataAlignment, 0);
  return FinishWithEmptyDataSegment(fbb, flatbuffers::Offset<fb::Model>(fbb.EndTable(start)));
}

std::vector<uint8_t> ModelWithoutAttention() {
  flatbuffers::FlatBufferBuilder fbb;
  const auto start = fbb.StartTable();
  fbb.AddElement<uint8_t>(fb::Architecture::VT_FAMILY, static_cast<uint8_t>(fb::Family::Llama), 0);
  fbb.AddElement<uint8_t>(fb::Architecture::VT_STRUCTURE,
                          static_cast<uint8_t>(fb::Structure::DecoderOnly), 0);
  fbb.AddElement<uint32_t>(fb::Architecture::VT_VOCAB_SIZE, 32, 0);
  fbb.AddElement<uint32_t>(fb::Architecture::VT_HIDDEN_SIZE, 16, 0);
  const flatbuffers::Offset<fb::Architecture> architecture(fbb.EndTable(start));
  return FinishWithEmptyDataSegment(fbb,
                                    fb::CreateModel(fbb, kFormatMajor, kFormatMinor, architecture));
}

fb::TensorT& T(fb::ModelT& m, const std::string& name) {
  for (auto& t : m.tensors) {
    if (t->name == name) return *t;
  }
  throw std::logic_error("test bug: no tensor '" + name + "' in the tiny model");
}

fb::BlobT& Blob0(fb::ModelT& m) {
  if (!m.tokenizer || m.tokenizer->files.empty()) throw std::logic_error("test bug: no blob");
  return *m.tokenizer->files[0];
}

// ---------------------------------------------------------------------------
// Expectations.

// Loads `bytes` and checks it is refused with `code` and a message that
// contains every needle.
void ExpectRejected(const std::vector<uint8_t>& bytes, StatusCode code,
                    const std::vector<std::string>& needles) {
  std::string broken;
  const Status status = LoadUntrusted(bytes.data(), bytes.size(), &broken);
  INFO("message: " << Text(status));
  CHECK_FALSE(status.ok());
  CHECK(broken.empty());
  if (status.ok()) return;
  CHECK(status.code() == code);
  CHECK(std::strlen(status.message()) > 0);
  for (const std::string& needle : needles) {
    CHECK_MESSAGE(Contains(status.message(), needle), "the message should name '" << needle << "'");
  }
}

void ExpectLoads(const std::vector<uint8_t>& bytes) {
  std::string broken;
  const Status status = LoadUntrusted(bytes.data(), bytes.size(), &broken);
  CHECK_MESSAGE(status.ok(), Text(status));
  CHECK_MESSAGE(broken.empty(), broken);
}

// One edit of the metadata and the refusal it must get.
struct Case {
  const char* what;
  std::function<void(fb::ModelT&)> edit;
  StatusCode code;
  std::vector<std::string> needles;
};

void RunCases(const TinyModelOptions& options, const std::vector<Case>& cases) {
  const Parts base = Split(MakeTinyModelBytes(options));
  // Repacked but unedited, the model must load: else every case below could
  // be refused for a reason of the test's making.
  ExpectLoads(Join(base.model, base.data));
  for (const Case& c : cases) {
    INFO("case: " << c.what);
    Parts parts = base;
    c.edit(parts.model);
    ExpectRejected(Join(parts.model, parts.data), c.code, c.needles);
  }
}

// (a): the real writer with a bad architecture (it does not check one).
struct ArchitectureCase {
  const char* what;
  fb::Family family;
  std::function<void(fb::ArchitectureT&)> edit;
  StatusCode code;
  std::vector<std::string> needles;
};

std::vector<uint8_t> WithArchitecture(const TinyModelOptions& options,
                                      const std::function<void(fb::ArchitectureT&)>& edit) {
  ModelWriter writer = MakeTinyModelWriter(options);
  fb::ArchitectureT architecture = TinyArchitecture(options);
  edit(architecture);
  writer.SetArchitecture(architecture);
  return writer.WriteToBuffer();
}

// ---------------------------------------------------------------------------
// Files on disk (sparse where large). The *64 calls keep this right in 32-bit
// builds, whose off_t may be 32 bits.

// Writes `head` at offset 0 of a new file `size` bytes long; the rest is a hole.
// Returns "" on success, else why the file system refused.
std::string WriteSparseFile(const std::string& path, const std::vector<uint8_t>& head,
                            uint64_t size) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_LARGEFILE, 0644);
  if (fd < 0) return std::string("open: ") + std::strerror(errno);
  std::string error;
  if (ftruncate64(fd, static_cast<off64_t>(size)) != 0) {
    error = std::string("ftruncate to ") + std::to_string(size) + ": " + std::strerror(errno);
  } else if (!head.empty() &&
             pwrite64(fd, head.data(), head.size(), 0) != static_cast<ssize_t>(head.size())) {
    error = std::string("pwrite: ") + std::strerror(errno);
  }
  if (close(fd) != 0 && error.empty()) error = std::string("close: ") + std::strerror(errno);
  return error;
}

// Bytes the file really occupies on disk (small for a sparse file).
uint64_t AllocatedBytes(const std::string& path) {
  struct stat64 st;
  if (stat64(path.c_str(), &st) != 0) return kU64Max;
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

uint64_t FileSize(const std::string& path) {
  struct stat64 st;
  if (stat64(path.c_str(), &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_size);
}

constexpr bool k32BitBuild = sizeof(void*) == 4;

// ===========================================================================

TEST_CASE("truncation at every offset is refused (buffer of exactly the prefix)") {
  for (bool int8 : {true, false}) {
    const std::vector<uint8_t> file = MakeTinyModelBytes(Options(fb::Family::Llama, int8));
    CAPTURE(int8);
    CAPTURE(file.size());
    size_t failures = 0;
    for (size_t n = 0; n < file.size() && failures < 5; ++n) {
      std::string broken;
      const Status status = LoadUntrusted(file.data(), n, &broken);
      const bool named =
          Contains(status.message(), "truncated") || Contains(status.message(), "too short");
      if (status.ok() || status.code() != kBad || !named) {
        ++failures;
        FAIL_CHECK("prefix of " << n << " bytes: " << (status.ok() ? "loaded" : Text(status)));
      }
    }
    CHECK(failures == 0);
    ExpectLoads(file);
  }
}

TEST_CASE("a truncated file on disk is refused, naming the path") {
  const std::vector<uint8_t> file = MakeTinyModelBytes(Options(fb::Family::Llama));
  TempFile temp;
  size_t checked = 0;
  for (size_t n = 0; n < file.size(); n += (n < 16 ? 1 : 7)) {
    CAPTURE(n);
    REQUIRE(WriteSparseFile(temp.path(), std::vector<uint8_t>(file.begin(), file.begin() + n), n)
                .empty());
    Result<Model> model = Model::Load(temp.path().c_str());
    REQUIRE_FALSE(model.ok());
    INFO("message: " << Text(model.status()));
    CHECK(model.status().code() == kBad);
    CHECK(Contains(model.status().message(), temp.path()));
    if (n == 0) {
      CHECK(Contains(model.status().message(), "empty"));
    } else {
      CHECK((Contains(model.status().message(), "truncated") ||
             Contains(model.status().message(), "too short")));
    }
    ++checked;
  }
  MESSAGE(checked << " truncated files");
}

TEST_CASE("single-byte flips: a clean error, or a model whose views are all in bounds") {
  // Each flip is applied to its own exactly-sized copy (LoadUntrusted), and a
  // model that still loads is walked completely (WalkLoadedModel).
  const uint8_t xors[] = {0x01, 0x80, 0xff};
  const uint8_t sets[] = {0x00, 0xff};
  for (const TinyModelOptions& options :
       {Options(fb::Family::Llama, true), Options(fb::Family::Bert, false),
        Options(fb::Family::T5, true)}) {
    CAPTURE(static_cast<int>(options.family));
    std::vector<uint8_t> file = MakeTinyModelBytes(options);
    const size_t metadata_end = MetadataEnd(file);
    size_t loaded = 0, rejected = 0, failures = 0;
    auto try_flip = [&](size_t pos, uint8_t value) {
      const uint8_t saved = file[pos];
      if (value == saved) return;
      file[pos] = value;
      std::string broken;
      const Status status = LoadUntrusted(file.data(), file.size(), &broken);
      file[pos] = saved;
      if (status.ok()) {
        ++loaded;
      } else {
        ++rejected;
      }
      if ((!status.ok() && status.message()[0] == '\0') || !broken.empty()) {
        if (++failures <= 5) {
          FAIL_CHECK("byte " << pos << " set to " << int{value} << ": "
                             << (broken.empty() ? "refused with an empty message" : broken));
        }
      }
    };
    for (size_t pos = 0; pos < metadata_end; ++pos) {
      for (uint8_t x : xors) try_flip(pos, static_cast<uint8_t>(file[pos] ^ x));
      for (uint8_t s : sets) try_flip(pos, s);
    }
    CHECK(failures == 0);
    CHECK(rejected > 0);
    MESSAGE("metadata of " << metadata_end << " bytes: " << rejected << " flips refused, " << loaded
                           << " loaded and walked");

    // Padding and weights are not interpreted: flips there must still load.
    loaded = rejected = 0;
    for (size_t pos = metadata_end; pos < file.size(); pos += 13) {
      try_flip(pos, static_cast<uint8_t>(file[pos] ^ 0xff));
    }
    CHECK(rejected == 0);
    CHECK(loaded > 0);
    CHECK(failures == 0);
  }
}

TEST_CASE("identifier, format version, alignment and required tables") {
  const TinyModelOptions options = Options(fb::Family::Llama);
  RunCases(
      options,
      {
          {"format major 2",
           [](fb::ModelT& m) {
             m.format_major = 2;
             m.format_minor = 0;
           },
           StatusCode::kUnsupported,
           {"format 2.0", "upgrade"}},
          {"format major 65535",
           [](fb::ModelT& m) { m.format_major = 65535; },
           StatusCode::kUnsupported,
           {"format 65535."}},
          {"format major 0 (missing)",
           [](fb::ModelT& m) { m.format_major = 0; },
           kBad,
           {"version is missing"}},
          {"data alignment 32",
           [](fb::ModelT& m) { m.data_alignment = 32; },
           kBad,
           {"alignment 32"}},
          {"data alignment 0", [](fb::ModelT& m) { m.data_alignment = 0; }, kBad, {"alignment 0"}},
      });
  ExpectRejected(ModelWithoutArchitecture(), kBad, {"verification"});
  ExpectRejected(ModelWithoutAttention(), kBad, {"verification"});

  // (c) a wrong identifier patched into a valid file, and (b) a FlatBuffer
  // finished without one.
  const std::vector<uint8_t> valid = MakeTinyModelBytes(options);
  for (const char* id : {"OCT2", "XXXX", "oct1", "1TCO"}) {
    CAPTURE(id);
    std::vector<uint8_t> bad = valid;
    std::memcpy(bad.data() + 8, id, 4);
    ExpectRejected(bad, kBad, {"identifier", "OCT1"});
  }
  std::vector<uint8_t> zeros = valid;
  std::memset(zeros.data() + 8, 0, 4);
  ExpectRejected(zeros, kBad, {"identifier"});

  Parts parts = Split(valid);
  flatbuffers::FlatBufferBuilder fbb;
  fbb.FinishSizePrefixed(fb::Model::Pack(fbb, &parts.model));  // no file identifier
  std::vector<uint8_t> unnamed(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  unnamed.resize(AlignUp(unnamed.size(), kDataAlignment), 0);
  unnamed.insert(unnamed.end(), parts.data.begin(), parts.data.end());
  ExpectRejected(unnamed, kBad, {"identifier"});

  // Through Model::Load the message also names the file.
  TempFile temp;
  std::vector<uint8_t> bad = valid;
  std::memcpy(bad.data() + 8, "GGUF", 4);
  REQUIRE(WriteSparseFile(temp.path(), bad, bad.size()).empty());
  Result<Model> model = Model::Load(temp.path().c_str());
  REQUIRE_FALSE(model.ok());
  CHECK(Contains(model.status().message(), "identifier"));
  CHECK(Contains(model.status().message(), temp.path()));
}

TEST_CASE("file size: empty, the size prefix only, truncated, extended") {
  const std::vector<uint8_t> valid = MakeTinyModelBytes(Options(fb::Family::Llama));
  const auto prefix = [&](size_t n) {
    return std::vector<uint8_t>(valid.begin(), valid.begin() + n);
  };
  ExpectRejected({}, kBad, {"too short"});
  ExpectRejected(prefix(4), kBad, {"too short"});
  ExpectRejected(prefix(11), kBad, {"too short"});
  ExpectRejected(prefix(12), kBad, {"truncated"});
  ExpectRejected(prefix(MetadataEnd(valid)), kBad, {"truncated"});
  for (size_t extra : {1, 63, 64, 4096}) {
    CAPTURE(extra);
    std::vector<uint8_t> longer = valid;
    longer.resize(valid.size() + extra, 0);
    ExpectRejected(longer, kBad, {"extended"});
  }
  for (uint32_t delta : {4u, 64u}) {
    std::vector<uint8_t> bad = valid;
    WriteLe32(bad.data(), ReadLe32(bad.data()) - delta);  // FlatBuffer claims fewer bytes
    ExpectRejected(bad, kBad, {});
  }
  for (uint32_t claim : {static_cast<uint32_t>(valid.size()), 0xffffffffu}) {
    std::vector<uint8_t> bad = valid;
    WriteLe32(bad.data(), claim);
    ExpectRejected(bad, kBad, {"truncated"});
  }

  RunCases(Options(fb::Family::Llama),
           {
               {"data_size + 64", [](fb::ModelT& m) { m.data_size += 64; }, kBad, {"layout says"}},
               {"data_size - 64", [](fb::ModelT& m) { m.data_size -= 64; }, kBad, {"layout says"}},
               {"data_size 0", [](fb::ModelT& m) { m.data_size = 0; }, kBad, {"layout says"}},
               {"data_size overflows the file offset",
                [](fb::ModelT& m) { m.data_size = kU64Max; },
                kBad,
                {"layout says"}},
           });

  TempFile temp;
  REQUIRE(WriteSparseFile(temp.path(), {}, 0).empty());
  Result<Model> empty = Model::Load(temp.path().c_str());
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().code() == kBad);
  CHECK(Contains(empty.status().message(), "empty"));
  REQUIRE(WriteSparseFile(temp.path(), prefix(4), 4).empty());
  Result<Model> four = Model::Load(temp.path().c_str());
  REQUIRE_FALSE(four.ok());
  CHECK(Contains(four.status().message(), "too short"));
}

TEST_CASE("FromBuffer refuses a null or misaligned buffer") {
  const std::vector<uint8_t> valid = MakeTinyModelBytes(Options(fb::Family::Llama));
  testing::AlignedBytes bytes(valid.size() + 1);
  std::memcpy(bytes.data() + 1, valid.data(), valid.size());
  Result<Model> misaligned = Model::FromBuffer(bytes.data() + 1, valid.size());
  REQUIRE_FALSE(misaligned.ok());
  CHECK(misaligned.status().code() == StatusCode::kInvalidArgument);
  CHECK(Contains(misaligned.status().message(), "aligned"));
  Result<Model> null = Model::FromBuffer(nullptr, 100);
  REQUIRE_FALSE(null.ok());
  CHECK(null.status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("tensor offsets and sizes against the data segment") {
  RunCases(
      Options(fb::Family::Llama),
      {
          {"offset at the end of the data segment",
           [](fb::ModelT& m) { T(m, "token_embedding").offset = m.data_size; },
           kBad,
           {"token_embedding", "outside the data segment"}},
          {"offset straddling the end",
           [](fb::ModelT& m) { T(m, "lm_head").offset = m.data_size - 64; },
           kBad,
           {"lm_head", "outside"}},
          {"offset far past the end",
           [](fb::ModelT& m) { T(m, "final_norm.weight").offset = 1ull << 40; },
           kBad,
           {"final_norm.weight", "outside"}},
          {"offset + size overflows uint64",
           [](fb::ModelT& m) { T(m, "token_embedding").offset = kU64Max - 63; },
           kBad,
           {"token_embedding", "outside"}},
          {"offset 2^63",
           [](fb::ModelT& m) { T(m, "lm_head").offset = 1ull << 63; },
           kBad,
           {"outside"}},
          {"offset + 1",
           [](fb::ModelT& m) { T(m, "lm_head").offset += 1; },
           kBad,
           {"lm_head", "aligned"}},
          {"offset + 8", [](fb::ModelT& m) { T(m, "lm_head").offset += 8; }, kBad, {"aligned"}},
          {"offset + 32", [](fb::ModelT& m) { T(m, "lm_head").offset += 32; }, kBad, {"aligned"}},
          {"size + 1",
           [](fb::ModelT& m) { T(m, "token_embedding").size += 1; },
           kBad,
           {"token_embedding", "does not match"}},
          {"size - 1",
           [](fb::ModelT& m) { T(m, "token_embedding").size -= 1; },
           kBad,
           {"does not match"}},
          {"size 0",
           [](fb::ModelT& m) { T(m, "final_norm.weight").size = 0; },
           kBad,
           {"final_norm.weight", "does not match"}},
          {"size x 2",
           [](fb::ModelT& m) { T(m, "final_norm.weight").size *= 2; },
           kBad,
           {"does not match"}},
          {"size 2^64 - 1",
           [](fb::ModelT& m) { T(m, "lm_head").size = kU64Max; },
           kBad,
           {"does not match"}},
          {"dtype F32 on int8 bytes",
           [](fb::ModelT& m) { T(m, "token_embedding").dtype = fb::DType::F32; },
           kBad,
           {"does not match"}},
          {"unknown dtype 200",
           [](fb::ModelT& m) { T(m, "token_embedding").dtype = static_cast<fb::DType>(200); },
           kBad,
           {"token_embedding", "unknown dtype 200"}},
      });
}

TEST_CASE("tensor shapes: zero, huge and overflowing dimensions, rank 0 and 9") {
  // Shapes and sizes edited together, so that only the shape is wrong.
  const auto reshape = [](const char* name, std::vector<uint32_t> shape, uint64_t size) {
    return [=](fb::ModelT& m) {
      T(m, name).shape = shape;
      T(m, name).size = size;
    };
  };
  RunCases(
      Options(fb::Family::Llama, false),
      {
          {"a dimension of 0",
           reshape("token_embedding", {32, 0}, 0),
           kBad,
           {"token_embedding", "dimension 1 = 0"}},
          {"a dimension of 2^31 + 1",
           reshape("final_norm.weight", {(1u << 31) + 1}, 8589934596ull),
           kBad,
           {"final_norm.weight", "dimension 0 = 2147483649"}},
          {"a dimension of 2^32 - 1",
           reshape("final_norm.weight", {1, 0xffffffffu}, 0),
           kBad,
           {"dimension 1"}},
          {"rank 0", reshape("final_norm.weight", {}, 0), kBad, {"final_norm.weight", "rank 0"}},
          {"rank 9",
           reshape("token_embedding", {1, 1, 1, 1, 1, 1, 1, 32, 16}, 2048),
           kBad,
           {"rank 9"}},
          {"element count overflows 64 bits",
           reshape("final_norm.weight", {1u << 31, 1u << 31, 1u << 31}, 0),
           kBad,
           {"final_norm.weight", "overflows"}},
          {"8 dimensions of 2^31",
           reshape("final_norm.weight", std::vector<uint32_t>(8, 1u << 31), 0),
           kBad,
           {"overflows"}},
          {"bytes overflow 64 bits (2^63 floats)",
           reshape("final_norm.weight", {1u << 31, 1u << 31, 2}, 0),
           kBad,
           {"final_norm.weight", "does not match"}},
          {"consistent but far larger than the file",
           reshape("final_norm.weight", {1u << 31, 1u << 29}, 1ull << 62),
           kBad,
           {"outside the data segment"}},
      });
}

TEST_CASE("quantization: scales, zero points, schemes") {
  const auto scale0 = [](float value) {
    return [=](fb::ModelT& m) { T(m, "token_embedding").quant->scales[0] = value; };
  };
  const auto zero_points = [](int32_t value) {
    return [=](fb::ModelT& m) {
      fb::QuantizationT& q = *T(m, "token_embedding").quant;
      q.zero_points.assign(q.scales.size(), 0);
      q.zero_points[5] = value;
    };
  };
  RunCases(
      Options(fb::Family::Llama, true),
      {
          {"NaN scale", scale0(kNaN), kBad, {"token_embedding", "scale 0 is nan"}},
          {"+inf scale", scale0(kInf), kBad, {"token_embedding", "scale 0 is inf"}},
          {"-inf scale", scale0(-kInf), kBad, {"scale 0"}},
          {"negative scale", scale0(-0.5f), kBad, {"scale 0 is -0.5"}},
          {"zero scale", scale0(0.0f), kBad, {"scale 0 is 0"}},
          {"negative zero scale", scale0(-0.0f), kBad, {"scale 0"}},
          {"NaN in the last scale",
           [](fb::ModelT& m) { T(m, "lm_head").quant->scales.back() = kNaN; },
           kBad,
           {"lm_head", "scale 31"}},
          {"one scale too few",
           [](fb::ModelT& m) { T(m, "token_embedding").quant->scales.pop_back(); },
           kBad,
           {"token_embedding", "31 scales, expected 32"}},
          {"one scale too many",
           [](fb::ModelT& m) { T(m, "token_embedding").quant->scales.push_back(1.0f); },
           kBad,
           {"33 scales, expected 32"}},
          {"no scales",
           [](fb::ModelT& m) { T(m, "token_embedding").quant->scales.clear(); },
           kBad,
           {"0 scales"}},
          {"per-tensor with 32 scales",
           [](fb::ModelT& m) {
             T(m, "token_embedding").quant->scheme = fb::QuantScheme::PerTensor;
           },
           kBad,
           {"32 scales, expected 1"}},
          {"per-channel on axis 1 (16 channels)",
           [](fb::ModelT& m) { T(m, "token_embedding").quant->axis = 1; },
           kBad,
           {"32 scales, expected 16"}},
          {"per-channel axis 2 of a rank-2 tensor",
           [](fb::ModelT& m) { T(m, "token_embedding").quant->axis = 2; },
           kBad,
           {"axis 2"}},
          {"per-channel axis 2^32 - 1",
           [](fb::ModelT& m) { T(m, "token_embedding").quant->axis = 0xffffffffu; },
           kBad,
           {"axis 4294967295"}},
          {"per-block with block size 0",
           [](fb::ModelT& m) { T(m, "token_embedding").quant->scheme = fb::QuantScheme::PerBlock; },
           kBad,
           {"block size 0"}},
          {"per-block with a block size that does not divide the row",
           [](fb::ModelT& m) {
             T(m, "token_embedding").quant->scheme = fb::QuantScheme::PerBlock;
             T(m, "token_embedding").quant->block_size = 3;
           },
           kBad,
           {"block size 3"}},
          {"per-block: 32 scales for 64 blocks",
           [](fb::ModelT& m) {
             T(m, "token_embedding").quant->scheme = fb::QuantScheme::PerBlock;
             T(m, "token_embedding").quant->block_size = 8;
           },
           kBad,
           {"32 scales, expected 64"}},
          {"unknown scheme 9",
           [](fb::ModelT& m) {
             T(m, "token_embedding").quant->scheme = static_cast<fb::QuantScheme>(9);
           },
           kBad,
           {"unknown quantization scheme 9"}},
          {"zero point -129", zero_points(-129), kBad, {"token_embedding", "zero point 5 is -129"}},
          {"zero point 128", zero_points(128), kBad, {"zero point 5 is 128"}},
          {"zero point INT32_MIN",
           zero_points(std::numeric_limits<int32_t>::min()),
           kBad,
           {"zero point 5"}},
          {"zero point INT32_MAX",
           zero_points(std::numeric_limits<int32_t>::max()),
           kBad,
           {"zero point 5"}},
          {"31 zero points for 32 scales",
           [](fb::ModelT& m) { T(m, "token_embedding").quant->zero_points.assign(31, 0); },
           kBad,
           {"31 zero points for 32 scales"}},
          {"int8 without a quantization table",
           [](fb::ModelT& m) { T(m, "token_embedding").quant.reset(); },
           kBad,
           {"token_embedding", "int8 without quantization"}},
          {"int8 with scheme None",
           [](fb::ModelT& m) { T(m, "lm_head").quant->scheme = fb::QuantScheme::None; },
           kBad,
           {"lm_head", "int8 without quantization"}},
      });
  RunCases(Options(fb::Family::Llama, false),
           {
               {"fp32 tensor with a per-tensor scale",
                [](fb::ModelT& m) {
                  auto q = std::make_unique<fb::QuantizationT>();
                  q->scheme = fb::QuantScheme::PerTensor;
                  q->scales = {1.0f};
                  T(m, "final_norm.weight").quant = std::move(q);
                },
                kBad,
                {"final_norm.weight", "only int8 tensors have scales"}},
               {"scales without a scheme",
                [](fb::ModelT& m) {
                  auto q = std::make_unique<fb::QuantizationT>();
                  q->scales = {1.0f};
                  T(m, "final_norm.weight").quant = std::move(q);
                },
                kBad,
                {"final_norm.weight", "no quantization scheme"}},
           });
}

TEST_CASE("packed int8 matrices: layout, size, row sums and padding are checked") {
  TinyModelOptions options = Options(fb::Family::Llama);
  options.layers = 1;
  options.packed = true;
  // Metadata edits.
  RunCases(options,
           {
               {"unknown layout",
                [](fb::ModelT& m) { T(m, "layers.0.attn.q.weight").layout = static_cast<fb::TensorLayout>(7); },
                kBad,
                {"layers.0.attn.q.weight", "unknown layout"}},
               {"packed size one byte short",
                [](fb::ModelT& m) { T(m, "layers.0.attn.q.weight").size -= 1; },
                kBad,
                {"layers.0.attn.q.weight", "packed tiles"}},
               {"packed but F32",
                [](fb::ModelT& m) {
                  fb::TensorT& t = T(m, "final_norm.weight");
                  t.layout = fb::TensorLayout::PackedQs8N16K4;
                },
                kBad,
                {"final_norm.weight", "packed"}},
               {"a row-major matrix claimed packed (its size no longer matches)",
                [](fb::ModelT& m) { T(m, "token_embedding").layout = fb::TensorLayout::PackedQs8N16K4; },
                kBad,
                {"token_embedding", "packed tiles"}},
           });
  // Data edits: a row sum correction and a padding byte.
  const Parts base = Split(MakeTinyModelBytes(options));
  const fb::TensorT& q = T(const_cast<fb::ModelT&>(base.model), "layers.0.attn.q.weight");
  {
    Parts parts = base;
    parts.data[q.offset + 4] ^= 1;  // corr[1] of tile 0
    ExpectRejected(Join(parts.model, parts.data), kBad,
                   {"layers.0.attn.q.weight", "row sum correction"});
  }
  {
    Parts parts = base;
    parts.data[q.offset + 64 + 3] ^= 1;  // channel 0's weight k = 3: its corr no longer matches
    ExpectRejected(Join(parts.model, parts.data), kBad, {"layers.0.attn.q.weight", "channel 0"});
  }
  {
    // A channel past N that is not zero: the head claims 31 rows of its 32, so
    // row 31 (with its consistent row sum) becomes padding; the size is the same.
    Parts parts = base;
    fb::TensorT& t = T(parts.model, "lm_head");
    REQUIRE(t.shape.size() == 2);
    REQUIRE(t.shape[0] % 16 == 0);
    t.shape[0] -= 1;
    t.quant->scales.pop_back();
    ExpectRejected(Join(parts.model, parts.data), kBad, {"lm_head", "non-zero padding"});
  }
}

TEST_CASE("input_bits: 8, or 16 on an int8 matrix; anything else is rejected") {
  TinyModelOptions options = Options(fb::Family::Llama);
  options.layers = 1;
  options.packed = true;
  RunCases(options,
           {
               {"input_bits 12",
                [](fb::ModelT& m) { T(m, "layers.0.attn.q.weight").input_bits = 12; },
                kBad,
                {"layers.0.attn.q.weight", "input_bits 12"}},
               {"input_bits 0",
                [](fb::ModelT& m) { T(m, "layers.0.ffn.down.weight").input_bits = 0; },
                kBad,
                {"layers.0.ffn.down.weight", "input_bits 0"}},
               {"input_bits 16 on an F32 vector",
                [](fb::ModelT& m) { T(m, "final_norm.weight").input_bits = 16; },
                kBad,
                {"final_norm.weight", "input_bits 16"}},
           });
}

TEST_CASE("tensor names: duplicates, empty, too long, non-printable") {
  const auto rename = [](const char* from, std::string to) {
    return [=](fb::ModelT& m) { T(m, from).name = to; };
  };
  RunCases(Options(fb::Family::Llama, false),
           {
               {"two token_embedding",
                rename("lm_head", "token_embedding"),
                kBad,
                {"'token_embedding' appears twice"}},
               {"two q projections",
                rename("layers.0.attn.k.weight", "layers.0.attn.q.weight"),
                kBad,
                {"'layers.0.attn.q.weight' appears twice"}},
               {"empty name", rename("lm_head", ""), kBad, {"has no name"}},
               {"257-byte name",
                rename("lm_head", std::string(257, 'x')),
                kBad,
                {"257 bytes (limit 256)"}},
               {"a space", rename("lm_head", "lm head"), kBad, {"non-printable byte 0x20"}},
               {"a tab", rename("lm_head", "lm\thead"), kBad, {"non-printable byte 0x09"}},
               {"a NUL inside",
                rename("lm_head", std::string("lm\0head", 7)),
                kBad,
                {"non-printable byte 0x00"}},
               {"DEL",
                rename("lm_head",
                       "lm\x7f"
                       "head"),
                kBad,
                {"non-printable byte 0x7f"}},
               {"UTF-8",
                rename("lm_head",
                       "lm_h\xc3\xa9"
                       "ad"),
                kBad,
                {"non-printable byte 0xc3"}},
               {"a newline at the end",
                rename("final_norm.weight", "final_norm.weight\n"),
                kBad,
                {"non-printable byte 0x0a"}},
           });
}

TEST_CASE("architecture values out of range (written by the real writer)") {
  using F = fb::Family;
  const std::vector<ArchitectureCase> cases = {
      {"vocab 0",
       F::Llama,
       [](fb::ArchitectureT& a) { a.vocab_size = 0; },
       kBad,
       {"vocab_size = 0"}},
      {"vocab 2^24 + 1",
       F::Llama,
       [](fb::ArchitectureT& a) { a.vocab_size = (1u << 24) + 1; },
       kBad,
       {"vocab_size = 16777217"}},
      {"hidden 0",
       F::Llama,
       [](fb::ArchitectureT& a) { a.hidden_size = 0; },
       kBad,
       {"hidden_size = 0"}},
      {"hidden 2^16 + 1",
       F::Llama,
       [](fb::ArchitectureT& a) { a.hidden_size = 65537; },
       kBad,
       {"hidden_size"}},
      {"intermediate 0 with layers",
       F::Llama,
       [](fb::ArchitectureT& a) { a.intermediate_size = 0; },
       kBad,
       {"intermediate_size = 0"}},
      {"5000 layers",
       F::Llama,
       [](fb::ArchitectureT& a) { a.num_layers = 5000; },
       kBad,
       {"num_layers = 5000"}},
      {"decoder layers in a decoder-only model",
       F::Llama,
       [](fb::ArchitectureT& a) { a.num_decoder_layers = 1; },
       kBad,
       {"num_decoder_layers = 1"}},
      {"5000 decoder layers (t5)",
       F::T5,
       [](fb::ArchitectureT& a) { a.num_decoder_layers = 5000; },
       kBad,
       {"num_decoder_layers = 5000"}},
      {"0 heads",
       F::Llama,
       [](fb::ArchitectureT& a) { a.attention->num_heads = 0; },
       kBad,
       {"attention.num_heads = 0"}},
      {"2000 heads",
       F::Llama,
       [](fb::ArchitectureT& a) { a.attention->num_heads = a.attention->num_kv_heads = 2000; },
       kBad,
       {"attention.num_heads = 2000"}},
      {"kv heads do not divide heads",
       F::Llama,
       [](fb::ArchitectureT& a) { a.attention->num_heads = 3; },
       kBad,
       {"num_kv_heads 2 does not divide num_heads 3"}},
      {"kv heads > heads",
       F::Llama,
       [](fb::ArchitectureT& a) { a.attention->num_kv_heads = 4; },
       kBad,
       {"attention.num_kv_heads = 4"}},
      {"0 kv heads",
       F::Llama,
       [](fb::ArchitectureT& a) { a.attention->num_kv_heads = 0; },
       kBad,
       {"attention.num_kv_heads = 0"}},
      {"head_dim 0",
       F::Llama,
       [](fb::ArchitectureT& a) { a.attention->head_dim = 0; },
       kBad,
       {"attention.head_dim = 0"}},
      {"head_dim 5000",
       F::Llama,
       [](fb::ArchitectureT& a) { a.attention->head_dim = 5000; },
       kBad,
       {"attention.head_dim = 5000"}},
      {"attention scale -1",
       F::Llama,
       [](fb::ArchitectureT& a) { a.attention->scale = -1.0f; },
       kBad,
       {"attention.scale"}},
      {"attention scale NaN",
       F::Llama,
       [](fb::ArchitectureT& a) { a.attention->scale = kNaN; },
       kBad,
       {"attention.scale"}},
      {"attention scale inf",
       F::Llama,
       [](fb::ArchitectureT& a) { a.attention->scale = kInf; },
       kBad,
       {"attention.scale"}},
      {"norm_eps NaN",
       F::Llama,
       [](fb::ArchitectureT& a) { a.norm_eps = kNaN; },
       kBad,
       {"norm_eps"}},
      {"norm_eps 0",
       F::Llama,
       [](fb::ArchitectureT& a) { a.norm_eps = 0.0f; },
       kBad,
       {"norm_eps = 0"}},
      {"norm_eps negative",
       F::Bert,
       [](fb::ArchitectureT& a) { a.norm_eps = -1e-5f; },
       kBad,
       {"norm_eps"}},
      {"norm_eps inf", F::T5, [](fb::ArchitectureT& a) { a.norm_eps = kInf; }, kBad, {"norm_eps"}},
      {"norm_eps 1", F::Llama, [](fb::ArchitectureT& a) { a.norm_eps = 1.0f; }, kBad, {"norm_eps"}},
      {"rope theta NaN",
       F::Llama,
       [](fb::ArchitectureT& a) { a.rope->theta = kNaN; },
       kBad,
       {"rope.theta"}},
      {"rope theta inf",
       F::Llama,
       [](fb::ArchitectureT& a) { a.rope->theta = kInf; },
       kBad,
       {"rope.theta"}},
      {"rope theta 0",
       F::Llama,
       [](fb::ArchitectureT& a) { a.rope->theta = 0.0f; },
       kBad,
       {"rope.theta = 0"}},
      {"rope theta 1",
       F::Llama,
       [](fb::ArchitectureT& a) { a.rope->theta = 1.0f; },
       kBad,
       {"rope.theta = 1"}},
      {"rope position without rope parameters",
       F::Llama,
       [](fb::ArchitectureT& a) { a.rope.reset(); },
       kBad,
       {"without rope parameters"}},
      {"unknown rope scaling",
       F::Llama,
       [](fb::ArchitectureT& a) { a.rope->scaling = static_cast<fb::RopeScaling>(7); },
       kBad,
       {"rope scaling"}},
      {"rope factor NaN",
       F::Llama,
       [](fb::ArchitectureT& a) { a.rope->factor = kNaN; },
       kBad,
       {"rope scaling"}},
      {"rope factor 0",
       F::Llama,
       [](fb::ArchitectureT& a) { a.rope->factor = 0.0f; },
       kBad,
       {"rope scaling"}},
      {"odd rotary_dim",
       F::Llama,
       [](fb::ArchitectureT& a) { a.rope->rotary_dim = 3; },
       kBad,
       {"rope.rotary_dim 3"}},
      {"rotary_dim > head_dim",
       F::Llama,
       [](fb::ArchitectureT& a) { a.rope->rotary_dim = 10; },
       kBad,
       {"rope.rotary_dim 10"}},
      {"family 200",
       F::Llama,
       [](fb::ArchitectureT& a) { a.family = static_cast<F>(200); },
       StatusCode::kUnsupported,
       {"unknown family 200"}},
      {"family Unknown",
       F::Llama,
       [](fb::ArchitectureT& a) { a.family = F::Unknown; },
       StatusCode::kUnsupported,
       {"unknown family 0"}},
      {"llama as an encoder",
       F::Llama,
       [](fb::ArchitectureT& a) { a.structure = fb::Structure::EncoderOnly; },
       kBad,
       {"family Llama must be DecoderOnly"}},
      {"bert as a decoder",
       F::Bert,
       [](fb::ArchitectureT& a) { a.structure = fb::Structure::DecoderOnly; },
       kBad,
       {"family Bert must be EncoderOnly"}},
      {"a band of later keys in a decoder",
       F::Llama,
       [](fb::ArchitectureT& a) {
         a.attention->sliding_window = 8;
         a.attention->sliding_window_ahead = 4;
       },
       kBad,
       {"sliding_window_ahead 4 is for encoders", "DecoderOnly"}},
      {"a band of later keys without a sliding window",
       F::Bert,
       [](fb::ArchitectureT& a) { a.attention->sliding_window_ahead = 4; },
       kBad,
       {"sliding_window_ahead 4", "sliding_window 0"}},
      {"a short convolution without its table",
       F::Lfm2,
       [](fb::ArchitectureT& a) { a.short_conv.reset(); },
       kBad,
       {"layer 0 is a short convolution", "no short_conv table"}},
      {"a short convolution of 1 tap",
       F::Lfm2,
       [](fb::ArchitectureT& a) { a.short_conv->kernel = 1; },
       kBad,
       {"short_conv.kernel = 1 is outside [2, 64]"}},
      {"a short convolution of 65 taps",
       F::Lfm2,
       [](fb::ArchitectureT& a) { a.short_conv->kernel = 65; },
       kBad,
       {"short_conv.kernel = 65"}},
      {"a Gated DeltaNet without its table",
       F::Qwen35,
       [](fb::ArchitectureT& a) { a.linear_attention.reset(); },
       kBad,
       {"layer 0 is a Gated DeltaNet", "no linear_attention table"}},
      {"Gated DeltaNet value heads not a multiple of the key heads",
       F::Qwen35,
       [](fb::ArchitectureT& a) { a.linear_attention->value_heads = 3; },
       kBad,
       {"value_heads 3 is not a multiple of key_heads 2"}},
      {"a Gated DeltaNet conv of 1 tap",
       F::Qwen35,
       [](fb::ArchitectureT& a) { a.linear_attention->conv_kernel = 1; },
       kBad,
       {"linear_attention.conv_kernel = 1 is outside [2, 64]"}},
      {"layer_norm_eps of the wrong length",
       F::Rwkv,
       [](fb::ArchitectureT& a) { a.layer_norm_eps.push_back(1e-5f); },
       kBad,
       {"layer_norm_eps has 2 entries for 1 layers"}},
      {"a layer_norm_eps of 0",
       F::Rwkv,
       [](fb::ArchitectureT& a) { a.layer_norm_eps[0] = 0.0f; },
       kBad,
       {"layer_norm_eps[0] = 0 must be finite and > 0"}},
      {"a layer_norm_eps NaN",
       F::Llama,
       [](fb::ArchitectureT& a) { a.layer_norm_eps = {kNaN}; },
       kBad,
       {"layer_norm_eps[0] = nan"}},
      {"final_norm_eps negative",
       F::Rwkv,
       [](fb::ArchitectureT& a) { a.final_norm_eps = -1e-5f; },
       kBad,
       {"final_norm_eps = -1e-05 must be finite and > 0"}},
      {"final_norm_eps inf",
       F::Llama,
       [](fb::ArchitectureT& a) { a.final_norm_eps = kInf; },
       kBad,
       {"final_norm_eps = inf"}},
      {"channel mixer 7",
       F::Llama,
       [](fb::ArchitectureT& a) { a.channel_mixer = static_cast<fb::ChannelMixer>(7); },
       kBad,
       {"channel_mixer is 7, not a channel mixer this runtime knows"}},
      {"an RWKV channel mix in an encoder",
       F::Bert,
       [](fb::ArchitectureT& a) { a.channel_mixer = fb::ChannelMixer::RwkvChannelMix; },
       kBad,
       {"RwkvChannelMix is for pre-norm decoder-only models", "EncoderOnly"}},
      {"an RWKV time mix in an encoder",
       F::Bert,
       [](fb::ArchitectureT& a) { a.layer_mixers = {fb::TokenMixer::RwkvTimeMix}; },
       kBad,
       {"layer 0 is an RWKV time mix, which only decoder-only models have"}},
      {"no first attn_norm in a decoder",
       F::Llama,
       [](fb::ArchitectureT& a) { a.first_attn_norm = false; },
       kBad,
       {"first_attn_norm false is for pre-norm encoders"}},
      {"no first attn_norm in a post-norm encoder",
       F::Bert,
       [](fb::ArchitectureT& a) { a.first_attn_norm = false; },
       kBad,
       {"first_attn_norm false is for pre-norm encoders"}},
      {"t5 as a decoder",
       F::T5,
       [](fb::ArchitectureT& a) { a.structure = fb::Structure::DecoderOnly; },
       kBad,
       {"family T5 must be EncoderDecoder"}},
      {"structure 9",
       F::Llama,
       [](fb::ArchitectureT& a) { a.structure = static_cast<fb::Structure>(9); },
       kBad,
       {"unknown structure 9"}},
      {"norm 9",
       F::Llama,
       [](fb::ArchitectureT& a) { a.norm = static_cast<fb::NormKind>(9); },
       kBad,
       {"enum field"}},
      {"norm placement 5",
       F::Llama,
       [](fb::ArchitectureT& a) { a.norm_placement = static_cast<fb::NormPlacement>(5); },
       kBad,
       {"enum field"}},
      {"activation 9",
       F::Llama,
       [](fb::ArchitectureT& a) { a.activation = static_cast<fb::Activation>(9); },
       kBad,
       {"enum field"}},
      {"position 99",
       F::Llama,
       [](fb::ArchitectureT& a) { a.position = static_cast<fb::PositionKind>(99); },
       kBad,
       {"enum field"}},
      {"embedding scale NaN",
       F::Llama,
       [](fb::ArchitectureT& a) { a.embedding_scale = kNaN; },
       kBad,
       {"embedding_scale"}},
      {"logits scale 0",
       F::Llama,
       [](fb::ArchitectureT& a) { a.logits_scale = 0.0f; },
       kBad,
       {"logits_scale"}},
      {"logits scale -inf",
       F::T5,
       [](fb::ArchitectureT& a) { a.logits_scale = -kInf; },
       kBad,
       {"logits_scale"}},
      {"type vocab 5000",
       F::Bert,
       [](fb::ArchitectureT& a) { a.type_vocab_size = 5000; },
       kBad,
       {"type_vocab_size = 5000"}},
      {"max positions 2^24 + 1",
       F::Llama,
       [](fb::ArchitectureT& a) { a.max_positions = (1u << 24) + 1; },
       kBad,
       {"max_positions = 16777217"}},
      {"learned positions, max_positions 0",
       F::Bert,
       [](fb::ArchitectureT& a) { a.max_positions = 0; },
       kBad,
       {"max_positions = 0"}},
      {"relative bias with 0 buckets",
       F::T5,
       [](fb::ArchitectureT& a) { a.attention->relative_buckets = 0; },
       kBad,
       {"attention.relative_buckets = 0"}},
      {"relative bias with max distance 0",
       F::T5,
       [](fb::ArchitectureT& a) { a.attention->relative_max_distance = 0; },
       kBad,
       {"attention.relative_max_distance = 0"}},
      {"bos id = vocab",
       F::Llama,
       [](fb::ArchitectureT& a) { a.bos_token_id = 32; },
       kBad,
       {"bos_token_id 32"}},
      {"pad id -2",
       F::Bert,
       [](fb::ArchitectureT& a) { a.pad_token_id = -2; },
       kBad,
       {"pad_token_id -2"}},
      {"eos id INT32_MAX",
       F::Llama,
       [](fb::ArchitectureT& a) { a.eos_token_id = std::numeric_limits<int32_t>::max(); },
       kBad,
       {"eos_token_id"}},
      {"decoder start id 1000",
       F::T5,
       [](fb::ArchitectureT& a) { a.decoder_start_token_id = 1000; },
       kBad,
       {"decoder_start_token_id 1000"}},
  };
  for (const ArchitectureCase& c : cases) {
    INFO("case: " << c.what);
    ExpectRejected(WithArchitecture(Options(c.family), c.edit), c.code, c.needles);
  }
  for (F family : {F::Llama, F::Bert, F::T5, F::Rwkv}) {
    ExpectLoads(WithArchitecture(Options(family), [](fb::ArchitectureT&) {}));
  }
}

TEST_CASE("canonical tensors against the architecture, and layer indices") {
  const auto rename = [](const char* from, std::string to) {
    return [=](fb::ModelT& m) { T(m, from).name = to; };
  };
  const auto reshape = [](const char* name, std::vector<uint32_t> shape) {
    return [=](fb::ModelT& m) { T(m, name).shape = shape; };  // same element count
  };
  RunCases(
      Options(fb::Family::Llama, false),
      {
          {"token_embedding missing",
           rename("token_embedding", "token_embeddings"),
           kBad,
           {"'token_embedding' is missing"}},
          {"no tensors at all",
           [](fb::ModelT& m) { m.tensors.clear(); },
           kBad,
           {"'token_embedding' is missing"}},
          {"token_embedding transposed",
           reshape("token_embedding", {16, 32}),
           kBad,
           {"'token_embedding' must be [32, 16]"}},
          {"token_embedding of rank 1",
           reshape("token_embedding", {512}),
           kBad,
           {"'token_embedding' must be [32, 16]"}},
          {"token_embedding of rank 3",
           reshape("token_embedding", {32, 16, 1}),
           kBad,
           {"'token_embedding' must be [32, 16]"}},
          {"vocab 64 but a 32-row embedding",
           [](fb::ModelT& m) { m.architecture->vocab_size = 64; },
           kBad,
           {"'token_embedding' must be [64, 16]"}},
          {"lm_head of the wrong shape",
           reshape("lm_head", {64, 8}),
           kBad,
           {"'lm_head' must be [32, 16]"}},
          {"layer 1 of a 1-layer model",
           rename("layers.0.attn.q.weight", "layers.1.attn.q.weight"),
           kBad,
           {"'layers.1.attn.q.weight' names layer 1, but the architecture has 1"}},
          {"layer 2^32",
           rename("layers.0.ffn.up.weight", "layers.4294967296.ffn.up.weight"),
           kBad,
           {"layers.4294967296.ffn.up.weight", "names layer"}},
          {"a layer index of 30 digits",
           rename("layers.0.ffn.up.weight", "layers.999999999999999999999999999999.ffn.up.weight"),
           kBad,
           {"names layer"}},
          {"0 layers but layer tensors",
           [](fb::ModelT& m) { m.architecture->num_layers = 0; },
           kBad,
           {"names layer 0, but the architecture has 0"}},
          {"encoder layers in a decoder-only model",
           rename("layers.0.attn.o.weight", "encoder.layers.0.attn.o.weight"),
           kBad,
           {"'encoder.layers.0.attn.o.weight' names layer 0, but the architecture has 0"}},
      });
  RunCases(Options(fb::Family::T5, false),
           {
               {"decoder layer 1 of 1",
                rename("decoder.layers.0.attn.q.weight", "decoder.layers.1.attn.q.weight"),
                kBad,
                {"'decoder.layers.1.attn.q.weight' names layer 1, but the architecture has 1"}},
               {"encoder layer 7 of 1",
                rename("encoder.layers.0.ffn.down.weight", "encoder.layers.7.ffn.down.weight"),
                kBad,
                {"names layer 7"}},
               {"plain layers in an encoder-decoder",
                rename("encoder.layers.0.attn.v.weight", "layers.0.attn.v.weight"),
                kBad,
                {"'layers.0.attn.v.weight' names layer 0, but the architecture has 0"}},
           });
  RunCases(Options(fb::Family::Bert, false),
           {
               {"position_embedding one row short",
                [](fb::ModelT& m) {
                  T(m, "position_embedding").shape = {63, 16};
                  T(m, "position_embedding").size = 63 * 16 * 4;
                },
                kBad,
                {"'position_embedding' must be [64, 16]"}},
               {"token_type_embedding of 3 types",
                [](fb::ModelT& m) { m.architecture->type_vocab_size = 3; },
                kBad,
                {"'token_type_embedding' must be [3, 16]"}},
           });
}

TEST_CASE("tokenizer blobs and the memory plan") {
  RunCases(
      Options(fb::Family::Llama),
      {
          {"blob at the end of the data segment",
           [](fb::ModelT& m) { Blob0(m).offset = m.data_size; },
           kBad,
           {"tokenizer file 'tokenizer.json' lies outside the data segment"}},
          {"blob longer than the data segment",
           [](fb::ModelT& m) { Blob0(m).size = m.data_size + 1; },
           kBad,
           {"tokenizer.json", "outside"}},
          {"blob offset + size overflows",
           [](fb::ModelT& m) {
             Blob0(m).offset = kU64Max - 63;
             Blob0(m).size = 128;
           },
           kBad,
           {"tokenizer.json", "outside"}},
          {"blob size 2^64 - 1", [](fb::ModelT& m) { Blob0(m).size = kU64Max; }, kBad, {"outside"}},
          {"misaligned blob",
           [](fb::ModelT& m) { Blob0(m).offset += 4; },
           kBad,
           {"tokenizer.json"}},
          {"blob without a name",
           [](fb::ModelT& m) { Blob0(m).name = ""; },
           kBad,
           {"tokenizer file 0 has no name"}},
          {"blob name with a newline",
           [](fb::ModelT& m) { Blob0(m).name = "tok\nenizer"; },
           kBad,
           {"tokenizer file 0", "non-printable byte 0x0a"}},
          {"unknown tokenizer kind",
           [](fb::ModelT& m) { m.tokenizer->kind = static_cast<fb::TokenizerKind>(99); },
           kBad,
           {"unknown tokenizer kind"}},
          {"arena of unknown kind",
           [](fb::ModelT& m) { m.memory_plan->arenas[0]->kind = static_cast<fb::ArenaKind>(9); },
           kBad,
           {"memory plan entry 0"}},
          {"arena of 2^49 bytes",
           [](fb::ModelT& m) { m.memory_plan->arenas[0]->bytes = 1ull << 49; },
           kBad,
           {"memory plan entry 0"}},
      });
}

TEST_CASE("edits the loader must accept") {
  // The checks above must not be broader than the format: these are all valid.
  const Parts base = Split(MakeTinyModelBytes(Options(fb::Family::Llama)));
  const std::vector<std::pair<const char*, std::function<void(fb::ModelT&)>>> edits = {
      {"a newer minor version", [](fb::ModelT& m) { m.format_minor = 999; }},
      {"zero points at both ends of the range",
       [](fb::ModelT& m) {
         fb::QuantizationT& q = *T(m, "token_embedding").quant;
         q.zero_points.assign(q.scales.size(), 127);
         q.zero_points[0] = -128;
       }},
      {"a denormal scale", [](fb::ModelT& m) { T(m, "lm_head").quant->scales[3] = 1e-45f; }},
      {"per-tensor quantization",
       [](fb::ModelT& m) {
         T(m, "token_embedding").quant->scheme = fb::QuantScheme::PerTensor;
         T(m, "token_embedding").quant->scales.resize(1);
       }},
      {"per-block quantization",
       [](fb::ModelT& m) {
         fb::QuantizationT& q = *T(m, "token_embedding").quant;
         q.scheme = fb::QuantScheme::PerBlock;
         q.block_size = 8;
         q.scales.assign(64, 0.01f);
       }},
      {"a 256-byte name", [](fb::ModelT& m) { T(m, "lm_head").name = std::string(256, 'h'); }},
      {"an extra tensor sharing bytes",
       [](fb::ModelT& m) {
         auto t = std::make_unique<fb::TensorT>();
         t->name = "extra.bytes";
         t->dtype = fb::DType::U8;
         t->shape = {64};
         t->size = 64;
         m.tensors.push_back(std::move(t));
       }},
      {"more layers than tensors for them", [](fb::ModelT& m) { m.architecture->num_layers = 2; }},
      {"no tokenizer, provenance or memory plan",
       [](fb::ModelT& m) {
         m.tokenizer.reset();
         m.provenance.reset();
         m.memory_plan.reset();
       }},
      {"an empty blob", [](fb::ModelT& m) { Blob0(m).size = 0; }},
  };
  for (const auto& [what, edit] : edits) {
    INFO("case: " << what);
    Parts parts = base;
    edit(parts.model);
    ExpectLoads(Join(parts.model, parts.data));
  }
}

TEST_CASE("the writer refuses bad tensors itself (the cases above build them without it)") {
  // The files themselves are covered above, built without the writer.
  ModelWriter writer;
  const std::vector<float> data(64, 1.0f);
  CHECK_THROWS_AS(writer.AddTensor("a", fb::DType::F32, {4, 0}, data.data()), std::runtime_error);
  CHECK_THROWS_AS(writer.AddTensor("a", fb::DType::F32, {}, data.data()), std::runtime_error);
  CHECK_THROWS_AS(writer.AddTensor("a", fb::DType::F32, std::vector<uint32_t>(9, 1), data.data()),
                  std::runtime_error);
  CHECK_THROWS_AS(writer.AddTensor("a", fb::DType::I8, {4}, data.data()), std::runtime_error);
  CHECK_THROWS_AS(writer.AddTensor("", fb::DType::F32, {4}, data.data()), std::runtime_error);
  writer.AddTensor("a", fb::DType::F32, {4}, data.data());
  CHECK_THROWS_AS(writer.AddTensor("a", fb::DType::F32, {4}, data.data()), std::runtime_error);
}

TEST_CASE(
    "files over 4 GiB: tensors past 2^31 and 2^32 on 64-bit builds, a clean error on "
    "32-bit ones") {
  constexpr uint64_t kHole = 1ull << 31;  // each sparse tensor: 2 GiB that cost no disk
  TempFile file;
  // Probe: does the temp file system keep a 4 GiB file sparse?
  const std::string refused = WriteSparseFile(file.path(), {}, 2 * kHole + (1u << 20));
  if (!refused.empty() || AllocatedBytes(file.path()) > (64u << 20)) {
    MESSAGE("SKIPPED: the temp file system ("
            << file.path()
            << ") does not take a sparse "
               "4 GiB file ("
            << (refused.empty() ? "holes get allocated" : refused)
            << "); set TMPDIR to one that does (ext4, xfs, btrfs, tmpfs) to run this test");
    return;
  }

  if (k32BitBuild) {
    // The writer's offsets need a 64-bit off_t; write the file directly: a
    // valid tiny model followed by a 4 GiB hole. Whatever it holds, a 32-bit
    // process cannot map it and must say so.
    REQUIRE(WriteSparseFile(file.path(), MakeTinyModelBytes(), 2 * kHole + 4096).empty());
    Result<Model> model = Model::Load(file.path().c_str());
    REQUIRE_FALSE(model.ok());
    INFO("message: " << Text(model.status()));
    CHECK((model.status().code() == StatusCode::kUnsupported ||
           model.status().code() == StatusCode::kIo));
    CHECK(Contains(model.status().message(), file.path()));
    return;
  }

  ModelWriter writer = MakeTinyModelWriter(TinyModelOptions());  // llama, int8, tokenizer
  std::vector<uint8_t> pattern_a(256), pattern_b(256);
  for (size_t i = 0; i < 256; ++i) {
    pattern_a[i] = static_cast<uint8_t>(i);
    pattern_b[i] = static_cast<uint8_t>(255 - i);
  }
  writer.AddTensor("sparse.hole_a", fb::DType::U8, {static_cast<uint32_t>(kHole)}, nullptr);
  writer.AddTensorCopy("sparse.after_2g", fb::DType::U8, {256}, pattern_a.data());
  writer.AddTensor("sparse.hole_b", fb::DType::U8, {2, static_cast<uint32_t>(kHole / 2)}, nullptr);
  writer.AddTensorCopy("sparse.after_4g", fb::DType::F32, {64}, pattern_b.data());
  try {
    writer.Write(file.path());
  } catch (const std::exception& e) {
    FAIL("the writer could not write a sparse 4 GiB file: " << e.what());
  }
  const uint64_t size = FileSize(file.path());
  CHECK(size > 2 * kHole);
  if (AllocatedBytes(file.path()) > (64u << 20)) {
    MESSAGE("note: the file occupies " << AllocatedBytes(file.path()) << " bytes on disk");
  }

  Result<Model> model = Model::Load(file.path().c_str());
  REQUIRE_MESSAGE(model.ok(), Text(model.status()));
  CHECK(model->is_mapped());
  CHECK(model->file_size() == size);
  // The offsets the file records, and the views the loader made of them.
  const auto offset_of = [&](const char* name) -> uint64_t {
    for (const fb::Tensor* t : *model->root().tensors()) {
      if (std::strcmp(t->name()->c_str(), name) == 0) return t->offset();
    }
    return 0;
  };
  const uint8_t* segment = model->file_data() + model->data_offset();
  const TensorView* a = model->Find("sparse.after_2g");
  const TensorView* b = model->Find("sparse.after_4g");
  const TensorView* hole = model->Find("sparse.hole_b");
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  REQUIRE(hole != nullptr);
  CHECK(offset_of("sparse.after_2g") > kHole);
  CHECK(offset_of("sparse.after_4g") > 2 * kHole);
  CHECK(a->data == segment + offset_of("sparse.after_2g"));
  CHECK(b->data == segment + offset_of("sparse.after_4g"));
  CHECK(b->size == 256);
  CHECK(std::memcmp(a->data, pattern_a.data(), 256) == 0);
  CHECK(std::memcmp(b->data, pattern_b.data(), 256) == 0);
  CHECK(hole->size == kHole);
  CHECK(static_cast<const uint8_t*>(hole->data)[kHole - 1] == 0);
  uint64_t blob_size = 0;
  const uint8_t* blob = model->blob(0, &blob_size);
  REQUIRE(blob != nullptr);
  CHECK(static_cast<uint64_t>(blob - segment) > 2 * kHole);
  CHECK(std::memcmp(blob, "{\"version\"", 10) == 0);
}

TEST_CASE("a size prefix beyond the FlatBuffers 2 GiB limit is refused, not asserted on") {
  // flatbuffers::Verifier asserts its buffer is under 2 GiB; a file over 2 GiB
  // whose size prefix claims that much must get a Status before it gets there.
  TempFile file;
  const uint64_t size = (1ull << 31) + 64;
  for (uint32_t claim : {0x7ffffffbu, 0x7ffffffcu, 0x80000000u}) {
    CAPTURE(claim);
    std::vector<uint8_t> head(64, 0);
    WriteLe32(head.data(), claim);
    WriteLe32(head.data() + 4, 12);  // root table offset
    std::memcpy(head.data() + 8, fb::ModelIdentifier(), 4);
    const std::string refused = WriteSparseFile(file.path(), head, size);
    if (!refused.empty() || AllocatedBytes(file.path()) > (64u << 20)) {
      MESSAGE("SKIPPED: the temp file system does not take a sparse 2 GiB file: " << refused);
      return;
    }
    Result<Model> model = Model::Load(file.path().c_str());
    REQUIRE_FALSE(model.ok());
    INFO("message: " << Text(model.status()));
    if (k32BitBuild) {
      CHECK((model.status().code() == StatusCode::kUnsupported ||
             model.status().code() == StatusCode::kIo));
    } else {
      CHECK(model.status().code() == kBad);
      CHECK(Contains(model.status().message(), "2 GiB"));
    }
  }
}

}  // namespace
}  // namespace octet
