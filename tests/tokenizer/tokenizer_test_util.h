// Loads a real tokenizer of tests/tokenizer/data the way a device does: the
// converter compiles it, the writer puts it in a tiny model file, the loader
// verifies the file, and the runtime tokenizer binds to it.
#pragma once

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "format/model.h"
#include "import/error.h"
#include "support/test_models.h"
#include "text/tokenizer.h"
#include "tokenize/compile_tokenizer.h"
#include "tokenize/legacy.h"

namespace octet {
namespace testing {

inline std::string TokenizerDir(const std::string& name) {
  if (name == "austen") return std::string(OCTET_SOURCE_DIR) + "/models/austen";
  return std::string(OCTET_TOKENIZER_DATA_DIR) + "/" + name;
}

inline std::string GoldenPath(const std::string& name) {
  return std::string(OCTET_TOKENIZER_GOLDENS_DIR) + "/" + name + ".jsonl";
}

inline nlohmann::json ReadJsonOrNull(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

struct LoadedTokenizer {
  std::string error;                  // empty when loaded
  std::unique_ptr<AlignedBytes> bytes;  // the model file
  std::unique_ptr<Model> model;
  text::Tokenizer tokenizer;
};

// From a tokenizer directory (tokenizer.json, optional tokenizer_config.json
// and generation_config.json; without tokenizer.json, the legacy files as the
// converter compiles them: Marian's source.spm + vocab.json).
inline LoadedTokenizer LoadTokenizerFromDir(const std::string& dir) {
  LoadedTokenizer t;
  convert::TokenizerSources sources;
  sources.tokenizer = ReadJsonOrNull(dir + "/tokenizer.json");
  sources.tokenizer_config = ReadJsonOrNull(dir + "/tokenizer_config.json");
  sources.generation_config = ReadJsonOrNull(dir + "/generation_config.json");
  std::unique_ptr<fb::TokenizerSpecT> spec;
  try {
    if (sources.tokenizer.is_null()) {
      spec = convert::CompileLegacyTokenizer(
          dir, sources.tokenizer_config.is_null() ? nlohmann::json::object() : sources.tokenizer_config,
          ReadJsonOrNull(dir + "/config.json"), sources.generation_config);
    } else {
      spec = convert::CompileTokenizer(sources);
    }
  } catch (const convert::Error& e) {
    t.error = e.what();
    return t;
  }
  TinyModelOptions options;
  options.family = fb::Family::Llama;
  options.layers = 0;
  options.vocab = spec->model->vocab_size;
  ModelWriter writer = MakeTinyModelWriter(options);
  writer.SetCompiledTokenizer(std::move(spec));
  t.bytes = std::make_unique<AlignedBytes>(writer.WriteToBuffer());
  Result<Model> model = Model::FromBuffer(t.bytes->data(), t.bytes->size());
  if (!model.ok()) {
    t.error = std::string("load: ") + model.status().message();
    return t;
  }
  t.model = std::make_unique<Model>(std::move(model.value()));
  const Status st = t.tokenizer.Init(t.model->tokenizer_spec());
  if (!st.ok()) t.error = std::string("init: ") + st.message();
  return t;
}

inline LoadedTokenizer LoadTokenizer(const std::string& name) {
  return LoadTokenizerFromDir(TokenizerDir(name));
}

}  // namespace testing
}  // namespace octet
