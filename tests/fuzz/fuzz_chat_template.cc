// libFuzzer target: arbitrary bytes as a chat template (up to the first NUL)
// and as message contents (the rest, split on NULs). Parsing may fail; a
// template that parses is rendered into small fixed buffers with tight
// limits. Any crash, hang, sanitizer report or out-of-bounds write is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string_view>

#include "text/chat_template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* bytes = reinterpret_cast<const char*>(data);
  const char* nul = static_cast<const char*>(std::memchr(bytes, 0, size));
  const size_t template_size = nul == nullptr ? size : static_cast<size_t>(nul - bytes);
  octet::Result<octet::text::ChatTemplate> parsed =
      octet::text::ChatTemplate::Parse(std::string_view(bytes, template_size));
  if (!parsed.ok()) {
    if (parsed.status().message()[0] != '\0') return 0;
    std::fprintf(stderr, "chat template: refused without a message\n");
    std::abort();
  }

  static const char* const kRoles[] = {"system", "user", "assistant", "user", "tool", "user"};
  octet::text::ChatMessage messages[6];
  size_t num_messages = 0;
  size_t at = template_size < size ? template_size + 1 : size;
  while (num_messages < 6) {
    const char* start = bytes + at;
    const char* end = static_cast<const char*>(std::memchr(start, 0, size - at));
    const size_t len = end == nullptr ? size - at : static_cast<size_t>(end - start);
    messages[num_messages] = {kRoles[num_messages], std::string_view(start, len)};
    ++num_messages;
    if (end == nullptr) break;
    at += len + 1;
  }
  std::tm now{};
  now.tm_year = 124;
  now.tm_mday = 1;
  octet::text::ChatRenderInput input;
  input.messages = messages;
  input.num_messages = num_messages;
  input.add_generation_prompt = (size & 1) != 0;
  // jinja2's Undefined bos/eos now and then (tokenizers without them).
  input.bos_token = {(size & 2) == 0, "<s>"};
  input.eos_token = {(size & 4) == 0, "</s>"};
  input.now = &now;
  octet::text::ChatRenderLimits limits;
  limits.max_steps = 1 << 16;
  limits.max_loop_items = 1 << 12;
  static char scratch[1 << 18];
  static char out[1 << 14];
  size_t written = 0;
  const octet::Status status =
      parsed.value().Render(input, scratch, sizeof(scratch), out, sizeof(out), &written, limits);
  if ((!status.ok() && status.message()[0] == '\0') || (status.ok() && written > sizeof(out))) {
    std::fprintf(stderr, "chat template: %s\n",
                 status.ok() ? "rendered more than the buffer" : "refused without a message");
    std::abort();
  }
  return 0;
}
