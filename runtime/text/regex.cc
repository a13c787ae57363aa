#include "text/regex.h"

namespace octet {
namespace text {

Status Regex::Compile(std::string_view) {
  return Status(StatusCode::kUnsupported, "regex patterns are not supported yet");
}

Result<bool> Regex::Find(const char*, size_t, size_t, size_t*, size_t*, void*, size_t) const {
  return Status(StatusCode::kUnsupported, "regex patterns are not supported yet");
}

size_t Regex::ScratchBytes(size_t) const { return 0; }

}  // namespace text
}  // namespace octet
