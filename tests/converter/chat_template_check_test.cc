// The converter's chat-template check: the real templates pass, a construct
// outside the subset is refused with its line, and the named-template list
// form of tokenizer_config.json picks "default".
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "import/error.h"
#include "tokenize/chat_template_check.h"

namespace octet {
namespace convert {
namespace {

std::string ReadTemplate(const std::string& name) {
  std::ifstream in(std::string(OCTET_SOURCE_DIR) + "/tests/text/chat_templates/" + name + ".jinja",
                   std::ios::binary);
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string ErrorOf(const std::string& source) {
  try {
    CheckChatTemplate(source);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("the real chat templates pass the converter's check") {
  for (const char* name : {"llama3", "llama3_1", "llama3_2", "qwen2_5", "qwen3", "gemma", "gemma2",
                           "gemma3", "mistral_v0_1", "mistral_v0_2", "mistral_nemo", "phi3_mini",
                           "phi3_5_mini"}) {
    INFO(name);
    CHECK_NOTHROW(CheckChatTemplate(ReadTemplate(name)));
  }
}

TEST_CASE("an unsupported construct is refused with its line") {
  CHECK(ErrorOf("{{ bos_token }}\n{% include 'other' %}") ==
        "chat_template: '{% include %}' at line 2 is not supported");
  CHECK(ErrorOf("line 1\nline 2\n{{ messages | wordcount }}") ==
        "chat_template: the filter 'wordcount' at line 3 is not supported");
  CHECK(ErrorOf("{% extends 'x' %}") == "chat_template: '{% extends %}' at line 1 is not supported");
  CHECK(ErrorOf("{% if x %}").find("chat_template: syntax error at line 1") == 0);
}

TEST_CASE("a list of named templates stores 'default' and says so") {
  std::string note;
  const nlohmann::json list = nlohmann::json::parse(
      R"([{"name": "default", "template": "{{ 'd' }}"}, {"name": "tool_use", "template": "t"},
          {"name": "rag", "template": "r"}])");
  CHECK(SelectChatTemplate(list, &note) == "{{ 'd' }}");
  CHECK(note == "chat_template: stored the template named 'default' (left out: 'tool_use', 'rag')");
  CHECK(SelectChatTemplate(nlohmann::json("{{ x }}"), &note) == "{{ x }}");
  CHECK(note.empty());
  CHECK_THROWS_AS(SelectChatTemplate(nlohmann::json::parse(R"([{"name": "rag", "template": "r"}])"),
                                     &note),
                  Error);
  CHECK_THROWS_AS(SelectChatTemplate(nlohmann::json(5), &note), Error);
  CHECK_THROWS_AS(SelectChatTemplate(nlohmann::json::parse(R"([{"name": "default"}])"), &note),
                  Error);
}

}  // namespace
}  // namespace convert
}  // namespace octet
