// Chat templates rendered straight from a template source with the runtime's
// engine (runtime/text/chat_template.h) and buffers that grow until the render
// fits: the goldens' renderer and its tests. (Programs render a model's own
// template through the C API: octet_chat_render.) Errors are thrown as Failure.
#pragma once

#include <ctime>
#include <string>
#include <vector>

#include "cli/chat_messages.h"
#include "text/chat_template.h"

namespace octet {
namespace cli {

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
