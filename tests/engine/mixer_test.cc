// The token-mixer seam (engine/mixer.h), held to its promises with a mixer of
// its own: the token-shift mixer (engine/mixer_token_shift.cc) in a stack
// beside attention layers. Its file, its row of the role table and its row of
// the registry are all it took; these tests check that the pass runs it as
// its definition says, that its fixed state survives decode steps, prompt
// chunks and a save/restore, that the plan keeps KV rows only for the
// attention layers, and that files and requests that do not fit are refused
// with a clear message. The same checks hold the other mixers to it: short
// convolutions, Gated DeltaNets, RWKV's time mix beside attention, and RWKV-4
// whole, whose channel mixer (the channel-mixer seam) keeps a state too.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "engine/mixer.h"
#include "engine/session.h"
#include "engine/weights.h"
#include "ops/f32_fully_connected.h"
#include "format/tensor_roles.h"
#include "support/test_models.h"

namespace octet {
namespace {

using testing::AlignedBytes;
using testing::TinyModelOptions;

constexpr uint32_t kHidden = 16;
constexpr uint32_t kVocab = 32;

TinyModelOptions Options(bool int8) {
  TinyModelOptions o;
  o.family = fb::Family::Llama;
  o.layers = 3;
  o.int8 = int8;
  o.hidden = kHidden;
  o.vocab = kVocab;
  o.seed = 11;
  o.layer_stddev = 0.2f;
  return o;
}

// RWKV-4 whole: time mixes in every layer, with its channel mixes.
const std::vector<fb::TokenMixer> kRwkv = {fb::TokenMixer::RwkvTimeMix,
                                           fb::TokenMixer::RwkvTimeMix,
                                           fb::TokenMixer::RwkvTimeMix};

// The tiny model of a stack of `mixers`: RWKV-4 (LayerNorms, channel mixes)
// for kRwkv, else the tiny Llama with those token mixers.
TinyModelOptions MixedOptions(bool int8, const std::vector<fb::TokenMixer>& mixers) {
  TinyModelOptions o = Options(int8);
  if (mixers == kRwkv) o.family = fb::Family::Rwkv;
  o.mixers = mixers;  // each layer gets its mixer's tensors (a short convolution's)
  o.packed = int8;
  return o;
}

// The tiny Llama with `mixers` per layer; token-shift layers get a shift
// vector (deterministic, not all equal). with_shift false: left out.
struct MixedModel {
  MixedModel(bool int8, const std::vector<fb::TokenMixer>& mixers, bool with_shift = true) {
    TinyModelOptions o = MixedOptions(int8, mixers);
    ModelWriter writer = testing::MakeTinyModelWriter(o);
    fb::ArchitectureT a = testing::TinyArchitecture(o);
    a.layer_mixers = mixers;
    writer.SetArchitecture(a);
    for (size_t l = 0; l < mixers.size(); ++l) {
      if (mixers[l] != fb::TokenMixer::TokenShift || !with_shift) continue;
      std::vector<float> shift(kHidden);
      for (uint32_t i = 0; i < kHidden; ++i) shift[i] = 0.5f + 0.1f * static_cast<float>((i + l) % 7);
      shifts.push_back(shift);
      writer.AddTensorCopy("layers." + std::to_string(l) + ".shift.weight", fb::DType::F32,
                           {kHidden}, shift.data());
    }
    bytes = std::make_unique<AlignedBytes>(writer.WriteToBuffer());
    Result<Model> loaded = Model::FromBuffer(bytes->data(), bytes->size());
    status = loaded.status();
    if (loaded.ok()) model = std::move(loaded).value();
  }
  std::unique_ptr<AlignedBytes> bytes;
  Model model;
  Status status;
  std::vector<std::vector<float>> shifts;
};

const std::vector<fb::TokenMixer> kHybrid = {fb::TokenMixer::TokenShift,
                                             fb::TokenMixer::Attention,
                                             fb::TokenMixer::TokenShift};
// LFM2's kind of stack: short convolutions (3 taps: a state of 2 rows) around attention.
const std::vector<fb::TokenMixer> kConvHybrid = {fb::TokenMixer::ShortConv,
                                                 fb::TokenMixer::Attention,
                                                 fb::TokenMixer::ShortConv};
// Qwen3.5's kind: Gated DeltaNets (a conv of 4 taps and a matrix per value head) around
// attention.
const std::vector<fb::TokenMixer> kLinearHybrid = {fb::TokenMixer::GatedDeltaNet,
                                                   fb::TokenMixer::Attention,
                                                   fb::TokenMixer::GatedDeltaNet};
// RWKV's time mix as a token mixer beside attention, in Llama's frame (feed-forwards).
const std::vector<fb::TokenMixer> kRwkvHybrid = {fb::TokenMixer::RwkvTimeMix,
                                                 fb::TokenMixer::Attention,
                                                 fb::TokenMixer::RwkvTimeMix};
// Every kind of stack the tests below hold to the seam's promises.
const std::vector<fb::TokenMixer>* const kStacks[] = {&kHybrid, &kConvHybrid, &kLinearHybrid,
                                                      &kRwkvHybrid, &kRwkv};

std::vector<float> Rms(const float* x, float eps) {
  double sum = 0;
  for (uint32_t i = 0; i < kHidden; ++i) sum += static_cast<double>(x[i]) * x[i];
  const float inv = static_cast<float>(1.0 / std::sqrt(sum / kHidden + eps));
  std::vector<float> out(kHidden);
  for (uint32_t i = 0; i < kHidden; ++i) out[i] = x[i] * inv;  // the norm weights are 1
  return out;
}

struct FfnInput {
  std::vector<float> rows;  // layer 0's feed-forward input [rows, hidden]
  size_t n = 0;
};

void ObserveFfn(void* ctx, LayerStack, uint32_t layer, ProductInput which, const float* x,
                size_t rows, size_t cols, size_t ld) {
  if (layer != 0 || which != ProductInput::kFfn) return;
  FfnInput* in = static_cast<FfnInput*>(ctx);
  in->n = rows;
  for (size_t r = 0; r < rows; ++r) in->rows.insert(in->rows.end(), x + r * ld, x + r * ld + cols);
}

TEST_CASE("the registry has one row per token-mixer kind, each naming its kind and role group") {
  for (uint32_t k = 0; k <= static_cast<uint32_t>(fb::TokenMixer::MAX); ++k) {
    const TokenMixer& m = GetTokenMixer(static_cast<fb::TokenMixer>(k));
    CHECK(static_cast<uint32_t>(m.kind) == k);
    CHECK((m.name != nullptr));
    CHECK((m.run != nullptr));
    CHECK((m.copy_state != nullptr));
    // Its tensors bind by their place in the group (engine/weights.h MixerTensors).
    if (GetRoleGroup(m.roles).slots != RoleSlots::kNamed) {
      const RoleRange rows = RolesOf(m.roles);
      CHECK(static_cast<size_t>(rows.end() - rows.begin()) <= kMaxMixerTensors);
    }
  }
  CHECK(std::string(GetTokenMixer(fb::TokenMixer::TokenShift).name) == "token_shift");
}

TEST_CASE("the channel-mixer registry has one row per kind, each naming its kind and role group") {
  for (uint32_t k = 0; k <= static_cast<uint32_t>(fb::ChannelMixer::MAX); ++k) {
    const ChannelMixer& m = GetChannelMixer(static_cast<fb::ChannelMixer>(k));
    CHECK(static_cast<uint32_t>(m.kind) == k);
    CHECK((m.name != nullptr));
    CHECK((m.run != nullptr));
    CHECK((m.copy_state != nullptr));
    const RoleGroupInfo& group = GetRoleGroup(m.roles);
    if (group.slots != RoleSlots::kNamed) {
      CHECK(group.slots == RoleSlots::kChannelMixer);
      const RoleRange rows = RolesOf(m.roles);
      CHECK(static_cast<size_t>(rows.end() - rows.begin()) <= kMaxMixerTensors);
    }
  }
  CHECK(GetChannelMixer(fb::ChannelMixer::FeedForward).roles == RoleGroup::kFeedForward);
  CHECK(std::string(GetChannelMixer(fb::ChannelMixer::RwkvChannelMix).name) ==
        "rwkv_channel_mix");
  // A feed-forward keeps nothing between calls; RWKV's channel mix its last row.
  MixedModel m(false, kRwkv);
  REQUIRE_MESSAGE(m.status.ok(), std::string(m.status.message()));
  const fb::Architecture& a = m.model.architecture();
  CHECK(ModelChannelMixer(a).kind == fb::ChannelMixer::RwkvChannelMix);
  CHECK(ModelChannelMixer(a).state_bytes(a) == kHidden * sizeof(float));
  CHECK(GetChannelMixer(fb::ChannelMixer::FeedForward).state_bytes(a) == 0);
}

TEST_CASE("a token-shift layer adds shift * the previous position's normed row") {
  MixedModel m(false, kHybrid);
  REQUIRE(m.status.ok());
  Result<Session> session = Session::Create(m.model, SessionLimits{1, 8, 0});
  REQUIRE_MESSAGE(session.ok(), std::string(session.status().message()));
  FfnInput seen;
  session->SetProductObserver(ObserveFfn, &seen);
  const int32_t ids[5] = {3, 17, 4, 29, 8};
  const uint32_t len[1] = {5};
  REQUIRE(session->Run(ids, len, 1, 5).ok());
  REQUIRE(seen.n == 5);
  // x0 = the token's embedding row; layer 0 (pre-norm RMSNorm, weights 1):
  // y = x0 + shift * rms(x0)[t - 1]; the feed-forward reads rms(y).
  const TensorView* emb = m.model.Find("token_embedding");
  REQUIRE(emb != nullptr);
  const float* table = static_cast<const float*>(emb->data);
  const float eps = m.model.architecture().norm_eps();
  for (uint32_t t = 0; t < 5; ++t) {
    std::vector<float> y(table + ids[t] * kHidden, table + (ids[t] + 1) * kHidden);
    if (t > 0) {
      const std::vector<float> prev = Rms(table + ids[t - 1] * kHidden, eps);
      for (uint32_t i = 0; i < kHidden; ++i) y[i] += m.shifts[0][i] * prev[i];
    }
    const std::vector<float> want = Rms(y.data(), eps);
    for (uint32_t i = 0; i < kHidden; ++i) {
      CHECK(seen.rows[t * kHidden + i] == doctest::Approx(want[i]).epsilon(1e-5));
    }
  }
}

// Logits of the last position after `prompt`, run whole, in prompt chunks, or
// as a shorter run plus decode steps.
std::vector<float> LastLogits(const Model& model, const std::vector<int32_t>& prompt,
                              uint32_t chunk, uint32_t stepped) {
  SessionLimits limits{1, 16, 8};
  limits.prefill_chunk = chunk;
  Result<Session> s = Session::Create(model, limits);
  REQUIRE_MESSAGE(s.ok(), std::string(s.status().message()));
  const uint32_t first = static_cast<uint32_t>(prompt.size()) - stepped;
  const uint32_t len[1] = {first};
  REQUIRE(s->Run(prompt.data(), len, 1, first).ok());
  for (uint32_t i = first; i < prompt.size(); ++i) REQUIRE(s->Step(&prompt[i], 1).ok());
  const OutputView out = s->output();
  const float* last = out.data + (static_cast<size_t>(out.batch) * out.seq - 1) * out.dim;
  return std::vector<float>(last, last + out.dim);
}

TEST_CASE("a hybrid stack gives the same logits whole, in prompt chunks and by decode steps") {
  const std::vector<int32_t> prompt = {5, 9, 1, 30, 12, 7, 22, 3};
  for (const auto* mixers : kStacks)
  for (bool int8 : {false, true}) {
    CAPTURE(int8);
    CAPTURE(GetTokenMixer((*mixers)[0]).name);
    MixedModel m(int8, *mixers);
    REQUIRE_MESSAGE(m.status.ok(), std::string(m.status.message()));
    const std::vector<float> whole = LastLogits(m.model, prompt, 0, 0);
    // Chunks: bit for bit (the same kernel calls, forward.h ForwardLimits::prefill_chunk);
    // chunks of 1 (shorter than a convolution's state) and 3. A Gated DeltaNet's rule
    // adds in another order over other chunks (the same rule, float rounding).
    for (uint32_t chunk : {3u, 1u}) {
      const std::vector<float> chunked = LastLogits(m.model, prompt, chunk, 0);
      if (mixers != &kLinearHybrid) {
        CHECK(chunked == whole);
        continue;
      }
      for (size_t i = 0; i < whole.size(); ++i) {
        CHECK(chunked[i] == doctest::Approx(whole[i]).epsilon(int8 ? 2e-3 : 1e-5));
      }
    }
    // Steps: the state carries the last rows from call to call, after prompts
    // longer and shorter than a convolution's state.
    for (uint32_t stepped : {4u, 7u}) {
      const std::vector<float> out = LastLogits(m.model, prompt, 0, stepped);
      for (size_t i = 0; i < whole.size(); ++i) {
        CHECK(out[i] == doctest::Approx(whole[i]).epsilon(int8 ? 2e-3 : 1e-5));
      }
    }
    // And the state matters: the all-attention model with the same weights differs.
    MixedModel plain(int8, {fb::TokenMixer::Attention, fb::TokenMixer::Attention,
                            fb::TokenMixer::Attention});
    REQUIRE(plain.status.ok());
    CHECK(LastLogits(plain.model, prompt, 0, 0) != whole);
  }
}

// An fp32 file's products run on XNNPACK's operators in every mixer, those
// that read or write columns of the mixer's wider rows too (their operators are
// made for the strides: TokenMixer::product_strides), never on the reference
// GEMM (a slow fallback, correct only).
TEST_CASE("every mixer's fp32 products run on the operators, not the reference GEMM") {
  const std::vector<int32_t> prompt = {5, 9, 1, 30, 12, 7, 22, 3};
  const uint32_t lengths[1] = {static_cast<uint32_t>(prompt.size())};
  const bool operators = F32FullyConnectedUnavailable() == nullptr;
  if (!operators) MESSAGE("no fp32 operators here (" << F32FullyConnectedUnavailable() << ")");
  for (const auto* mixers : kStacks) {
    const std::string first = GetTokenMixer((*mixers)[0]).name;
    CAPTURE(first);
    MixedModel m(false, *mixers);
    REQUIRE_MESSAGE(m.status.ok(), std::string(m.status.message()));
    SessionLimits limits{1, 8, 2};
    limits.threads = 2;
    Result<Session> s = Session::Create(m.model, limits);
    REQUIRE(s.ok());
    ForwardProfile profile;
    s->SetProfile(&profile);
    REQUIRE(s->Run(prompt.data(), lengths, 1, lengths[0]).ok());
    const int32_t next = 4;
    REQUIRE(s->Step(&next, 1).ok());
    CHECK(profile.linear_ops > 0);
    if (operators) {
      CHECK(profile.reference_products == 0);
    } else {
      CHECK(profile.reference_products > 0);
    }
  }
}

// Each sequence of a batch keeps its own state: a padded batch decoded together
// gives each sequence the logits it gets alone.
TEST_CASE("a hybrid stack decodes a padded batch as each sequence alone") {
  const std::vector<std::vector<int32_t>> prompts = {{4, 8, 15, 16, 23}, {1, 2, 3}};
  const std::vector<std::vector<int32_t>> steps = {{11, 19}, {7, 30}, {2, 5}};
  for (const auto* mixers : kStacks)
  for (bool int8 : {false, true}) {
    CAPTURE(int8);
    CAPTURE(GetTokenMixer((*mixers)[0]).name);
    MixedModel m(int8, *mixers);
    REQUIRE(m.status.ok());
    // Together: right-padded prompts, then the steps.
    Result<Session> both = Session::Create(m.model, SessionLimits{2, 8, 4});
    REQUIRE(both.ok());
    const int32_t ids[2 * 5] = {4, 8, 15, 16, 23, 1, 2, 3, 0, 0};
    const uint32_t lengths[2] = {5, 3};
    REQUIRE(both->Run(ids, lengths, 2, 5).ok());
    for (const auto& step : steps) REQUIRE(both->Step(step.data(), 2).ok());
    const OutputView together = both->output();
    for (size_t b = 0; b < 2; ++b) {
      CAPTURE(b);
      Result<Session> alone = Session::Create(m.model, SessionLimits{1, 8, 4});
      REQUIRE(alone.ok());
      const uint32_t len[1] = {static_cast<uint32_t>(prompts[b].size())};
      REQUIRE(alone->Run(prompts[b].data(), len, 1, len[0]).ok());
      for (const auto& step : steps) REQUIRE(alone->Step(&step[b], 1).ok());
      const OutputView out = alone->output();
      for (size_t i = 0; i < out.dim; ++i) {
        CHECK(together.data[b * together.dim + i] ==
              doctest::Approx(out.data[i]).epsilon(int8 ? 2e-3 : 1e-5));
      }
    }
  }
}

// The Gated DeltaNet's two forms of its rule: a prompt of 150 tokens in one
// pass (chunks of 64) and token by token through the state (the recurrence)
// agree within 1e-5 of the logits' scale, fp32.
TEST_CASE("a Gated DeltaNet's chunked prefill and its recurrence agree over 150 tokens") {
  MixedModel m(false, {fb::TokenMixer::GatedDeltaNet, fb::TokenMixer::GatedDeltaNet,
                       fb::TokenMixer::GatedDeltaNet});
  REQUIRE_MESSAGE(m.status.ok(), std::string(m.status.message()));
  constexpr uint32_t kLen = 150;
  std::vector<int32_t> prompt(kLen);
  for (uint32_t i = 0; i < kLen; ++i) prompt[i] = static_cast<int32_t>((i * 13 + 5) % kVocab);
  Result<Session> whole = Session::Create(m.model, SessionLimits{1, kLen, 0});
  REQUIRE_MESSAGE(whole.ok(), std::string(whole.status().message()));
  const uint32_t len[1] = {kLen};
  REQUIRE(whole->Run(prompt.data(), len, 1, kLen).ok());
  const OutputView all = whole->output();
  REQUIRE(all.seq == kLen);
  Result<Session> stepped = Session::Create(m.model, SessionLimits{1, 1, kLen});
  REQUIRE(stepped.ok());
  const uint32_t one[1] = {1};
  double worst = 0, scale = 0;
  for (uint32_t t = 0; t < kLen; ++t) {
    const Status s = t == 0 ? stepped->Run(prompt.data(), one, 1, 1) : stepped->Step(&prompt[t], 1);
    REQUIRE_MESSAGE(s.ok(), std::string(s.message()));
    const OutputView out = stepped->output();
    const float* ref = all.data + static_cast<size_t>(t) * all.dim;
    for (size_t i = 0; i < out.dim; ++i) {
      worst = std::max(worst, static_cast<double>(std::fabs(out.data[i] - ref[i])));
      scale = std::max(scale, static_cast<double>(std::fabs(ref[i])));
    }
  }
  MESSAGE("largest difference " << worst << " of logits up to " << scale);
  CHECK(worst <= 1e-5 * scale);
}

TEST_CASE("a hybrid session's state saves and restores through its mixers") {
  for (const auto* mixers : kStacks)
  for (bool int8 : {false, true}) {
    CAPTURE(int8);
    CAPTURE(GetTokenMixer((*mixers)[0]).name);
    MixedModel m(int8, *mixers);
    REQUIRE(m.status.ok());
    Result<Session> a = Session::Create(m.model, SessionLimits{2, 8, 4});
    Result<Session> b = Session::Create(m.model, SessionLimits{2, 8, 4});
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    const int32_t ids[2 * 5] = {4, 8, 15, 16, 23, 1, 2, 3, 0, 0};
    const uint32_t lengths[2] = {5, 3};
    REQUIRE(a->Run(ids, lengths, 2, 5).ok());
    // 2 sequences x (attention: 5 + 3 positions of K, V, [scales]; token shift:
    // two layers x one row each) + header, positions and logits.
    std::vector<uint8_t> state(a->StateBytes());
    size_t written = 0;
    REQUIRE(a->SaveState(state.data(), state.size(), &written).ok());
    CHECK(written == state.size());
    REQUIRE(b->LoadState(state.data(), state.size()).ok());
    const int32_t next[2] = {11, 19};
    REQUIRE(a->Step(next, 2).ok());
    REQUIRE(b->Step(next, 2).ok());
    const OutputView oa = a->output(), ob = b->output();
    REQUIRE(oa.dim == ob.dim);
    CHECK(std::memcmp(oa.data, ob.data, 2 * oa.dim * sizeof(float)) == 0);
    // A state cut short is refused, nothing loaded.
    CHECK(b->LoadState(state.data(), state.size() - 4).code() == StatusCode::kInvalidArgument);
    // One flipped bit anywhere past the header (positions, every layer's mixer
    // state, the logits) is refused with the reason, and nothing is loaded.
    const size_t header = 64;
    for (size_t at = header; at < state.size(); at += (state.size() - header) / 13 + 1) {
      CAPTURE(at);
      std::vector<uint8_t> flipped = state;
      flipped[at] ^= 0x10;
      const Status s = b->LoadState(flipped.data(), flipped.size());
      CHECK(s.code() == StatusCode::kInvalidArgument);
      CHECK(std::string(s.message()).find("checksum") != std::string::npos);
    }
    REQUIRE(b->Step(next, 2).ok());  // b is where the good state left it, one step on
    const OutputView again = b->output();
    REQUIRE(a->Step(next, 2).ok());
    CHECK(std::memcmp(a->output().data, again.data, 2 * again.dim * sizeof(float)) == 0);
    // A state of another model with the same shapes (other weights) is refused.
    TinyModelOptions other_options = MixedOptions(int8, *mixers);
    other_options.seed = 12;
    ModelWriter writer = testing::MakeTinyModelWriter(other_options);
    if ((*mixers)[0] == fb::TokenMixer::TokenShift) {
      const std::vector<float> shift(kHidden, 0.5f);
      for (size_t l = 0; l < mixers->size(); l += 2) {
        writer.AddTensorCopy("layers." + std::to_string(l) + ".shift.weight", fb::DType::F32,
                             {kHidden}, shift.data());
      }
    }
    AlignedBytes other_bytes(writer.WriteToBuffer());
    Result<Model> other = Model::FromBuffer(other_bytes.data(), other_bytes.size());
    REQUIRE_MESSAGE(other.ok(), std::string(other.status().message()));
    Result<Session> c = Session::Create(*other, SessionLimits{2, 8, 4});
    REQUIRE(c.ok());
    const Status foreign = c->LoadState(state.data(), state.size());
    CHECK(foreign.code() == StatusCode::kInvalidArgument);
    CHECK(std::string(foreign.message()).find("another model") != std::string::npos);
  }
}

TEST_CASE("the plan keeps KV rows for the attention layers only, and a fixed row per shift layer") {
  MixedModel hybrid(false, kHybrid);
  MixedModel plain(false, {fb::TokenMixer::Attention, fb::TokenMixer::Attention,
                           fb::TokenMixer::Attention});
  REQUIRE(hybrid.status.ok());
  REQUIRE(plain.status.ok());
  const SessionLimits limits{2, 64, 64};
  Result<SessionPlan> h = Session::Plan(hybrid.model, limits);
  Result<SessionPlan> p = Session::Plan(plain.model, limits);
  REQUIRE(h.ok());
  REQUIRE(p.ok());
  // fp32: K and V of 4 kv-dim floats... per position and layer; one attention
  // layer of three, plus 2 token-shift layers x 2 sequences x hidden floats.
  const size_t per_layer = p->kv_cache_bytes / 3;
  CHECK(h->kv_cache_bytes >= per_layer + 2 * 2 * kHidden * sizeof(float));
  CHECK(h->kv_cache_bytes <= per_layer + 2 * 2 * kHidden * sizeof(float) + 3 * 64);
  // Short convolutions of 3 taps: 2 rows per layer and sequence.
  MixedModel conv(false, kConvHybrid);
  REQUIRE(conv.status.ok());
  Result<SessionPlan> c = Session::Plan(conv.model, limits);
  REQUIRE(c.ok());
  CHECK(c->kv_cache_bytes >= per_layer + 2 * 2 * 2 * kHidden * sizeof(float));
  CHECK(c->kv_cache_bytes <= per_layer + 2 * 2 * 2 * kHidden * sizeof(float) + 3 * 64);
}

// RWKV-4's recurrence: a prompt of 150 tokens in one pass and token by token
// through the states (the WKV sums and both mixes' last rows) agree within
// 1e-5 of the logits' scale; int8 within 1e-2 of it.
TEST_CASE("RWKV-4 over 150 tokens: one pass and decode steps agree") {
  for (bool int8 : {false, true}) {
    CAPTURE(int8);
    MixedModel m(int8, kRwkv);
    REQUIRE_MESSAGE(m.status.ok(), std::string(m.status.message()));
    constexpr uint32_t kLen = 150;
    std::vector<int32_t> prompt(kLen);
    for (uint32_t i = 0; i < kLen; ++i) prompt[i] = static_cast<int32_t>((i * 13 + 5) % kVocab);
    Result<Session> whole = Session::Create(m.model, SessionLimits{1, kLen, 0});
    REQUIRE_MESSAGE(whole.ok(), std::string(whole.status().message()));
    const uint32_t len[1] = {kLen};
    REQUIRE(whole->Run(prompt.data(), len, 1, kLen).ok());
    const OutputView all = whole->output();
    REQUIRE(all.seq == kLen);
    Result<Session> stepped = Session::Create(m.model, SessionLimits{1, 1, kLen});
    REQUIRE(stepped.ok());
    const uint32_t one[1] = {1};
    double worst = 0, scale = 0;
    for (uint32_t t = 0; t < kLen; ++t) {
      const Status st =
          t == 0 ? stepped->Run(prompt.data(), one, 1, 1) : stepped->Step(&prompt[t], 1);
      REQUIRE_MESSAGE(st.ok(), std::string(st.message()));
      const OutputView out = stepped->output();
      const float* ref = all.data + static_cast<size_t>(t) * all.dim;
      for (size_t i = 0; i < out.dim; ++i) {
        worst = std::max(worst, static_cast<double>(std::fabs(out.data[i] - ref[i])));
        scale = std::max(scale, static_cast<double>(std::fabs(ref[i])));
      }
    }
    MESSAGE("largest difference " << worst << " of logits up to " << scale);
    CHECK(worst <= (int8 ? 1e-2 : 1e-5) * scale);
  }
}

// A new prompt from position 0 starts every state afresh (no reset call), and a
// saved state loaded into another session forks the sequence: each branch goes
// on as a session that ran its whole text.
TEST_CASE("RWKV-4 sessions restart, fork and continue through their states") {
  for (const auto* mixers : {&kRwkv, &kRwkvHybrid}) {
    CAPTURE(GetTokenMixer((*mixers)[0]).name);
    MixedModel m(false, *mixers);
    REQUIRE(m.status.ok());
    const std::vector<int32_t> first = {3, 9, 27, 17, 8, 24};
    const std::vector<int32_t> second = {30, 1, 4, 15};
    const auto run = [&](Session& s, const std::vector<int32_t>& ids) {
      const uint32_t len[1] = {static_cast<uint32_t>(ids.size())};
      REQUIRE(s.Run(ids.data(), len, 1, len[0]).ok());
      const OutputView out = s.output();
      const float* last = out.data + (static_cast<size_t>(out.seq) - 1) * out.dim;
      return std::vector<float>(last, last + out.dim);
    };
    Result<Session> used = Session::Create(m.model, SessionLimits{1, 8, 4});
    Result<Session> fresh = Session::Create(m.model, SessionLimits{1, 8, 4});
    REQUIRE(used.ok());
    REQUIRE(fresh.ok());
    run(*used, first);
    REQUIRE(used->Step(&first[0], 1).ok());
    CHECK(run(*used, second) == run(*fresh, second));  // restarted: bit for bit
    // Fork after `first`: both branches step on with other tokens.
    run(*used, first);
    std::vector<uint8_t> state(used->StateBytes());
    size_t written = 0;
    REQUIRE(used->SaveState(state.data(), state.size(), &written).ok());
    Result<Session> branch = Session::Create(m.model, SessionLimits{1, 8, 4});
    REQUIRE(branch.ok());
    REQUIRE(branch->LoadState(state.data(), written).ok());
    const int32_t a_next = 11, b_next = 29;
    REQUIRE(used->Step(&a_next, 1).ok());
    REQUIRE(branch->Step(&b_next, 1).ok());
    for (const auto& [session, next] : {std::make_pair(&*used, a_next),
                                        std::make_pair(&*branch, b_next)}) {
      std::vector<int32_t> text = first;
      text.push_back(next);
      Result<Session> whole = Session::Create(m.model, SessionLimits{1, 8, 4});
      REQUIRE(whole.ok());
      const std::vector<float> want = run(*whole, text);
      const OutputView got = session->output();
      for (size_t i = 0; i < got.dim; ++i) {
        CHECK(got.data[i] == doctest::Approx(want[i]).epsilon(1e-5));
      }
    }
    const OutputView oa = used->output(), ob = branch->output();
    CHECK(std::memcmp(oa.data, ob.data, oa.dim * sizeof(float)) != 0);
  }
}

TEST_CASE("an RWKV-4 plan keeps no KV rows: fixed states of both mixers in every layer") {
  MixedModel rwkv(false, kRwkv);
  REQUIRE(rwkv.status.ok());
  const SessionLimits limits{2, 64, 64};
  Result<SessionPlan> p = Session::Plan(rwkv.model, limits);
  REQUIRE(p.ok());
  // Per layer and sequence: the time mix's last row and WKV sums (4 rows of
  // hidden floats), the channel mix's last row (1 row).
  CHECK(p->kv_layers == 0);
  CHECK(p->kv_bytes_per_position == 0);
  CHECK(p->fixed_state_layers == 3);
  CHECK(p->fixed_state_bytes == 3 * 5 * kHidden * sizeof(float));
  CHECK(p->kv_cache_bytes >= 2 * 3 * 5 * kHidden * sizeof(float));
  CHECK(p->kv_cache_bytes <= 2 * 3 * 5 * kHidden * sizeof(float) + 64);
  // The state does not grow with the positions planned.
  Result<SessionPlan> longer = Session::Plan(rwkv.model, SessionLimits{2, 64, 4096});
  REQUIRE(longer.ok());
  CHECK(longer->kv_cache_bytes == p->kv_cache_bytes);
  // Beside attention: KV rows for the attention layer only.
  MixedModel hybrid(false, kRwkvHybrid);
  REQUIRE(hybrid.status.ok());
  Result<SessionPlan> h = Session::Plan(hybrid.model, limits);
  REQUIRE(h.ok());
  CHECK(h->kv_layers == 1);
  CHECK(h->fixed_state_layers == 2);
  CHECK(h->fixed_state_bytes == 2 * 4 * kHidden * sizeof(float));
}

TEST_CASE("files and requests that do not fit a hybrid stack are refused with a clear message") {
  // A token-shift layer without its tensor.
  MixedModel missing(false, kHybrid, /*with_shift=*/false);
  REQUIRE(missing.status.ok());
  Result<Session> s = Session::Create(missing.model, SessionLimits{1, 8, 0});
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.status().message()).find("layers.0.shift.weight") != std::string::npos);
  // layer_mixers with the wrong count.
  MixedModel short_list(false, {fb::TokenMixer::TokenShift, fb::TokenMixer::Attention});
  CHECK(short_list.status.code() == StatusCode::kInvalidModel);
  CHECK(std::string(short_list.status.message()).find("layer_mixers") != std::string::npos);
  // A kind this runtime does not know (a newer file).
  MixedModel unknown(false, {fb::TokenMixer::Attention, static_cast<fb::TokenMixer>(200),
                             fb::TokenMixer::Attention});
  CHECK(unknown.status.code() == StatusCode::kInvalidModel);
  // No attention probabilities in a token-shift layer.
  MixedModel m(false, kHybrid);
  REQUIRE(m.status.ok());
  Result<Session> session = Session::Create(m.model, SessionLimits{1, 8, 0});
  REQUIRE(session.ok());
  std::vector<float> probs(4 * 8 * 8);
  AttentionCapture capture;
  capture.layer = 0;
  capture.probs = probs.data();
  capture.capacity = probs.size();
  const Status refused = session->SetAttentionCapture(&capture);
  CHECK(refused.code() == StatusCode::kInvalidArgument);
  CHECK(std::string(refused.message()).find("token_shift") != std::string::npos);
  capture.layer = 1;  // the attention layer
  CHECK(session->SetAttentionCapture(&capture).ok());
}

TEST_CASE("RWKV-4 files that do not fit are refused with a clear message") {
  // The channel mix with the feed-forward's tensors: its own are missing.
  TinyModelOptions ffn = MixedOptions(false, kRwkvHybrid);
  ModelWriter with_ffn = testing::MakeTinyModelWriter(ffn);
  fb::ArchitectureT a = testing::TinyArchitecture(ffn);
  a.channel_mixer = fb::ChannelMixer::RwkvChannelMix;
  with_ffn.SetArchitecture(a);
  AlignedBytes ffn_bytes(with_ffn.WriteToBuffer());
  Result<Model> model = Model::FromBuffer(ffn_bytes.data(), ffn_bytes.size());
  REQUIRE_MESSAGE(model.ok(), std::string(model.status().message()));
  Result<Session> s = Session::Create(*model, SessionLimits{1, 8, 0});
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.status().message()).find("layers.0.channel_mix.mix_k") != std::string::npos);
  // No attention probabilities in a time-mix layer.
  MixedModel m(false, kRwkv);
  REQUIRE(m.status.ok());
  Result<Session> session = Session::Create(m.model, SessionLimits{1, 8, 0});
  REQUIRE(session.ok());
  std::vector<float> probs(8 * 8);
  AttentionCapture capture;
  capture.layer = 1;
  capture.probs = probs.data();
  capture.capacity = probs.size();
  const Status refused = session->SetAttentionCapture(&capture);
  CHECK(refused.code() == StatusCode::kInvalidArgument);
  CHECK(std::string(refused.message()).find("rwkv_time_mix") != std::string::npos);
}

}  // namespace
}  // namespace octet
