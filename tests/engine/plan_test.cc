// The forward pass's planning table (engine/forward.h PlanForward): buffers
// whose lifetimes overlap never share bytes, every buffer fits its arena, the
// plan's offsets are the table's, and buffers of different phases do share.
#include <doctest/doctest.h>

#include <string>

#include "engine/forward.h"
#include "support/loaded_model.h"
#include "support/test_models.h"

namespace octet {
namespace {

using testing::TinyModelOptions;
using Loaded = testing::LoadedModel;

struct Planned {
  ForwardPlan plan;
  ArenaLayout arenas[3];  // indexed by ForwardArena
};

void Plan(const Model& model, const ForwardLimits& limits, Planned* out) {
  const Status s = PlanForward(model.architecture(), GetForwardMode(model), limits,
                               &out->arenas[0], &out->arenas[1], &out->arenas[2], &out->plan);
  REQUIRE_MESSAGE(s.ok(), std::string(s.message()));
}

void CheckTable(const Planned& p) {
  const ForwardPlan& plan = p.plan;
  for (size_t i = 0; i < kNumForwardBuffers; ++i) {
    const PlannedBuffer& b = plan.buffers[i];
    CAPTURE(std::string(b.name));
    CHECK(b.first <= b.last);
    if (b.bytes == 0) continue;
    CHECK(b.offset % b.alignment == 0);
    CHECK(b.offset + b.bytes <= p.arenas[static_cast<size_t>(b.arena)].size());
    for (size_t j = 0; j < i; ++j) {
      const PlannedBuffer& o = plan.buffers[j];
      if (o.arena != b.arena || o.bytes == 0) continue;
      CAPTURE(std::string(o.name));
      const bool live_together = o.first <= b.last && b.first <= o.last;
      const bool overlap = o.offset < b.offset + b.bytes && b.offset < o.offset + o.bytes;
      CHECK_FALSE((live_together && overlap));
    }
  }
  // The table is indexed by ForwardBuffer (a few rows, by name).
  CHECK(std::string(plan.buffer(ForwardBuffer::kX).name) == "x");
  CHECK(std::string(plan.buffer(ForwardBuffer::kQ).name) == "q");
  CHECK(std::string(plan.buffer(ForwardBuffer::kUp).name) == "up");
  CHECK(std::string(plan.buffer(ForwardBuffer::kSelfK).name) == "self_k");
}

TEST_CASE("the plan's buffers never share bytes while both are live") {
  for (fb::Family family : {fb::Family::Llama, fb::Family::Bert, fb::Family::T5})
  for (bool int8 : {false, true})
  for (uint32_t layers : {0u, 2u})
  for (uint32_t threads : {1u, 3u}) {
    if (family == fb::Family::T5 && layers == 0) continue;  // enc-dec needs layers
    CAPTURE(static_cast<int>(family));
    CAPTURE(int8);
    CAPTURE(layers);
    CAPTURE(threads);
    TinyModelOptions o;
    o.family = family;
    o.int8 = int8;
    o.layers = layers;
    Loaded m(o);
    ForwardLimits limits;
    limits.max_batch = 2;
    limits.max_seq = 16;
    limits.max_new_tokens = 4;
    limits.threads = threads;
    limits.prefill_chunk = family == fb::Family::Llama ? 8 : 0;
    Planned p;
    Plan(m.model, limits, &p);
    CheckTable(p);
  }
}

TEST_CASE("the feed-forward's buffers reuse the attention's memory") {
  TinyModelOptions o;
  o.family = fb::Family::Bert;
  o.layers = 2;
  Loaded m(o);
  ForwardLimits limits;
  limits.max_seq = 16;
  Planned p;
  Plan(m.model, limits, &p);
  const ForwardPlan& plan = p.plan;
  // up [rows, intermediate] starts where the attention's q does: both are
  // dead outside their own sub-block.
  CHECK(plan.buffer(ForwardBuffer::kUp).offset == plan.buffer(ForwardBuffer::kQ).offset);
  size_t scratch_sum = 0;
  for (size_t i = 0; i < kNumForwardBuffers; ++i) {
    if (plan.buffers[i].arena == ForwardArena::kScratch) scratch_sum += plan.buffers[i].bytes;
  }
  CHECK(p.arenas[static_cast<size_t>(ForwardArena::kScratch)].size() < scratch_sum);
}

// Long input needs memory linear in its length: no buffer of the plan (and so
// no arena) holds anything n x n. Attention runs in tiles whatever the length.
TEST_CASE("every buffer grows at most linearly with the sequence length") {
  constexpr uint32_t kShort = 1024, kLong = 8192;
  for (fb::Family family : {fb::Family::Llama, fb::Family::Bert})
  for (bool int8 : {false, true}) {
    CAPTURE(static_cast<int>(family));
    CAPTURE(int8);
    TinyModelOptions o;
    o.family = family;
    o.int8 = int8;
    o.layers = 2;
    o.max_positions = kLong;
    Loaded m(o);
    Planned p[2];
    for (int i = 0; i < 2; ++i) {
      ForwardLimits limits;
      limits.max_seq = i == 0 ? kShort : kLong;
      limits.max_new_tokens = family == fb::Family::Llama ? 1 : 0;
      Plan(m.model, limits, &p[i]);
    }
    size_t total[2] = {0, 0};
    for (size_t b = 0; b < kNumForwardBuffers; ++b) {
      const size_t small = p[0].plan.buffers[b].bytes, large = p[1].plan.buffers[b].bytes;
      CAPTURE(std::string(p[0].plan.buffers[b].name));
      CAPTURE(small);
      CAPTURE(large);
      // 8x the length: at most 8x the bytes, give or take a row's alignment.
      CHECK(large <= (kLong / kShort) * small + 4096);
      total[0] += small;
      total[1] += large;
    }
    MESSAGE("planned bytes at " << kShort << " and " << kLong << " tokens: " << total[0]
                                << ", " << total[1]);
    CHECK(total[1] > 4 * total[0]);  // the rows do grow: the check above has teeth
  }
}

}  // namespace
}  // namespace octet
