// Helpers for the converter tests: run a step and return its one-line error.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "convert.h"
#include "import/error.h"

namespace octet {
namespace testing {

// The message of the convert::Error that `f` throws; fails the test when it
// throws nothing, throws something else, or the message spans several lines.
template <typename F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const convert::Error& e) {
    const std::string message = e.what();
    CHECK_MESSAGE(message.find('\n') == std::string::npos, "multi-line error: " << message);
    CHECK(!message.empty());
    return message;
  }
  FAIL("expected a convert::Error");
  return "";
}

// Options for an fp32 conversion (the importer tests compare values exactly).
inline convert::ConvertOptions Fp32Options() {
  convert::ConvertOptions options;
  options.weights = convert::WeightType::kFp32;
  return options;
}

// `haystack` contains `needle`.
inline bool Has(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace testing
}  // namespace octet
