// The converter's check of a checkpoint's chat template: the runtime's own
// parser (runtime/text/chat_template.h) runs on it, so a template the device
// cannot render exactly is refused at conversion, never mis-rendered later.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace octet {
namespace convert {

// Throws Error("chat_template: <what> at line N is not supported") for a
// construct outside the subset, or "chat_template: syntax error at line N: ..."
void CheckChatTemplate(const std::string& source);

// tokenizer_config.json "chat_template" is a string, or a list of named
// templates [{"name": ..., "template": ...}] (transformers then renders the one
// named "default"). Returns the template to store; for a list, *note says
// which one was taken and which were left out. Throws Error for any other
// shape, or a list without "default".
std::string SelectChatTemplate(const nlohmann::json& value, std::string* note);

}  // namespace convert
}  // namespace octet
