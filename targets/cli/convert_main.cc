// octet-convert: Hugging Face checkpoint -> .octet (DESIGN.md §5). The command
// line is complete and checked here (flags, SRC_DIR and its config.json); the
// conversion itself, with its checks of model_type and the weights, lands with
// the converter (issue #3).
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/tool_main.h"

namespace octet {
namespace cli {
namespace {

constexpr char kUsage[] =
    R"(Usage: octet-convert SRC_DIR -o OUT.octet [--dtype int8|fp32] [--calibration FILE] [--quiet]

Converts a Hugging Face checkpoint directory into one .octet model file.

SRC_DIR holds:
  config.json        "model_type": bert, gpt2, llama, qwen2, mistral, marian or t5
  model.safetensors  the weights in F32, F16 or BF16; or, for sharded checkpoints,
                     model.safetensors.index.json and the shards it lists
  tokenizer files    when present (tokenizer.json, tokenizer_config.json,
                     special_tokens_map.json, vocab.json + merges.txt, *.spm /
                     spiece.model / source.spm + target.spm): carried into the file

Options:
  -o, --output OUT.octet   the model file to write (replaced if it exists)
  --dtype int8|fp32        int8: symmetric per-output-channel int8 weights (default);
                           fp32: float32 weights, to check the architecture against
                           the source framework apart from quantization
  --calibration FILE       sample text or token ids used to measure activation ranges
                           and the per-layer quantization error report
  --quiet                  print nothing but errors
  -h, --help               show this help

Exit status: 0 on success; otherwise non-zero (2 for a wrong command line, 1 for
any other failure) and one line on stderr naming the problem.
)";

struct ConvertRequest {
  std::filesystem::path source;
  std::filesystem::path output;
  std::string dtype = "int8";
  std::filesystem::path calibration;  // empty = none
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
  }
  r.quiet = args.Switch("--quiet");
  return r;
}

int ConvertMain(const std::vector<std::string>& args) {
  static const std::vector<OptionSpec> kOptions = {
      ValueOption("-o", "--output"),
      ValueOption("--dtype"),
      ValueOption("--calibration"),
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
  const std::filesystem::path out_dir = request.output.parent_path();
  if (!out_dir.empty() && !std::filesystem::is_directory(out_dir, error)) {
    throw Failure("the directory of '" + request.output.string() + "' does not exist");
  }
  throw Failure(
      "converting Hugging Face checkpoints is not implemented yet (it lands with the "
      "converter, issue #3)");
}

}  // namespace
}  // namespace cli
}  // namespace octet

int main(int argc, char** argv) {
  return octet::cli::GuardedMain("octet-convert", argc, argv, octet::cli::ConvertMain);
}
