// octet: run, benchmark and inspect .octet models (docs/design.md §5).
#include <cstdio>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/tool_main.h"

namespace octet {
namespace cli {
namespace {

constexpr char kUsage[] = R"(Usage: octet COMMAND [ARGS...]

Runs int8 Transformer models stored in the .octet format (made by octet-convert).

Commands:
  run      one forward pass over a batch of token ids; --dump writes the
           logits or hidden states as a float32 .npy
  bench    times prefill over a synthetic batch and reports speed and memory
  inspect  prints a model's architecture, tensors, memory plan and provenance
  chat-template
           prints the model's chat template rendered for a JSON list of messages
  tokenize    text -> token ids with the model's tokenizer (as Hugging Face's encode)
  detokenize  token ids -> text (as Hugging Face's decode)

Options:
  -h, --help   show this help; `octet COMMAND --help` shows a command's options
  --version    print the version

Errors are one line on stderr; the exit status is 0 on success, 2 for a wrong
command line and 1 for any other failure.
)";

int OctetMain(const std::vector<std::string>& args) {
  if (args.empty()) throw UsageError("missing command (see 'octet --help')");
  const std::string& command = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (command == "--version") {
    std::printf("octet %s\n", OCTET_VERSION);
    return kExitOk;
  }
  if (command == "run") return RunCommand(rest);
  if (command == "bench") return BenchCommand(rest);
  if (command == "inspect") return InspectCommand(rest);
  if (command == "chat-template") return ChatTemplateCommand(rest);
  if (command == "tokenize") return TokenizeCommand(rest);
  if (command == "detokenize") return DetokenizeCommand(rest);
  if (!command.empty() && command[0] == '-') {
    throw UsageError("unknown option '" + command + "' (see 'octet --help')");
  }
  throw UsageError("unknown command '" + command + "' (see 'octet --help')");
}

}  // namespace
}  // namespace cli
}  // namespace octet

int main(int argc, char** argv) {
  return octet::cli::GuardedMain("octet", argc, argv, octet::cli::OctetMain);
}
