// Chat templates against jinja2: every real template (tests/text/chat_templates)
// for every message list, and one case per construct (goldens/units.golden),
// byte for byte, goldens made by gen_chat_goldens.py. Then what jinja2 cannot
// check: refusals at parse time, limits, no heap use while rendering, and
// malformed templates that must fail cleanly.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "chat_render.h"
#include "common/alloc_counter.h"
#include "text/chat_template.h"

namespace octet {
namespace {

using text::ChatMessage;
using text::ChatRenderInput;
using text::ChatTemplate;

const std::string kDir = std::string(OCTET_CHAT_GOLDENS_DIR) + "/chat_templates/";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The goldens' strftime_now time: 2024-07-26 10:30:00 (a Friday, day 208).
std::tm GoldenNow() {
  std::tm now{};
  now.tm_year = 2024 - 1900;
  now.tm_mon = 6;
  now.tm_mday = 26;
  now.tm_hour = 10;
  now.tm_min = 30;
  now.tm_wday = 5;
  now.tm_yday = 207;
  return now;
}

struct RenderResult {
  Status status;
  std::string text;
};

// Renders with fixed buffers (the caller-owned memory a device would use).
struct Renderer {
  std::vector<char> scratch = std::vector<char>(4 << 20);
  std::vector<char> out = std::vector<char>(1 << 20);
  std::tm now = GoldenNow();

  RenderResult Run(const ChatTemplate& tmpl, const std::vector<cli::ChatTurn>& turns, bool gen,
                   const char* bos, const char* eos) {
    std::vector<ChatMessage> messages;
    for (const auto& t : turns) messages.push_back({t.role, t.content});
    ChatRenderInput input;
    input.messages = messages.data();
    input.num_messages = messages.size();
    input.add_generation_prompt = gen;
    if (bos != nullptr) input.bos_token = {true, bos};
    if (eos != nullptr) input.eos_token = {true, eos};
    input.now = &now;
    size_t size = 0;
    RenderResult r;
    r.status = tmpl.Render(input, scratch.data(), scratch.size(), out.data(), out.size(), &size);
    r.text.assign(out.data(), size);
    return r;
  }
};

ChatTemplate MustParse(const std::string& source) {
  Result<ChatTemplate> parsed = ChatTemplate::Parse(source);
  REQUIRE_MESSAGE(parsed.ok(), parsed.status().message());
  return std::move(parsed).value();
}

// Reads "<header fields> <n>\n<n bytes>\n" records.
class GoldenReader {
 public:
  explicit GoldenReader(std::string data) : data_(std::move(data)) {}
  bool NextLine(std::string* line) {
    if (pos_ >= data_.size()) return false;
    const size_t nl = data_.find('\n', pos_);
    REQUIRE(nl != std::string::npos);
    *line = data_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    return true;
  }
  std::string Take(size_t n) {
    REQUIRE(pos_ + n + 1 <= data_.size());
    std::string s = data_.substr(pos_, n);
    REQUIRE(data_[pos_ + n] == '\n');
    pos_ += n + 1;
    return s;
  }

 private:
  std::string data_;
  size_t pos_ = 0;
};

std::vector<std::string> Fields(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  std::string f;
  while (in >> f) out.push_back(f);
  return out;
}

const char* const kTemplates[] = {"llama3",       "llama3_1",     "llama3_2",  "qwen2_5",
                                  "qwen3",        "gemma",        "gemma2",    "gemma3",
                                  "mistral_v0_1", "mistral_v0_2", "mistral_nemo", "phi3_mini",
                                  "phi3_5_mini"};

TEST_CASE("real chat templates render byte for byte as jinja2 does") {
  Renderer renderer;
  size_t cases = 0, errors = 0;
  for (const char* name : kTemplates) {
    const ChatTemplate tmpl = MustParse(ReadFile(kDir + name + ".jinja"));
    GoldenReader golden(ReadFile(kDir + "goldens/" + name + ".golden"));
    std::string line, bos, eos;
    bool has_bos = false, has_eos = false;
    while (golden.NextLine(&line)) {
      if (line.empty() || line[0] == '#') continue;
      if (line.rfind("bos ", 0) == 0 || line.rfind("eos ", 0) == 0) {
        const bool present = line[4] == '=';
        (line[0] == 'b' ? has_bos : has_eos) = present;
        (line[0] == 'b' ? bos : eos) = present ? line.substr(5) : "";
        continue;
      }
      const std::vector<std::string> f = Fields(line);
      REQUIRE(f.size() == 5);
      const std::string expected = golden.Take(std::stoul(f[4]));
      const auto turns = cli::ReadChatMessages(kDir + "messages/" + f[1] + ".json");
      const RenderResult r = renderer.Run(tmpl, turns, f[2] == "1", has_bos ? bos.c_str() : nullptr,
                                          has_eos ? eos.c_str() : nullptr);
      INFO(name << " x " << f[1] << " add_generation_prompt=" << f[2] << " (" << f[3] << ")");
      ++cases;
      if (f[3] == "ok") {
        REQUIRE_MESSAGE(r.status.ok(), r.status.message());
        CHECK(r.text == expected);
      } else {
        ++errors;
        CHECK(!r.status.ok());
        CHECK(r.status.code() == StatusCode::kInvalidArgument);
        if (f[3] == "raise") CHECK(std::string(r.status.message()) == expected);
      }
    }
  }
  // 13 templates x 13 message lists x 2; some of them are jinja2 errors.
  CHECK(cases == 13 * 13 * 2);
  CHECK(errors > 0);
  CHECK(errors < cases / 2);
}

TEST_CASE("every construct renders as jinja2 renders it") {
  Renderer renderer;
  const auto turns = cli::ReadChatMessages(kDir + "messages/basic.json");
  GoldenReader golden(ReadFile(kDir + "goldens/units.golden"));
  std::string line;
  size_t cases = 0;
  while (golden.NextLine(&line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> f = Fields(line);
    REQUIRE(f.size() == 5);
    const std::string source = golden.Take(std::stoul(f[3]));
    const std::string expected = golden.Take(std::stoul(f[4]));
    INFO("unit " << f[1] << ": " << source);
    ++cases;
    const ChatTemplate tmpl = MustParse(source);
    const RenderResult r = renderer.Run(tmpl, turns, true, "<s>", "</s>");
    if (f[2] == "ok") {
      REQUIRE_MESSAGE(r.status.ok(), r.status.message());
      CHECK(r.text == expected);
    } else {
      INFO("jinja2: " << expected);
      CHECK(!r.status.ok());
      CHECK(r.status.code() == StatusCode::kInvalidArgument);
      if (f[2] == "raise") CHECK(std::string(r.status.message()) == expected);
    }
  }
  CHECK(cases >= 90);
}

TEST_CASE("constructs outside the subset are refused at parse time with their line") {
  struct Case {
    const char* source;
    const char* needle;
  };
  const Case cases[] = {
      {"a\n{% include 'x.jinja' %}", "'{% include %}' at line 2"},
      {"{% extends 'base' %}", "'{% extends %}' at line 1"},
      {"{% import 'm' as m %}", "'{% import %}'"},
      {"{% from 'm' import x %}", "'{% from %}'"},
      {"{% block b %}{% endblock %}", "'{% block %}'"},
      {"{% macro m() %}{% endmacro %}\n\n{% call m() %}x{% endcall %}", "'{% call %}' at line 3"},
      {"{% filter upper %}x{% endfilter %}", "'{% filter %}'"},
      {"{% raw %}{{ x }}{% endraw %}", "'{% raw %}'"},
      {"{% with a = 1 %}{{ a }}{% endwith %}", "'{% with %}'"},
      {"{% do x.append(1) %}", "'{% do %}'"},
      {"{% frobnicate %}", "the tag 'frobnicate' at line 1"},
      {"{{ x | wordcount }}", "the filter 'wordcount' at line 1"},
      {"\n\n{{ x|dictsort }}", "the filter 'dictsort' at line 3"},
      {"{% if x is callable %}{% endif %}", "the test 'callable'"},
      {"{{ 'a{}'.format(1) }}", "the method 'format'"},
      {"{% for x in y %}{{ loop.cycle('a', 'b') }}{% endfor %}", "the method 'cycle'"},
      {"{% for x in y recursive %}{% endfor %}", "a recursive for loop"},
      {"{{ f(*args) }}", "'*args' or '**kwargs'"},
      {"{{ lipsum() }}", "the function 'lipsum'"},
      {"{{ x[1, 2] }}", "a tuple subscript"},
      {"{{ 0x1F }}", "hexadecimal"},
      {"{{ 99999999999999999999 }}", "beyond 64 bits"},
      {"{% set x | upper %}a{% endset %}", "a filtered block set"},
  };
  for (const Case& c : cases) {
    INFO(c.source);
    Result<ChatTemplate> parsed = ChatTemplate::Parse(c.source);
    REQUIRE(!parsed.ok());
    CHECK(parsed.status().code() == StatusCode::kUnsupported);
    CHECK(std::string(parsed.status().message()).find(c.needle) != std::string::npos);
    CHECK(std::string(parsed.status().message()).find("is not supported") != std::string::npos);
  }
}

TEST_CASE("syntax errors are clear statuses") {
  const char* const cases[] = {
      "{% if x %}", "{% for x in y %}", "{% endif %}", "{{ x ", "{{ 'abc }}", "{# never closed",
      "{{ (1, 2 }}", "{{ ] }}", "{% if %}{% endif %}", "{{ x | }}", "{% break %}",
      "{% macro m( %}{% endmacro %}", "{{ a b }}", "{% set = 1 %}", "{{ x.1.2 }}", "{{ @ }}",
      "{% for x in y %}{% else %}{% else %}{% endfor %}", "{{ 'a' is }}", "{{ '\\x4' }}",
  };
  for (const char* source : cases) {
    INFO(source);
    Result<ChatTemplate> parsed = ChatTemplate::Parse(source);
    CHECK(!parsed.ok());
    if (!parsed.ok()) CHECK(parsed.status().code() != StatusCode::kInternal);
  }
}

TEST_CASE("renders are bounded: nesting, loops, recursion, output and scratch") {
  Renderer renderer;
  const auto turns = cli::ReadChatMessages(kDir + "messages/basic.json");

  // Nesting beyond the parser's depth is refused, not a stack overflow.
  std::string deep = "{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}";
  Result<ChatTemplate> parsed = ChatTemplate::Parse(deep);
  CHECK(!parsed.ok());
  std::string deep_ifs;
  for (int k = 0; k < 500; ++k) deep_ifs += "{% if true %}";
  for (int k = 0; k < 500; ++k) deep_ifs += "{% endif %}";
  CHECK(!ChatTemplate::Parse(deep_ifs).ok());
  std::string deep_not = "{{ " ;
  for (int k = 0; k < 5000; ++k) deep_not += "not ";
  CHECK(!ChatTemplate::Parse(deep_not + "x }}").ok());

  // Work is bounded by the step limit: 25M iterations stop with a status.
  {
    const ChatTemplate t = MustParse(
        "{% for i in range(5000) %}{% for j in range(5000) %}{% set x = [j, i] %}{% endfor %}{% endfor %}");
    const RenderResult r = renderer.Run(t, turns, true, nullptr, nullptr);
    CHECK(!r.status.ok());
    INFO(std::string(r.status.message()));
    CHECK(std::string(r.status.message()).find("step limit") != std::string::npos);
  }
  // Unbounded macro recursion stops at the call depth.
  {
    const ChatTemplate t = MustParse("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
    const RenderResult r = renderer.Run(t, turns, true, nullptr, nullptr);
    CHECK(!r.status.ok());
    CHECK(std::string(r.status.message()).find("nested too deeply") != std::string::npos);
  }
  // A huge string runs out of scratch with a status.
  {
    const ChatTemplate t = MustParse("{{ 'abcdefgh' * 1000000000 }}");
    const RenderResult r = renderer.Run(t, turns, true, nullptr, nullptr);
    CHECK(r.status.code() == StatusCode::kOutOfMemory);
  }
  // Too small an output buffer or scratch arena: kOutOfMemory, never a write past the end.
  {
    const ChatTemplate t = MustParse(ReadFile(kDir + "qwen2_5.jinja"));
    std::vector<ChatMessage> messages;
    for (const auto& m : turns) messages.push_back({m.role, m.content});
    ChatRenderInput input;
    input.messages = messages.data();
    input.num_messages = messages.size();
    std::vector<char> scratch(1 << 20);
    size_t full = 0;
    std::vector<char> out(1 << 16);
    REQUIRE(t.Render(input, scratch.data(), scratch.size(), out.data(), out.size(), &full).ok());
    for (size_t cap = 0; cap < full; cap += 7) {
      std::vector<char> small(cap + 1, '#');
      size_t written = 0;
      const Status s = t.Render(input, scratch.data(), scratch.size(), small.data(), cap, &written);
      CHECK(s.code() == StatusCode::kOutOfMemory);
      CHECK(written <= cap);
      CHECK(small[cap] == '#');
    }
    size_t needed = 0;
    for (size_t cap = 0; cap <= scratch.size(); cap = cap * 2 + 64) {
      size_t written = 0;
      const Status s = t.Render(input, scratch.data(), cap, out.data(), out.size(), &written);
      if (s.ok()) {
        needed = cap;
        CHECK(written == full);
        break;
      }
      CHECK(s.code() == StatusCode::kOutOfMemory);
    }
    CHECK(needed > 0);
    CHECK(t.Render(input, nullptr, 0, out.data(), out.size(), &full).code() ==
          StatusCode::kOutOfMemory);
  }
}

TEST_CASE("rendering allocates nothing on the heap") {
  REQUIRE(HeapAllocationCounterActive());
  const auto turns = cli::ReadChatMessages(kDir + "messages/tricky.json");
  std::vector<ChatMessage> messages;
  for (const auto& m : turns) messages.push_back({m.role, m.content});
  std::vector<char> scratch(1 << 20), out(1 << 16);
  std::tm now = GoldenNow();
  for (const char* name : kTemplates) {
    const ChatTemplate t = MustParse(ReadFile(kDir + name + ".jinja"));
    ChatRenderInput input;
    input.messages = messages.data();
    input.num_messages = messages.size();
    input.bos_token = {true, "<s>"};
    input.eos_token = {true, "</s>"};
    input.now = &now;
    size_t written = 0;
    const uint64_t before = HeapAllocationCount();
    const Status s = t.Render(input, scratch.data(), scratch.size(), out.data(), out.size(), &written);
    const uint64_t allocations = HeapAllocationCount() - before;
    INFO(name << ": " << s.message());
    CHECK(allocations == 0);
  }
}

// Deterministic mutations of the real templates (byte flips, cuts, splices of
// Jinja punctuation): each must parse or fail, and render or fail, cleanly.
TEST_CASE("mutated and truncated templates fail cleanly") {
  Renderer renderer;
  renderer.scratch.resize(1 << 18);
  renderer.out.resize(1 << 14);
  const auto turns = cli::ReadChatMessages(kDir + "messages/unicode.json");
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  static const char* const kPieces[] = {"{{", "}}", "{%", "%}", "{#", "#}", "-", "(", ")",
                                        "[", "]", "'", "\"", "|", ".", "\\", "\xff", "\xe4\xbd",
                                        " if ", " for ", "endfor", "endif", "loop", "ns."};
  size_t parsed = 0, rendered = 0;
  for (const char* name : kTemplates) {
    const std::string source = ReadFile(kDir + name + ".jinja");
    for (size_t cut = 0; cut <= source.size(); cut += 13) {
      Result<ChatTemplate> t = ChatTemplate::Parse(source.substr(0, cut));
      if (t.ok()) {
        ++parsed;
        rendered += renderer.Run(t.value(), turns, true, "<s>", "</s>").status.ok();
      }
    }
    for (int round = 0; round < 150; ++round) {
      std::string m = source;
      const int edits = 1 + static_cast<int>(next() % 4);
      for (int e = 0; e < edits && !m.empty(); ++e) {
        const size_t at = next() % m.size();
        switch (next() % 3) {
          case 0: m[at] = static_cast<char>(next() & 0xFF); break;
          case 1: m.erase(at, 1 + next() % 8); break;
          default: m.insert(at, kPieces[next() % (sizeof(kPieces) / sizeof(kPieces[0]))]); break;
        }
      }
      Result<ChatTemplate> t = ChatTemplate::Parse(m);
      if (t.ok()) {
        ++parsed;
        rendered += renderer.Run(t.value(), turns, (round & 1) != 0, "<s>", "</s>").status.ok();
      }
    }
  }
  // Not a tautology: some mutants survive parsing and render.
  CHECK(parsed > 100);
  CHECK(rendered > 50);
}

TEST_CASE("the CLI helper grows its buffers and reads messages strictly") {
  cli::ChatTemplateOptions options;
  std::vector<cli::ChatTurn> turns(300, cli::ChatTurn{"user", std::string(5000, 'x')});
  const std::string text = cli::RenderChatTemplate(
      "{% for m in messages %}{{ m.content ~ m.content }}{% endfor %}", turns, options);
  CHECK(text.size() == 300u * 10000u);
  CHECK_THROWS(cli::ParseChatMessages("[{\"role\": \"user\"}]", "t"));
  CHECK_THROWS(cli::ParseChatMessages("[{\"role\": \"user\", \"content\": 5}]", "t"));
  CHECK_THROWS(cli::ParseChatMessages("{}", "t"));
  CHECK_THROWS(cli::ParseChatMessages("[{\"role\": \"a\", \"content\": \"b\", \"x\": \"c\"}]", "t"));
  const auto parsed = cli::ParseChatMessages(
      "[{\"content\": \"\\u00e9\\ud83d\\ude00\\n\", \"role\": \"user\"}]", "t");
  REQUIRE(parsed.size() == 1);
  CHECK(parsed[0].content == "\xc3\xa9\xf0\x9f\x98\x80\n");
  CHECK_THROWS(cli::RenderChatTemplate("{{ raise_exception('boom') }}", parsed, options));
}

}  // namespace
}  // namespace octet
