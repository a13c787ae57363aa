// The engine's Generator (engine/generator.h): the same tokens as a plain
// Sample -> Step loop and as the C API's octet_generate, its stop rules
// (max_new_tokens, eos, the callback, Cancel), the events, and Continue after
// a prompt run by hand. (Streamed text: tests/c_api, c_api.text, on models
// with real tokenizers.)
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/generator.h"
#include "engine/session.h"
#include "octet/octet.h"
#include "support/loaded_model.h"
#include "support/test_models.h"

namespace octet {
namespace {

using testing::LoadedModel;
using testing::TinyModelOptions;

TinyModelOptions Decoder() {
  TinyModelOptions options;
  options.family = fb::Family::Llama;
  options.layers = 2;
  options.tokenizer = false;
  return options;
}

Session MakeSession(const Model& model, uint32_t max_batch) {
  SessionLimits limits;
  limits.max_batch = max_batch;
  limits.max_seq = 8;
  limits.max_new_tokens = 16;
  limits.last_logits_only = true;
  Result<Session> session = Session::Create(model, limits);
  REQUIRE_MESSAGE(session.ok(), std::string(session.status().message()));
  return std::move(session).value();
}

Generator MakeGenerator(const Model& model, uint32_t max_batch) {
  Result<Generator> generator = Generator::Create(model, nullptr, max_batch);
  REQUIRE_MESSAGE(generator.ok(), std::string(generator.status().message()));
  return std::move(generator).value();
}

// Every event, in order.
struct Recorder {
  std::vector<TokenEvent> events;
  int stop_after = -1;   // stop when this many events were seen (-1: never)
  Generator* cancel = nullptr;  // Cancel from the callback after the first event
  bool prompted = false;

  GenerateCallbacks Callbacks() {
    GenerateCallbacks c;
    c.user = this;
    c.on_prompt = [](void* user) { static_cast<Recorder*>(user)->prompted = true; };
    c.on_token = [](void* user, const TokenEvent& e) {
      Recorder* r = static_cast<Recorder*>(user);
      r->events.push_back(e);
      if (r->cancel != nullptr) r->cancel->Cancel();
      return r->stop_after >= 0 && static_cast<int>(r->events.size()) >= r->stop_after ? 1 : 0;
    };
    return c;
  }
  std::vector<int32_t> Ids(uint32_t sequence) const {
    std::vector<int32_t> ids;
    for (const TokenEvent& e : events) {
      if (e.sequence == sequence && e.id >= 0) ids.push_back(e.id);
    }
    return ids;
  }
};

const int32_t kPrompts[2 * 4] = {1, 2, 3, 4, 5, 6, 0, 0};
const uint32_t kLengths[2] = {4, 2};

TEST_CASE("Generator: greedy tokens equal a Sample -> Step loop and octet_generate") {
  LoadedModel m(Decoder());
  GenerateParams params;
  params.max_new_tokens = 6;
  params.sampling.temperature = 0.0f;
  params.ignore_eos = true;

  Session session = MakeSession(m.model, 2);
  Generator generator = MakeGenerator(m.model, 2);
  Recorder recorder;
  uint32_t counts[2] = {0, 0};
  REQUIRE(generator.Generate(&session, kPrompts, kLengths, 2, 4, params, recorder.Callbacks(),
                             counts).ok());
  CHECK(recorder.prompted);
  CHECK(counts[0] == 6);
  CHECK(counts[1] == 6);
  CHECK(recorder.events.size() == 12);
  for (size_t i = 0; i < recorder.events.size(); ++i) {
    const TokenEvent& e = recorder.events[i];
    CHECK(e.sequence == i % 2);  // sequence 0, 1, then the next step
    CHECK(e.index == i / 2);
    CHECK(e.text == nullptr);  // no tokenizer
    CHECK_FALSE(e.is_eos);
  }

  // By hand: run, then sample and step.
  Session by_hand = MakeSession(m.model, 2);
  REQUIRE(by_hand.Run(kPrompts, kLengths, 2, 4).ok());
  std::vector<int32_t> hand[2];
  uint64_t rng = 0;
  for (int t = 0; t < 6; ++t) {
    int32_t next[2];
    REQUIRE(by_hand.Sample(params.sampling, &rng, next).ok());
    hand[0].push_back(next[0]);
    hand[1].push_back(next[1]);
    if (t < 5) REQUIRE(by_hand.Step(next, 2).ok());
  }
  CHECK(recorder.Ids(0) == hand[0]);
  CHECK(recorder.Ids(1) == hand[1]);

  // Through the C API, from the same file.
  octet_model* model = nullptr;
  REQUIRE(octet_model_load_from_buffer(m.bytes->data(), m.bytes->size(), &model) == OCTET_OK);
  octet_session_options so;
  octet_session_options_init(&so);
  so.max_batch = 2;
  so.max_seq = 8;
  so.max_new_tokens = 16;
  octet_session* c_session = nullptr;
  REQUIRE(octet_session_create_with_options(model, &so, nullptr, 0, &c_session) == OCTET_OK);
  octet_generate_options go;
  octet_generate_options_init(&go);
  go.max_new_tokens = 6;
  go.temperature = 0.0f;
  go.flags = OCTET_GENERATE_IGNORE_EOS;
  std::vector<int32_t> c_ids[2];
  go.on_token = [](void* user, const octet_token_event* e) {
    static_cast<std::vector<int32_t>*>(user)[e->sequence].push_back(e->id);
    return 0;
  };
  go.on_token_user = c_ids;
  uint32_t c_counts[2] = {0, 0};
  REQUIRE(octet_generate(c_session, kPrompts, kLengths, 2, 4, &go, c_counts) == OCTET_OK);
  CHECK(c_ids[0] == hand[0]);
  CHECK(c_ids[1] == hand[1]);
  octet_session_free(c_session);
  octet_model_free(model);
}

TEST_CASE("Generator: stop rules") {
  LoadedModel first_run(Decoder());
  Session session = MakeSession(first_run.model, 2);
  Generator generator = MakeGenerator(first_run.model, 2);
  GenerateParams params;
  params.max_new_tokens = 5;
  params.sampling.temperature = 0.0f;
  params.ignore_eos = true;
  Recorder greedy;
  REQUIRE(generator.Generate(&session, kPrompts, kLengths, 1, 4, params, greedy.Callbacks(),
                             nullptr).ok());
  const std::vector<int32_t> tokens = greedy.Ids(0);
  REQUIRE(tokens.size() == 5);

  SUBCASE("an eos id ends the sequence, counted and flagged") {
    // The model's eos id is the third greedy token.
    LoadedModel eos_model(Decoder(), [&](fb::ArchitectureT& a) { a.eos_token_id = tokens[2]; });
    Session s = MakeSession(eos_model.model, 1);
    Generator g = MakeGenerator(eos_model.model, 1);
    GenerateParams stop_at_eos = params;
    stop_at_eos.ignore_eos = false;
    Recorder r;
    uint32_t count = 0;
    REQUIRE(g.Generate(&s, kPrompts, kLengths, 1, 4, stop_at_eos, r.Callbacks(), &count).ok());
    // The first token equal to the eos id ends it (it may come earlier than the third).
    size_t at = 0;
    while (tokens[at] != tokens[2]) ++at;
    CHECK(count == at + 1);
    REQUIRE(r.events.size() == at + 1);
    CHECK(r.events.back().is_eos);
    CHECK(IsEosToken(eos_model.model, nullptr, tokens[2]));
  }
  SUBCASE("the callback ends the whole generation, which succeeds") {
    Recorder r;
    r.stop_after = 3;
    uint32_t counts[2] = {0, 0};
    REQUIRE(generator.Generate(&session, kPrompts, kLengths, 2, 4, params, r.Callbacks(), counts)
                .ok());
    CHECK(r.events.size() == 3);
    CHECK(counts[0] == 2);
    CHECK(counts[1] == 1);
  }
  SUBCASE("Cancel stops before the next step") {
    Recorder r;
    r.cancel = &generator;
    const Status st =
        generator.Generate(&session, kPrompts, kLengths, 1, 4, params, r.Callbacks(), nullptr);
    CHECK(st.code() == StatusCode::kCancelled);
    CHECK(r.events.size() == 1);
    // A cancel before a generation starts does not touch it.
    generator.Cancel();
    Recorder after;
    CHECK(generator.Generate(&session, kPrompts, kLengths, 1, 4, params, after.Callbacks(),
                             nullptr).ok());
    CHECK(after.Ids(0) == tokens);
  }
  SUBCASE("the arguments are checked before anything runs") {
    Recorder r;
    GenerateParams none = params;
    none.max_new_tokens = 0;
    CHECK(generator.Generate(&session, kPrompts, kLengths, 1, 4, none, r.Callbacks(), nullptr)
              .code() == StatusCode::kInvalidArgument);
    CHECK(generator.Generate(&session, kPrompts, kLengths, 3, 4, params, r.Callbacks(), nullptr)
              .code() == StatusCode::kLimitExceeded);
    GenerateParams many = params;
    many.max_new_tokens = 30;  // 4 + 29 positions > 8 + 16
    CHECK(generator.Generate(&session, kPrompts, kLengths, 1, 4, many, r.Callbacks(), nullptr)
              .code() == StatusCode::kLimitExceeded);
    CHECK_FALSE(r.prompted);
    CHECK(r.events.empty());
  }
}

TEST_CASE("Generator: Continue after a run by hand gives the same tokens and advances the rng") {
  LoadedModel m(Decoder());
  GenerateParams params;
  params.max_new_tokens = 6;
  params.sampling.temperature = 0.8f;
  params.seed = 7;
  params.ignore_eos = true;

  Session session = MakeSession(m.model, 1);
  Generator generator = MakeGenerator(m.model, 1);
  Recorder whole;
  REQUIRE(generator.Generate(&session, kPrompts, kLengths, 1, 4, params, whole.Callbacks(),
                             nullptr).ok());

  REQUIRE(session.Run(kPrompts, kLengths, 1, 4).ok());
  Recorder continued;
  uint64_t rng = params.seed;
  uint32_t count = 0;
  REQUIRE(generator.Continue(&session, params, continued.Callbacks(), &rng, &count).ok());
  CHECK_FALSE(continued.prompted);
  CHECK(count == 6);
  CHECK(continued.Ids(0) == whole.Ids(0));
  CHECK(rng != params.seed);  // six draws
}

}  // namespace
}  // namespace octet
