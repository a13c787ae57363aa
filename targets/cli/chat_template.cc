// octet chat-template: the model's chat template rendered for a messages file,
// byte for byte as transformers' apply_chat_template(tokenize=False) renders it.
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/chat.h"
#include "cli/commands.h"
#include "cli/model_util.h"
#include "cli/tool_main.h"
#include "format/model.h"

namespace octet {
namespace cli {
namespace {

constexpr char kUsage[] = R"(Usage: octet chat-template MODEL --messages FILE.json [--no-generation-prompt]

Prints the model's chat template (tokenizer_config.json "chat_template", stored
by octet-convert) rendered for the messages in FILE.json, a JSON list of
{"role": ..., "content": ...} objects, exactly as Hugging Face renders it
(jinja2 with trim_blocks and lstrip_blocks; bos_token and eos_token from the
tokenizer config; strftime_now() gives the local time). No newline is added.

Options:
  --messages FILE.json      the conversation (required)
  --no-generation-prompt    add_generation_prompt=false (default: true)
  -h, --help                show this help

A template error (such as "roles must alternate") is one line on stderr, exit 1.
)";

}  // namespace

int ChatTemplateCommand(const std::vector<std::string>& args) {
  static const std::vector<OptionSpec> kOptions = {ValueOption("--messages"),
                                                   SwitchOption("--no-generation-prompt")};
  const ParsedArgs parsed = ParseArgs("octet chat-template", kOptions, args, 1, 1, "MODEL");
  if (parsed.help) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (!parsed.Has("--messages")) throw UsageError("octet chat-template: --messages is required");
  const std::vector<ChatTurn> messages = ReadChatMessages(parsed.Value("--messages"));
  const std::string& path = parsed.positionals[0];
  const Model model = LoadModel(path);
  const fb::Tokenizer* tokenizer = model.root().tokenizer();
  const fb::TokenizerSpec* spec = tokenizer == nullptr ? nullptr : tokenizer->compiled();
  if (spec == nullptr || spec->chat_template() == nullptr || spec->chat_template()->size() == 0) {
    throw Failure("'" + path + "' has no chat template (its checkpoint had none in "
                  "tokenizer_config.json, or it was converted without one)");
  }
  ChatTemplateOptions options;
  options.add_generation_prompt = !parsed.Switch("--no-generation-prompt");
  if (spec->bos_token() != nullptr) {
    options.has_bos = true;
    options.bos = spec->bos_token()->str();
  }
  if (spec->eos_token() != nullptr) {
    options.has_eos = true;
    options.eos = spec->eos_token()->str();
  }
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  if (localtime_r(&now, &local) != nullptr) options.now = &local;
  const std::string text = RenderChatTemplate(spec->chat_template()->str(), messages, options);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace cli
}  // namespace octet
