// octet-testcheckpoint: writes a small synthetic Hugging Face checkpoint
// (tests/converter/hf_fixtures.h) for the octet-convert command-line tests.
// Not installed.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/tool_main.h"
#include "converter/hf_fixtures.h"

namespace octet {
namespace cli {
namespace {

constexpr char kUsage[] =
    R"(Usage: octet-testcheckpoint DIR [--family F] [--dtype F32|F16|BF16] [--shards N]
                            [--remove TENSOR] [--vocab V] [--max-positions P] [--eos-id E]

Writes config.json and safetensors weights of a tiny random model in Hugging Face
layout into DIR (created if needed). A test fixture, not a real model.

Options:
  --family F        bert, distilbert, roberta, xlm-roberta, gpt2, llama (default),
                    qwen2, mistral, marian or t5
  --dtype D         stored dtype of the weights (default F32)
  --shards N        1 (model.safetensors, default) to 8 (an index and N shards)
  --remove TENSOR   leave this tensor out (a broken checkpoint)
  --vocab V         vocabulary size (default 64): pair the checkpoint with a real
                    tokenizer by giving its size
  --max-positions P max_position_embeddings (default 16)
  --eos-id E        config.json's eos_token_id (llama family; default 2)
  -h, --help        show this help
)";

int TestCheckpointMain(const std::vector<std::string>& args) {
  static const std::vector<OptionSpec> kOptions = {ValueOption("--family"), ValueOption("--dtype"),
                                                   ValueOption("--shards"),
                                                   ValueOption("--remove"), ValueOption("--vocab"),
                                                   ValueOption("--max-positions"),
                                                   ValueOption("--eos-id")};
  const ParsedArgs parsed = ParseArgs("octet-testcheckpoint", kOptions, args, 1, 1, "DIR");
  if (parsed.help) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  const std::string family = parsed.Has("--family") ? parsed.Value("--family") : "llama";
  const std::string dtype = parsed.Has("--dtype") ? parsed.Value("--dtype") : "F32";
  if (dtype != "F32" && dtype != "F16" && dtype != "BF16") {
    throw UsageError("--dtype must be F32, F16 or BF16");
  }
  const int shards = parsed.Has("--shards")
                         ? static_cast<int>(ParseUint("--shards", parsed.Value("--shards"), 1, 8))
                         : 1;
  testing::HfOptions options;
  if (parsed.Has("--vocab")) {
    options.vocab = static_cast<uint32_t>(ParseUint("--vocab", parsed.Value("--vocab"), 1, 1u << 20));
  }
  if (parsed.Has("--max-positions")) {
    options.max_positions = static_cast<uint32_t>(
        ParseUint("--max-positions", parsed.Value("--max-positions"), 1, 1u << 20));
  }
  testing::HfCheckpoint checkpoint;
  try {
    checkpoint = testing::MakeHfCheckpoint(family, options);
    if (parsed.Has("--eos-id")) {
      checkpoint.config["eos_token_id"] = ParseUint("--eos-id", parsed.Value("--eos-id"), 0,
                                                    options.vocab - 1);
    }
    if (parsed.Has("--remove")) checkpoint.Remove(parsed.Value("--remove"));
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
  std::filesystem::create_directories(parsed.positionals[0]);
  checkpoint.Write(parsed.positionals[0], dtype, shards);
  return kExitOk;
}

}  // namespace
}  // namespace cli
}  // namespace octet

int main(int argc, char** argv) {
  return octet::cli::GuardedMain("octet-testcheckpoint", argc, argv,
                                 octet::cli::TestCheckpointMain);
}
