// Chat templates: the Jinja subset that Hugging Face checkpoints ship in
// tokenizer_config.json `chat_template`, rendered on the device exactly as
// transformers renders it (jinja2 ImmutableSandboxedEnvironment with
// trim_blocks, lstrip_blocks and loop controls; HF's `tojson`,
// `raise_exception` and `strftime_now`; `tools` and `documents` passed as None).
//
// Two phases. Parse() runs once (at model load) and may allocate: it lexes the
// source, builds a compact node tree and refuses every construct outside the
// subset with "<what> at line N is not supported", so nothing is ever
// mis-rendered. Render() allocates nothing: values made while rendering
// (concatenations, slices, namespaces, macro output) live in a scratch arena
// the caller hands in, and the text goes to a caller buffer. Running out of
// either is a kOutOfMemory status; a render also stops with a status when it
// exceeds its step or call-depth limits, so no template or message bytes can
// hang or crash it. Recursion is bounded by the parser's nesting limit (96)
// and max_call_depth: a render needs at most a few hundred KiB of stack.
//
// Known differences from jinja2, all outside the real templates' use:
// upper/lower/title/capitalize map ASCII letters only; `%` string formatting,
// str.format, {% call %}, {% include %} and friends are refused; range()
// materializes its list (jinja2's sandbox caps ranges at 100000 items too).
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string_view>

#include "core/result.h"
#include "core/status.h"

namespace octet::text {

struct ChatMessage {
  std::string_view role;
  std::string_view content;
};

// A string variable that may be absent (jinja2's Undefined when absent).
struct ChatText {
  bool present = false;
  std::string_view text;
};

// An extra string variable for the template (e.g. HF's `unk_token`, or
// `date_string`).
struct ChatVariable {
  std::string_view name;
  std::string_view value;
};

struct ChatRenderInput {
  const ChatMessage* messages = nullptr;
  size_t num_messages = 0;
  bool add_generation_prompt = true;
  ChatText bos_token;
  ChatText eos_token;
  const ChatVariable* variables = nullptr;
  size_t num_variables = 0;
  // The time strftime_now() formats (HF: the local time of the render). When
  // null, strftime_now is undefined, as on a device without a clock.
  const std::tm* now = nullptr;
};

struct ChatRenderLimits {
  uint64_t max_steps = uint64_t{1} << 22;  // statements + loop iterations + calls
  uint32_t max_call_depth = 32;            // nested macro calls
  uint32_t max_loop_items = 1u << 20;      // items of one for loop / range()
};

struct ChatTemplateNode;  // chat_template_internal.h

class ChatTemplate {
 public:
  ChatTemplate() = default;
  ~ChatTemplate();
  ChatTemplate(ChatTemplate&& other) noexcept;
  ChatTemplate& operator=(ChatTemplate&& other) noexcept;
  ChatTemplate(const ChatTemplate&) = delete;
  ChatTemplate& operator=(const ChatTemplate&) = delete;

  // Parses `source` (UTF-8 Jinja). kUnsupported names the first construct
  // outside the subset and its line; kInvalidArgument is a syntax error.
  static Result<ChatTemplate> Parse(std::string_view source);

  // Renders into out[0, out_capacity) and sets *out_size. `scratch` is any
  // byte buffer (aligned internally); the same scratch may serve every render
  // (the real templates need a few KiB plus about the messages' bytes;
  // kOutOfMemory says when to grow it).
  // A template error (raise_exception, undefined attribute, a type error) is
  // kInvalidArgument whose message is the template's message.
  Status Render(const ChatRenderInput& input, void* scratch, size_t scratch_size, char* out,
                size_t out_capacity, size_t* out_size,
                const ChatRenderLimits& limits = ChatRenderLimits()) const;

  bool empty() const { return nodes_ == nullptr; }

 private:
  friend class ChatTemplateParser;
  void Release();

  ChatTemplateNode* nodes_ = nullptr;  // owned (Allocate)
  uint32_t num_nodes_ = 0;
  int32_t root_ = -1;                  // first statement of the template body
  char* strings_ = nullptr;            // owned (Allocate): names and decoded literals
  uint32_t strings_size_ = 0;
};

}  // namespace octet::text
