#include <doctest/doctest.h>
TEST_CASE("chat template placeholder") { CHECK(true); }
