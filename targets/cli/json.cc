#include "cli/json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace octet {
namespace cli {
namespace {

// Length of the well-formed UTF-8 sequence starting at text[i] (a byte >= 0x80),
// or 0 when it is malformed (overlong forms, surrogates, > U+10FFFF, truncated).
size_t Utf8SequenceLength(const std::string& text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  size_t length = 0;
  unsigned char min_second = 0x80;
  unsigned char max_second = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) min_second = 0xa0;  // overlong
    if (lead == 0xed) max_second = 0x9f;  // surrogates
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) min_second = 0x90;  // overlong
    if (lead == 0xf4) max_second = 0x8f;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < min_second || byte(i + 1) > max_second) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return 0;
  }
  return length;
}

}  // namespace

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
