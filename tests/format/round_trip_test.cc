#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "format/model.h"
#include "support/test_models.h"

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

TEST_CASE("a missing file is an i/o error naming the path") {
  Result<Model> model = Model::Load("/nonexistent/dir/model.octet");
  REQUIRE_FALSE(model.ok());
  CHECK(model.status().code() == StatusCode::kIo);
  CHECK(std::strstr(model.status().message(), "/nonexistent/dir/model.octet") != nullptr);
}

}  // namespace
}  // namespace octet
