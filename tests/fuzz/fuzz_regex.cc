// libFuzzer target for runtime/text/regex: patterns come from model files and
// texts from users, so both are arbitrary. Input: pattern bytes, a 0 byte,
// then the text. Compile must fail cleanly or succeed; a compiled pattern
// must iterate the text without reading out of bounds or hanging.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "text/regex.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto* zero = static_cast<const uint8_t*>(std::memchr(data, 0, size));
  const size_t pattern_size = zero != nullptr ? static_cast<size_t>(zero - data) : size;
  const char* text = reinterpret_cast<const char*>(data) + pattern_size + (zero != nullptr);
  const size_t n = size - pattern_size - (zero != nullptr);
  octet::text::Regex re;
  if (!re.Compile(std::string_view(reinterpret_cast<const char*>(data), pattern_size)).ok()) {
    return 0;
  }
  // An exactly sized copy, so ASan sees any read past the end.
  std::vector<char> t(text, text + n);
  std::vector<char> scratch(re.ScratchBytes(n));
  octet::text::RegexMatchIterator it(re, t.data(), n, scratch.data(), scratch.size());
  size_t begin = 0, end = 0, last = 0;
  for (size_t k = 0; k <= n + 1; ++k) {
    octet::Result<bool> r = it.Next(&begin, &end);
    if (!r.ok() || !r.value()) break;
    if (begin < last || end < begin || end > n) __builtin_trap();
    last = end;
  }
  return 0;
}
