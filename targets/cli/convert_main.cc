// octet-convert: Hugging Face checkpoint -> .octet (docs/design.md §5). The command
// line is checked here; the conversion is the converter library's
// (converter/convert.h), whose errors arrive as one-line exceptions.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/tool_main.h"

#if OCTET_HAVE_IMPORTER
#include "convert.h"
#include "import/error.h"
#endif

namespace octet {
namespace cli {
namespace {

constexpr char kUsage[] =
    R"(Usage: octet-convert SRC_DIR -o OUT.octet [--dtype int8|fp32] [--calibration FILE] [--quiet]
                     [--heldout FILE] [--target-ppl-ratio R] [--keep-fp32 PATTERN ...]
                     [--max-size SIZE] [--require-target] [--no-tune]

Converts a Hugging Face checkpoint directory into one .octet model file.

SRC_DIR holds:
  config.json        "model_type": bert, distilbert, roberta, xlm-roberta, gpt2, llama,
                     qwen2, qwen3, mistral, phi3, gemma, gemma2, gemma3_text, marian
                     or t5
  model.safetensors  the weights in F32, F16 or BF16; or, for sharded checkpoints,
                     model.safetensors.index.json and the shards it lists
  tokenizer files    when present (tokenizer.json, tokenizer_config.json,
                     special_tokens_map.json, vocab.json + merges.txt, vocab.txt,
                     spiece.model / source.spm + target.spm / tokenizer.model):
                     carried into the file

Options:
  -o, --output OUT.octet   the model file to write (replaced if it exists; written
                           only when the conversion succeeds)
  --dtype int8|fp32        fp32: float32 weights, to check the architecture against
                           the source framework apart from quantization;
                           int8 (the default): embeddings, linear layers and the LM
                           head in symmetric per-output-channel int8 (norms and
                           biases stay fp32); the runtime then runs every matrix
                           product in int8 (activations quantized per row at run
                           time, attention and KV cache in int8)
  --calibration FILE       sample input the int8 quantization learns from (smoothing
                           factors, clipping, compensated rounding) and the per-layer
                           error report runs on. Token ids, one sequence per line
                           (commas or spaces), or plain UTF-8 text, encoded with the
                           model's own tokenizer (any kind the runtime runs). Without
                           it, decoders calibrate on 16 x 128 tokens the fp32 model
                           generates itself (temperature 1, seeded); other models on
                           octet-convert's built-in text (public-domain prose in six
                           languages) encoded by their tokenizer, or pseudo-random ids
                           when they have none. --dtype int8 only.
  --heldout FILE           token ids or text (as --calibration) the int8 tuning is
                           measured on against fp32 (decoders: perplexity ratio, KL
                           divergence, top-1; others: output SQNR and cosine);
                           default, apart from the calibration: decoders, another
                           8 x 128 generated tokens; others, the built-in text's
                           held-out passages (or other pseudo-random ids)
  --target-ppl-ratio R     the int8 tuning stops once int8 perplexity / fp32
                           perplexity on the held-out ids is at most R (default
                           1.01; below 1: every step). Steps in order: round to
                           nearest; layer by layer, smoothing, clipping and
                           compensated rounding; then, until the target is met,
                           16-bit inputs and fp32 products for the matrices that
                           gain most per unit of work or byte. A step that does
                           not lower the KL divergence is undone. The report lists
                           each step.
  --max-size SIZE          what fp32 products may grow the int8 file to: bytes
                           (K, M, G: KiB, MiB, GiB) or a percentage of the int8
                           file ("10%"); default: no bound
  --require-target         exit with status 3 when the target is not met (the
                           file is still written: the best one found)
  --no-tune                round to nearest and nothing else: no tuning, no
                           measurement against fp32 (the per-layer report still runs)
  --keep-fp32 PATTERN      keep the int8 tensors whose names match PATTERN (* and ?;
                           names as `octet inspect` lists them, e.g.
                           'layers.*.ffn.down.weight' or token_embedding) in fp32;
                           the runtime runs those products in fp32. Repeatable.
  --quiet                  print nothing but errors (no progress bar, no summary)
  -h, --help               show this help

Every tensor of the checkpoint must belong to the architecture (known extras such
as BERT's pooler or GPT-2's mask buffers are skipped); anything missing, misshaped
or unsupported stops the conversion with one line naming it.

Exit status: 0 on success; otherwise non-zero (2 for a wrong command line, 3 for a
target not met with --require-target, 1 for any other failure) and one line on
stderr naming the problem.
)";

struct ConvertRequest {
  std::filesystem::path source;
  std::filesystem::path output;
  std::string dtype = "int8";
  std::filesystem::path calibration;  // empty = none
  std::filesystem::path heldout;      // empty = none
  double target_ppl_ratio = 1.01;
  uint64_t max_size_bytes = 0;
  double max_size_percent = 0;
  std::string max_size;  // as given
  bool require_target = false;
  std::vector<std::string> keep_fp32;
  bool no_tune = false;
  bool quiet = false;
};

void CheckSource(const std::filesystem::path& source) {
  std::error_code error;
  const std::string name = source.string();
  if (!std::filesystem::exists(source, error)) {
    throw Failure("SRC_DIR '" + name + "' does not exist");
  }
  if (!std::filesystem::is_directory(source, error)) {
    throw Failure("SRC_DIR '" + name + "' is not a directory");
  }
  const std::filesystem::path config = source / "config.json";
  if (!std::filesystem::is_regular_file(config, error)) {
    throw Failure("'" + name +
                  "' has no config.json (expected a Hugging Face checkpoint directory)");
  }
}

ConvertRequest ParseRequest(const ParsedArgs& args) {
  ConvertRequest r;
  r.source = args.positionals[0];
  if (!args.Has("-o")) throw UsageError("missing -o OUT.octet (see 'octet-convert --help')");
  r.output = args.Value("-o");
  if (r.output.empty()) throw UsageError("-o needs a file name");
  if (args.Has("--dtype")) {
    r.dtype = args.Value("--dtype");
    if (r.dtype != "int8" && r.dtype != "fp32") {
      throw UsageError("--dtype '" + r.dtype + "' is not supported; expected int8 or fp32");
    }
  }
  if (args.Has("--calibration")) {
    r.calibration = args.Value("--calibration");
    if (r.calibration.empty()) throw UsageError("--calibration needs a file name");
    if (r.dtype == "fp32") {
      throw UsageError(
          "--calibration is used by --dtype int8; an fp32 conversion does not "
          "calibrate");
    }
  }
  if (args.Has("--heldout")) {
    r.heldout = args.Value("--heldout");
    if (r.heldout.empty()) throw UsageError("--heldout needs a file name");
  }
  if (args.Has("--target-ppl-ratio")) {
    const std::string v = args.Value("--target-ppl-ratio");
    char* end = nullptr;
    r.target_ppl_ratio = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(r.target_ppl_ratio > 0.0)) {
      throw UsageError("--target-ppl-ratio '" + v + "' is not a number > 0");
    }
  }
  if (args.Has("--max-size")) {
    r.max_size = args.Value("--max-size");
    char* end = nullptr;
    const double v = std::strtod(r.max_size.c_str(), &end);
    const std::string unit = end != nullptr ? end : "";
    double scale = 0;
    if (unit == "%") {
      r.max_size_percent = v;
    } else if (unit.empty()) {
      scale = 1;
    } else if (unit == "K" || unit == "KiB") {
      scale = 1024.0;
    } else if (unit == "M" || unit == "MiB") {
      scale = 1024.0 * 1024.0;
    } else if (unit == "G" || unit == "GiB") {
      scale = 1024.0 * 1024.0 * 1024.0;
    }
    if (r.max_size.empty() || !(v > 0) || (unit != "%" && scale == 0)) {
      throw UsageError("--max-size '" + r.max_size +
                       "' is not a size > 0 (bytes, K, M, G or a percentage such as 10%)");
    }
    if (scale > 0) r.max_size_bytes = static_cast<uint64_t>(v * scale);
  }
  r.require_target = args.Switch("--require-target");
  if (args.Has("--keep-fp32")) r.keep_fp32 = args.Values("--keep-fp32");
  for (const std::string& p : r.keep_fp32) {
    if (p.empty()) throw UsageError("--keep-fp32 needs a tensor name pattern");
  }
  r.no_tune = args.Switch("--no-tune");
  const bool tuning = args.Has("--heldout") || args.Has("--target-ppl-ratio") ||
                      args.Has("--max-size") || r.require_target;
  if (r.dtype == "fp32" && (tuning || args.Has("--keep-fp32") || r.no_tune)) {
    throw UsageError(
        "--heldout, --target-ppl-ratio, --max-size, --require-target, --keep-fp32 and --no-tune "
        "are used by --dtype int8; an fp32 conversion keeps every tensor in fp32");
  }
  if (r.no_tune && tuning) {
    throw UsageError(
        "--no-tune measures nothing: --heldout, --target-ppl-ratio, --max-size and "
        "--require-target do not apply");
  }
  r.quiet = args.Switch("--quiet");
  return r;
}

#if OCTET_HAVE_IMPORTER

// "12.3 MiB"
std::string Bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof(text), u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return text;
}

// A one-line progress bar on a terminal's stderr, redrawn at most ten times a
// second, for checkpoints big enough to take a while.
class ProgressBar {
 public:
  static constexpr uint64_t kMinBytes = 64ull << 20;

  void Update(size_t done, size_t total, uint64_t bytes_done, uint64_t bytes_total) {
    if (bytes_total < kMinBytes) return;
    const auto now = std::chrono::steady_clock::now();
    const bool last = done == total;
    if (!last && drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    drawn_ = true;
    constexpr int kWidth = 30;
    const double fraction =
        bytes_total ? static_cast<double>(bytes_done) / static_cast<double>(bytes_total) : 1.0;
    const int filled = static_cast<int>(fraction * kWidth);
    std::string bar(static_cast<size_t>(filled), '=');
    bar.resize(kWidth, ' ');
    std::fprintf(stderr, "\r[%s] %3d%%  %zu/%zu tensors  %s / %s ", bar.c_str(),
                 static_cast<int>(fraction * 100.0), done, total, Bytes(bytes_done).c_str(),
                 Bytes(bytes_total).c_str());
    if (last) std::fputc('\n', stderr);
    std::fflush(stderr);
  }

 private:
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_draw_;
};

std::string Db(double db) {
  if (std::isinf(db)) return "exact";
  if (std::isnan(db)) return "-";  // not measured
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", db);
  return text;
}

// Each phase's wall time and peak resident memory.
void PrintPhases(const convert::ConvertResult& r) {
  if (r.phases.empty()) return;
  std::printf("  %-28s %10s %12s\n", "phase", "seconds", "peak memory");
  for (const convert::ConvertPhase& p : r.phases) {
    std::printf("  %-28s %10.1f %12s\n", p.name.c_str(), p.seconds,
                p.peak_bytes > 0 ? Bytes(p.peak_bytes).c_str() : "-");
  }
}

// "target perplexity ratio 1.01 not met: 1.0234 reached (within --max-size
// 10%); the file is the best found".
std::string TargetNotMet(const convert::ConvertResult& r, const ConvertRequest& request) {
  char text[160];
  std::snprintf(text, sizeof(text), "target perplexity ratio %.4g not met: %.4f reached",
                request.target_ppl_ratio, r.tuning.final_metrics.ppl_ratio());
  std::string line = text;
  if (!request.max_size.empty()) line += " within --max-size " + request.max_size;
  return line + "; the file written is the best found";
}

// The quantization report of an int8 conversion (also in the file's provenance).
void PrintReport(const convert::ConvertResult& r, const ConvertRequest& request) {
  if (r.tensor_errors.empty()) return;
  std::printf("\nquantization report (SQNR in dB; higher is better, 40 dB ~ 1%% RMS error)\n");
  double worst = 1e9;
  std::string worst_name;
  for (const auto& t : r.tensor_errors) {
    if (t.sqnr_db < worst) {
      worst = t.sqnr_db;
      worst_name = t.name;
    }
  }
  std::printf("  weights: %zu int8 tensors, worst %s dB (%s); blocks of 32 would add %.1f dB "
              "on average\n", r.tensor_errors.size(), Db(worst).c_str(), worst_name.c_str(),
              r.block32_gain_db);
  std::printf("  calibration: %s\n", r.calibration.c_str());
  const convert::TuneResult& t = r.tuning;
  if (!t.steps.empty()) {
    std::printf("  int8 tuning, measured on %s:\n", t.evaluation.c_str());
    std::printf("    %-22s %10s %10s %8s   %s\n", "step", "ppl ratio", "KL (nats)", "top-1",
                "what it changed");
    for (const convert::TuneStep& s : t.steps) {
      if (t.skipped) {
        std::printf("    %-22s %10s %10s %8s   %s\n", s.name.c_str(), "-", "-", "-",
                    s.detail.c_str());
      } else if (s.metrics.has_distribution) {
        std::printf("    %-22s %10.4f %10.5f %7.2f%%   %s%s\n", s.name.c_str(),
                    s.metrics.ppl_ratio(), s.metrics.kld, 100.0 * s.metrics.top1,
                    s.detail.c_str(), s.kept ? "" : " (no better: undone)");
      } else {
        std::printf("    %-22s %10s %10s %8s   %s; output SQNR %s dB, cosine mean %.6f, "
                    "worst %.6f%s\n",
                    s.name.c_str(), "-", "-", "-", s.detail.c_str(),
                    Db(-10.0 * std::log10(s.metrics.noise_to_signal)).c_str(),
                    s.metrics.mean_cosine, s.metrics.min_cosine,
                    s.kept ? "" : " (no better: undone)");
      }
    }
    std::printf("    %zu of %zu matrices in int8%s", t.int8_matrices, t.total_matrices,
                t.fp32_matrices.empty() ? "" : " (the others fp32, listed in the file)");
    if (!t.wide_input_matrices.empty()) {
      std::printf("; %zu of them with 16-bit inputs (two int8 digits)",
                  t.wide_input_matrices.size());
    }
    std::printf("\n");
    if (!t.skipped && t.final_metrics.has_distribution && !t.target_met) {
      std::printf("    %s\n", TargetNotMet(r, request).c_str());
    }
  }
  std::printf("  %-28s %10s %12s   %s\n", "layer output", "int8 SQNR", "min cosine",
              "activation SQNR: dynamic per row / static per tensor, clipped");
  for (const auto& l : r.layer_errors) {
    std::printf("  %-28s %10s %12.6f   %s / %s\n", l.name.c_str(), Db(l.sqnr_db).c_str(),
                l.min_cosine, Db(l.act_dynamic_db).c_str(), Db(l.act_static_db).c_str());
  }
  PrintPhases(r);
}

int Convert(const ConvertRequest& request) {
  ProgressBar bar;
  convert::ConvertOptions options;
  options.weights =
      request.dtype == "fp32" ? convert::WeightType::kFp32 : convert::WeightType::kInt8;
  options.calibration = request.calibration;
  options.heldout = request.heldout;
  options.tune.target_ppl_ratio = request.target_ppl_ratio;
  options.tune.keep_fp32 = request.keep_fp32;
  options.tune.enabled = !request.no_tune;
  options.max_size_bytes = request.max_size_bytes;
  options.max_size_percent = request.max_size_percent;
  if (!request.quiet && isatty(STDERR_FILENO)) {
    options.progress = [&bar](size_t done, size_t total, uint64_t bytes_done,
                              uint64_t bytes_total) {
      bar.Update(done, total, bytes_done, bytes_total);
    };
    // The phase, and where in it (the tuner's layer), on one line redrawn.
    options.phase_progress = [](const std::string& phase, size_t done, size_t total) {
      if (total > 0) {
        std::fprintf(stderr, "\r\033[K%s %zu of %zu", phase.c_str(), done, total);
      } else if (done > 0) {
        std::fprintf(stderr, "\r\033[K%s %zu", phase.c_str(), done);
      } else {
        std::fprintf(stderr, "\r\033[K%s", phase.c_str());
      }
      std::fflush(stderr);
    };
  }
  convert::ConvertResult result;
  try {
    result = convert::ConvertCheckpoint(request.source, request.output, options);
  } catch (const convert::Error& e) {
    if (options.phase_progress) std::fprintf(stderr, "\r\033[K");
    throw Failure(e.what());
  }
  if (options.phase_progress) std::fprintf(stderr, "\r\033[K");
  if (!request.quiet) {
    for (const std::string& warning : result.warnings) {
      std::fprintf(stderr, "octet-convert: warning: %s\n", OneLine(warning).c_str());
    }
    std::printf("wrote %s: %s, %zu tensors (%s), %zu tokenizer files, %s\n",
                request.output.string().c_str(), result.model_type.c_str(), result.num_tensors,
                request.dtype.c_str(), result.num_tokenizer_files,
                Bytes(result.file_bytes).c_str());
    PrintReport(result, request);
  }
  const convert::TuneResult& t = result.tuning;
  if (request.require_target && !t.skipped && t.final_metrics.has_distribution &&
      !t.target_met) {
    std::fprintf(stderr, "octet-convert: %s\n", TargetNotMet(result, request).c_str());
    return kExitTargetNotMet;
  }
  return kExitOk;
}

#else

int Convert(const ConvertRequest&) {
  throw Failure(
      "this octet-convert was built without the Hugging Face importer "
      "(nlohmann-json3-dev was not found at configure time)");
}

#endif

int ConvertMain(const std::vector<std::string>& args) {
  static const std::vector<OptionSpec> kOptions = {
      ValueOption("-o", "--output"),
      ValueOption("--dtype"),
      ValueOption("--calibration"),
      ValueOption("--heldout"),
      ValueOption("--target-ppl-ratio"),
      ValueOption("--max-size"),
      SwitchOption("--require-target"),
      RepeatedOption("--keep-fp32"),
      SwitchOption("--no-tune"),
      SwitchOption("--quiet"),
  };
  if (!args.empty() && args[0] == "--version") {
    std::printf("octet-convert %s\n", OCTET_VERSION);
    return kExitOk;
  }
  const ParsedArgs parsed = ParseArgs("octet-convert", kOptions, args, 1, 1, "SRC_DIR");
  if (parsed.help) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  const ConvertRequest request = ParseRequest(parsed);
  CheckSource(request.source);
  std::error_code error;
  if (!request.calibration.empty() &&
      !std::filesystem::is_regular_file(request.calibration, error)) {
    throw Failure("calibration file '" + request.calibration.string() + "' does not exist");
  }
  if (!request.heldout.empty() && !std::filesystem::is_regular_file(request.heldout, error)) {
    throw Failure("held-out file '" + request.heldout.string() + "' does not exist");
  }
  const std::filesystem::path out_dir = request.output.parent_path();
  if (!out_dir.empty() && !std::filesystem::is_directory(out_dir, error)) {
    throw Failure("the directory of '" + request.output.string() + "' does not exist");
  }
  return Convert(request);
}

}  // namespace
}  // namespace cli
}  // namespace octet

int main(int argc, char** argv) {
  return octet::cli::GuardedMain("octet-convert", argc, argv, octet::cli::ConvertMain);
}
