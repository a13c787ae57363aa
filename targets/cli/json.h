// A tiny JSON document for the CLI's --json output: build a tree of values (or
// Parse() one, e.g. octet_model_describe's), then Serialize() it with the
// runtime's writer (core/json_writer.h), so both write the same bytes. Objects
// keep their keys in insertion order, strings are escaped per RFC 8259
// (control characters as \u00XX), and non-finite numbers become null (JSON has
// no NaN or infinity).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace octet {
class JsonWriter;  // core/json_writer.h: the one writer, shared with the runtime

namespace cli {

class JsonValue {
 public:
  enum class Kind { kNull, kBool, kInt, kUint, kDouble, kString, kArray, kObject };

  JsonValue() = default;                                       // null
  JsonValue(bool value) : kind_(Kind::kBool), bool_(value) {}  // NOLINT: implicit on purpose
  template <typename T,
            std::enable_if_t<
                std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_signed_v<T>, int> = 0>
  JsonValue(T value) : kind_(Kind::kInt), int_(value) {}  // NOLINT
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                                             std::is_unsigned_v<T>,
                                         int> = 0>
  JsonValue(T value) : kind_(Kind::kUint), uint_(value) {}           // NOLINT
  JsonValue(double value) : kind_(Kind::kDouble), double_(value) {}  // NOLINT
  // Printed with the fewest digits that read back as the same float.
  JsonValue(float value) : kind_(Kind::kDouble), double_(value), single_(true) {}    // NOLINT
  JsonValue(const char* value) : kind_(Kind::kString), string_(value) {}             // NOLINT
  JsonValue(std::string value) : kind_(Kind::kString), string_(std::move(value)) {}  // NOLINT

  static JsonValue Array() { return JsonValue(Kind::kArray); }
  static JsonValue Object() { return JsonValue(Kind::kObject); }

  // One JSON value (RFC 8259) with optional whitespace around it; throws
  // Failure naming the byte offset of the first error. Integers (no fraction,
  // no exponent) that fit become kInt (negative) or kUint, other numbers
  // kDouble; a key given twice keeps its first place and its last value (Set).
  // Serialize() of the result gives back text Serialize() wrote.
  static JsonValue Parse(const std::string& text);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }

  // Arrays: appends; returns the new element.
  JsonValue& Append(JsonValue value);
  // Objects: adds (or replaces) a key; returns the value stored.
  JsonValue& Set(const std::string& key, JsonValue value);

  // Scalars as text ("12", "1.5", "true", "null", the string itself unquoted).
  // Used by the plain-text renderers.
  std::string ToText() const;
  // Numbers as double / uint64 (negative or fractional values clamp); 0 for non-numbers.
  double AsDouble() const;
  uint64_t AsUint() const;
  const std::vector<JsonValue>& items() const { return items_; }
  const std::vector<std::pair<std::string, JsonValue>>& members() const { return members_; }
  // A member of an object; nullptr when absent.
  const JsonValue* Find(const std::string& key) const;

  // JSON text; indent > 0 pretty-prints with that many spaces per level.
  std::string Serialize(int indent = 2) const;

 private:
  explicit JsonValue(Kind kind) : kind_(kind) {}
  void WriteTo(JsonWriter* writer) const;

  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  int64_t int_ = 0;
  uint64_t uint_ = 0;
  double double_ = 0.0;
  bool single_ = false;  // double_ holds a float
  std::string string_;
  std::vector<JsonValue> items_;
  std::vector<std::pair<std::string, JsonValue>> members_;
};

// `text` as a quoted JSON string literal.
std::string JsonQuote(const std::string& text);

// The shortest decimal that reads back as `value`, or "null" when not finite.
std::string JsonNumber(double value);
std::string JsonNumber(float value);

}  // namespace cli
}  // namespace octet
