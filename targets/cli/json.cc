#include "cli/json.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "cli/args.h"
#include "core/json_writer.h"
#include "core/utf8.h"

namespace octet {
namespace cli {
namespace {

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
    char bytes[kMaxUtf8Bytes];
    out->append(bytes, Utf8Encode(cp, bytes));
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
  // Two passes of the writer: the size, then the text.
  JsonWriter count(nullptr, 0, indent);
  WriteTo(&count);
  std::string out(count.size(), '\0');
  JsonWriter writer(&out[0], out.size(), indent);
  WriteTo(&writer);
  return out;
}

void JsonValue::WriteTo(JsonWriter* w) const {
  switch (kind_) {
    case Kind::kNull:
      return w->Null();
    case Kind::kBool:
      return w->Bool(bool_);
    case Kind::kInt:
      return w->Int(int_);
    case Kind::kUint:
      return w->Uint(uint_);
    case Kind::kDouble:
      return single_ ? w->Float(static_cast<float>(double_)) : w->Double(double_);
    case Kind::kString:
      return w->String(string_.data(), string_.size());
    case Kind::kArray: {
      // Arrays of scalars (shapes, small lists) stay on one line.
      bool flat = true;
      for (const JsonValue& item : items_) {
        flat = flat && item.kind_ != Kind::kArray && item.kind_ != Kind::kObject;
      }
      w->BeginArray(flat);
      for (const JsonValue& item : items_) item.WriteTo(w);
      return w->EndArray();
    }
    case Kind::kObject:
      w->BeginObject();
      for (const auto& member : members_) {
        w->Key(member.first.data(), member.first.size());
        member.second.WriteTo(w);
      }
      return w->EndObject();
  }
}

std::string JsonQuote(const std::string& text) { return JsonValue(text).Serialize(0); }

std::string JsonNumber(double value) {
  char text[32];
  JsonWriter::FormatDouble(value, text);
  return text;
}

std::string JsonNumber(float value) {
  char text[32];
  JsonWriter::FormatFloat(value, text);
  return text;
}

}  // namespace cli
}  // namespace octet
