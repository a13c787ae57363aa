// JSON for the converter (nlohmann-json, Debian's nlohmann-json3-dev): parsing
// with one-line errors, and typed reads of Hugging Face config values that say
// which field is wrong and what it holds.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace octet {
namespace convert {

// Parses `text`; a syntax error becomes "<what> is not valid JSON: <detail>".
nlohmann::json ParseJson(const std::string& text, const std::string& what);
// Reads and parses a file; messages name it by `display_name`.
nlohmann::json ReadJsonFile(const std::filesystem::path& path, const std::string& display_name);

// A JSON value as it appears in a message: strings quoted, long values cut.
std::string JsonValueString(const nlohmann::json& value);

// Typed access to one JSON object (config.json or a table inside it).
// `where` prefixes every message: "config.json" or "config.json: rope_scaling".
// A key holding null reads as absent, as in transformers' configs.
class ConfigView {
 public:
  ConfigView(const nlohmann::json& object, std::string where)
      : object_(object), where_(std::move(where)) {}

  const std::string& where() const { return where_; }
  // The value, or nullptr when absent or null.
  const nlohmann::json* Find(const std::string& key) const;
  bool Has(const std::string& key) const { return Find(key) != nullptr; }
  // Whether the key is written at all, even as null.
  bool Contains(const std::string& key) const {
    return object_.is_object() && object_.find(key) != object_.end();
  }

  // A positive integer that must be present.
  uint32_t Count(const std::string& key) const;
  uint32_t CountOr(const std::string& key, uint32_t fallback) const;
  // A finite number.
  double Number(const std::string& key) const;
  double NumberOr(const std::string& key, double fallback) const;
  bool BoolOr(const std::string& key, bool fallback) const;
  std::string StringOr(const std::string& key, const std::string& fallback) const;
  // A token id: an integer, the first of a list of integers, or -1 when absent.
  int64_t TokenIdOr(const std::string& key, int64_t fallback = -1) const;
  // A nested object, or nullptr when absent.
  const nlohmann::json* Object(const std::string& key) const;

  // "<where>: <key> = <value> is not supported (<why>)"
  [[noreturn]] void Unsupported(const std::string& key, const std::string& why) const;
  [[noreturn]] void Invalid(const std::string& key, const std::string& expected) const;

 private:
  const nlohmann::json& object_;
  std::string where_;
};

}  // namespace convert
}  // namespace octet
