#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/quant.h"
#include "engine/session.h"
#include "format/model.h"
#include "kernels/f32_elementwise.h"
#include "kernels/qs8_dequantize_rows.h"
#include "kernels/qs8_gemm.h"
#include "support/loaded_model.h"
#include "support/test_models.h"

namespace octet {
namespace {

using testing::AlignedBytes;
using testing::MakeTinyModelBytes;
using testing::TinyModelOptions;

using Loaded = testing::LoadedModel;

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

// The norm runs on the session's f32_rmsnorm (the vector variants stay within
// a stated bound of the reference, kernels/f32_elementwise.h); quantization,
// product and dequantization must then match the references bit for bit.
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
    const std::vector<float> ones(x.size(), 1.0f);
    session->kernels().f32_rmsnorm(1, x.size(), x.data(), x.size(), ones.data(), a.norm_eps(),
                                   x.data(), x.size());
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

TEST_CASE("a head with 16-bit inputs is bit-exact with the two-digit reference, whatever kernel runs") {
  TinyModelOptions o = ZeroLayer(fb::Family::Llama, true);
  o.two_digit_inputs = true;
  Loaded m(o);
  REQUIRE(m.model.Find("lm_head")->input_bits == 16);
  Result<Session> session = Session::Create(m.model, SessionLimits{1, 3, 0});
  REQUIRE(session.ok());
  const int32_t ids[3] = {1, 2, 30};
  const uint32_t lengths[1] = {3};
  REQUIRE(session->Run(ids, lengths, 1, 3).ok());
  const fb::Architecture& a = m.model.architecture();
  const TensorView& head = *m.model.Find("lm_head");
  const size_t k = a.hidden_size();
  for (int row = 0; row < 3; ++row) {
    std::vector<float> x = Dequantized(*m.model.Find("token_embedding"), ids[row]);
    const std::vector<float> ones(k, 1.0f);
    session->kernels().f32_rmsnorm(1, k, x.data(), k, ones.data(), a.norm_eps(), x.data(), k);
    std::vector<int8_t> hi(k), lo(k);
    std::vector<float> residual(k);
    float hi_scale = 0, lo_scale = 0;
    QuantizeRowTwoDigits(x.data(), k, hi.data(), lo.data(), &hi_scale, &lo_scale,
                         residual.data());
    std::vector<int32_t> acc_hi(a.vocab_size()), acc_lo(a.vocab_size());
    const auto* w = static_cast<const int8_t*>(head.data);
    qs8_gemm__ref(1, a.vocab_size(), k, hi.data(), k, w, k, acc_hi.data(), a.vocab_size());
    qs8_gemm__ref(1, a.vocab_size(), k, lo.data(), k, w, k, acc_lo.data(), a.vocab_size());
    // Each digit's product dequantized by the reference kernel (built without
    // fused multiply-adds, as the runtime's kernels round), then summed: in this
    // file a * b + c could fuse (aarch64) and round differently.
    const float* cs = head.quant->scales()->data();
    std::vector<float> hi_out(a.vocab_size()), lo_out(a.vocab_size());
    qs8_dequantize_rows__ref(1, a.vocab_size(), acc_hi.data(), a.vocab_size(), &hi_scale, cs,
                             nullptr, hi_out.data(), a.vocab_size());
    qs8_dequantize_rows__ref(1, a.vocab_size(), acc_lo.data(), a.vocab_size(), &lo_scale, cs,
                             nullptr, lo_out.data(), a.vocab_size());
    for (uint32_t n = 0; n < a.vocab_size(); ++n) {
      const float expected = hi_out[n] + lo_out[n];
      CHECK(session->output().data[row * a.vocab_size() + n] == expected);
    }
  }
}

TEST_CASE("two-digit rows: 15 bits from two int8 quantizations, whatever the row") {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (size_t n : {1u, 7u, 64u, 301u}) {
    CAPTURE(n);
    std::vector<float> x(n);
    for (float& v : x) v = normal(rng) * (n == 7 ? 1e-3f : 10.0f);
    if (n == 301) x[n / 2] = -1e4f;  // one extreme value: 8 bits leave the rest a few levels
    std::vector<int8_t> hi(n), lo(n);
    std::vector<float> residual(n);
    float hs = 0, ls = 0;
    QuantizeRowTwoDigits(x.data(), n, hi.data(), lo.data(), &hs, &ls, residual.data());
    std::vector<int8_t> q8(n);
    CHECK(hs == QuantizeRowSymmetric(x.data(), n, q8.data()));
    CHECK(hi == q8);
    CHECK(ls <= hs / 254.0f * 1.0001f);
    double err8 = 0, err16 = 0;
    for (size_t i = 0; i < n; ++i) {
      CHECK(lo[i] >= -127);
      CHECK(lo[i] <= 127);
      const double two = static_cast<double>(hs) * hi[i] + static_cast<double>(ls) * lo[i];
      CHECK(std::fabs(x[i] - two) <= 0.5001 * ls);
      err8 += std::pow(x[i] - static_cast<double>(hs) * hi[i], 2);
      err16 += std::pow(x[i] - two, 2);
    }
    if (n > 1) CHECK(err16 < err8 * 1e-4);  // ~42 dB more, less what the extremes take
  }
  std::vector<int8_t> hi(3, 5), lo(3, 5);
  std::vector<float> residual(3);
  float hs = 0, ls = 0;
  const float zeros[3] = {0.0f, -0.0f, 0.0f};
  QuantizeRowTwoDigits(zeros, 3, hi.data(), lo.data(), &hs, &ls, residual.data());
  CHECK(hs == 1.0f);
  CHECK(ls == 1.0f);
  CHECK(hi == std::vector<int8_t>(3, 0));
  CHECK(lo == std::vector<int8_t>(3, 0));
  const float bad[3] = {1.0f, std::nanf(""), 2.0f};
  QuantizeRowTwoDigits(bad, 3, hi.data(), lo.data(), &hs, &ls, residual.data());
  CHECK(std::isnan(hs));
  CHECK(std::isnan(ls));
  CHECK(lo == std::vector<int8_t>(3, 0));
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

TEST_CASE("a position_offset starts learned positions at that row and bounds the length") {
  for (const fb::Family family : {fb::Family::Roberta, fb::Family::XlmRoberta}) {
    CAPTURE(fb::EnumNameFamily(family));
    TinyModelOptions o = ZeroLayer(family, false);
    o.max_positions = 6;
    o.position_offset = 2;  // pad_token_id 1 + 1: the table has 8 rows
    Loaded m(o);
    REQUIRE(m.model.Find("position_embedding")->shape[0] == 8);
    CHECK_FALSE(Session::Create(m.model, SessionLimits{1, 7, 0}).ok());
    Result<Session> session = Session::Create(m.model, SessionLimits{2, 6, 0});
    REQUIRE(session.ok());
    const int32_t ids[2 * 6] = {4, 8, 15, 16, 23, 5, 9, 0, 0, 0, 0, 0};
    const uint32_t lengths[2] = {6, 1};
    REQUIRE(session->Run(ids, lengths, 2, 6).ok());
    const OutputView out = session->output();
    for (uint32_t b = 0; b < 2; ++b) {
      for (uint32_t s = 0; s < lengths[b]; ++s) {
        const std::vector<float> tok =
            Dequantized(*m.model.Find("token_embedding"), ids[b * 6 + s]);
        const std::vector<float> pos = Dequantized(*m.model.Find("position_embedding"), s + 2);
        const std::vector<float> type = Dequantized(*m.model.Find("token_type_embedding"), 0);
        for (uint32_t i = 0; i < 16; ++i) {
          CHECK(out.data[(b * 6 + s) * 16 + i] ==
                doctest::Approx(tok[i] + pos[i] + type[i]).epsilon(1e-6));
        }
      }
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
  CHECK(session->Run(ids, ok_lengths, 3, 4).code() == StatusCode::kLimitExceeded);
  CHECK(session->Run(ids, ok_lengths, 2, 5).code() == StatusCode::kLimitExceeded);
  CHECK(session->Run(nullptr, ok_lengths, 2, 4).code() == StatusCode::kInvalidArgument);
  CHECK(session->Run(ids, ok_lengths, 2, 4).ok());  // still usable after errors
}

TEST_CASE("sessions plan at creation and refuse what they cannot run") {
  TinyModelOptions layered;
  layered.layers = 2;
  Loaded m(layered);  // int8 layers
  // The plan covers the layers' int8 KV cache: 2 layers x (8 + 4) positions
  // x 2 (K, V) x 2 kv heads x (8 int8 values + one f32 scale).
  Result<SessionPlan> plan = Session::Plan(m.model, SessionLimits{1, 8, 4});
  REQUIRE(plan.ok());
  CHECK(plan->kv_cache_bytes == 2u * (8 + 4) * 2 * 2 * (8 + sizeof(float)));
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

TinyModelOptions Layered(fb::Family family, uint32_t layers, bool int8 = false) {
  TinyModelOptions o;
  o.family = family;
  o.layers = layers;
  o.int8 = int8;
  o.packed = int8;  // as octet-convert writes int8 files
  return o;
}

// Runs `ids` ([batch, seq], lengths) through the session of the model's structure
// (encoder-decoder: the same ids on both sides) and returns the output.
std::vector<float> RunAny(Session& session, bool enc_dec, const std::vector<int32_t>& ids,
                          const std::vector<uint32_t>& lengths, uint32_t seq) {
  const auto batch = static_cast<uint32_t>(lengths.size());
  const Status s = enc_dec ? session.RunEncoderDecoder(ids.data(), lengths.data(), seq, ids.data(),
                                                       lengths.data(), seq, batch)
                           : session.Run(ids.data(), lengths.data(), batch, seq);
  REQUIRE_MESSAGE(s.ok(), std::string(s.message()));
  const OutputView out = session.output();
  return std::vector<float>(out.data,
                            out.data + static_cast<size_t>(out.batch) * out.seq * out.dim);
}

// The layer-input hook (the converter's layer-by-layer calibration): it sees
// the stream each layer reads, and what it writes there is what the layer
// reads. Running ids B with layer 1's input replaced by the stream ids A made
// there gives A's output bit for bit (the layers after read only the stream
// and the positions, the same here).
struct StreamSwap {
  std::vector<float> seen;           // the stream entering `layer` in the last run
  const std::vector<float>* put = nullptr;  // written there instead, when set
  uint32_t layer = 1;
  static void Hook(void* ctx, LayerStack, uint32_t layer, float* x, size_t rows, size_t hidden) {
    StreamSwap& s = *static_cast<StreamSwap*>(ctx);
    if (layer != s.layer) return;
    s.seen.assign(x, x + rows * hidden);
    if (s.put != nullptr) std::copy(s.put->begin(), s.put->end(), x);
  }
};

TEST_CASE("the layer-input hook sees and replaces the stream a layer reads") {
  for (bool int8 : {false, true})
  for (fb::Family family : {fb::Family::Llama, fb::Family::Bert}) {
    CAPTURE(int8);
    CAPTURE(static_cast<int>(family));
    Loaded m(Layered(family, 3, int8));
    Result<Session> session = Session::Create(m.model, SessionLimits{1, 6, 0});
    REQUIRE(session.ok());
    StreamSwap swap;
    session->SetLayerInput(&StreamSwap::Hook, &swap);
    const std::vector<int32_t> a = {3, 9, 14, 1, 30, 22}, b = {5, 8, 2, 19, 27, 4};
    const std::vector<float> want = RunAny(*session, false, a, {6}, 6);
    const std::vector<float> from_a = swap.seen;
    REQUIRE(from_a.size() == 6 * m.model.architecture().hidden_size());
    const std::vector<float> other = RunAny(*session, false, b, {6}, 6);
    CHECK(swap.seen != from_a);  // B's own stream differs...
    CHECK(other != want);
    swap.put = &from_a;  // ... and with A's put in its place, B's run is A's
    const std::vector<float> got = RunAny(*session, false, b, {6}, 6);
    CHECK(got == want);
    session->SetLayerInput(nullptr, nullptr);
    swap.put = nullptr;
    CHECK(RunAny(*session, false, b, {6}, 6) == other);
  }
}

TEST_CASE("models with layers run, and padding does not change the real positions") {
  for (bool int8 : {false, true})
  for (fb::Family family : {fb::Family::Llama, fb::Family::Gpt2, fb::Family::Bert, fb::Family::T5,
                            fb::Family::Marian, fb::Family::Gemma2}) {
    CAPTURE(int8);
    CAPTURE(static_cast<int>(family));
    Loaded m(Layered(family, 2, int8));
    Result<Session> session = Session::Create(m.model, SessionLimits{2, 7, 0});
    REQUIRE_MESSAGE(session.ok(), std::string(session.status().message()));
    // Two sequences, lengths 7 and 4, padded to 7.
    const std::vector<int32_t> ids = {3, 9, 14, 1, 30, 22, 5, 8, 2, 19, 27, 0, 0, 0};
    const bool enc_dec = family == fb::Family::T5 || family == fb::Family::Marian;
    const std::vector<float> batched = RunAny(*session, enc_dec, ids, {7, 4}, 7);
    const uint32_t dim = session->output().dim;
    for (float v : batched) REQUIRE(std::isfinite(v));
    // Sequence 1 alone, unpadded: the same numbers (every row is computed alone).
    const std::vector<int32_t> alone(ids.begin() + 7, ids.begin() + 11);
    const std::vector<float> single = RunAny(*session, enc_dec, alone, {4}, 4);
    for (size_t i = 0; i < 4 * dim; ++i) CHECK(single[i] == batched[7 * dim + i]);
  }
}

// *max_err = max(*max_err, |got - expected|), *max_ref = max(*max_ref, |expected|).
// (Plain comparisons: an fmax reduction here crashes the aarch64 cross GCC's vectorizer.)
void MaxErrors(const float* got, const float* expected, size_t n, double* max_err,
               double* max_ref) {
  for (size_t i = 0; i < n; ++i) {
    const double err = std::fabs(static_cast<double>(got[i]) - expected[i]);
    const double ref = std::fabs(static_cast<double>(expected[i]));
    if (err > *max_err) *max_err = err;
    if (ref > *max_ref) *max_ref = ref;
  }
}

// fp32: within 1e-5 (in practice 0); int8: exactly, since every row is quantized
// on its own and int8 attention aligns its key tiles to absolute positions.
TEST_CASE("decoding step by step reproduces the full-sequence logits") {
  // Gemma2: sliding and global layers, soft-capped attention and logits, sandwich norms.
  for (fb::Family family : {fb::Family::Llama, fb::Family::Gemma2})
  for (bool int8 : {false, true}) {
  CAPTURE(static_cast<int>(family));
  CAPTURE(int8);
  Loaded m(Layered(family, 2, int8));
  const uint32_t vocab = m.model.architecture().vocab_size();
  // Full sequences of 9 tokens; prompts of 3 and 5 tokens, then steps.
  const std::vector<std::vector<int32_t>> full = {{4, 17, 9, 25, 3, 11, 30, 2, 7},
                                                  {12, 5, 28, 1, 19, 6, 23, 14, 10}};
  const uint32_t prompt[2] = {3, 5};
  std::vector<std::vector<float>> reference;  // [b][9 * vocab]
  {
    Result<Session> s = Session::Create(m.model, SessionLimits{1, 9, 0});
    REQUIRE(s.ok());
    for (const auto& ids : full) {
      const uint32_t len = 9;
      REQUIRE(s->Run(ids.data(), &len, 1, 9).ok());
      reference.emplace_back(s->output().data, s->output().data + 9 * vocab);
    }
  }
  Result<Session> session = Session::Create(m.model, SessionLimits{2, 5, 4});
  REQUIRE_MESSAGE(session.ok(), std::string(session.status().message()));
  std::vector<int32_t> ids(2 * 5, 0);
  for (uint32_t b = 0; b < 2; ++b) {
    for (uint32_t s = 0; s < prompt[b]; ++s) ids[b * 5 + s] = full[b][s];
  }
  REQUIRE(session->Run(ids.data(), prompt, 2, 5).ok());
  double max_err = 0, max_ref = 0;
  auto compare = [&](uint32_t b, uint32_t pos, const float* got) {
    MaxErrors(got, reference[b].data() + pos * vocab, vocab, &max_err, &max_ref);
  };
  for (uint32_t b = 0; b < 2; ++b) {
    for (uint32_t s = 0; s < prompt[b]; ++s) {
      compare(b, s, session->output().data + (b * 5 + s) * vocab);
    }
  }
  // Four steps: sequence 0 reaches 7 tokens, sequence 1 all 9.
  for (uint32_t t = 0; t < 4; ++t) {
    const int32_t next[2] = {full[0][prompt[0] + t], full[1][prompt[1] + t]};
    const Status s = session->Step(next, 2);
    REQUIRE_MESSAGE(s.ok(), std::string(s.message()));
    REQUIRE(session->output().seq == 1);
    for (uint32_t b = 0; b < 2; ++b) {
      compare(b, prompt[b] + t, session->output().data + b * vocab);
    }
  }
  MESSAGE("step-by-step vs full (int8 " << int8 << "): max abs error / max abs reference = "
          << max_err / max_ref);
  CHECK(max_err <= (int8 ? 0.0 : 1e-5) * max_ref);
  // The cache holds max_seq + max_new_tokens = 9 positions: sequence 1 is full.
  const int32_t more[2] = {1, 1};
  CHECK(session->Step(more, 2).code() == StatusCode::kLimitExceeded);
  CHECK(session->Step(more, 1).code() == StatusCode::kInvalidArgument);
  }
}

TEST_CASE("encoder-decoder decoding step by step reproduces the teacher-forced logits") {
  for (bool int8 : {false, true})
  for (fb::Family family : {fb::Family::T5, fb::Family::Marian}) {
    CAPTURE(int8);
    CAPTURE(static_cast<int>(family));
    Loaded m(Layered(family, 2, int8));
    const uint32_t vocab = m.model.architecture().vocab_size();
    // Two sources (lengths 7 and 4, padded to 7) and full decoder sequences of 6.
    const std::vector<int32_t> source = {3, 9, 14, 1, 30, 22, 5, 8, 2, 19, 27, 0, 0, 0};
    const uint32_t source_lengths[2] = {7, 4};
    const std::vector<int32_t> full = {0, 12, 5, 28, 4, 19, 0, 7, 16, 3, 25, 11};
    const uint32_t full_lengths[2] = {6, 6};
    Result<Session> teacher = Session::Create(m.model, SessionLimits{2, 7, 0});
    REQUIRE(teacher.ok());
    REQUIRE(teacher->RunEncoderDecoder(source.data(), source_lengths, 7, full.data(),
                                       full_lengths, 6, 2).ok());
    const std::vector<float> reference(teacher->output().data,
                                       teacher->output().data + 2 * 6 * vocab);

    // Prefixes of 1 and 3 decoder tokens (padded to 3), then steps to 6 tokens.
    Result<Session> session = Session::Create(m.model, SessionLimits{2, 7, 3});
    REQUIRE(session.ok());
    const uint32_t prefix[2] = {1, 3};
    const std::vector<int32_t> dec = {full[0], 0, 0, full[6], full[7], full[8]};
    REQUIRE(session->RunEncoderDecoder(source.data(), source_lengths, 7, dec.data(), prefix, 3, 2)
                .ok());
    double max_err = 0, max_ref = 0;
    for (uint32_t b = 0; b < 2; ++b) {
      for (uint32_t s = 0; s < prefix[b]; ++s) {
        MaxErrors(session->output().data + (b * 3 + s) * vocab,
                  reference.data() + (b * 6 + s) * vocab, vocab, &max_err, &max_ref);
      }
    }
    // Sequence 0 steps 5 times (to 6 tokens), sequence 1 along with it (to 8:
    // its last 2 steps have no reference and are only checked for finiteness).
    for (uint32_t t = 0; t < 5; ++t) {
      const int32_t next[2] = {full[prefix[0] + t],
                               prefix[1] + t < 6 ? full[6 + prefix[1] + t] : 1};
      const Status s = session->StepEncoderDecoder(next, 2);
      REQUIRE_MESSAGE(s.ok(), std::string(s.message()));
      REQUIRE(session->output().seq == 1);
      for (uint32_t b = 0; b < 2; ++b) {
        const uint32_t pos = prefix[b] + t;
        const float* got = session->output().data + b * vocab;
        if (pos < 6) {
          MaxErrors(got, reference.data() + (b * 6 + pos) * vocab, vocab, &max_err, &max_ref);
        } else {
          for (uint32_t n = 0; n < vocab; ++n) REQUIRE(std::isfinite(got[n]));
        }
      }
    }
    MESSAGE("encoder-decoder step-by-step vs teacher-forced (int8 "
            << int8 << "): max abs error / max abs reference = " << max_err / max_ref);
    CHECK(max_err <= (int8 ? 0.0 : 1e-5) * max_ref);
    // max_seq + max_new_tokens = 10 positions: sequence 1 is at 8, two more fit.
    const int32_t more[2] = {1, 1};
    CHECK(session->StepEncoderDecoder(more, 2).ok());
    CHECK(session->StepEncoderDecoder(more, 2).ok());
    CHECK(session->StepEncoderDecoder(more, 2).code() == StatusCode::kLimitExceeded);
    CHECK(session->StepEncoderDecoder(more, 1).code() == StatusCode::kInvalidArgument);
    CHECK(session->Step(more, 2).code() == StatusCode::kInvalidArgument);
  }
}

// Create's status for a tiny fp32 llama whose architecture is changed after
// its tensors were written.
Status CreateWithArchitecture(void (*change)(fb::ArchitectureT&)) {
  const TinyModelOptions o = Layered(fb::Family::Llama, 1);
  ModelWriter writer = testing::MakeTinyModelWriter(o);
  fb::ArchitectureT a = testing::TinyArchitecture(o);
  change(a);
  writer.SetArchitecture(a);
  AlignedBytes bytes(writer.WriteToBuffer());
  Result<Model> model = Model::FromBuffer(bytes.data(), bytes.size());
  if (!model.ok()) return model.status();
  Result<Session> session = Session::Create(*model, SessionLimits{1, 4, 0});
  return session.ok() ? Status::Ok() : session.status();
}

TEST_CASE("weights are checked at creation: missing and misshapen tensors are named") {
  Status s = CreateWithArchitecture([](fb::ArchitectureT& a) { a.attention->qkv_bias = true; });
  CHECK(s.code() == StatusCode::kInvalidModel);
  CHECK(std::string(s.message()).find("layers.0.attn.q.bias") != std::string::npos);
  s = CreateWithArchitecture([](fb::ArchitectureT& a) { a.intermediate_size = 40; });
  CHECK(s.code() == StatusCode::kInvalidModel);
  CHECK(std::string(s.message()).find("layers.0.ffn.gate.weight' must be F32 [40, 16]") !=
        std::string::npos);
}

// The int8 twin of a model (the same draws, quantized per output channel)
// against the fp32 model: cosine similarity per position >= 0.998 (docs/design.md
// §7), every family's structure, a padded batch, peaky attention
// (layer_stddev 0.2) and 3 layers so errors compound.
TEST_CASE("int8 models stay within cosine 0.998 of their fp32 twins, per position") {
  for (fb::Family family : {fb::Family::Llama, fb::Family::Gpt2, fb::Family::Bert, fb::Family::T5,
                            fb::Family::Marian}) {
    CAPTURE(static_cast<int>(family));
    std::vector<std::vector<float>> outputs;
    uint32_t dim = 0;
    const std::vector<int32_t> ids = {3, 9, 14, 1, 30, 22, 5, 8, 2, 19, 27, 0, 0, 0};
    const bool enc_dec = family == fb::Family::T5 || family == fb::Family::Marian;
    for (bool int8 : {false, true}) {
      TinyModelOptions o = Layered(family, 3, int8);
      o.layer_stddev = 0.2f;
      Loaded m(o);
      Result<Session> session = Session::Create(m.model, SessionLimits{2, 7, 0});
      REQUIRE_MESSAGE(session.ok(), std::string(session.status().message()));
      outputs.push_back(RunAny(*session, enc_dec, ids, {7, 4}, 7));
      dim = session->output().dim;
    }
    double worst = 1.0;
    for (uint32_t b = 0; b < 2; ++b) {
      for (uint32_t s = 0; s < (b == 0 ? 7u : 4u); ++s) {
        const float* x = outputs[0].data() + (b * 7 + s) * dim;
        const float* y = outputs[1].data() + (b * 7 + s) * dim;
        double dot = 0, nx = 0, ny = 0;
        for (uint32_t i = 0; i < dim; ++i) {
          dot += static_cast<double>(x[i]) * y[i];
          nx += static_cast<double>(x[i]) * x[i];
          ny += static_cast<double>(y[i]) * y[i];
        }
        const double cos = dot / std::sqrt(nx * ny);
        CHECK(cos >= 0.998);
        if (cos < worst) worst = cos;
      }
    }
    MESSAGE("family " << static_cast<int>(family) << ": worst cosine int8 vs fp32 " << worst);
  }
}

// The same model with every int8 tensor dequantized to F32 (row-major int8 only):
// its products differ from the int8 model's by the activations' rounding alone.
std::unique_ptr<AlignedBytes> DequantizedTwin(const Model& model, const TinyModelOptions& o) {
  ModelWriter writer;
  writer.SetArchitecture(testing::TinyArchitecture(o));
  std::vector<std::vector<float>> keep;
  for (size_t i = 0; i < model.num_tensors(); ++i) {
    const TensorView& t = model.tensor(i);
    std::vector<uint32_t> shape(t.shape, t.shape + t.rank);
    if (t.dtype == fb::DType::F32) {
      writer.AddTensorCopy(t.name, fb::DType::F32, shape, t.data);
      continue;
    }
    REQUIRE(t.dtype == fb::DType::I8);
    REQUIRE(t.layout == fb::TensorLayout::RowMajor);
    std::vector<float> values(t.numel);
    for (uint32_t r = 0; r < t.shape[0]; ++r) {
      const std::vector<float> row = Dequantized(t, r);
      std::copy(row.begin(), row.end(), values.begin() + static_cast<size_t>(r) * t.shape[1]);
    }
    writer.AddTensorCopy(t.name, fb::DType::F32, shape, values.data());
  }
  return std::make_unique<AlignedBytes>(writer.WriteToBuffer());
}

TEST_CASE("16-bit inputs: row-major and packed agree bit for bit, and the input error shrinks") {
  for (fb::Family family : {fb::Family::Llama, fb::Family::Gpt2, fb::Family::Bert, fb::Family::T5}) {
    CAPTURE(static_cast<int>(family));
    const std::vector<int32_t> ids = {3, 9, 14, 1, 30, 22, 5, 8, 2, 19, 27, 0, 0, 0};
    const bool enc_dec = family == fb::Family::T5;
    // [0] the int8 weights in F32; int8 with 8-bit inputs; 16-bit inputs packed, row-major
    std::vector<std::vector<float>> outputs;
    auto run = [&](const Model& model) {
      Result<Session> session = Session::Create(model, SessionLimits{2, 7, 0});
      REQUIRE_MESSAGE(session.ok(), std::string(session.status().message()));
      outputs.push_back(RunAny(*session, enc_dec, ids, {7, 4}, 7));
    };
    TinyModelOptions o = Layered(family, 3, true);
    o.layer_stddev = 0.2f;
    o.packed = false;
    {
      Loaded m(o);
      const std::unique_ptr<AlignedBytes> twin = DequantizedTwin(m.model, o);
      Result<Model> f32 = Model::FromBuffer(twin->data(), twin->size());
      REQUIRE(f32.ok());
      run(*f32);
      run(m.model);
    }
    o.two_digit_inputs = true;
    for (bool packed : {true, false}) {
      o.packed = packed;
      Loaded m(o);
      run(m.model);
    }
    CHECK(outputs[2] == outputs[3]);
    auto error = [&](const std::vector<float>& y) {
      double e = 0, s = 0;
      for (size_t i = 0; i < y.size(); ++i) {
        const double d = static_cast<double>(y[i]) - outputs[0][i];
        e += d * d;
        s += static_cast<double>(outputs[0][i]) * outputs[0][i];
      }
      return e / s;
    };
    // What is left with 16-bit inputs is the int8 attention's rounding.
    MESSAGE("noise / signal against the same weights in F32: 8-bit inputs "
            << error(outputs[1]) << ", 16-bit " << error(outputs[2]));
    CHECK(error(outputs[2]) < 0.5 * error(outputs[1]));
  }
}

}  // namespace
}  // namespace octet

namespace octet {
namespace {

// Logits of a session with the given limits: Run over ids [batch, seq], then
// `steps` Steps; each sequence's last prompt row, then each step's row.
std::vector<float> PromptAndSteps(const Model& model, SessionLimits limits,
                                  const std::vector<int32_t>& ids, const uint32_t* lengths,
                                  uint32_t batch, uint32_t seq, uint32_t steps) {
  const uint32_t vocab = model.architecture().vocab_size();
  Result<Session> session = Session::Create(model, limits);
  REQUIRE_MESSAGE(session.ok(), std::string(session.status().message()));
  REQUIRE(session->Run(ids.data(), lengths, batch, seq).ok());
  std::vector<float> out;
  const OutputView o = session->output();
  for (uint32_t b = 0; b < batch; ++b) {
    const size_t row = o.seq == 1 ? b : static_cast<size_t>(b) * seq + lengths[b] - 1;
    out.insert(out.end(), o.data + row * vocab, o.data + (row + 1) * vocab);
  }
  for (uint32_t t = 0; t < steps; ++t) {
    std::vector<int32_t> next(batch);
    for (uint32_t b = 0; b < batch; ++b) next[b] = static_cast<int32_t>((t * 3 + b * 5 + 1) % vocab);
    REQUIRE(session->Step(next.data(), batch).ok());
    out.insert(out.end(), session->output().data, session->output().data + batch * vocab);
  }
  return out;
}

TEST_CASE("chunked prompts and last-row logits give the same logits, bit for bit") {
  for (bool int8 : {true, false}) {
    CAPTURE(int8);
    TinyModelOptions options;
    options.family = fb::Family::Llama;
    options.layers = 2;
    options.int8 = int8;
    options.packed = int8;
    options.max_positions = 64;
    Loaded m(options);
    const uint32_t batch = 2, seq = 29, steps = 4;
    std::vector<int32_t> ids(batch * seq);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 11 + 2) % 32);
    const uint32_t lengths[batch] = {seq, 17};
    SessionLimits full{batch, seq, steps};
    const std::vector<float> reference = PromptAndSteps(m.model, full, ids, lengths, batch, seq,
                                                        steps);
    Result<SessionPlan> full_plan = Session::Plan(m.model, full);
    REQUIRE(full_plan.ok());
    for (uint32_t chunk : {1u, 4u, 7u, 16u, 0u}) {
      for (bool last_only : {false, true}) {
        CAPTURE(chunk);
        CAPTURE(last_only);
        SessionLimits limits = full;
        limits.prefill_chunk = chunk;
        limits.last_logits_only = last_only;
        const std::vector<float> got = PromptAndSteps(m.model, limits, ids, lengths, batch, seq,
                                                      steps);
        REQUIRE(got.size() == reference.size());
        CHECK(std::memcmp(got.data(), reference.data(), got.size() * sizeof(float)) == 0);
        // Smaller buffers: chunks plan fewer rows, last_logits_only fewer logits.
        Result<SessionPlan> plan = Session::Plan(m.model, limits);
        REQUIRE(plan.ok());
        if (last_only || (chunk != 0 && chunk < seq)) {
          CHECK(plan->total() < full_plan->total());
        }
      }
    }
  }
}

TEST_CASE("a tied table packed for the head gives the row-major table's logits, bit for bit") {
  for (fb::Family family : {fb::Family::Llama, fb::Family::Gpt2, fb::Family::Gemma}) {
    CAPTURE(static_cast<int>(family));
    TinyModelOptions options;
    options.family = family;
    options.layers = 2;
    options.int8 = true;
    options.tied = true;
    options.max_positions = 64;
    const uint32_t batch = 2, seq = 11, steps = 5;
    std::vector<int32_t> ids(batch * seq);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 7 + 3) % 32);
    const uint32_t lengths[batch] = {seq, 6};
    std::vector<float> out[2];
    for (int packed = 0; packed < 2; ++packed) {
      options.packed = packed != 0;
      Loaded m(options);
      const TensorView* table = m.model.Find("token_embedding");
      REQUIRE(table != nullptr);
      CHECK((table->layout == fb::TensorLayout::PackedQs8N16K4) == options.packed);
      out[packed] = PromptAndSteps(m.model, SessionLimits{batch, seq, steps}, ids, lengths, batch,
                                   seq, steps);
    }
    REQUIRE(out[0].size() == out[1].size());
    CHECK(std::memcmp(out[0].data(), out[1].data(), out[0].size() * sizeof(float)) == 0);
  }
}

// Extend(k) against its two twins: k Steps (the same cache for the next step;
// bit for bit with int8 attention, fp32 within the step-vs-prompt rounding)
// and one Run over the whole sequence (bit for bit: a later prompt chunk).
TEST_CASE("Extend appends tokens as Steps do, and as a longer prompt does") {
  for (bool int8 : {true, false}) {
    for (uint32_t chunk : {0u, 2u}) {
      for (bool last_only : {false, true}) {
        CAPTURE(int8);
        CAPTURE(chunk);
        CAPTURE(last_only);
        TinyModelOptions options;
        options.family = fb::Family::Llama;
        options.layers = 2;
        options.int8 = int8;
        options.packed = int8;
        options.max_positions = 64;
        Loaded m(options);
        const uint32_t vocab = m.model.architecture().vocab_size();
        const uint32_t batch = 2, seq = 5, k = 4;
        const std::vector<int32_t> prompt = {4, 17, 9, 0, 0, 12, 5, 28, 1, 19};  // [2, 5]
        const uint32_t lengths[batch] = {3, 5};
        const std::vector<int32_t> more = {25, 3, 11, 30, 6, 23, 14, 10};  // [2, k]
        const int32_t next[batch] = {7, 2};
        SessionLimits limits{batch, seq, k + 1};
        limits.prefill_chunk = chunk;
        limits.last_logits_only = last_only;
        // The last new token's logits of each sequence.
        auto last_rows = [&](const Session& s) {
          std::vector<float> rows;
          const OutputView out = s.output();
          for (uint32_t b = 0; b < batch; ++b) {
            const float* row = out.data + (static_cast<size_t>(b) * out.seq + out.seq - 1) * vocab;
            rows.insert(rows.end(), row, row + vocab);
          }
          return rows;
        };
        Result<Session> stepped = Session::Create(m.model, limits);
        Result<Session> extended = Session::Create(m.model, limits);
        REQUIRE(stepped.ok());
        REQUIRE(extended.ok());
        REQUIRE(stepped->Run(prompt.data(), lengths, batch, seq).ok());
        REQUIRE(extended->Run(prompt.data(), lengths, batch, seq).ok());
        for (uint32_t t = 0; t < k; ++t) {
          const int32_t ids[batch] = {more[t], more[k + t]};
          REQUIRE(stepped->Step(ids, batch).ok());
        }
        const Status st = extended->Extend(more.data(), batch, k);
        REQUIRE_MESSAGE(st.ok(), std::string(st.message()));
        CHECK(extended->output().seq == (last_only ? 1u : k));
        const std::vector<float> a = last_rows(*stepped), b = last_rows(*extended);
        // Sample reads the last new token's row.
        int32_t sampled[batch];
        uint64_t rng = 1;
        REQUIRE(extended->Sample(SamplingParams{0.0f, 0, 1.0f}, &rng, sampled).ok());
        for (uint32_t s = 0; s < batch; ++s) {
          CHECK(sampled[s] == GreedyToken(b.data() + static_cast<size_t>(s) * vocab, vocab));
        }
        // The caches agree: the next step gives the same logits.
        REQUIRE(stepped->Step(next, batch).ok());
        REQUIRE(extended->Step(next, batch).ok());
        const std::vector<float> a2 = last_rows(*stepped), b2 = last_rows(*extended);
        if (int8) {
          CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
          CHECK(std::memcmp(a2.data(), b2.data(), a2.size() * sizeof(float)) == 0);
        } else {
          double max_err = 0, max_ref = 0;
          for (size_t i = 0; i < a.size(); ++i) {
            max_err = std::max({max_err, std::fabs(static_cast<double>(a[i]) - b[i]),
                                std::fabs(static_cast<double>(a2[i]) - b2[i])});
            max_ref = std::max({max_ref, std::fabs(static_cast<double>(a[i])),
                                std::fabs(static_cast<double>(a2[i]))});
          }
          CHECK(max_err <= 1e-5 * max_ref);
        }
        // One Run over prompt + the k tokens: the same last rows, bit for bit.
        const uint32_t full_seq = seq + k;
        std::vector<int32_t> full(batch * full_seq, 0);
        uint32_t full_lengths[batch];
        for (uint32_t s = 0; s < batch; ++s) {
          for (uint32_t i = 0; i < lengths[s]; ++i) full[s * full_seq + i] = prompt[s * seq + i];
          for (uint32_t i = 0; i < k; ++i) full[s * full_seq + lengths[s] + i] = more[s * k + i];
          full_lengths[s] = lengths[s] + k;
        }
        SessionLimits whole = limits;
        whole.max_seq = full_seq;
        whole.last_logits_only = true;
        Result<Session> run = Session::Create(m.model, whole);
        REQUIRE(run.ok());
        REQUIRE(run->Run(full.data(), full_lengths, batch, full_seq).ok());
        const std::vector<float> c = last_rows(*run);
        CHECK(std::memcmp(c.data(), b.data(), c.size() * sizeof(float)) == 0);
      }
    }
  }
  // Checked like Step: a Run first, the batch, the ids, room in the cache.
  Loaded m(Layered(fb::Family::Llama, 2, true));
  Result<Session> s = Session::Create(m.model, SessionLimits{1, 4, 2});
  REQUIRE(s.ok());
  const int32_t ids[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  CHECK(s->Extend(ids, 1, 2).code() == StatusCode::kFailedPrecondition);  // no Run yet
  const uint32_t len = 3;
  REQUIRE(s->Run(ids, &len, 1, 4).ok());
  CHECK(s->Extend(ids, 2, 2).code() == StatusCode::kInvalidArgument);  // batch
  CHECK(s->Extend(ids, 1, 0).code() == StatusCode::kInvalidArgument);  // no tokens
  const int32_t bad[2] = {1, 1 << 20};
  CHECK(s->Extend(bad, 1, 2).code() == StatusCode::kInvalidArgument);  // vocabulary
  CHECK(s->Extend(ids, 1, 4).code() == StatusCode::kLimitExceeded);    // 3 + 4 > 4 + 2
  CHECK(s->Extend(ids, 1, 3).ok());                                    // 3 + 3 fits
}

TEST_CASE("LongRope: a session's factors are fixed by its planned positions") {
  // Phi-3's su/longrope: the short factors when max_seq + max_new_tokens <=
  // original_max_positions, else the long ones, for the whole session (prompt
  // and steps alike), so that steps continue the prompt's rotation.
  const auto longrope = [](fb::ArchitectureT& a) {
    a.family = fb::Family::Phi3;
    a.rope = std::make_unique<fb::RopeT>();
    a.rope->rotary_dim = 4;  // partial: 4 of head_dim 8
    a.rope->scaling = fb::RopeScaling::LongRope;
    a.rope->short_factors = {1.0f, 1.5f};
    a.rope->long_factors = {4.0f, 40.0f};
    a.rope->original_max_positions = 6;
    a.rope->attention_factor = 1.25f;
  };
  for (bool int8 : {false, true}) {
    CAPTURE(int8);
    TinyModelOptions o = Layered(fb::Family::Llama, 2, int8);
    o.layer_stddev = 0.3f;  // peaky attention: positions matter
    Loaded m(o, longrope);
    const uint32_t vocab = m.model.architecture().vocab_size();
    const std::vector<int32_t> ids = {4, 17, 9, 25, 3, 11, 30, 2};
    const auto run = [&](uint32_t max_seq, uint32_t max_new, uint32_t len) {
      Result<Session> s = Session::Create(m.model, SessionLimits{1, max_seq, max_new});
      REQUIRE_MESSAGE(s.ok(), std::string(s.status().message()));
      REQUIRE(s->Run(ids.data(), &len, 1, len).ok());
      return std::vector<float>(s->output().data, s->output().data + len * vocab);
    };
    const std::vector<float> short6 = run(6, 0, 6);  // 6 positions: short
    const std::vector<float> long6 = run(6, 2, 6);   // 8 planned: long
    const std::vector<float> long8 = run(8, 0, 8);
    double max_err = 0, max_ref = 0;
    MaxErrors(long6.data(), long8.data(), 6 * vocab, &max_err, &max_ref);
    CHECK(max_err <= 1e-5 * max_ref);  // the same factors: the same first 6 positions
    double diff = 0, ref = 0;
    MaxErrors(short6.data() + vocab, long6.data() + vocab, 5 * vocab, &diff, &ref);
    MESSAGE("short vs long factors: max abs difference / max abs = " << diff / ref);
    CHECK(diff > 1e-3 * ref);  // the factors do change positions 1..5
    // Steps of the 8-position session continue with the long factors.
    Result<Session> s = Session::Create(m.model, SessionLimits{1, 6, 2});
    REQUIRE(s.ok());
    uint32_t len = 6;
    REQUIRE(s->Run(ids.data(), &len, 1, 6).ok());
    max_err = max_ref = 0;
    for (uint32_t t = 6; t < 8; ++t) {
      REQUIRE(s->Step(&ids[t], 1).ok());
      MaxErrors(s->output().data, long8.data() + t * vocab, vocab, &max_err, &max_ref);
    }
    CHECK(max_err <= (int8 ? 1e-2 : 1e-5) * max_ref);
  }
}

}  // namespace
}  // namespace octet
