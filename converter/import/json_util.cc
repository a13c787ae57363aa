#include "import/json_util.h"

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>

#include "import/error.h"

namespace octet {
namespace convert {

nlohmann::json ParseJson(const std::string& text, const std::string& what) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // Drop nlohmann's "[json.exception.parse_error.101] " tag: the rest says where and why.
    std::string detail = e.what();
    const size_t tag_end = detail.find("] ");
    if (!detail.empty() && detail[0] == '[' && tag_end != std::string::npos) {
      detail = detail.substr(tag_end + 2);
    }
    Fail(what, " is not valid JSON: ", detail);
  }
}

nlohmann::json ReadJsonFile(const std::filesystem::path& path, const std::string& display_name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail("cannot read ", display_name);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) Fail("cannot read ", display_name);
  return ParseJson(text, display_name);
}

std::string JsonValueString(const nlohmann::json& value) {
  std::string s = value.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

const nlohmann::json* ConfigView::Find(const std::string& key) const {
  if (!object_.is_object()) return nullptr;
  const auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

void ConfigView::Unsupported(const std::string& key, const std::string& why) const {
  const nlohmann::json* value = Find(key);
  Fail(where_, ": ", key, " = ", value ? JsonValueString(*value) : std::string("null"),
       " is not supported (", why, ")");
}

void ConfigView::Invalid(const std::string& key, const std::string& expected) const {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) Fail(where_, ": ", key, " is missing (", expected, ")");
  Fail(where_, ": ", key, " = ", JsonValueString(*value), " must be ", expected);
}

uint32_t ConfigView::Count(const std::string& key) const {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) Invalid(key, "a positive integer");
  int64_t v = 0;
  if (value->is_number_unsigned()) {
    v = value->get<uint64_t>() > (1ull << 31) ? -1 : static_cast<int64_t>(value->get<uint64_t>());
  } else if (value->is_number_integer()) {
    v = value->get<int64_t>();
  } else {
    Invalid(key, "a positive integer");
  }
  if (v < 1 || v > std::numeric_limits<int32_t>::max()) Invalid(key, "a positive integer");
  return static_cast<uint32_t>(v);
}

uint32_t ConfigView::CountOr(const std::string& key, uint32_t fallback) const {
  return Has(key) ? Count(key) : fallback;
}

double ConfigView::Number(const std::string& key) const {
  const nlohmann::json* value = Find(key);
  if (value == nullptr || !value->is_number() || !std::isfinite(value->get<double>())) {
    Invalid(key, "a finite number");
  }
  return value->get<double>();
}

double ConfigView::NumberOr(const std::string& key, double fallback) const {
  return Has(key) ? Number(key) : fallback;
}

bool ConfigView::BoolOr(const std::string& key, bool fallback) const {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) Invalid(key, "true or false");
  return value->get<bool>();
}

std::string ConfigView::StringOr(const std::string& key, const std::string& fallback) const {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return fallback;
  if (!value->is_string()) Invalid(key, "a string");
  return value->get<std::string>();
}

int64_t ConfigView::TokenIdOr(const std::string& key, int64_t fallback) const {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return fallback;
  const nlohmann::json* first = value;
  if (value->is_array()) {
    if (value->empty()) return fallback;
    first = &(*value)[0];
  }
  if (!first->is_number_integer() || first->get<int64_t>() < 0 ||
      first->get<int64_t>() > std::numeric_limits<int32_t>::max()) {
    Invalid(key, "a non-negative integer token id (or a list of them)");
  }
  return first->get<int64_t>();
}

const nlohmann::json* ConfigView::Object(const std::string& key) const {
  const nlohmann::json* value = Find(key);
  if (value != nullptr && !value->is_object()) Invalid(key, "an object");
  return value;
}

}  // namespace convert
}  // namespace octet
