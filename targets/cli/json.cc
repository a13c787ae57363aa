#include "cli/json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "cli/args.h"
#include "text/utf8.h"

namespace octet {
namespace cli {
namespace {

// Length of the well-formed UTF-8 sequence starting at text[i] (a byte >= 0x80),
// or 0 when it is malformed (overlong forms, surrogates, > U+10FFFF, truncated).
size_t Utf8SequenceLength(const std::string& text, size_t i) {
  const text::Utf8Char c = text::Utf8DecodeAt(text.data(), text.size(), i, text::Utf8Form::kStrict);
  return c.valid ? c.length : 0;
}

// A recursive-descent reader of RFC 8259 text into JsonValue trees.
class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  JsonValue Document() {
    SkipSpace();
    JsonValue value = Value(0);
    SkipSpace();
    if (pos_ != text_.size()) Error("text after the value");
    return value;
  }

 private:
  static constexpr int kMaxDepth = 256;

  [[noreturn]] void Error(const std::string& what) const {
    throw Failure("invalid JSON at byte " + std::to_string(pos_) + ": " + what);
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  void SkipSpace() {
    while (!AtEnd() && (Peek() == ' ' || Peek() == '\t' || Peek() == '\n' || Peek() == '\r')) {
      ++pos_;
    }
  }
  void Expect(char c) {
    if (Peek() != c || AtEnd()) Error(std::string("expected '") + c + "'");
    ++pos_;
  }
  void Literal(const char* word) {
    for (const char* w = word; *w != '\0'; ++w, ++pos_) {
      if (Peek() != *w || AtEnd()) Error(std::string("expected ") + word);
    }
  }

  JsonValue Value(int depth) {
    if (AtEnd()) Error("unexpected end of text");
    switch (Peek()) {
      case '{':
        return ObjectValue(depth);
      case '[':
        return ArrayValue(depth);
      case '"':
        return JsonValue(StringValue());
      case 't':
        Literal("true");
        return JsonValue(true);
      case 'f':
        Literal("false");
        return JsonValue(false);
      case 'n':
        Literal("null");
        return JsonValue();
      default:
        return NumberValue();
    }
  }

  JsonValue ObjectValue(int depth) {
    if (depth >= kMaxDepth) Error("nested too deep");
    ++pos_;  // '{'
    JsonValue object = JsonValue::Object();
    SkipSpace();
    if (Peek() == '}') {
      ++pos_;
      return object;
    }
    for (;;) {
      SkipSpace();
      if (Peek() != '"') Error("expected a member name");
      const std::string key = StringValue();
      SkipSpace();
      Expect(':');
      SkipSpace();
      object.Set(key, Value(depth + 1));
      SkipSpace();
      if (Peek() == ',' && !AtEnd()) {
        ++pos_;
        continue;
      }
      Expect('}');
      return object;
    }
  }

  JsonValue ArrayValue(int depth) {
    if (depth >= kMaxDepth) Error("nested too deep");
    ++pos_;  // '['
    JsonValue array = JsonValue::Array();
    SkipSpace();
    if (Peek() == ']') {
      ++pos_;
      return array;
    }
    for (;;) {
      SkipSpace();
      array.Append(Value(depth + 1));
      SkipSpace();
      if (Peek() == ',' && !AtEnd()) {
        ++pos_;
        continue;
      }
      Expect(']');
      return array;
    }
  }

  uint32_t Hex4() {
    if (pos_ + 4 > text_.size()) Error("a \\u escape needs four hex digits");
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i, ++pos_) {
      const char c = text_[pos_];
      value <<= 4;
      if (c >= '0' && c <= '9') {
        value |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        value |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        value |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        Error("a \\u escape needs four hex digits");
      }
    }
    return value;
  }

  static void AppendUtf8(uint32_t cp, std::string* out) {
    char bytes[text::kMaxUtf8Bytes];
    out->append(bytes, text::Utf8Encode(cp, bytes));
  }

  // A string literal (at its opening quote); escapes decoded, a lone
  // surrogate becomes U+FFFD.
  std::string StringValue() {
    ++pos_;  // '"'
    std::string out;
    for (;;) {
      if (AtEnd()) Error("unterminated string");
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c < 0x20) Error("a control character in a string");
      if (c != '\\') {
        out.push_back(static_cast<char>(c));
        ++pos_;
        continue;
      }
      ++pos_;
      if (AtEnd()) Error("unterminated string");
      const char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out.push_back(e);
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u': {
          uint32_t cp = Hex4();
          if (cp >= 0xd800 && cp <= 0xdbff && text_.compare(pos_, 2, "\\u") == 0) {
            const size_t at = pos_;
            pos_ += 2;
            const uint32_t low = Hex4();
            if (low >= 0xdc00 && low <= 0xdfff) {
              cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
            } else {
              pos_ = at;  // not a pair: the second escape stands alone
            }
          }
          if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
          AppendUtf8(cp, &out);
          break;
        }
        default:
          --pos_;
          Error(std::string("unknown escape '\\") + e + "'");
      }
    }
  }

  JsonValue NumberValue() {
    const size_t start = pos_;
    const auto digits = [this]() {
      const size_t from = pos_;
      while (!AtEnd() && Peek() >= '0' && Peek() <= '9') ++pos_;
      return pos_ - from;
    };
    const bool negative = Peek() == '-';
    if (negative) ++pos_;
    if (Peek() == '0' && !AtEnd()) {
      ++pos_;
    } else if (digits() == 0) {
      pos_ = start;
      Error("expected a value");
    }
    bool integer = true;
    if (Peek() == '.' && !AtEnd()) {
      ++pos_;
      integer = false;
      if (digits() == 0) Error("expected digits after '.'");
    }
    if ((Peek() == 'e' || Peek() == 'E') && !AtEnd()) {
      ++pos_;
      integer = false;
      if (Peek() == '+' || Peek() == '-') ++pos_;
      if (digits() == 0) Error("expected digits in the exponent");
    }
    const std::string number = text_.substr(start, pos_ - start);
    if (integer && number != "-0") {  // -0 stays a double: it prints back as -0
      errno = 0;
      if (negative) {
        const long long value = std::strtoll(number.c_str(), nullptr, 10);
        if (errno == 0) return JsonValue(static_cast<int64_t>(value));
      } else {
        const unsigned long long value = std::strtoull(number.c_str(), nullptr, 10);
        if (errno == 0) return JsonValue(static_cast<uint64_t>(value));
      }
    }
    return JsonValue(std::strtod(number.c_str(), nullptr));
  }

  const std::string& text_;
  size_t pos_ = 0;
};

}  // namespace

JsonValue JsonValue::Parse(const std::string& text) { return Parser(text).Document(); }

JsonValue& JsonValue::Append(JsonValue value) {
  items_.push_back(std::move(value));
  return items_.back();
}

JsonValue& JsonValue::Set(const std::string& key, JsonValue value) {
  for (auto& member : members_) {
    if (member.first == key) {
      member.second = std::move(value);
      return member.second;
    }
  }
  members_.emplace_back(key, std::move(value));
  return members_.back().second;
}

const JsonValue* JsonValue::Find(const std::string& key) const {
  for (const auto& member : members_) {
    if (member.first == key) return &member.second;
  }
  return nullptr;
}

std::string JsonValue::ToText() const {
  switch (kind_) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return bool_ ? "true" : "false";
    case Kind::kInt:
      return std::to_string(int_);
    case Kind::kUint:
      return std::to_string(uint_);
    case Kind::kDouble:
      return single_ ? JsonNumber(static_cast<float>(double_)) : JsonNumber(double_);
    case Kind::kString:
      return string_;
    case Kind::kArray:
    case Kind::kObject:
      return Serialize(0);
  }
  return "null";
}

double JsonValue::AsDouble() const {
  switch (kind_) {
    case Kind::kInt:
      return static_cast<double>(int_);
    case Kind::kUint:
      return static_cast<double>(uint_);
    case Kind::kDouble:
      return double_;
    default:
      return 0.0;
  }
}

uint64_t JsonValue::AsUint() const {
  switch (kind_) {
    case Kind::kInt:
      return int_ > 0 ? static_cast<uint64_t>(int_) : 0;
    case Kind::kUint:
      return uint_;
    case Kind::kDouble:
      return double_ > 0 && double_ < 1.8e19 ? static_cast<uint64_t>(double_) : 0;
    default:
      return 0;
  }
}

std::string JsonValue::Serialize(int indent) const {
  std::string out;
  SerializeTo(&out, indent, 0);
  return out;
}

void JsonValue::SerializeTo(std::string* out, int indent, int depth) const {
  const auto newline = [&](int level) {
    if (indent <= 0) return;
    out->push_back('\n');
    out->append(static_cast<size_t>(indent * level), ' ');
  };
  switch (kind_) {
    case Kind::kString:
      out->append(JsonQuote(string_));
      return;
    case Kind::kArray: {
      if (items_.empty()) {
        out->append("[]");
        return;
      }
      // Arrays of scalars (shapes, small lists) stay on one line.
      bool flat = true;
      for (const JsonValue& item : items_) {
        flat = flat && item.kind_ != Kind::kArray && item.kind_ != Kind::kObject;
      }
      out->push_back('[');
      for (size_t i = 0; i < items_.size(); ++i) {
        if (i > 0) out->append(flat && indent > 0 ? ", " : ",");
        if (!flat) newline(depth + 1);
        items_[i].SerializeTo(out, indent, depth + 1);
      }
      if (!flat) newline(depth);
      out->push_back(']');
      return;
    }
    case Kind::kObject: {
      if (members_.empty()) {
        out->append("{}");
        return;
      }
      out->push_back('{');
      for (size_t i = 0; i < members_.size(); ++i) {
        if (i > 0) out->push_back(',');
        newline(depth + 1);
        out->append(JsonQuote(members_[i].first));
        out->append(indent > 0 ? ": " : ":");
        members_[i].second.SerializeTo(out, indent, depth + 1);
      }
      newline(depth);
      out->push_back('}');
      return;
    }
    default:
      out->append(ToText());
      return;
  }
}

std::string JsonQuote(const std::string& text) {
  std::string out = "\"";
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\b':
        out.append("\\b");
        break;
      case '\f':
        out.append("\\f");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          out.append(escaped);
        } else if (c < 0x80) {
          out.push_back(static_cast<char>(c));
        } else {
          // Names come from model files: pass valid UTF-8 through, replace the rest.
          const size_t length = Utf8SequenceLength(text, i);
          if (length == 0) {
            out.append("\\ufffd");
            ++i;
            continue;
          }
          out.append(text, i, length);
          i += length;
          continue;
        }
    }
    ++i;
  }
  out.push_back('"');
  return out;
}

std::string JsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  char buffer[32];
  if (value == std::trunc(value) && std::fabs(value) < 1e15) {  // 10000, not 1e+04
    std::snprintf(buffer, sizeof(buffer), "%.0f", value);
    return buffer;
  }
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  return buffer;
}

std::string JsonNumber(float value) {
  if (!std::isfinite(value)) return "null";
  char buffer[32];
  if (value == std::trunc(value) && std::fabs(value) < 1e15f) {
    std::snprintf(buffer, sizeof(buffer), "%.0f", static_cast<double>(value));
    return buffer;
  }
  for (int precision = 1; precision <= 9; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, static_cast<double>(value));
    if (std::strtof(buffer, nullptr) == value) break;
  }
  return buffer;
}

}  // namespace cli
}  // namespace octet
