// Allocation-failure injection: runs a piece of work once for every allocation
// it makes, with that allocation failing (core/alloc.h: alloc_testing). Every
// run with a failed allocation must return OCTET_OUT_OF_MEMORY with a message
// (never crash or abort), free what it made (LeakSanitizer checks under the
// host-asan preset), and the run past the last allocation must do what the
// clean run did. The work:
//   - load models/austen-tiny, create its tokenizer, encode a prompt and
//     generate 4 tokens through the C API (one thread);
//   - with the model loaded once: a session on 2 threads (the thread pool and
//     its workers) that generates 4 tokens, for the int8 file and for the fp32
//     one (its products' operators: F32FullyConnectedSet);
//   - the engine's stream_weights session on the fp32 file (not in the C API's
//     options): creation fails with kOutOfMemory; a failed allocation while a
//     pass packs a layer leaves that layer on the reference path, and the run
//     goes on.
// The models are converted by the fixture; their paths in
// OCTET_ALLOC_TEST_MODEL (int8) and OCTET_ALLOC_TEST_FP32_MODEL.
#include <octet/octet.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include <doctest/doctest.h>
#include "core/alloc.h"
#include "engine/session.h"
#include "format/model.h"

namespace {

const char* const kPrompt = "It is a truth universally acknowledged";
constexpr uint32_t kNewTokens = 4;

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

// Records the first failure of a call; true when it succeeded.
bool Check(Outcome* out, octet_status status) {
  if (status != OCTET_OK && out->status == OCTET_OK) {
    out->status = status;
    out->message = octet_last_error();
  }
  return status == OCTET_OK;
}

// A session of `threads` threads for the prompt ids[0, n), which generates
// kNewTokens greedily, then is freed.
void SessionGenerate(const octet_model* model, const int32_t* ids, size_t n, uint32_t threads,
                     Outcome* out) {
  uint32_t length = static_cast<uint32_t>(n);
  octet_session_options options;
  octet_session_options_init(&options);
  options.max_seq = length;
  options.max_new_tokens = kNewTokens;
  options.threads = threads;
  octet_generate_options generate;
  octet_generate_options_init(&generate);
  generate.max_new_tokens = kNewTokens;
  generate.temperature = 0;
  generate.flags = OCTET_GENERATE_IGNORE_EOS;
  generate.on_token = CollectText;
  generate.on_token_user = out;
  octet_session* session = nullptr;
  if (Check(out, octet_session_create_with_options(model, &options, nullptr, 0, &session))) {
    Check(out, octet_generate(session, ids, &length, 1, length, &generate, &out->generated));
  }
  octet_session_free(session);
}

// The whole run: every handle it makes is freed whatever happens.
Outcome LoadTokenizeGenerate(const char* path) {
  Outcome out;
  octet_model* model = nullptr;
  octet_tokenizer* tokenizer = nullptr;
  int32_t ids[64];
  size_t n = 0;
  if (Check(&out, octet_model_load(path, &model)) &&
      Check(&out, octet_tokenizer_create(model, &tokenizer)) &&
      Check(&out,
            octet_tokenizer_encode(tokenizer, kPrompt, std::strlen(kPrompt), 0, ids, 64, &n))) {
    SessionGenerate(model, ids, n, 1, &out);
  }
  octet_tokenizer_free(tokenizer);
  octet_model_free(model);
  return out;
}

// Runs `run` (returning an Outcome) clean, then once per allocation of the
// clean run with that allocation failing; checks each failed run and the one
// past the last allocation. Returns the clean run's allocations.
template <typename Run>
uint64_t EveryAllocationFails(const char* what, const Run& run) {
  INFO(std::string(what));
  octet::alloc_testing::FailNthAllocation(0);
  const Outcome clean = run();
  const uint64_t allocations = octet::alloc_testing::AllocationCount();
  REQUIRE_MESSAGE(clean.status == OCTET_OK, clean.message);
  CHECK(clean.generated == kNewTokens);
  uint64_t nth = 1;
  for (;; ++nth) {
    octet::alloc_testing::FailNthAllocation(nth);
    const Outcome failed = run();
    if (!octet::alloc_testing::InjectedFailure()) {
      // Past the last allocation: the run is the clean one.
      CHECK_MESSAGE(failed.status == OCTET_OK, failed.message);
      CHECK(failed.text == clean.text);
      break;
    }
    INFO("allocation ", nth, " failed: ", failed.message);
    CHECK(failed.status == OCTET_OUT_OF_MEMORY);
    CHECK(!failed.message.empty());
  }
  octet::alloc_testing::FailNthAllocation(0);
  MESSAGE(std::string(what), ": ", allocations, " allocations, ", nth - 1, " runs with an injected failure");
  CHECK(nth - 1 == allocations);
  return allocations;
}

const char* ModelPath(const char* variable) {
  const char* path = std::getenv(variable);
  REQUIRE_MESSAGE(path != nullptr, variable, " names the model");
  return path;
}

// The model, its tokenizer and the prompt's ids, made without injection.
struct Loaded {
  octet_model* model = nullptr;
  int32_t ids[64];
  size_t n = 0;

  explicit Loaded(const char* path) {
    octet::alloc_testing::FailNthAllocation(0);
    REQUIRE(octet_model_load(path, &model) == OCTET_OK);
    octet_tokenizer* tokenizer = nullptr;
    REQUIRE(octet_tokenizer_create(model, &tokenizer) == OCTET_OK);
    const octet_status st =
        octet_tokenizer_encode(tokenizer, kPrompt, std::strlen(kPrompt), 0, ids, 64, &n);
    octet_tokenizer_free(tokenizer);
    REQUIRE(st == OCTET_OK);
  }
  ~Loaded() { octet_model_free(model); }
  Loaded(const Loaded&) = delete;
  Loaded& operator=(const Loaded&) = delete;
};

}  // namespace

TEST_CASE("every allocation of load, tokenizer and generation may fail with a status") {
  const char* path = ModelPath("OCTET_ALLOC_TEST_MODEL");
  EveryAllocationFails("load + tokenizer + generation", [&] { return LoadTokenizeGenerate(path); });
}

TEST_CASE("every allocation of a 2-thread session and its generation may fail, int8 and fp32") {
  for (const char* variable : {"OCTET_ALLOC_TEST_MODEL", "OCTET_ALLOC_TEST_FP32_MODEL"}) {
    const Loaded loaded(ModelPath(variable));
    const uint64_t allocations = EveryAllocationFails(variable, [&] {
      Outcome out;
      SessionGenerate(loaded.model, loaded.ids, loaded.n, 2, &out);
      return out;
    });
    // The pool, its shared state and its workers' two arrays at least.
    CHECK(allocations >= 4);
  }
}

TEST_CASE("a stream_weights session: creation may fail with a status, a pass goes on") {
  const char* path = ModelPath("OCTET_ALLOC_TEST_FP32_MODEL");
  octet::alloc_testing::FailNthAllocation(0);
  octet::Result<octet::Model> loaded = octet::Model::Load(path);
  REQUIRE(loaded.ok());
  const octet::Model model = std::move(loaded).value();
  const Loaded prompt(path);  // the prompt's ids
  const uint32_t vocab = model.architecture().vocab_size();

  octet::SessionLimits limits;
  limits.max_seq = static_cast<uint32_t>(prompt.n);
  limits.max_new_tokens = kNewTokens;
  limits.threads = 2;
  limits.last_logits_only = true;
  limits.stream_weights = true;

  // Creation, then the prompt and kNewTokens - 1 steps, greedy. creation_allocations
  // receives the allocations of Create.
  struct Streamed {
    octet::StatusCode code = octet::StatusCode::kOk;
    std::string message;
    int32_t tokens[kNewTokens] = {};
  };
  uint64_t creation_allocations = 0;
  const auto run = [&] {
    Streamed out;
    octet::Result<octet::Session> created = octet::Session::Create(model, limits);
    creation_allocations = octet::alloc_testing::AllocationCount();
    if (!created.ok()) {
      out.code = created.status().code();
      out.message = created.status().message();
      return out;
    }
    octet::Session session = std::move(created).value();
    uint32_t length = limits.max_seq;
    octet::Status st = session.Run(prompt.ids, &length, 1, length);
    for (uint32_t t = 0; st.ok() && t < kNewTokens; ++t) {
      const float* logits = session.output().data;
      int32_t best = 0;
      for (uint32_t v = 1; v < vocab; ++v) {
        if (logits[v] > logits[best]) best = static_cast<int32_t>(v);
      }
      out.tokens[t] = best;
      if (t + 1 < kNewTokens) st = session.Step(&best, 1);
    }
    if (!st.ok()) {
      out.code = st.code();
      out.message = st.message();
    }
    return out;
  };

  octet::alloc_testing::FailNthAllocation(0);  // counts from here
  const Streamed clean = run();
  REQUIRE_MESSAGE(clean.code == octet::StatusCode::kOk, clean.message);
  const uint64_t allocations = octet::alloc_testing::AllocationCount();
  const uint64_t at_creation = creation_allocations;
  // A pass packs each layer's products (and the head's) as it reaches them.
  CHECK(allocations > at_creation);
  uint64_t nth = 1;
  for (;; ++nth) {
    octet::alloc_testing::FailNthAllocation(nth);
    const Streamed failed = run();
    if (!octet::alloc_testing::InjectedFailure()) {
      CHECK_MESSAGE(failed.code == octet::StatusCode::kOk, failed.message);
      CHECK(std::memcmp(failed.tokens, clean.tokens, sizeof(clean.tokens)) == 0);
      break;
    }
    INFO("allocation ", nth, " failed: ", failed.message);
    if (nth <= at_creation) {
      CHECK(failed.code == octet::StatusCode::kOutOfMemory);
      CHECK(!failed.message.empty());
    } else {
      CHECK_MESSAGE(failed.code == octet::StatusCode::kOk, failed.message);
    }
  }
  octet::alloc_testing::FailNthAllocation(0);
  MESSAGE("stream_weights: ", at_creation, " allocations at creation, ", allocations - at_creation,
          " in the passes, ", nth - 1, " runs with an injected failure");
  CHECK(nth - 1 == allocations);
}
