#include "cli/chat_messages.h"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string_view>
#include <utility>

#include "cli/args.h"
#include "core/utf8.h"

namespace octet {
namespace cli {
namespace {

// A strict reader for the one shape a messages file has.
class MessagesReader {
 public:
  MessagesReader(const std::string& text, const std::string& what) : s_(text), what_(what) {}

  std::vector<ChatTurn> Read() {
    std::vector<ChatTurn> turns;
    Skip();
    Expect('[');
    Skip();
    if (Peek() == ']') {
      ++pos_;
    } else {
      for (;;) {
        turns.push_back(ReadTurn());
        Skip();
        if (Peek() == ',') {
          ++pos_;
          continue;
        }
        Expect(']');
        break;
      }
    }
    Skip();
    if (pos_ != s_.size()) Fail("trailing characters after the list");
    return turns;
  }

 private:
  [[noreturn]] void Fail(const std::string& why) const {
    throw Failure(what_ + ": " + why + " at byte " + std::to_string(pos_) +
                  " (expected a JSON list of {\"role\", \"content\"} objects)");
  }
  char Peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void Skip() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  void Expect(char c) {
    if (Peek() != c) Fail(std::string("expected '") + c + "'");
    ++pos_;
  }

  ChatTurn ReadTurn() {
    ChatTurn turn;
    bool has_role = false, has_content = false;
    Skip();
    Expect('{');
    Skip();
    if (Peek() == '}') Fail("a message without role and content");
    for (;;) {
      Skip();
      const std::string key = ReadString();
      Skip();
      Expect(':');
      Skip();
      if (Peek() != '"') Fail("the value of \"" + key + "\" is not a string");
      std::string value = ReadString();
      if (key == "role") {
        turn.role = std::move(value);
        has_role = true;
      } else if (key == "content") {
        turn.content = std::move(value);
        has_content = true;
      } else {
        Fail("unsupported message key \"" + key + "\"");
      }
      Skip();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      Expect('}');
      break;
    }
    if (!has_role || !has_content) Fail("a message needs both \"role\" and \"content\"");
    return turn;
  }

  static void AppendUtf8(uint32_t cp, std::string* out) {
    char bytes[kMaxUtf8Bytes];
    out->append(bytes, Utf8Encode(cp, bytes));
  }

  uint32_t ReadHex4() {
    if (pos_ + 4 > s_.size()) Fail("a truncated \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        Fail("a bad \\u escape");
      }
    }
    return v;
  }

  std::string ReadString() {
    Expect('"');
    std::string out;
    for (;;) {
      if (pos_ >= s_.size()) Fail("an unterminated string");
      const char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) Fail("a control character in a string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) Fail("an unterminated string");
      const char e = s_[pos_++];
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          uint32_t cp = ReadHex4();
          if (cp >= 0xD800 && cp <= 0xDBFF && pos_ + 1 < s_.size() && s_[pos_] == '\\' &&
              s_[pos_ + 1] == 'u') {
            const size_t save = pos_;
            pos_ += 2;
            const uint32_t low = ReadHex4();
            if (low >= 0xDC00 && low <= 0xDFFF) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            } else {
              pos_ = save;
            }
          }
          if (cp >= 0xD800 && cp <= 0xDFFF) Fail("a lone surrogate escape");
          AppendUtf8(cp, &out);
          break;
        }
        default:
          Fail("a bad escape");
      }
    }
  }

  const std::string& s_;
  const std::string& what_;
  size_t pos_ = 0;
};

}  // namespace

std::vector<ChatTurn> ParseChatMessages(const std::string& json, const std::string& what) {
  return MessagesReader(json, what).Read();
}

std::vector<ChatTurn> ReadChatMessages(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Failure("cannot read messages file '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  return ParseChatMessages(text.str(), path);
}

}  // namespace cli
}  // namespace octet
