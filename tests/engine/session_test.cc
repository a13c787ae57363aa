#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/quant.h"
#include "engine/session.h"
#include "format/model.h"
#include "kernels/qs8_gemm.h"
#include "support/test_models.h"

namespace octet {
namespace {

using testing::AlignedBytes;
using testing::MakeTinyModelBytes;
using testing::TinyModelOptions;

struct Loaded {
  explicit Loaded(const TinyModelOptions& options) : bytes(MakeTinyModelBytes(options)) {
    Result<Model> loaded = Model::FromBuffer(bytes.data(), bytes.size());
    REQUIRE_MESSAGE(loaded.ok(), std::string(loaded.status().message()));
    model = std::move(loaded).value();
  }
  AlignedBytes bytes;
  Model model;
};

TinyModelOptions ZeroLayer(fb::Family family, bool int8) {
  TinyModelOptions o;
  o.family = family;
  o.layers = 0;
  o.int8 = int8;
  return o;
}

// Row `row` of a F32 or per-row int8 matrix, dequantized.
std::vector<float> Dequantized(const TensorView& t, uint32_t row) {
  const uint32_t n = t.shape[1];
  std::vector<float> out(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (t.dtype == fb::DType::F32) {
      out[i] = static_cast<const float*>(t.data)[static_cast<size_t>(row) * n + i];
    } else {
      out[i] = t.quant->scales()->Get(row) *
               static_cast<const int8_t*>(t.data)[static_cast<size_t>(row) * n + i];
    }
  }
  return out;
}

// The decoder's expected logits for one token, computed independently of the
// session: embedding -> RMS norm (weights are 1) -> head, in double.
std::vector<double> ExpectedLogits(const Model& model, int32_t id) {
  const fb::Architecture& a = model.architecture();
  std::vector<float> x = Dequantized(*model.Find("token_embedding"), id);
  double sum_sq = 0;
  for (float v : x) sum_sq += static_cast<double>(v) * v;
  const double inv = 1.0 / std::sqrt(sum_sq / x.size() + a.norm_eps());
  const TensorView& head = *model.Find(a.tied_embeddings() ? "token_embedding" : "lm_head");
  std::vector<double> logits(a.vocab_size());
  for (uint32_t n = 0; n < a.vocab_size(); ++n) {
    const std::vector<float> w = Dequantized(head, n);
    double acc = 0;
    for (size_t i = 0; i < x.size(); ++i) acc += x[i] * inv * w[i];
    logits[n] = acc;
  }
  return logits;
}

double Cosine(const float* a, const std::vector<double>& b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    dot += a[i] * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += b[i] * b[i];
  }
  return dot / std::sqrt(na * nb);
}

TEST_CASE("a zero-layer decoder computes embedding -> norm -> LM head") {
  for (bool int8 : {false, true}) {
    for (bool tied : {false, true}) {
      CAPTURE(int8);
      CAPTURE(tied);
      TinyModelOptions options = ZeroLayer(fb::Family::Llama, int8);
      options.tied = tied;
      Loaded m(options);
      Result<Session> session = Session::Create(m.model, SessionLimits{2, 4, 0});
      REQUIRE_MESSAGE(session.ok(), std::string(session.status().message()));
      const int32_t ids[2 * 4] = {3, 17, 5, 31, 9, 0, 0, 0};
      const uint32_t lengths[2] = {4, 1};
      REQUIRE(session->Run(ids, lengths, 2, 4).ok());
      const OutputView out = session->output();
      CHECK(out.batch == 2);
      CHECK(out.seq == 4);
      CHECK(out.dim == 32);
      for (int row : {0, 1, 2, 3, 4}) {
        const std::vector<double> expected = ExpectedLogits(m.model, ids[row]);
        const float* got = out.data + static_cast<size_t>(row) * out.dim;
        if (!int8) {
          for (size_t n = 0; n < expected.size(); ++n) {
            CHECK(got[n] == doctest::Approx(expected[n]).epsilon(1e-5));
          }
        } else {
          // int8 activations and weights: the same direction as the float result.
          CHECK(Cosine(got, expected) > 0.999);
        }
      }
    }
  }
}

TEST_CASE("the int8 LM head is bit-exact with the reference pipeline, whatever kernel runs") {
  Loaded m(ZeroLayer(fb::Family::Llama, true));
  Result<Session> session = Session::Create(m.model, SessionLimits{1, 3, 0});
  REQUIRE(session.ok());
  MESSAGE("qs8_gemm in use: " << session->kernels().qs8_gemm_name);
  const int32_t ids[3] = {1, 2, 30};
  const uint32_t lengths[1] = {3};
  REQUIRE(session->Run(ids, lengths, 1, 3).ok());
  const fb::Architecture& a = m.model.architecture();
  const TensorView& head = *m.model.Find("lm_head");
  for (int row = 0; row < 3; ++row) {
    std::vector<float> x = Dequantized(*m.model.Find("token_embedding"), ids[row]);
    float sum_sq = 0.0f;
    for (float v : x) sum_sq += v * v;
    const float inv = 1.0f / std::sqrt(sum_sq / static_cast<float>(x.size()) + a.norm_eps());
    for (float& v : x) v = v * inv * 1.0f;
    std::vector<int8_t> q(x.size());
    const float row_scale = QuantizeRowSymmetric(x.data(), x.size(), q.data());
    std::vector<int32_t> acc(a.vocab_size());
    qs8_gemm__ref(1, a.vocab_size(), x.size(), q.data(), x.size(),
                  static_cast<const int8_t*>(head.data), x.size(), acc.data(), a.vocab_size());
    for (uint32_t n = 0; n < a.vocab_size(); ++n) {
      const float expected = DequantizeAcc(acc[n], row_scale, head.quant->scales()->Get(n));
      CHECK(session->output().data[row * a.vocab_size() + n] == expected);
    }
  }
}

TEST_CASE("a zero-layer encoder outputs token + position + type embeddings") {
  Loaded m(ZeroLayer(fb::Family::Bert, false));
  Result<Session> session = Session::Create(m.model, SessionLimits{1, 5, 0});
  REQUIRE(session.ok());
  const int32_t ids[5] = {4, 8, 15, 16, 23};
  const uint32_t lengths[1] = {5};
  REQUIRE(session->Run(ids, lengths, 1, 5).ok());
  const OutputView out = session->output();
  CHECK(out.dim == 16);
  for (uint32_t s = 0; s < 5; ++s) {
    const std::vector<float> tok = Dequantized(*m.model.Find("token_embedding"), ids[s]);
    const std::vector<float> pos = Dequantized(*m.model.Find("position_embedding"), s);
    const std::vector<float> type = Dequantized(*m.model.Find("token_type_embedding"), 0);
    for (uint32_t i = 0; i < 16; ++i) {
      CHECK(out.data[s * 16 + i] == doctest::Approx(tok[i] + pos[i] + type[i]).epsilon(1e-6));
    }
  }
}

TEST_CASE("padding does not change the real positions of other sequences") {
  Loaded m(ZeroLayer(fb::Family::Llama, true));
  Result<Session> alone = Session::Create(m.model, SessionLimits{1, 6, 0});
  Result<Session> batched = Session::Create(m.model, SessionLimits{3, 6, 0});
  REQUIRE(alone.ok());
  REQUIRE(batched.ok());
  const int32_t single[3] = {7, 8, 9};
  const uint32_t single_len[1] = {3};
  REQUIRE(alone->Run(single, single_len, 1, 3).ok());
  const int32_t ids[3 * 6] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 11, 0, 0, 0, 0, 0};
  const uint32_t lengths[3] = {6, 3, 1};
  REQUIRE(batched->Run(ids, lengths, 3, 6).ok());
  const uint32_t v = 32;
  for (uint32_t s = 0; s < 3; ++s) {
    CHECK(std::memcmp(alone->output().data + s * v, batched->output().data + (6 + s) * v,
                      v * sizeof(float)) == 0);
  }
}

TEST_CASE("run-time inputs are checked: ids, lengths, batch and sequence limits") {
  Loaded m(ZeroLayer(fb::Family::Llama, true));
  Result<Session> session = Session::Create(m.model, SessionLimits{2, 4, 0});
  REQUIRE(session.ok());
  const int32_t ids[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const uint32_t ok_lengths[2] = {4, 4};
  const int32_t bad_ids[4] = {1, 32, 0, 0};
  const int32_t negative_ids[4] = {-1, 0, 0, 0};
  const uint32_t one[1] = {2};
  const uint32_t zero[1] = {0};
  const uint32_t too_long[1] = {5};
  Status s = session->Run(bad_ids, one, 1, 4);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(std::strstr(s.message(), "vocabulary") != nullptr);
  CHECK(session->Run(negative_ids, one, 1, 4).code() == StatusCode::kInvalidArgument);
  CHECK(session->Run(ids, zero, 1, 4).code() == StatusCode::kInvalidArgument);
  CHECK(session->Run(ids, too_long, 1, 4).code() == StatusCode::kInvalidArgument);
  CHECK(session->Run(ids, ok_lengths, 3, 4).code() == StatusCode::kInvalidArgument);
  CHECK(session->Run(ids, ok_lengths, 2, 5).code() == StatusCode::kInvalidArgument);
  CHECK(session->Run(nullptr, ok_lengths, 2, 4).code() == StatusCode::kInvalidArgument);
  CHECK(session->Run(ids, ok_lengths, 2, 4).ok());  // still usable after errors
}

TEST_CASE("sessions plan at creation and refuse what they cannot run") {
  TinyModelOptions layered;
  layered.layers = 2;
  Loaded m(layered);
  Result<Session> session = Session::Create(m.model, SessionLimits{1, 8, 0});
  CHECK(session.status().code() == StatusCode::kUnsupported);
  // The plan covers the layers' KV cache: 2 layers x 8 positions x 2 (K, V)
  // x 2 kv heads x (8 int8 + one f32 scale).
  Result<SessionPlan> plan = Session::Plan(m.model, SessionLimits{1, 8, 0});
  REQUIRE(plan.ok());
  CHECK(plan->kv_cache_bytes == 2u * 8 * 2 * 2 * (8 + 4));
  CHECK(Session::Plan(m.model, SessionLimits{0, 8, 0}).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK(Session::Plan(m.model, SessionLimits{4096, 1u << 20, 0}).status().code() ==
        StatusCode::kInvalidArgument);

  Loaded bert(ZeroLayer(fb::Family::Bert, true));  // 64 learned positions
  CHECK(Session::Create(bert.model, SessionLimits{1, 65, 0}).status().code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("a session can run entirely in caller-owned memory") {
  Loaded m(ZeroLayer(fb::Family::Llama, true));
  const SessionLimits limits{1, 4, 0};
  Result<SessionPlan> plan = Session::Plan(m.model, limits);
  REQUIRE(plan.ok());
  AlignedBytes activations(plan->activation_bytes), scratch(plan->scratch_bytes);
  SessionMemory memory{activations.data(), scratch.data(), nullptr};
  Result<Session> session = Session::CreateWithMemory(m.model, limits, memory);
  REQUIRE_MESSAGE(session.ok(), std::string(session.status().message()));
  const int32_t ids[4] = {1, 2, 3, 4};
  const uint32_t lengths[1] = {4};
  REQUIRE(session->Run(ids, lengths, 1, 4).ok());
  const uint8_t* out = reinterpret_cast<const uint8_t*>(session->output().data);
  CHECK(out >= activations.data());
  CHECK(out < activations.data() + activations.size());
}

}  // namespace
}  // namespace octet
