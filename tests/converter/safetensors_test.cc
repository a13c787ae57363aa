// The safetensors reader and sharded checkpoints: every malformed file is one
// clear line naming the file and the problem.
#include <doctest/doctest.h>

#include <cstring>

#include "converter/hf_fixtures.h"
#include "converter/test_util.h"
#include "import/checkpoint.h"
#include "import/safetensors.h"

namespace octet {
namespace {

using convert::Checkpoint;
using testing::ErrorOf;
using testing::Has;
using testing::RawTensor;
using testing::TempDir;

RawTensor F32(const std::string& name, std::vector<uint64_t> shape, float first = 1.0f) {
  RawTensor t{name, "F32", shape, {}};
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  for (uint64_t i = 0; i < n; ++i) {
    const float v = first + static_cast<float>(i);
    uint8_t b[4];
    std::memcpy(b, &v, 4);
    t.bytes.insert(t.bytes.end(), b, b + 4);
  }
  return t;
}

// A file whose header is `header` (padded), followed by `data_bytes` zero bytes.
std::vector<uint8_t> WithHeader(const std::string& header, size_t data_bytes) {
  std::vector<uint8_t> out(8 + header.size() + data_bytes, 0);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(header.size() >> (8 * i));
  std::memcpy(out.data() + 8, header.data(), header.size());
  return out;
}

std::string OpenError(const std::vector<uint8_t>& bytes) {
  TempDir dir;
  testing::WriteFile(dir.path() / "model.safetensors", bytes);
  return ErrorOf([&] { Checkpoint::Open(dir.path()); });
}

TEST_CASE("a well-formed file reads back, F32 in place and F16/BF16 widened") {
  TempDir dir;
  RawTensor half{"h", "F16", {3}, {0x00, 0x3c, 0x01, 0x00, 0x00, 0xfc}};  // 1, 2^-24, -inf
  RawTensor bf{"b", "BF16", {2}, {0x80, 0x3f, 0x40, 0xc0}};               // 1, -3
  testing::WriteFile(dir.path() / "model.safetensors",
                     testing::SafetensorsBytes({F32("w", {2, 3}), half, bf}));
  const Checkpoint c = Checkpoint::Open(dir.path());
  REQUIRE(c.All().size() == 3);
  const convert::Tensor* w = c.Find("w");
  REQUIRE(w != nullptr);
  CHECK(w->shape == std::vector<uint64_t>{2, 3});
  CHECK(w->file == "model.safetensors");
  CHECK(Checkpoint::ReadAllF32(*w) == std::vector<float>{1, 2, 3, 4, 5, 6});
  const std::vector<float> h = Checkpoint::ReadAllF32(*c.Find("h"));
  CHECK(h[0] == 1.0f);
  CHECK(h[1] == std::ldexp(1.0f, -24));
  CHECK(h[2] == -INFINITY);
  CHECK(Checkpoint::ReadAllF32(*c.Find("b")) == std::vector<float>{1.0f, -3.0f});
  CHECK(c.DTypeSummary() == "BF16, F16, F32");
}

TEST_CASE("truncated files name the file") {
  const std::vector<uint8_t> good = testing::SafetensorsBytes({F32("w", {4, 4})});
  for (size_t keep : {size_t{0}, size_t{5}, size_t{20}, good.size() - 1}) {
    CAPTURE(keep);
    const std::string e =
        OpenError(std::vector<uint8_t>(good.begin(), good.begin() + static_cast<long>(keep)));
    CHECK(Has(e, "model.safetensors"));
    CHECK(Has(e, "truncated"));
  }
  const std::string e = OpenError(
      std::vector<uint8_t>(good.begin(), good.begin() + static_cast<long>(good.size() - 1)));
  CHECK(Has(e, "tensor 'w'"));
}

TEST_CASE("a header that is not JSON, or not the expected JSON") {
  CHECK(Has(OpenError(WithHeader("{\"w\": {\"dtype\": ", 0)),
            "model.safetensors: the header is not valid JSON"));
  CHECK(Has(OpenError(WithHeader("[1, 2]", 0)), "not a JSON object"));
  CHECK(Has(OpenError(WithHeader("{\"w\": 5}", 0)), "tensor 'w' in the header is not an object"));
  CHECK(Has(OpenError(WithHeader(R"({"w": {"shape": [1], "data_offsets": [0, 4]}})", 4)),
            "no dtype"));
  CHECK(Has(OpenError(WithHeader(R"({"w": {"dtype": "F32", "data_offsets": [0, 4]}})", 4)),
            "no shape"));
  CHECK(Has(
      OpenError(WithHeader(R"({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})", 4)),
      "not a non-negative integer"));
  CHECK(Has(OpenError(WithHeader(R"({"w": {"dtype": "F32", "shape": [1]}})", 4)), "data_offsets"));
  CHECK(Has(
      OpenError(WithHeader(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}})", 4)),
      "begin > end"));
  CHECK(Has(OpenError(WithHeader(R"({"__metadata__": 3})", 0)), "__metadata__"));
}

TEST_CASE("an unknown dtype is named") {
  const std::string e =
      OpenError(WithHeader(R"({"w": {"dtype": "Q4_K", "shape": [2], "data_offsets": [0, 2]}})", 2));
  CHECK(Has(e, "tensor 'w' has unknown dtype 'Q4_K'"));
}

TEST_CASE("offsets outside the data, and sizes that disagree with the shape") {
  CHECK(Has(
      OpenError(WithHeader(R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", 8)),
      "ends at byte 16 of the data, which has only 8 bytes"));
  CHECK(Has(OpenError(WithHeader(
                R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 12]}})", 16)),
            "hold 12 bytes, but F32 [4] needs 16"));
  CHECK(Has(
      OpenError(WithHeader(
          R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 16]}})",
          16)),
      "too large"));
  // A header length beyond the file.
  std::vector<uint8_t> bytes = WithHeader("{}", 0);
  bytes[0] = 0xff;
  CHECK(Has(OpenError(bytes), "its header claims 255 bytes"));
}

TEST_CASE("a non-float tensor reads as a clear error") {
  TempDir dir;
  RawTensor ids{"ids", "I64", {2}, std::vector<uint8_t>(16, 0)};
  testing::WriteFile(dir.path() / "model.safetensors", testing::SafetensorsBytes({ids}));
  const Checkpoint c = Checkpoint::Open(dir.path());
  const std::string e = ErrorOf([&] { Checkpoint::ReadAllF32(*c.Find("ids")); });
  CHECK(Has(e, "tensor 'ids' in model.safetensors is I64; octet-convert reads F32, F16 and BF16"));
}

TEST_CASE("sharded checkpoints: the index's weight_map and its shards") {
  TempDir dir;
  testing::WriteFile(dir.path() / "a.safetensors", testing::SafetensorsBytes({F32("x", {2}, 1)}));
  testing::WriteFile(dir.path() / "b.safetensors",
                     testing::SafetensorsBytes({F32("y", {3}, 10), F32("z", {1}, 20)}));
  const auto index = [&](const std::string& text) {
    testing::WriteText(dir.path() / "model.safetensors.index.json", text);
  };
  index(
      R"({"metadata": {}, "weight_map": {"x": "a.safetensors", "y": "b.safetensors", "z": "b.safetensors"}})");
  {
    const Checkpoint c = Checkpoint::Open(dir.path());
    CHECK(c.files().size() == 2);
    CHECK(Checkpoint::ReadAllF32(*c.Find("y")) == std::vector<float>{10, 11, 12});
    CHECK(c.Find("x")->file == "a.safetensors");
  }
  index(R"({"weight_map": {"x": "a.safetensors", "y": "c.safetensors"}})");
  CHECK(Has(ErrorOf([&] { Checkpoint::Open(dir.path()); }),
            "model.safetensors.index.json lists shard c.safetensors, which is missing"));
  index(R"({"weight_map": {"x": "b.safetensors", "y": "b.safetensors"}})");
  CHECK(Has(ErrorOf([&] { Checkpoint::Open(dir.path()); }),
            "puts tensor 'x' in b.safetensors, which does not hold it"));
  index(R"({"weight_map": {"x": "../a.safetensors"}})");
  CHECK(Has(ErrorOf([&] { Checkpoint::Open(dir.path()); }), "is not a file name"));
  index(R"({"weight_map": {}})");
  CHECK(Has(ErrorOf([&] { Checkpoint::Open(dir.path()); }), "no weight_map"));
  index(R"({"weight_map": )");
  CHECK(Has(ErrorOf([&] { Checkpoint::Open(dir.path()); }),
            "model.safetensors.index.json is not valid JSON"));
  // The same tensor in two shards.
  testing::WriteFile(dir.path() / "b.safetensors", testing::SafetensorsBytes({F32("x", {2})}));
  index(R"({"weight_map": {"x": "a.safetensors", "w": "b.safetensors"}})");
  CHECK(Has(ErrorOf([&] { Checkpoint::Open(dir.path()); }),
            "tensor 'x' appears in both a.safetensors and b.safetensors"));
}

TEST_CASE("a directory without weights says what it expected") {
  TempDir dir;
  CHECK(Has(ErrorOf([&] { Checkpoint::Open(dir.path()); }),
            "neither model.safetensors nor model.safetensors.index.json"));
  testing::WriteText(dir.path() / "pytorch_model.bin", "x");
  CHECK(Has(ErrorOf([&] { Checkpoint::Open(dir.path()); }), "save it as safetensors first"));
}

}  // namespace
}  // namespace octet
