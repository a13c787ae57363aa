#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "format/model.h"
#include "support/test_models.h"
#include "write/model_writer.h"

namespace octet {
namespace {

using testing::AlignedBytes;
using testing::MakeTinyModelBytes;
using testing::TinyModelOptions;

TEST_CASE("writer output loads back with every field intact") {
  for (fb::Family family : {fb::Family::Llama, fb::Family::Bert, fb::Family::T5}) {
    for (bool int8 : {true, false}) {
      CAPTURE(static_cast<int>(family));
      CAPTURE(int8);
      TinyModelOptions options;
      options.family = family;
      options.int8 = int8;
      AlignedBytes bytes(MakeTinyModelBytes(options));
      Result<Model> model = Model::FromBuffer(bytes.data(), bytes.size());
      REQUIRE_MESSAGE(model.ok(), std::string(model.status().message()));
      CHECK(model->architecture().family() == family);
      CHECK(model->architecture().hidden_size() == 16);
      const TensorView* emb = model->Find("token_embedding");
      REQUIRE(emb != nullptr);
      CHECK(emb->rank == 2);
      CHECK(emb->shape[0] == 32);
      CHECK(emb->shape[1] == 16);
      CHECK(emb->dtype == (int8 ? fb::DType::I8 : fb::DType::F32));
      CHECK((emb->quant != nullptr) == int8);
      // Zero copy: the view points into the caller's buffer, 64-byte aligned.
      const uint8_t* p = static_cast<const uint8_t*>(emb->data);
      CHECK(p >= bytes.data());
      CHECK(p + emb->size <= bytes.data() + bytes.size());
      CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
      CHECK(model->Find("no_such_tensor") == nullptr);
      uint64_t blob_size = 0;
      const uint8_t* blob = model->blob(0, &blob_size);
      REQUIRE(blob != nullptr);
      CHECK(std::memcmp(blob, "{\"version\"", 10) == 0);
      REQUIRE(model->root().provenance() != nullptr);
      CHECK(model->root().provenance()->layer_errors()->size() == 1);
    }
  }
}

TEST_CASE("a model file on disk is mapped, not copied") {
  testing::TempFile file;
  testing::MakeTinyModelWriter(TinyModelOptions()).Write(file.path());
  Result<Model> model = Model::Load(file.path().c_str());
  REQUIRE_MESSAGE(model.ok(), std::string(model.status().message()));
  CHECK(model->is_mapped());
  const TensorView* emb = model->Find("token_embedding");
  REQUIRE(emb != nullptr);
  const uint8_t* p = static_cast<const uint8_t*>(emb->data);
  CHECK(p >= model->file_data());
  CHECK(p < model->file_data() + model->file_size());
}

std::vector<uint8_t> FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

// The converter writes its int8 file twice (the second time with the report
// measured on the first) and frees the writer's copies in between: the second
// file has the first one's bytes, whatever changed in the header.
TEST_CASE("a writer re-reads its copies from the file it wrote, and refuses any other file") {
  for (bool int8 : {true, false}) {
    CAPTURE(int8);
    TinyModelOptions options;
    options.int8 = int8;
    ModelWriter writer = testing::MakeTinyModelWriter(options);
    testing::TempFile first, second, third, other;
    writer.Write(first.path());
    writer.RereadHeldBytesFrom(first.path());
    writer.Write(second.path());
    CHECK(FileBytes(second.path()) == FileBytes(first.path()));

    // A new provenance moves the data segment: every tensor and blob still matches.
    fb::ProvenanceT provenance;
    provenance.source = std::string(3000, 'x');
    writer.SetProvenance(provenance);
    writer.Write(third.path());
    Result<Model> a = Model::Load(first.path().c_str());
    Result<Model> b = Model::Load(third.path().c_str());
    REQUIRE(a.ok());
    REQUIRE_MESSAGE(b.ok(), std::string(b.status().message()));
    CHECK(b->data_offset() > a->data_offset());
    CHECK(b->root().provenance()->source()->str() == provenance.source);
    REQUIRE(a->num_tensors() == b->num_tensors());
    for (size_t i = 0; i < a->num_tensors(); ++i) {
      CAPTURE(a->tensor(i).name);
      REQUIRE(a->tensor(i).size == b->tensor(i).size);
      CHECK(std::memcmp(a->tensor(i).data, b->tensor(i).data, a->tensor(i).size) == 0);
    }
    uint64_t size_a = 0, size_b = 0;
    const uint8_t* blob_a = a->blob(0, &size_a);
    const uint8_t* blob_b = b->blob(0, &size_b);
    REQUIRE(size_a == size_b);
    CHECK(std::memcmp(blob_a, blob_b, size_a) == 0);

    // Not the file it would write now (the header changed): refused.
    CHECK_THROWS_WITH(writer.RereadHeldBytesFrom(first.path()),
                      doctest::Contains("is not the file this writer wrote"));
    // The source file cut short under the writer: a clear failure, not zeros.
    {
      std::vector<uint8_t> bytes = FileBytes(first.path());
      bytes.resize(bytes.size() / 2);
      std::ofstream(first.path(), std::ios::binary | std::ios::trunc)
          .write(reinterpret_cast<const char*>(bytes.data()),
                 static_cast<std::streamsize>(bytes.size()));
    }
    CHECK_THROWS_WITH(writer.Write(other.path()), doctest::Contains("cannot read"));
  }
}

TEST_CASE("a missing file is an i/o error naming the path") {
  Result<Model> model = Model::Load("/nonexistent/dir/model.octet");
  REQUIRE_FALSE(model.ok());
  CHECK(model.status().code() == StatusCode::kIo);
  CHECK(std::strstr(model.status().message(), "/nonexistent/dir/model.octet") != nullptr);
}

}  // namespace
}  // namespace octet
