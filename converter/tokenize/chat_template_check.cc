#include "tokenize/chat_template_check.h"

#include "import/error.h"
#include "text/chat_template.h"

namespace octet {
namespace convert {

void CheckChatTemplate(const std::string& source) {
  Result<text::ChatTemplate> parsed = text::ChatTemplate::Parse(source);
  if (!parsed.ok()) throw Error(parsed.status().message());
}

std::string SelectChatTemplate(const nlohmann::json& value, std::string* note) {
  note->clear();
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_array()) {
    Fail("tokenizer_config.json: chat_template is neither a string nor a list of "
         "{\"name\", \"template\"} objects");
  }
  std::string chosen, others;
  bool found = false;
  for (const nlohmann::json& entry : value) {
    if (!entry.is_object() || !entry.contains("name") || !entry.contains("template") ||
        !entry["name"].is_string() || !entry["template"].is_string()) {
      Fail("tokenizer_config.json: a chat_template list entry is not a {\"name\", \"template\"} "
           "object of strings");
    }
    const std::string name = entry["name"].get<std::string>();
    if (name == "default" && !found) {
      chosen = entry["template"].get<std::string>();
      found = true;
    } else {
      others += (others.empty() ? "" : ", ") + ("'" + name + "'");
    }
  }
  if (!found) {
    Fail("tokenizer_config.json: chat_template lists named templates (", others,
         ") but none is named 'default', the one transformers renders");
  }
  *note = "chat_template: stored the template named 'default'" +
          (others.empty() ? std::string() : " (left out: " + others + ")");
  return chosen;
}

}  // namespace convert
}  // namespace octet
