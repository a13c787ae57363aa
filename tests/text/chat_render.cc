#include "chat_render.h"

#include <utility>

#include "cli/args.h"

namespace octet {
namespace cli {

text::ChatTemplate ParseChatTemplate(const std::string& source) {
  Result<text::ChatTemplate> parsed = text::ChatTemplate::Parse(source);
  if (!parsed.ok()) throw Failure(parsed.status().message());
  return std::move(parsed).value();
}

std::string RenderChatTemplate(const std::string& source, const std::vector<ChatTurn>& messages,
                               const ChatTemplateOptions& options) {
  return RenderChatTemplate(ParseChatTemplate(source), messages, options);
}

std::string RenderChatTemplate(const text::ChatTemplate& parsed,
                               const std::vector<ChatTurn>& messages,
                               const ChatTemplateOptions& options) {
  std::vector<text::ChatMessage> turns;
  size_t bytes = 4096;
  for (const ChatTurn& t : messages) {
    turns.push_back({t.role, t.content});
    bytes += t.role.size() + t.content.size();
  }
  text::ChatRenderInput input;
  input.messages = turns.data();
  input.num_messages = turns.size();
  input.add_generation_prompt = options.add_generation_prompt;
  input.bos_token = {options.has_bos, options.bos};
  input.eos_token = {options.has_eos, options.eos};
  input.now = options.now;
  // Start from a size that fits the real templates, and double on shortage.
  size_t scratch_size = 64 * 1024 + 8 * bytes;
  size_t out_size = 4096 + 2 * bytes;
  constexpr size_t kCap = size_t{1} << 30;
  for (;;) {
    std::vector<char> scratch(scratch_size), out(out_size);
    size_t written = 0;
    const Status status = parsed.Render(input, scratch.data(), scratch.size(), out.data(),
                                         out.size(), &written);
    if (status.ok()) return std::string(out.data(), written);
    if (status.code() != StatusCode::kOutOfMemory || (scratch_size >= kCap && out_size >= kCap)) {
      throw Failure(std::string("chat template: ") + status.message());
    }
    if (scratch_size < kCap) scratch_size *= 2;
    if (out_size < kCap) out_size *= 2;
  }
}

}  // namespace cli
}  // namespace octet
