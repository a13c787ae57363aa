// octet-testmodel: writes a tiny synthetic model (tests/support/test_models.h,
// made with the real writer) for the CLI tests and for trying the tools out.
// Not installed.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/tool_main.h"
#include "support/test_models.h"

namespace octet {
namespace cli {
namespace {

constexpr char kUsage[] =
    R"(Usage: octet-testmodel OUT.octet [--family llama|bert|t5] [--layers N] [--fp32] [--tied]
                      [--vocab N] [--hidden N] [--seed S] [--packed] [--input-bits 8|16]
                      [--no-tokenizer] [--truncate BYTES]

Writes a tiny synthetic model with random weights (a test fixture, not a real model).

Options:
  --family F        llama (decoder-only, default), bert or roberta (encoder-only; roberta's
                    positions start at row 2) or t5 (encoder-decoder)
  --layers N        transformer layers, 0 to 64 (default 1); 0 = embeddings and head only
  --fp32            float32 weights instead of int8 per-channel
  --tied            no lm_head: the head is the token embedding
  --vocab N         vocabulary size, 2 to 65536 (default 32)
  --hidden N        hidden size, an even number from 2 to 1024 (default 16)
  --seed S          random seed for the weights (default 1)
  --packed          int8 layer matrices in the GEMM's packed tiles, as octet-convert writes them
  --input-bits B    8 (default) or 16: int8 matrices that products read take 16-bit inputs
  --no-tokenizer    leave out the small tokenizer.json blob
  --truncate BYTES  write only the first BYTES bytes (a broken file for loader tests)
  -h, --help        show this help
)";

int TestModelMain(const std::vector<std::string>& args) {
  static const std::vector<OptionSpec> kOptions = {
      ValueOption("--family"), ValueOption("--layers"),        SwitchOption("--fp32"),
      SwitchOption("--tied"),  ValueOption("--vocab"),         ValueOption("--hidden"),
      ValueOption("--seed"),   SwitchOption("--no-tokenizer"), ValueOption("--truncate"),
      SwitchOption("--packed"), ValueOption("--input-bits"),
  };
  const ParsedArgs parsed = ParseArgs("octet-testmodel", kOptions, args, 1, 1, "OUT.octet");
  if (parsed.help) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  testing::TinyModelOptions options;
  if (parsed.Has("--family")) {
    const std::string& family = parsed.Value("--family");
    if (family == "llama") {
      options.family = fb::Family::Llama;
    } else if (family == "bert") {
      options.family = fb::Family::Bert;
    } else if (family == "roberta") {
      options.family = fb::Family::Roberta;
      options.position_offset = 2;  // pad_token_id 1 + 1
    } else if (family == "t5") {
      options.family = fb::Family::T5;
    } else {
      throw UsageError("--family '" + family + "' is not one of llama, bert, roberta, t5");
    }
  }
  if (parsed.Has("--layers")) {
    options.layers = static_cast<uint32_t>(ParseUint("--layers", parsed.Value("--layers"), 0, 64));
  }
  if (parsed.Has("--vocab")) {
    options.vocab = static_cast<uint32_t>(ParseUint("--vocab", parsed.Value("--vocab"), 2, 65536));
  }
  if (parsed.Has("--hidden")) {
    options.hidden =
        static_cast<uint32_t>(ParseUint("--hidden", parsed.Value("--hidden"), 2, 1024));
    if (options.hidden % 2 != 0) throw UsageError("--hidden must be even (two heads)");
  }
  if (parsed.Has("--seed")) {
    options.seed =
        static_cast<uint32_t>(ParseUint("--seed", parsed.Value("--seed"), 0, UINT32_MAX));
  }
  options.int8 = !parsed.Switch("--fp32");
  options.tied = parsed.Switch("--tied");
  options.packed = parsed.Switch("--packed");
  if (parsed.Has("--input-bits")) {
    const uint64_t bits = ParseUint("--input-bits", parsed.Value("--input-bits"), 8, 16);
    if (bits != 8 && bits != 16) throw UsageError("--input-bits must be 8 or 16");
    if (bits == 16 && !options.int8) throw UsageError("--input-bits 16 needs int8 weights");
    options.two_digit_inputs = bits == 16;
  }
  options.tokenizer = !parsed.Switch("--no-tokenizer");

  const std::string& path = parsed.positionals[0];
  std::vector<uint8_t> bytes;
  try {
    bytes = testing::MakeTinyModelBytes(options);
  } catch (const std::exception& e) {
    throw Failure(std::string("cannot build the model: ") + e.what());
  }
  size_t size = bytes.size();
  if (parsed.Has("--truncate")) {
    size = ParseUint("--truncate", parsed.Value("--truncate"), 0, bytes.size() - 1);
  }
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) throw Failure("cannot write " + path);
  const bool ok = std::fwrite(bytes.data(), 1, size, file) == size;
  if (std::fclose(file) != 0 || !ok) throw Failure("cannot write " + path);
  return kExitOk;
}

}  // namespace
}  // namespace cli
}  // namespace octet

int main(int argc, char** argv) {
  return octet::cli::GuardedMain("octet-testmodel", argc, argv, octet::cli::TestModelMain);
}
