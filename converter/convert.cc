#include "convert.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>

#include "format/model.h"
#include "import/error.h"
#include "import/importer.h"
#include "import/json_util.h"
#include "memory.h"
#include "quantize/calibrate.h"
#include "quantize/calibration_text.h"
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
// Null when the checkpoint has no tokenizer files.
std::unique_ptr<fb::TokenizerSpecT> CompileSourceTokenizer(const std::filesystem::path& dir,
                                                           const nlohmann::json& config,
                                                           std::vector<std::string>& warnings) {
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
    if (!legacy) return nullptr;
    try {
      nlohmann::json generation_config;
      if (std::filesystem::is_regular_file(dir / "generation_config.json", ec)) {
        generation_config = ReadJsonFile(dir / "generation_config.json", "generation_config.json");
      }
      return CompileLegacyTokenizer(
          dir, sources.tokenizer_config.is_null() ? nlohmann::json::object() : sources.tokenizer_config,
          config, generation_config);
    } catch (const Error& e) {
      warnings.push_back(std::string("no compiled tokenizer (ids only): ") + e.what());
    }
    return nullptr;
  }
  if (std::filesystem::is_regular_file(dir / "generation_config.json", ec)) {
    sources.generation_config =
        ReadJsonFile(dir / "generation_config.json", "generation_config.json");
  }
  sources.config = config;
  return CompileTokenizer(sources);
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

// Writes `writer` to `path` (replacing it); the writer's own failures as Error.
void WriteModel(const ModelWriter& writer, const std::filesystem::path& path,
                const ModelWriter::Progress& progress) {
  try {
    writer.Write(path.string(), progress);
  } catch (const Error&) {
    throw;
  } catch (const std::runtime_error& e) {
    Fail(e.what());
  }
}

// The fp32 model of a spec for the converter's own runs (the generated
// calibration, the report): written to a temporary file next to the output
// (removed with the twin) and mapped, so that sessions with
// SessionLimits::stream_weights hold one layer of it at a time instead of all
// of it. A billion-parameter twin needs its 4 GB on disk, not in memory.
struct Fp32Twin {
  Fp32Twin(const ModelSpec& spec, const Checkpoint& checkpoint,
           const std::filesystem::path& output)
      : path(TwinPath(output)), cleanup(path) {
    ModelWriter writer;
    writer.SetArchitecture(spec.architecture);
    spec.Emit(checkpoint, writer, false);
    WriteModel(writer, path, nullptr);
    Result<Model> loaded = Model::Load(path.string().c_str());
    if (!loaded.ok()) {
      Fail("internal: the fp32 twin does not load: ", loaded.status().message());
    }
    model = std::move(loaded).value();
  }
  static std::filesystem::path TwinPath(const std::filesystem::path& output) {
    std::filesystem::path p = output;
    p += ".fp32-twin-" + std::to_string(static_cast<long>(getpid()));
    return p;
  }
  std::filesystem::path path;
  RemoveOnExit cleanup;
  Model model;  // declared last: unmapped before the file is removed
};

// Bytes of the fp32 twin's weights its streamed sessions keep packed
// (SessionLimits::stream_keep_bytes): what the converter's memory bound (the
// int8 file + 2 x the largest fp32 tensor + 512 MiB) leaves after the report's
// fp32 streams, the largest layer or head (streamed) and 256 MiB for the rest.
// A model whose fp32 weights fit runs as fast as unstreamed.
uint64_t TwinKeepBytes(const ModelSpec& spec, size_t calibration_tokens) {
  const fb::ArchitectureT& a = spec.architecture;
  uint64_t largest = 0;
  std::map<std::string, uint64_t> layers;  // "layers.3" -> fp32 bytes
  for (const TensorMapping& m : spec.tensors) {
    uint64_t bytes = sizeof(float);
    for (uint32_t d : m.shape) bytes *= d;
    largest = std::max(largest, bytes);
    const size_t at = m.name.find("layers.");
    if (at == std::string::npos) continue;
    const size_t dot = m.name.find('.', at + 7);
    layers[m.name.substr(0, dot)] += bytes;
  }
  uint64_t largest_layer = 0;
  for (const auto& [name, bytes] : layers) largest_layer = std::max(largest_layer, bytes);
  const uint64_t streams = uint64_t{calibration_tokens} * a.hidden_size * sizeof(float) *
                           (uint64_t{a.num_layers} + a.num_decoder_layers);
  const uint64_t room = 2 * largest + (uint64_t{256} << 20);
  // The largest unit a pass packs on its own: a layer, or the head (at most the
  // largest tensor).
  const uint64_t used = streams + std::max(largest_layer, largest);
  return room > used ? room - used : 0;
}

// The phases of a conversion as they pass: each one's wall time and the
// process's peak resident memory while it ran, sampled every 10 ms from
// /proc/self/statm by a thread of its own (Linux; elsewhere 0). The kernel's
// own peak (VmHWM, getrusage) is left alone: it stays the whole run's.
class Phases {
 public:
  Phases(std::vector<ConvertPhase>* out, PhaseProgress progress)
      : out_(out), progress_(std::move(progress)) {
    if (ResidentBytes() > 0) sampler_ = std::thread([this] { Sample(); });
  }
  ~Phases() {
    End();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (sampler_.joinable()) sampler_.join();
  }
  Phases(const Phases&) = delete;
  Phases& operator=(const Phases&) = delete;

  void Begin(const std::string& name) {
    End();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      peak_ = ResidentBytes();
    }
    current_ = name;
    start_ = std::chrono::steady_clock::now();
    if (progress_) progress_(name, 0, 0);
  }
  void End() {
    if (current_.empty()) return;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    uint64_t peak = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      peak_ = std::max(peak_, ResidentBytes());
      peak = peak_;
    }
    out_->push_back({current_, seconds, peak});
    current_.clear();
  }
  const PhaseProgress& progress() const { return progress_; }

 private:
  static uint64_t ResidentBytes() {
    std::ifstream statm("/proc/self/statm");
    uint64_t size = 0, resident = 0;
    if (!(statm >> size >> resident)) return 0;
    return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  }
  void Sample() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      peak_ = std::max(peak_, ResidentBytes());
      wake_.wait_for(lock, std::chrono::milliseconds(10));
    }
  }

  std::vector<ConvertPhase>* out_;
  PhaseProgress progress_;
  std::string current_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  uint64_t peak_ = 0;  // the current phase's, guarded by mutex_
  bool stop_ = false;
  std::thread sampler_;
};

// The fp32 bytes of the model's largest layer.
uint64_t LargestLayerBytes(const ModelSpec& spec) {
  std::map<std::string, uint64_t> layers;  // "layers.3" -> fp32 bytes
  for (const TensorMapping& m : spec.tensors) {
    const size_t at = m.name.find("layers.");
    if (at == std::string::npos) continue;
    uint64_t bytes = sizeof(float);
    for (uint32_t d : m.shape) bytes *= d;
    layers[m.name.substr(0, m.name.find('.', at + 7))] += bytes;
  }
  uint64_t largest = 0;
  for (const auto& [name, bytes] : layers) largest = std::max(largest, bytes);
  return largest;
}

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
      std::snprintf(text, sizeof(text), "output SQNR %s dB, cosine mean %.6f, worst %.6f",
                    Db(-10.0 * std::log10(s.metrics.noise_to_signal)).c_str(),
                    s.metrics.mean_cosine, s.metrics.min_cosine);
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

uint64_t Int8WeightBytes(const ModelSpec& spec) {
  uint64_t bytes = 0;
  for (const TensorMapping& m : spec.tensors) {
    uint64_t n = 1;
    for (uint32_t d : m.shape) n *= d;
    bytes += QuantizedAsInt8(m.name) ? n + 4ull * m.shape[0] : 4 * n;
  }
  return bytes;
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

namespace {

// What the file says of where it came from: the source, the converter, the
// quantization and the importer's notes.
fb::ProvenanceT MakeProvenance(const std::filesystem::path& source_dir, const ModelSpec& spec,
                               const Checkpoint& checkpoint, bool int8) {
  fb::ProvenanceT provenance;
  provenance.source = SourceName(source_dir);
  provenance.converter = std::string("octet-convert ") + OCTET_CONVERTER_VERSION;
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
  return provenance;
}

size_t TokenCount(const Calibration& calibration) {
  size_t tokens = 0;
  for (const std::vector<int32_t>& seq : calibration.sequences) tokens += seq.size();
  return tokens;
}

// int8: the fp32 twin that generates the calibration and that the report
// compares against, made when first needed (a temporary file, mapped).
class TwinOnDemand {
 public:
  TwinOnDemand(const ModelSpec& spec, const Checkpoint& checkpoint,
               const std::filesystem::path& output)
      : spec_(spec), checkpoint_(checkpoint), output_(output) {}
  const Model& Get() {
    if (!twin_) twin_ = std::make_unique<Fp32Twin>(spec_, checkpoint_, output_);
    return twin_->model;
  }
  void Reset() { twin_.reset(); }
  // A temporary file's path next to the output (the tuner's; it removes it).
  std::filesystem::path ScratchPath() const {
    std::filesystem::path p = output_;
    p += ".block-" + std::to_string(static_cast<long>(getpid()));
    return p;
  }

 private:
  const ModelSpec& spec_;
  const Checkpoint& checkpoint_;
  const std::filesystem::path& output_;
  std::unique_ptr<Fp32Twin> twin_;
};

// Bytes of the fp32 twin a streamed session may keep packed before any int8
// matrix exists (the calibration and the evaluation sample): TwinKeepBytes
// plus what the int8 matrices will take later.
uint64_t EarlyTwinKeepBytes(const ModelSpec& spec, size_t tokens) {
  uint64_t int8_bytes = 0;
  for (const TensorMapping& m : spec.tensors) {
    uint64_t n = 1;
    for (uint32_t d : m.shape) n *= d;
    int8_bytes += QuantizedAsInt8(m.name) ? n : 0;
  }
  return TwinKeepBytes(spec, tokens) + int8_bytes;
}

// int8: what the tuner learns from (and the report runs on) and what it
// measures on.
struct Samples {
  Calibration calibration;
  std::vector<std::vector<int32_t>> evaluation;  // empty when the tuner will not run
  std::string evaluated_on;                      // what the evaluation is
};

// The calibration: --calibration, or (decoders) sequences the fp32 twin
// generates, or (other models) the built-in text encoded by the model's
// tokenizer (calibration_text.h), or without one pseudo-random ids. The
// evaluation, always apart from the calibration: --heldout, or (decoders) more
// generated sequences, made in the same batch as the calibration's when both
// are generated (each step of the streamed twin then serves both), or the
// built-in held-out passages, or other pseudo-random ids. encoder: the model's
// tokenizer, or null.
Samples ChooseSamples(const std::filesystem::path& source_dir, const ModelSpec& spec,
                      const ConvertOptions& options, const TextEncoder* encoder,
                      TwinOnDemand& twin) {
  (void)source_dir;
  const uint32_t vocab = spec.architecture.vocab_size;
  const uint32_t positions = spec.architecture.max_positions;
  const bool decoder = spec.architecture.structure == fb::Structure::DecoderOnly;
  constexpr size_t kCalibrationCount = 16, kEvaluationCount = 8, kLength = 128;
  Samples out;
  size_t generated_evaluation = 0;  // sequences generated with the calibration for the evaluation
  std::unique_ptr<BuiltInSamples> built_in;
  std::string no_text = "no tokenizer";  // why there is no built-in text
  if (!decoder && encoder != nullptr) {
    try {
      built_in = std::make_unique<BuiltInSamples>(BuiltInCalibration(
          *encoder, vocab, positions != 0 && positions < kLength ? positions : kLength));
    } catch (const Error& e) {
      no_text = e.what();  // a tokenizer that does not fit the model: ids instead
    }
  }
  if (!options.calibration.empty()) {
    out.calibration = ReadCalibration(options.calibration, vocab, positions, encoder);
  } else if (decoder) {
    generated_evaluation = options.tune.enabled && options.heldout.empty() ? kEvaluationCount : 0;
    const size_t count = kCalibrationCount + generated_evaluation;
    Calibration all = GeneratedCalibration(twin.Get(), count, kLength, 1, /*stream=*/true,
                                           EarlyTwinKeepBytes(spec, count * kLength));
    ReturnFreedMemory();
    out.calibration.sequences.assign(all.sequences.begin(),
                                     all.sequences.begin() + kCalibrationCount);
    out.evaluation.assign(all.sequences.begin() + kCalibrationCount, all.sequences.end());
    const std::string of = " x " + std::to_string(all.sequences[0].size()) +
                           " ids the fp32 model generated (temperature 1, seed 1)";
    out.calibration.description =
        std::to_string(kCalibrationCount) + of + ", as no --calibration was given";
    out.evaluated_on = std::to_string(generated_evaluation) + of + ", apart from the calibration";
  } else if (built_in != nullptr) {
    out.calibration = built_in->calibration;
    out.calibration.description += ", as no --calibration was given";
  } else {
    out.calibration = DefaultCalibration(vocab, positions, 1);
    out.calibration.description += " (no --calibration, and no built-in text: " + no_text + ")";
  }

  const bool tuner_runs = options.tune.enabled;
  if (!tuner_runs) {
    out.evaluated_on = "nothing (--no-tune)";
  } else if (!options.heldout.empty()) {
    const Calibration held = ReadCalibration(options.heldout, vocab, positions, encoder);
    out.evaluated_on = held.description;
    out.evaluation = held.sequences;
  } else if (generated_evaluation > 0) {
    // made above with the calibration
  } else if (decoder) {
    const Calibration held =
        GeneratedCalibration(twin.Get(), kEvaluationCount, kLength, 2, /*stream=*/true,
                             EarlyTwinKeepBytes(spec, kEvaluationCount * kLength));
    ReturnFreedMemory();
    out.evaluated_on = held.description;
    out.evaluation = held.sequences;
  } else if (built_in != nullptr) {
    out.evaluated_on = built_in->heldout.description;
    out.evaluation = built_in->heldout.sequences;
  } else {
    const Calibration held = DefaultCalibration(vocab, positions, 2);
    out.evaluated_on = held.description;
    out.evaluation = held.sequences;
  }
  if (!tuner_runs) out.evaluation.clear();
  return out;
}

// int8: the calibration and evaluation sequences, then the tuner's choices
// into `result`. Returns the calibration (the report runs on it too).
Calibration TuneInt8(const std::filesystem::path& source_dir, const ModelSpec& spec,
                     const Checkpoint& checkpoint, const ConvertOptions& options,
                     const TextEncoder* encoder, TwinOnDemand& twin, ConvertResult& result,
                     Phases& phases) {
  phases.Begin("calibration");
  Samples samples = ChooseSamples(source_dir, spec, options, encoder, twin);
  Calibration calibration = std::move(samples.calibration);
  const std::vector<std::vector<int32_t>>& evaluation = samples.evaluation;
  const std::string& evaluated_on = samples.evaluated_on;
  phases.Begin("tuning");
  TuneOptions tune = options.tune;
  const uint64_t int8_bytes = Int8WeightBytes(spec);
  if (options.max_size_bytes > 0) {
    tune.max_extra_bytes = options.max_size_bytes > int8_bytes ? options.max_size_bytes - int8_bytes
                                                               : 0;
  }
  if (options.max_size_percent > 0) {
    tune.max_extra_bytes = std::min<uint64_t>(
        tune.max_extra_bytes,
        static_cast<uint64_t>(options.max_size_percent / 100.0 * static_cast<double>(int8_bytes)));
  }
  if (phases.progress()) {
    tune.progress = [&phases](const std::string& what, size_t done, size_t total) {
      phases.progress()(what, done, total);
    };
  }
  size_t evaluation_tokens = 0;
  for (const std::vector<int32_t>& s : evaluation) evaluation_tokens += s.size();
  tune.twin_keep_bytes = TwinKeepBytes(spec, evaluation_tokens);
  tune.scratch_file = twin.ScratchPath().string();
  const Model* twin_model = options.tune.enabled ? &twin.Get() : nullptr;
  result.tuning = TuneQuantization(spec, checkpoint, calibration, evaluation, tune, twin_model);
  result.tuning.evaluation = evaluated_on;
  result.calibration = calibration.description;
  ReturnFreedMemory();
  return calibration;
}

// int8, the report: the int8 model, written without it first and mapped,
// against its fp32 twin on the calibration; both sessions hold one layer's
// weights at a time. The writer's tensors are then read back from that first
// file (its int8 matrices are freed before the report runs), and its
// provenance gets the report. Returns what removes the first file, which the
// writer reads until the final file is written.
std::unique_ptr<RemoveOnExit> AddInt8Report(const std::filesystem::path& output,
                                            const ModelSpec& spec,
                                            const Calibration& calibration, TwinOnDemand& twin,
                                            ModelWriter& writer, fb::ProvenanceT& provenance,
                                            ConvertResult& result) {
  std::filesystem::path first = output;  // the file without the report
  first += ".unreported-" + std::to_string(static_cast<long>(getpid()));
  auto first_cleanup = std::make_unique<RemoveOnExit>(first);
  WriteModel(writer, first, nullptr);
  try {
    writer.RereadHeldBytesFrom(first.string());
  } catch (const std::runtime_error& e) {
    Fail(e.what());
  }
  // The tuned int8 matrices too: the writer reads them back from that file.
  std::map<std::string, QuantizedMatrix>().swap(result.tuning.overrides.int8);
  ReturnFreedMemory();
  {
    Result<Model> written = Model::Load(first.c_str());
    if (!written.ok()) {
      Fail("internal: the converted model does not load: ", written.status().message());
    }
    const Model& int8_model = written.value();
    // Loading checked every packed tile: those pages go until a layer needs them.
    int8_model.ReleasePages(int8_model.file_data() + int8_model.data_offset(),
                            static_cast<size_t>(int8_model.data_size()));
    std::filesystem::path rows = output;
    rows += ".rows-" + std::to_string(static_cast<long>(getpid()));
    result.layer_errors = MeasureLayers(twin.Get(), int8_model, calibration, /*stream=*/true,
                                        TwinKeepBytes(spec, TokenCount(calibration)), rows);
  }
  twin.Reset();
  ReturnFreedMemory();
  double gain = 0;
  for (const ModelSpec::TensorError& t : result.tensor_errors) {
    gain += t.sqnr_block32_db - t.sqnr_db;
  }
  if (!result.tensor_errors.empty()) gain /= static_cast<double>(result.tensor_errors.size());
  result.block32_gain_db = gain;
  AddReport(result, &provenance);
  writer.SetProvenance(provenance);
  return first_cleanup;
}

// The final check: `partial` must load with the runtime's loader; then it
// becomes `output`. Returns the file's size.
uint64_t CheckAndRename(const std::filesystem::path& partial,
                        const std::filesystem::path& output) {
  Result<Model> loaded = Model::Load(partial.c_str());
  if (!loaded.ok()) {
    Fail("internal: the converted model does not load: ", loaded.status().message());
  }
  const uint64_t bytes = loaded.value().file_size();
  std::error_code ec;
  std::filesystem::rename(partial, output, ec);
  if (ec) Fail("cannot create ", output.string(), ": ", ec.message());
  return bytes;
}

}  // namespace

ConvertResult ConvertCheckpoint(const std::filesystem::path& source_dir,
                                const std::filesystem::path& output,
                                const ConvertOptions& options) {
  const nlohmann::json config = ReadConfig(source_dir);
  // The model type first: an unsupported one is the clearest message even
  // when the weights are missing too.
  SupportedModelType(ConfigView(config, "config.json"));
  const Checkpoint checkpoint = Checkpoint::Open(source_dir);
  const ModelSpec spec = ImportDirectory(config, checkpoint);
  KeepFreedMemoryWithinPhases(LargestLayerBytes(spec) + (uint64_t{16} << 20));

  const bool int8 = options.weights == WeightType::kInt8;
  ModelWriter writer_setup;
  writer_setup.SetArchitecture(spec.architecture);
  fb::ProvenanceT provenance = MakeProvenance(source_dir, spec, checkpoint, int8);
  writer_setup.SetProvenance(provenance);
  ConvertResult result;
  // Written next to the output, checked, then renamed: no half-written model.
  std::filesystem::path partial = output;
  partial += ".partial-" + std::to_string(static_cast<long>(getpid()));
  RemoveOnExit cleanup(partial);
  TwinOnDemand twin(spec, checkpoint, output);
  Phases phases(&result.phases, options.phase_progress);
  Calibration calibration;  // int8: what the tuner and the report ran on
  // The compiled tokenizer: the file carries it, and int8 calibration text is
  // encoded with it.
  std::vector<std::string> tokenizer_warnings;
  std::unique_ptr<fb::TokenizerSpecT> tokenizer =
      CompileSourceTokenizer(source_dir, config, tokenizer_warnings);
  std::unique_ptr<TextEncoder> encoder;
  if (int8 && tokenizer != nullptr) encoder = std::make_unique<TextEncoder>(*tokenizer);
  if (int8) {
    calibration =
        TuneInt8(source_dir, spec, checkpoint, options, encoder.get(), twin, result, phases);
  }
  phases.Begin(int8 ? "quantization" : "conversion");

  // The int8 matrices stay in the writer's memory until the file is written (a
  // quarter of the fp32 size); everything else is made as the writer reaches it.
  auto writer = std::make_unique<ModelWriter>(std::move(writer_setup));
  result.tensor_errors = spec.Emit(checkpoint, *writer, int8, int8 ? &result.tuning.overrides
                                                                   : nullptr);
  result.model_type = spec.model_type;
  result.num_tensors = spec.tensors.size();
  result.num_tokenizer_files = AddTokenizer(source_dir, *writer);
  result.warnings = spec.warnings;
  if (tokenizer != nullptr) writer->SetCompiledTokenizer(std::move(tokenizer));
  result.warnings.insert(result.warnings.end(), tokenizer_warnings.begin(),
                         tokenizer_warnings.end());
  std::unique_ptr<RemoveOnExit> first_cleanup;  // int8: the file without the report
  if (int8) {
    phases.Begin("report");
    first_cleanup = AddInt8Report(output, spec, calibration, twin, *writer, provenance, result);
  }

  phases.Begin("writing");
  WriteModel(*writer, partial, options.progress);
  writer.reset();  // the int8 matrices' memory, before the file is mapped to check it
  first_cleanup.reset();
  ReturnFreedMemory();

  result.file_bytes = CheckAndRename(partial, output);
  cleanup.Release();
  phases.End();
  return result;
}

}  // namespace convert
}  // namespace octet
