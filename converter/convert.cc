#include "convert.h"

#include <unistd.h>

#include <fstream>
#include <iterator>

#include "format/model.h"
#include "import/error.h"
#include "import/importer.h"
#include "import/json_util.h"

namespace octet {
namespace convert {
namespace {

// The directory's own name: provenance records where a model came from
// without the converting machine's paths.
std::string SourceName(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(dir, ec).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  return p.filename().string();
}

std::vector<uint8_t> ReadFileBytes(const std::filesystem::path& path, const std::string& name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail("cannot read ", name);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (in.bad()) Fail("cannot read ", name);
  return bytes;
}

fb::TokenizerKind TokenizerKindOf(const std::vector<std::string>& present) {
  const auto has = [&](const char* name) {
    for (const std::string& p : present) {
      if (p == name) return true;
    }
    return false;
  };
  if (has("tokenizer.json")) return fb::TokenizerKind::HfTokenizerJson;
  for (const char* sp :
       {"spiece.model", "source.spm", "target.spm", "sentencepiece.bpe.model", "tokenizer.model"}) {
    if (has(sp)) return fb::TokenizerKind::SentencePiece;
  }
  if (has("vocab.json") && has("merges.txt")) return fb::TokenizerKind::Gpt2Bpe;
  return fb::TokenizerKind::None;  // e.g. BERT's vocab.txt alone: carried, kind not named
}

// Adds the tokenizer files of `dir`; returns how many.
size_t AddTokenizer(const std::filesystem::path& dir, ModelWriter& writer) {
  std::vector<std::string> present;
  std::error_code ec;
  for (const std::string& name : TokenizerFileNames()) {
    if (!std::filesystem::is_regular_file(dir / name, ec)) continue;
    const std::vector<uint8_t> bytes = ReadFileBytes(dir / name, name);
    writer.AddTokenizerFile(name, bytes.data(), bytes.size());
    present.push_back(name);
  }
  if (!present.empty()) writer.SetTokenizerKind(TokenizerKindOf(present));
  return present.size();
}

// Removes a file on scope exit unless released.
class RemoveOnExit {
 public:
  explicit RemoveOnExit(std::filesystem::path path) : path_(std::move(path)) {}
  ~RemoveOnExit() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove(path_, ec);
  }
  void Release() { path_.clear(); }

 private:
  std::filesystem::path path_;
};

}  // namespace

const std::vector<std::string>& TokenizerFileNames() {
  static const std::vector<std::string> names = {
      "tokenizer.json",
      "tokenizer_config.json",
      "special_tokens_map.json",
      "added_tokens.json",
      "vocab.json",
      "merges.txt",
      "vocab.txt",
      "spiece.model",
      "source.spm",
      "target.spm",
      "sentencepiece.bpe.model",
      "tokenizer.model",
  };
  return names;
}

nlohmann::json ReadConfig(const std::filesystem::path& source_dir) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(source_dir / "config.json", ec)) {
    Fail("the checkpoint has no config.json");
  }
  const nlohmann::json config = ReadJsonFile(source_dir / "config.json", "config.json");
  if (!config.is_object()) Fail("config.json is not a JSON object");
  return config;
}

ModelSpec ImportDirectory(const nlohmann::json& config, const Checkpoint& checkpoint) {
  ModelSpec spec = Import(ConfigView(config, "config.json"), checkpoint);
  spec.Validate(checkpoint);
  return spec;
}

ConvertResult ConvertCheckpoint(const std::filesystem::path& source_dir,
                                const std::filesystem::path& output,
                                const ConvertOptions& options) {
  const nlohmann::json config = ReadConfig(source_dir);
  // The model type first: an unsupported one is the clearest message even
  // when the weights are missing too.
  SupportedModelType(ConfigView(config, "config.json"));
  const Checkpoint checkpoint = Checkpoint::Open(source_dir);
  const ModelSpec spec = ImportDirectory(config, checkpoint);

  ModelWriter writer;
  writer.SetArchitecture(spec.architecture);
  fb::ProvenanceT provenance;
  provenance.source = SourceName(source_dir);
  provenance.converter = std::string("octet-convert ") + OCTET_CONVERTER_VERSION;
  provenance.quantization = "fp32";
  std::vector<std::pair<std::string, std::string>> extra = spec.provenance;
  extra.push_back({"source_dtypes", checkpoint.DTypeSummary()});
  extra.push_back({"source_files", std::to_string(checkpoint.files().size())});
  for (const auto& [key, value] : extra) {
    auto kv = std::make_unique<fb::KeyValueT>();
    kv->key = key;
    kv->value = value;
    provenance.extra.push_back(std::move(kv));
  }
  writer.SetProvenance(provenance);
  spec.Emit(checkpoint, writer);
  ConvertResult result;
  result.model_type = spec.model_type;
  result.num_tensors = spec.tensors.size();
  result.num_tokenizer_files = AddTokenizer(source_dir, writer);
  result.warnings = spec.warnings;

  // Write next to the output, check, then rename: no half-written model.
  std::filesystem::path partial = output;
  partial += ".partial-" + std::to_string(static_cast<long>(getpid()));
  RemoveOnExit cleanup(partial);
  try {
    writer.Write(partial.string(), options.progress);
  } catch (const Error&) {
    throw;
  } catch (const std::runtime_error& e) {
    Fail(e.what());
  }
  Result<Model> loaded = Model::Load(partial.c_str());
  if (!loaded.ok()) {
    Fail("internal: the converted model does not load: ", loaded.status().message());
  }
  result.file_bytes = loaded.value().file_size();
  std::error_code ec;
  std::filesystem::rename(partial, output, ec);
  if (ec) Fail("cannot create ", output.string(), ": ", ec.message());
  cleanup.Release();
  return result;
}

}  // namespace convert
}  // namespace octet
