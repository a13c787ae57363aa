#include "core/json_writer.h"

#include <clocale>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/utf8.h"

namespace octet {
namespace {

// printf's decimal point is the locale's: an app may have set one with a
// comma. JSON's is '.', whatever the locale.
void UseDotDecimalPoint(char* text) {
  const char* point = std::localeconv()->decimal_point;
  if (point == nullptr || std::strcmp(point, ".") == 0 || point[0] == '\0') return;
  char* at = std::strstr(text, point);
  if (at == nullptr) return;
  const size_t n = std::strlen(point);
  *at = '.';
  std::memmove(at + 1, at + n, std::strlen(at + n) + 1);
}

}  // namespace

void JsonWriter::FormatFloat(float value, char (&text)[32]) {
  if (!std::isfinite(value)) {
    std::snprintf(text, sizeof(text), "null");
    return;
  }
  if (value == std::trunc(value) && std::fabs(value) < 1e15f) {
    std::snprintf(text, sizeof(text), "%.0f", static_cast<double>(value));
  } else {
    for (int precision = 1; precision <= 9; ++precision) {
      std::snprintf(text, sizeof(text), "%.*g", precision, static_cast<double>(value));
      if (std::strtof(text, nullptr) == value) break;
    }
  }
  UseDotDecimalPoint(text);
}

void JsonWriter::FormatDouble(double value, char (&text)[32]) {
  if (!std::isfinite(value)) {
    std::snprintf(text, sizeof(text), "null");
    return;
  }
  if (value == std::trunc(value) && std::fabs(value) < 1e15) {  // 10000, not 1e+04
    std::snprintf(text, sizeof(text), "%.0f", value);
  } else {
    for (int precision = 1; precision <= 17; ++precision) {
      std::snprintf(text, sizeof(text), "%.*g", precision, value);
      if (std::strtod(text, nullptr) == value) break;
    }
  }
  UseDotDecimalPoint(text);
}

JsonWriter& JsonWriter::Key(const char* key, size_t n) {
  if (depth_ == 0 || stack_[depth_ - 1].array) {
    ok_ = false;
    return *this;
  }
  Level& level = stack_[depth_ - 1];
  if (level.count++ > 0) Put(',');
  NewLine(depth_);
  Quote(key, n);
  Put(indent_ > 0 ? ": " : ":");
  return *this;
}

void JsonWriter::Uint(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "%llu", static_cast<unsigned long long>(value));
  Scalar(text);
}

void JsonWriter::Int(int64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "%lld", static_cast<long long>(value));
  Scalar(text);
}

void JsonWriter::Float(float value) {
  char text[32];
  FormatFloat(value, text);
  Scalar(text);
}

void JsonWriter::Double(double value) {
  char text[32];
  FormatDouble(value, text);
  Scalar(text);
}

void JsonWriter::String(const char* text, size_t n) {
  BeforeValue();
  Quote(text, n);
}

void JsonWriter::Put(const char* text, size_t n) {
  if (size_ < capacity_) {
    const size_t room = capacity_ - size_;
    std::memcpy(out_ + size_, text, n < room ? n : room);
  }
  size_ += n;
}

void JsonWriter::NewLine(size_t level) {
  if (indent_ <= 0) return;
  Put('\n');
  for (size_t i = 0; i < level * static_cast<size_t>(indent_); ++i) Put(' ');
}

void JsonWriter::BeforeValue() {
  if (depth_ == 0 || !stack_[depth_ - 1].array) return;
  Level& level = stack_[depth_ - 1];
  if (level.count++ > 0) Put(level.flat && indent_ > 0 ? ", " : ",");
  if (!level.flat) NewLine(depth_);
}

void JsonWriter::Open(char bracket, bool array, bool flat) {
  if (depth_ > 0 && stack_[depth_ - 1].array && stack_[depth_ - 1].flat) ok_ = false;
  BeforeValue();
  if (depth_ == kMaxDepth) {
    ok_ = false;
    return;
  }
  stack_[depth_++] = Level{array, flat, 0};
  Put(bracket);
}

void JsonWriter::Close(char bracket) {
  if (depth_ == 0) {
    ok_ = false;
    return;
  }
  const Level level = stack_[--depth_];
  if (level.count > 0 && !(level.array && level.flat)) NewLine(depth_);
  Put(bracket);
}

void JsonWriter::Quote(const char* text, size_t n) {
  Put('"');
  size_t i = 0;
  while (i < n) {
    const auto c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"':
        Put("\\\"");
        break;
      case '\\':
        Put("\\\\");
        break;
      case '\b':
        Put("\\b");
        break;
      case '\f':
        Put("\\f");
        break;
      case '\n':
        Put("\\n");
        break;
      case '\r':
        Put("\\r");
        break;
      case '\t':
        Put("\\t");
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          Put(escaped);
        } else if (c < 0x80) {
          Put(static_cast<char>(c));
        } else {
          const Utf8Char ch = Utf8DecodeAt(text, n, i, Utf8Form::kStrict);
          const size_t length = ch.valid ? ch.length : 0;
          if (length == 0) {
            Put("\\ufffd");
            ++i;
            continue;
          }
          Put(text + i, length);
          i += length;
          continue;
        }
    }
    ++i;
  }
  Put('"');
}

}  // namespace octet
