#include "convert.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include "format/model.h"
#include "import/error.h"
#include "import/importer.h"
#include "import/json_util.h"
#include "quantize/calibrate.h"
#include "quantize/report.h"
#include "tokenize/compile_tokenizer.h"
#include "tokenize/legacy.h"

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

// The compiled tokenizer of `dir`: from tokenizer.json (what it cannot
// compile exactly fails the conversion), else from the older files when
// transformers has a converter for them (when not, or when they are
// malformed, the model carries the files and ids only: a warning says so).
void AddCompiledTokenizer(const std::filesystem::path& dir, const nlohmann::json& config,
                          ModelWriter& writer, std::vector<std::string>& warnings) {
  std::error_code ec;
  TokenizerSources sources;
  if (std::filesystem::is_regular_file(dir / "tokenizer_config.json", ec)) {
    sources.tokenizer_config = ReadJsonFile(dir / "tokenizer_config.json", "tokenizer_config.json");
  }
  if (std::filesystem::is_regular_file(dir / "tokenizer.json", ec)) {
    sources.tokenizer = ReadJsonFile(dir / "tokenizer.json", "tokenizer.json");
  } else {
    // The older files, as transformers would turn them into a tokenizer.json.
    bool legacy = false;
    for (const char* name : {"vocab.txt", "vocab.json", "spiece.model", "source.spm",
                             "sentencepiece.bpe.model", "tokenizer.model"}) {
      legacy = legacy || std::filesystem::is_regular_file(dir / name, ec);
    }
    if (!legacy) return;
    try {
      nlohmann::json generation_config;
      if (std::filesystem::is_regular_file(dir / "generation_config.json", ec)) {
        generation_config = ReadJsonFile(dir / "generation_config.json", "generation_config.json");
      }
      writer.SetCompiledTokenizer(CompileLegacyTokenizer(
          dir, sources.tokenizer_config.is_null() ? nlohmann::json::object() : sources.tokenizer_config,
          config, generation_config));
    } catch (const Error& e) {
      warnings.push_back(std::string("no compiled tokenizer (ids only): ") + e.what());
    }
    return;
  }
  if (std::filesystem::is_regular_file(dir / "generation_config.json", ec)) {
    sources.generation_config =
        ReadJsonFile(dir / "generation_config.json", "generation_config.json");
  }
  sources.config = config;
  writer.SetCompiledTokenizer(CompileTokenizer(sources));
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

std::string Db(double db) {
  if (std::isinf(db)) return "inf";
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", db);
  return text;
}

// The report into the provenance: every weight tensor's SQNR, then every
// layer's output SQNR on the calibration, then the output's.
void AddReport(const ConvertResult& r, fb::ProvenanceT* provenance) {
  auto add = [&](const std::string& name, double db) {
    auto e = std::make_unique<fb::LayerErrorT>();
    e->name = name;
    e->sqnr_db = std::isinf(db) ? 999.0f : static_cast<float>(db);
    provenance->layer_errors.push_back(std::move(e));
  };
  for (const ModelSpec::TensorError& t : r.tensor_errors) add(t.name, t.sqnr_db);
  for (const LayerReport& l : r.layer_errors) add(l.name, l.sqnr_db);
  auto kv = [&](const std::string& key, const std::string& value) {
    auto e = std::make_unique<fb::KeyValueT>();
    e->key = key;
    e->value = value;
    provenance->extra.push_back(std::move(e));
  };
  kv("calibration", r.calibration);
  // The tuner's steps, in order, and what it kept in fp32.
  const TuneResult& t = r.tuning;
  if (!t.steps.empty()) kv("int8_tuning_measured_on", t.evaluation);
  for (size_t i = 0; i < t.steps.size(); ++i) {
    const TuneStep& s = t.steps[i];
    char text[160];
    if (t.skipped) {
      std::snprintf(text, sizeof(text), "not measured");
    } else if (s.metrics.has_distribution) {
      std::snprintf(text, sizeof(text), "ppl ratio %.4f, KL %.5f nats, top-1 %.2f%%",
                    s.metrics.ppl_ratio(), s.metrics.kld, 100.0 * s.metrics.top1);
    } else {
      std::snprintf(text, sizeof(text), "output SQNR %s dB",
                    Db(-10.0 * std::log10(s.metrics.noise_to_signal)).c_str());
    }
    kv("int8_step_" + std::to_string(i + 1),
       s.name + ": " + text + "; " + s.detail + (s.kept ? "" : " (no better: undone)"));
  }
  if (!t.fp32_matrices.empty()) {
    std::string names;
    for (const std::string& m : t.fp32_matrices) names += (names.empty() ? "" : ", ") + m;
    kv("fp32_matrices", names);
  }
  if (!t.wide_input_matrices.empty()) {
    std::string names;
    for (const std::string& m : t.wide_input_matrices) names += (names.empty() ? "" : ", ") + m;
    kv("int16_input_matrices", names);
  }
  kv("weight_sqnr_gain_blocks_of_32_db", Db(r.block32_gain_db));
  double dyn = 0, stat = 0;
  size_t n = 0;
  for (const LayerReport& l : r.layer_errors) {
    if (l.name == "output") continue;
    dyn += l.act_dynamic_db;
    stat += l.act_static_db;
    ++n;
  }
  if (n > 0) {
    kv("activation_sqnr_dynamic_per_row_db", Db(dyn / n));
    kv("activation_sqnr_static_per_tensor_db", Db(stat / n));
  }
  for (const LayerReport& l : r.layer_errors) {
    if (l.name == "output") {
      char text[32];
      std::snprintf(text, sizeof(text), "%.6f", l.min_cosine);
      kv("output_min_cosine_vs_fp32", text);
    }
  }
}

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
  const bool int8 = options.weights == WeightType::kInt8;
  provenance.quantization =
      int8 ? "int8: weights symmetric per output channel (embeddings, linear layers, LM head), "
             "activations dynamic per row, attention Q/K/V per token and head, P uint8 per tile, "
             "KV cache int8; norms, biases and softmax fp32; tuned on the calibration as "
             "int8_step_* record (smoothing folded into norms and layers, clipped and "
             "compensated rounding, int16_input_matrices with 16-bit inputs as two int8 "
             "digits, fp32_matrices kept F32)"
           : "fp32";
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
  ConvertResult result;
  Calibration calibration;  // int8: what the tuner and the report ran on
  if (int8) {
    // Calibration and evaluation sequences, then the tuner's choices.
    const uint32_t vocab = spec.architecture.vocab_size;
    const uint32_t positions = spec.architecture.max_positions;
    const bool decoder = spec.architecture.structure == fb::Structure::DecoderOnly;
    const bool tune = options.tune.enabled;
    std::unique_ptr<InMemoryModel> fp32_model;
    if (decoder && (options.calibration.empty() || (tune && options.heldout.empty()))) {
      ModelWriter fp32_writer;
      fp32_writer.SetArchitecture(spec.architecture);
      spec.Emit(checkpoint, fp32_writer, false);
      fp32_model = LoadInMemory(fp32_writer);
    }
    if (!options.calibration.empty()) {
      calibration = ReadCalibration(options.calibration, vocab, positions, source_dir);
    } else if (decoder) {
      calibration = GeneratedCalibration(fp32_model->model, 16, 128, 1);
      calibration.description += ", as no --calibration was given";
    } else {
      calibration = DefaultCalibration(vocab, positions);
    }
    std::vector<std::vector<int32_t>> evaluation;
    if (!tune) {
      result.tuning.evaluation = "nothing (--no-tune)";
    } else if (!options.heldout.empty()) {
      const Calibration held = ReadCalibration(options.heldout, vocab, positions, source_dir);
      evaluation = held.sequences;
      result.tuning.evaluation = held.description;
    } else if (decoder) {
      const Calibration held = GeneratedCalibration(fp32_model->model, 8, 128, 2);
      evaluation = held.sequences;
      result.tuning.evaluation = held.description;
    } else {
      evaluation = calibration.sequences;
      result.tuning.evaluation = "the calibration";
    }
    fp32_model.reset();
    const std::string evaluated_on = result.tuning.evaluation;
    result.tuning = TuneQuantization(spec, checkpoint, calibration, evaluation, options.tune);
    result.tuning.evaluation = evaluated_on;
    result.calibration = calibration.description;
  }
  result.tensor_errors = spec.Emit(checkpoint, writer, int8, int8 ? &result.tuning.overrides
                                                                  : nullptr);
  result.model_type = spec.model_type;
  result.num_tensors = spec.tensors.size();
  result.num_tokenizer_files = AddTokenizer(source_dir, writer);
  result.warnings = spec.warnings;
  AddCompiledTokenizer(source_dir, config, writer, result.warnings);
  if (int8) {
    // The report: the int8 model and its fp32 twin on the calibration.
    ModelWriter fp32_writer;
    fp32_writer.SetArchitecture(spec.architecture);
    spec.Emit(checkpoint, fp32_writer, false);
    const std::unique_ptr<InMemoryModel> fp32_model = LoadInMemory(fp32_writer);
    const std::unique_ptr<InMemoryModel> int8_model = LoadInMemory(writer);
    result.layer_errors = MeasureLayers(fp32_model->model, int8_model->model, calibration);
    double gain = 0;
    for (const ModelSpec::TensorError& t : result.tensor_errors) {
      gain += t.sqnr_block32_db - t.sqnr_db;
    }
    if (!result.tensor_errors.empty()) gain /= static_cast<double>(result.tensor_errors.size());
    result.block32_gain_db = gain;
    AddReport(result, &provenance);
    writer.SetProvenance(provenance);
  }

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
