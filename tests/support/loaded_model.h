// A tiny model loaded from memory, for doctest suites (a REQUIRE fails the
// test when the model does not load). Header-only so that the non-doctest users
// of octet_test_support (octet-testmodel, the fuzz seeds) need no doctest.
#pragma once

#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "format/model.h"
#include "support/test_models.h"

namespace octet {
namespace testing {

struct LoadedModel {
  // `change`, when given, edits the architecture after the tensors were made
  // (the position encodings that need no tensor).
  explicit LoadedModel(const TinyModelOptions& options,
                       const std::function<void(fb::ArchitectureT&)>& change = nullptr) {
    ModelWriter writer = MakeTinyModelWriter(options);
    if (change != nullptr) {
      fb::ArchitectureT a = TinyArchitecture(options);
      change(a);
      writer.SetArchitecture(a);
    }
    bytes = std::make_unique<AlignedBytes>(writer.WriteToBuffer());
    Result<Model> loaded = Model::FromBuffer(bytes->data(), bytes->size());
    REQUIRE_MESSAGE(loaded.ok(), std::string(loaded.status().message()));
    model = std::move(loaded).value();
  }
  std::unique_ptr<AlignedBytes> bytes;  // the file; the model points into it
  Model model;
};

}  // namespace testing
}  // namespace octet
