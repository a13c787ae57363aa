// The converter's one error type: a one-line message that names the file, the
// tensor or the config field at fault. octet-convert prints it as
// "octet-convert: <message>" and exits 1.
#pragma once

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace octet {
namespace convert {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Concatenates its arguments with operator<<.
template <typename... Parts>
std::string Cat(Parts&&... parts) {
  std::ostringstream out;
  (out << ... << std::forward<Parts>(parts));
  return out.str();
}

template <typename... Parts>
[[noreturn]] void Fail(Parts&&... parts) {
  throw Error(Cat(std::forward<Parts>(parts)...));
}

// "[64, 32]"
template <typename T>
std::string ShapeString(const std::vector<T>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

}  // namespace convert
}  // namespace octet
