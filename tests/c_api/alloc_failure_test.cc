// Allocation-failure injection: loads a model with a tokenizer, encodes a
// prompt and generates a few tokens through the C API, once for every
// allocation of that run with that allocation failing (core/alloc.h:
// alloc_testing). Every run with a failed allocation must return
// OCTET_OUT_OF_MEMORY with a message (never crash or abort), free what it
// made (LeakSanitizer checks under the host-asan preset), and the run without
// a failure must generate. The model: models/austen-tiny converted by the
// fixture; its path in OCTET_ALLOC_TEST_MODEL.
#include <octet/octet.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/alloc.h"
#include <doctest/doctest.h>

namespace {

struct Outcome {
  octet_status status = OCTET_OK;
  std::string message;  // octet_last_error() of the failed call
  std::string text;     // generated text
  uint32_t generated = 0;
};

int CollectText(void* user, const octet_token_event* event) {
  auto* out = static_cast<Outcome*>(user);
  if (event->text != nullptr) out->text.append(event->text, event->text_len);
  return 0;
}

// The whole run: every handle it makes is freed whatever happens.
Outcome LoadTokenizeGenerate(const char* path) {
  Outcome out;
  octet_model* model = nullptr;
  octet_tokenizer* tokenizer = nullptr;
  octet_session* session = nullptr;
  const char* prompt = "It is a truth universally acknowledged";
  int32_t ids[64];
  size_t n = 0;
  const auto check = [&](octet_status status) {
    if (status != OCTET_OK && out.status == OCTET_OK) {
      out.status = status;
      out.message = octet_last_error();
    }
    return status == OCTET_OK;
  };
  if (check(octet_model_load(path, &model)) && check(octet_tokenizer_create(model, &tokenizer)) &&
      check(octet_tokenizer_encode(tokenizer, prompt, std::strlen(prompt), 0, ids, 64, &n))) {
    uint32_t length = static_cast<uint32_t>(n);
    octet_session_options options;
    octet_session_options_init(&options);
    options.max_seq = length;
    options.max_new_tokens = 4;
    octet_generate_options generate;
    octet_generate_options_init(&generate);
    generate.max_new_tokens = 4;
    generate.temperature = 0;
    generate.flags = OCTET_GENERATE_IGNORE_EOS;
    generate.on_token = CollectText;
    generate.on_token_user = &out;
    if (check(octet_session_create_with_options(model, &options, nullptr, 0, &session))) {
      check(octet_generate(session, ids, &length, 1, length, &generate, &out.generated));
    }
  }
  octet_session_free(session);
  octet_tokenizer_free(tokenizer);
  octet_model_free(model);
  return out;
}

}  // namespace

TEST_CASE("every allocation of load, tokenizer and generation may fail with a status") {
  const char* path = std::getenv("OCTET_ALLOC_TEST_MODEL");
  REQUIRE_MESSAGE(path != nullptr, "OCTET_ALLOC_TEST_MODEL names the model");

  octet::alloc_testing::FailNthAllocation(0);
  const Outcome clean = LoadTokenizeGenerate(path);
  REQUIRE_MESSAGE(clean.status == OCTET_OK, clean.message);
  const uint64_t allocations = octet::alloc_testing::AllocationCount();
  CHECK(clean.generated == 4);
  MESSAGE("allocations of load + tokenizer + generation: ", allocations);

  uint64_t nth = 1;
  for (;; ++nth) {
    octet::alloc_testing::FailNthAllocation(nth);
    const Outcome run = LoadTokenizeGenerate(path);
    if (!octet::alloc_testing::InjectedFailure()) {
      // Past the last allocation: the run is the clean one.
      CHECK_MESSAGE(run.status == OCTET_OK, run.message);
      CHECK(run.text == clean.text);
      break;
    }
    INFO("allocation ", nth, " failed: ", run.message);
    CHECK(run.status == OCTET_OUT_OF_MEMORY);
    CHECK(!run.message.empty());
  }
  octet::alloc_testing::FailNthAllocation(0);
  MESSAGE("runs with an injected failure: ", nth - 1);
  CHECK(nth - 1 == allocations);
}
