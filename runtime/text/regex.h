// Placeholder for the text-regex branch's engine (same API): every pattern is
// refused until it lands, so the converter refuses regex steps meanwhile.
#pragma once

#include <cstddef>
#include <string_view>

#include "core/result.h"
#include "core/status.h"

namespace octet {
namespace text {

class Regex {
 public:
  Status Compile(std::string_view pattern);
  Result<bool> Find(const char* text, size_t n, size_t from, size_t* begin, size_t* end,
                    void* scratch, size_t scratch_bytes) const;
  size_t ScratchBytes(size_t text_bytes) const;
};

}  // namespace text
}  // namespace octet
