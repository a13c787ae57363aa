// engine/pooling.h against sums written out here: cls takes row 0, mean
// averages the real rows only (padding rows hold values that must not leak).
#include <doctest/doctest.h>

#include <vector>

#include "engine/pooling.h"

namespace octet {
namespace {

TEST_CASE("PoolHidden: cls and mean over the real tokens") {
  // [2, 3, 2]: sequence 0 has 3 real rows, sequence 1 has 1 (rows 1, 2 padding).
  const std::vector<float> hidden = {1, 2, 3,    4,     5,    9,  //
                                     7, 8, 1e6f, -1e6f, 1e6f, 1e6f};
  const OutputView view{hidden.data(), 2, 3, 2};
  const uint32_t lengths[2] = {3, 1};
  float out[4] = {};
  REQUIRE(PoolHidden(view, lengths, Pooling::kMean, out).ok());
  CHECK(out[0] == 3.0f);                  // (1 + 3 + 5) / 3
  CHECK(out[1] == doctest::Approx(5.0));  // (2 + 4 + 9) / 3
  CHECK(out[2] == 7.0f);
  CHECK(out[3] == 8.0f);
  REQUIRE(PoolHidden(view, lengths, Pooling::kCls, out).ok());
  CHECK(out[0] == 1.0f);
  CHECK(out[1] == 2.0f);
  CHECK(out[2] == 7.0f);
  CHECK(out[3] == 8.0f);
  const uint32_t bad[2] = {3, 4};
  CHECK(PoolHidden(view, bad, Pooling::kMean, out).code() == StatusCode::kInvalidArgument);
  const uint32_t empty[2] = {3, 0};
  CHECK(PoolHidden(view, empty, Pooling::kMean, out).code() == StatusCode::kInvalidArgument);
  CHECK(PoolHidden(view, nullptr, Pooling::kMean, out).code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace octet
