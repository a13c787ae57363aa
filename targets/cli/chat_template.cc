// octet chat-template: the model's chat template rendered for a messages file,
// byte for byte as transformers' apply_chat_template(tokenize=False) renders it.
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "cli/api_util.h"
#include "cli/args.h"
#include "cli/chat_messages.h"
#include "cli/commands.h"
#include "cli/tool_main.h"

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
  const api::Model model = OpenModel(path);
  if (model.info().has_chat_template == 0) {
    throw Failure("'" + path + "' has no chat template (its checkpoint had none in "
                  "tokenizer_config.json, or it was converted without one)");
  }
  octet_chat_options options;
  octet_chat_options_init(&options);
  if (parsed.Switch("--no-generation-prompt")) options.flags |= OCTET_CHAT_NO_GENERATION_PROMPT;
  std::vector<std::pair<std::string, std::string>> turns;
  for (const ChatTurn& m : messages) turns.emplace_back(m.role, m.content);
  std::string text;
  const api::Status st = model.RenderChat(turns, &options, &text);
  if (!st.ok()) throw Failure("chat template: " + st.message);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace cli
}  // namespace octet
