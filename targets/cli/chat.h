// Chat templates for the command line: reading a messages file and rendering
// a template with buffers that grow until the render fits. Host-side code:
// errors are thrown as Failure (cli/args.h).
#pragma once

#include <ctime>
#include <string>
#include <vector>

#include "text/chat_template.h"

namespace octet {
namespace cli {

struct ChatTurn {
  std::string role;
  std::string content;
};

// Parses a JSON list of {"role": "...", "content": "..."} objects (strings
// only; other keys are refused so nothing is silently dropped).
std::vector<ChatTurn> ParseChatMessages(const std::string& json, const std::string& what);
std::vector<ChatTurn> ReadChatMessages(const std::string& path);

struct ChatTemplateOptions {
  bool add_generation_prompt = true;
  bool has_bos = false;
  std::string bos;
  bool has_eos = false;
  std::string eos;
  const std::tm* now = nullptr;  // strftime_now's time; null: undefined
};

// Parses `source`; throws Failure with the parser's message.
text::ChatTemplate ParseChatTemplate(const std::string& source);

// Renders `source` (or a parsed template) for `messages`; throws Failure with
// the parser's or the template's message.
std::string RenderChatTemplate(const std::string& source, const std::vector<ChatTurn>& messages,
                               const ChatTemplateOptions& options);
std::string RenderChatTemplate(const text::ChatTemplate& parsed,
                               const std::vector<ChatTurn>& messages,
                               const ChatTemplateOptions& options);

}  // namespace cli
}  // namespace octet
