// The CLI's int8 peak probe (targets/cli/int8_peak.h).
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "cli/int8_peak.h"

namespace octet {
namespace cli {
namespace {

TEST_CASE("the probe measures on 1 and 2 threads, and refuses more than 256") {
  Int8Peak peak;
  std::string error;
  CHECK_FALSE(MeasureInt8Peak(257, &peak, &error));
  CHECK(error.find("at most 256") != std::string::npos);
  for (uint32_t threads = 1; threads <= 2; ++threads) {
    CAPTURE(threads);
    REQUIRE(MeasureInt8Peak(threads, &peak, &error));
    REQUIRE(peak.probe != nullptr);
    CHECK(std::strlen(peak.probe) > 0);
    if (std::strcmp(peak.probe, "none") == 0) {
      CHECK(peak.gops == 0);
    } else {
      CHECK(peak.gops > 0);
    }
  }
}

}  // namespace
}  // namespace cli
}  // namespace octet
