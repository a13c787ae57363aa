// chat_template_render: renders a template file for a messages file without a
// converted model (a test tool, not installed).
//   chat_template_render TEMPLATE_FILE MESSAGES.json [--no-generation-prompt]
//       [--bos S] [--eos S] [--now "YYYY-MM-DD HH:MM:SS"]
// --now fixes strftime_now()'s time (the goldens use one); without it
// strftime_now is undefined.
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/args.h"
#include "chat_render.h"
#include "cli/tool_main.h"

namespace {

constexpr char kUsage[] = R"(Usage: chat_template_render TEMPLATE_FILE MESSAGES.json [--no-generation-prompt] [--bos S] [--eos S] [--now "YYYY-MM-DD HH:MM:SS"]
)";

int Main(const std::vector<std::string>& args) {
  using namespace octet::cli;
  static const std::vector<OptionSpec> kOptions = {
      SwitchOption("--no-generation-prompt"), ValueOption("--bos"), ValueOption("--eos"),
      ValueOption("--now")};
  const ParsedArgs parsed =
      ParseArgs("chat_template_render", kOptions, args, 2, 2, "TEMPLATE_FILE MESSAGES.json");
  if (parsed.help) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  std::ifstream in(parsed.positionals[0], std::ios::binary);
  if (!in) throw Failure("cannot read template file '" + parsed.positionals[0] + "'");
  std::stringstream source;
  source << in.rdbuf();
  ChatTemplateOptions options;
  options.add_generation_prompt = !parsed.Switch("--no-generation-prompt");
  if (parsed.Has("--bos")) {
    options.has_bos = true;
    options.bos = parsed.Value("--bos");
  }
  if (parsed.Has("--eos")) {
    options.has_eos = true;
    options.eos = parsed.Value("--eos");
  }
  std::tm now{};
  if (parsed.Has("--now")) {
    if (std::sscanf(parsed.Value("--now").c_str(), "%d-%d-%d %d:%d:%d", &now.tm_year, &now.tm_mon,
                    &now.tm_mday, &now.tm_hour, &now.tm_min, &now.tm_sec) != 6) {
      throw UsageError("--now takes \"YYYY-MM-DD HH:MM:SS\"");
    }
    now.tm_year -= 1900;
    now.tm_mon -= 1;
    std::tm copy = now;
    timegm(&copy);  // fills the weekday and the day of the year
    now.tm_wday = copy.tm_wday;
    now.tm_yday = copy.tm_yday;
    options.now = &now;
  }
  const std::string text =
      RenderChatTemplate(source.str(), ReadChatMessages(parsed.positionals[1]), options);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return octet::cli::GuardedMain("chat_template_render", argc, argv, Main);
}
