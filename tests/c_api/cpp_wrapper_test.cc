// The header-only C++ wrapper over the C API.
#include <doctest/doctest.h>

#include <cstring>

#include "octet/octet.hpp"
#include "support/test_models.h"

namespace {

TEST_CASE("the C++ wrapper loads, runs and reports errors with messages") {
  octet::testing::TinyModelOptions options;
  options.layers = 0;
  octet::testing::TempFile file;
  octet::testing::MakeTinyModelWriter(options).Write(file.path());

  octet::api::Model missing;
  octet::api::Status s = missing.Load("/nonexistent/model.octet");
  CHECK(s.code == OCTET_IO_ERROR);
  CHECK(s.message.find("/nonexistent/model.octet") != std::string::npos);

  octet::api::Model model;
  REQUIRE_MESSAGE(model.Load(file.path()).ok(), file.path());
  CHECK(model.vocab_size() == 32);
  octet::api::Session session;
  REQUIRE(session.Create(model, octet_session_limits{1, 4, 0}).ok());
  REQUIRE(session.Run({5, 6, 7, 0}, {3}, 4).ok());
  CHECK(session.output().dim == 32);
  octet::api::Status bad = session.Run({5, 6}, {3}, 4);
  CHECK(bad.code == OCTET_INVALID_ARGUMENT);
}

}  // namespace
