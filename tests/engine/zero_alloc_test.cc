// The promise of docs/design.md §3: no malloc/new inside a run. The whole process's
// allocations are counted (targets/common/alloc_counter.h) around many runs of
// every session kind that runs today.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/alloc_counter.h"
#include "engine/session.h"
#include "octet/octet.h"
#include "support/test_models.h"

namespace octet {
namespace {

using testing::AlignedBytes;
using testing::MakeTinyModelBytes;
using testing::TinyModelOptions;

TEST_CASE("the allocation counter sees allocations") {
  REQUIRE(HeapAllocationCounterActive());
  const uint64_t before = HeapAllocationCount();
  void* volatile p = std::malloc(64);
  std::free(p);
  std::vector<int>* volatile v = new std::vector<int>(100);
  delete v;
  CHECK(HeapAllocationCount() - before >= 3);
}

TEST_CASE("zero heap allocations while running") {
  REQUIRE(HeapAllocationCounterActive());
  for (fb::Family family : {fb::Family::Llama, fb::Family::Bert}) {
    for (bool int8 : {true, false}) {
      CAPTURE(static_cast<int>(family));
      CAPTURE(int8);
      TinyModelOptions options;
      options.family = family;
      options.layers = 0;
      options.int8 = int8;
      AlignedBytes bytes(MakeTinyModelBytes(options));
      Result<Model> model = Model::FromBuffer(bytes.data(), bytes.size());
      REQUIRE(model.ok());
      Result<Session> session = Session::Create(*model, SessionLimits{4, 16, 0});
      REQUIRE_MESSAGE(session.ok(), std::string(session.status().message()));
      std::vector<int32_t> ids(4 * 16);
      for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 7 + 3) % 32);
      const uint32_t lengths[4] = {16, 9, 1, 12};
      const int32_t bad[1] = {99};
      const uint32_t one[1] = {1};

      const uint64_t before = HeapAllocationCount();
      for (int run = 0; run < 50; ++run) {
        const Status s = session->Run(ids.data(), lengths, 4, 16);
        if (!s.ok()) FAIL(std::string(s.message()));
        const Status error = session->Run(bad, one, 1, 1);  // errors allocate nothing either
        if (error.ok()) FAIL("an out-of-vocabulary id was accepted");
      }
      const uint64_t allocations = HeapAllocationCount() - before;
      MESSAGE("heap allocations during 100 runs: " << allocations);
      CHECK(allocations == 0);
    }
  }
}

TEST_CASE("zero heap allocations while running fp32 and int8 models with layers, on 1 and 3 threads") {
  REQUIRE(HeapAllocationCounterActive());
  for (uint32_t threads : {1u, 3u})
  for (int kind : {0, 1, 2})  // fp32, int8, int8 with 16-bit inputs
  for (fb::Family family :
       {fb::Family::Llama, fb::Family::Lfm2, fb::Family::Qwen35, fb::Family::Rwkv,
        fb::Family::Bert, fb::Family::Roberta, fb::Family::T5}) {
    const bool int8 = kind > 0;
    CAPTURE(threads);
    CAPTURE(kind);
    CAPTURE(static_cast<int>(family));
    TinyModelOptions options;
    options.family = family;
    options.layers = 2;
    options.int8 = int8;
    options.packed = int8;
    options.two_digit_inputs = kind == 2;
    options.position_offset = family == fb::Family::Roberta ? 2 : 0;
    // Wide enough that the parallel loops split over the threads.
    options.hidden = 128;
    options.vocab = 600;
    AlignedBytes bytes(MakeTinyModelBytes(options));
    Result<Model> model = Model::FromBuffer(bytes.data(), bytes.size());
    REQUIRE(model.ok());
    SessionLimits limits{4, 16, 8};
    limits.threads = threads;
    Result<Session> session = Session::Create(*model, limits);
    REQUIRE_MESSAGE(session.ok(), std::string(session.status().message()));
    std::vector<int32_t> ids(4 * 16);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 7 + 3) % 32);
    const uint32_t lengths[4] = {16, 9, 1, 12};
    const int32_t next[4] = {1, 2, 3, 4};

    const uint64_t before = HeapAllocationCount();
    for (int run = 0; run < 5; ++run) {
      Status s;
      if (family == fb::Family::T5) {
        s = session->RunEncoderDecoder(ids.data(), lengths, 16, ids.data(), lengths, 16, 4);
      } else {
        s = session->Run(ids.data(), lengths, 4, 16);
      }
      if (!s.ok()) FAIL(std::string(s.message()));
      if (family == fb::Family::T5) {
        for (int step = 0; step < 8; ++step) {
          const Status t = session->StepEncoderDecoder(next, 4);
          if (!t.ok()) FAIL(std::string(t.message()));
        }
        if (session->StepEncoderDecoder(next, 4).ok()) FAIL("a step beyond the KV cache was accepted");
      }
      if (family == fb::Family::Llama || family == fb::Family::Lfm2 ||
          family == fb::Family::Qwen35 || family == fb::Family::Rwkv) {
        for (int step = 0; step < 8; ++step) {
          const Status t = session->Step(next, 4);
          if (!t.ok()) FAIL(std::string(t.message()));
        }
        if (session->Step(next, 4).ok()) FAIL("a step beyond the KV cache was accepted");
      }
    }
    const uint64_t allocations = HeapAllocationCount() - before;
    MESSAGE("heap allocations during the runs and steps: " << allocations);
    CHECK(allocations == 0);
  }
}

TEST_CASE("zero heap allocations while generating: Sample then Step") {
  REQUIRE(HeapAllocationCounterActive());
  TinyModelOptions options;
  options.family = fb::Family::Llama;
  options.layers = 2;
  options.int8 = false;
  AlignedBytes bytes(MakeTinyModelBytes(options));
  Result<Model> model = Model::FromBuffer(bytes.data(), bytes.size());
  REQUIRE(model.ok());
  Result<Session> session = Session::Create(*model, SessionLimits{4, 16, 12});
  REQUIRE_MESSAGE(session.ok(), std::string(session.status().message()));
  std::vector<int32_t> ids(4 * 16);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 5 + 1) % 32);
  const uint32_t lengths[4] = {16, 3, 1, 8};
  int32_t next[4] = {0, 0, 0, 0};
  SamplingParams configs[4];
  configs[0].temperature = 0.0f;  // greedy
  configs[1].temperature = 0.8f;  // the full softmax
  configs[2].temperature = 1.2f;  // top-k
  configs[2].top_k = 5;
  configs[3].top_k = 20;          // top-k then top-p
  configs[3].top_p = 0.9f;
  uint64_t rng = 42;

  const uint64_t before = HeapAllocationCount();
  for (const SamplingParams& params : configs) {
    Status s = session->Run(ids.data(), lengths, 4, 16);
    if (!s.ok()) FAIL(std::string(s.message()));
    for (int step = 0; step < 12; ++step) {
      s = session->Sample(params, &rng, next);
      if (!s.ok()) FAIL(std::string(s.message()));
      s = session->Step(next, 4);
      if (!s.ok()) FAIL(std::string(s.message()));
    }
    SamplingParams bad = params;
    bad.top_p = 0.0f;
    if (session->Sample(bad, &rng, next).ok()) FAIL("top_p 0 was accepted");
  }
  const uint64_t allocations = HeapAllocationCount() - before;
  MESSAGE("heap allocations during sampled generation: " << allocations);
  CHECK(allocations == 0);
}

TEST_CASE("zero heap allocations while capturing attention probabilities") {
  REQUIRE(HeapAllocationCounterActive());
  for (uint32_t threads : {1u, 3u})
  for (bool int8 : {false, true})
  for (fb::Family family : {fb::Family::Llama, fb::Family::Bert, fb::Family::T5}) {
    CAPTURE(threads);
    CAPTURE(int8);
    CAPTURE(static_cast<int>(family));
    TinyModelOptions options;
    options.family = family;
    options.layers = 2;
    options.int8 = int8;
    options.packed = int8;
    AlignedBytes bytes(MakeTinyModelBytes(options));
    Result<Model> model = Model::FromBuffer(bytes.data(), bytes.size());
    REQUIRE(model.ok());
    SessionLimits limits{4, 16, 0};
    limits.threads = threads;
    limits.prefill_chunk = 5;  // decoders: the capture spans chunks
    Result<Session> session = Session::Create(*model, limits);
    REQUIRE_MESSAGE(session.ok(), std::string(session.status().message()));
    std::vector<int32_t> ids(4 * 16);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 7 + 3) % 32);
    const uint32_t lengths[4] = {16, 9, 1, 12};
    std::vector<float> probs(4 * 2 * 16 * 16);
    AttentionCapture capture;
    capture.stack = family == fb::Family::T5 ? LayerStack::kDecoder : LayerStack::kSingle;
    capture.site = family == fb::Family::T5 ? AttentionSite::kCross : AttentionSite::kSelf;
    capture.layer = 1;
    capture.probs = probs.data();
    capture.capacity = probs.size();
    REQUIRE(session->SetAttentionCapture(&capture).ok());

    const uint64_t before = HeapAllocationCount();
    for (int run = 0; run < 5; ++run) {
      const Status s =
          family == fb::Family::T5
              ? session->RunEncoderDecoder(ids.data(), lengths, 16, ids.data(), lengths, 16, 4)
              : session->Run(ids.data(), lengths, 4, 16);
      if (!s.ok()) FAIL(std::string(s.message()));
    }
    const uint64_t allocations = HeapAllocationCount() - before;
    CHECK(allocations == 0);
    CHECK(capture.q_len == 16);
    CHECK(probs[0] > 0.0f);  // written: query 0 sees key 0
  }
}


// The C API's generation: after a first call (which sets up the session's text
// streams and arrays at creation), a whole octet_generate (prompt run, samples,
// steps, the token callback) and a state save and load allocate nothing.
TEST_CASE("zero heap allocations inside octet_generate and the session state calls") {
  REQUIRE(HeapAllocationCounterActive());
  for (bool int8 : {false, true}) {
    CAPTURE(int8);
    TinyModelOptions options;
    options.family = fb::Family::Llama;
    options.layers = 2;
    options.int8 = int8;
    options.packed = int8;
    AlignedBytes bytes(MakeTinyModelBytes(options));
    octet_model* model = nullptr;
    REQUIRE(octet_model_load_from_buffer(bytes.data(), bytes.size(), &model) == OCTET_OK);
    octet_session_options so;
    octet_session_options_init(&so);
    so.max_batch = 2;
    so.max_seq = 8;
    so.max_new_tokens = 16;
    so.threads = 2;
    octet_session* session = nullptr;
    REQUIRE(octet_session_create_with_options(model, &so, nullptr, 0, &session) == OCTET_OK);
    const int32_t ids[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 0, 0, 0, 0};
    const uint32_t lengths[2] = {8, 3};
    octet_generate_options go;
    octet_generate_options_init(&go);
    go.max_new_tokens = 17;
    go.temperature = 0.9f;
    go.top_k = 10;
    go.top_p = 0.9f;
    go.flags = OCTET_GENERATE_IGNORE_EOS;
    uint64_t tokens = 0;
    go.on_token = [](void* user, const octet_token_event*) {
      ++*static_cast<uint64_t*>(user);
      return 0;
    };
    go.on_token_user = &tokens;
    uint32_t counts[2] = {0, 0};
    REQUIRE(octet_generate(session, ids, lengths, 2, 8, &go, counts) == OCTET_OK);  // warm-up
    std::vector<uint8_t> state(1 << 20);
    size_t written = 0;

    const uint64_t before = HeapAllocationCount();
    const octet_status generated = octet_generate(session, ids, lengths, 2, 8, &go, counts);
    const octet_status saved =
        octet_session_state_save(session, state.data(), state.size(), &written);
    const octet_status loaded = octet_session_state_load(session, state.data(), written);
    // A prompt run by hand, then generation on from it.
    const octet_status ran = octet_session_run(session, ids, lengths, 2, 8);
    uint64_t rng = 3;
    uint32_t continued[2] = {0, 0};
    const octet_status generated_on = octet_generate_continue(session, &go, &rng, continued);
    const uint64_t allocations = HeapAllocationCount() - before;
    CHECK(generated == OCTET_OK);
    CHECK(saved == OCTET_OK);
    CHECK(loaded == OCTET_OK);
    CHECK(ran == OCTET_OK);
    CHECK(generated_on == OCTET_OK);
    CHECK(counts[0] == 17);
    CHECK(counts[1] == 17);
    CHECK(continued[0] == 17);
    CHECK(continued[1] == 17);
    CHECK(tokens == 3 * 2 * 17);
    MESSAGE("heap allocations inside octet_generate, state save and load, a run and "
            "octet_generate_continue: " << allocations);
    CHECK(allocations == 0);
    octet_session_free(session);
    octet_model_free(model);
  }
}
}  // namespace
}  // namespace octet
