// Session::SetAttentionCapture (engine/forward.h AttentionCapture): the
// probabilities of one layer's attention against a recomputation in double
// from the layer's input (fp32 BERT: Q and K projected here from the model's
// tensors), and their structure on every kind of attention: rows sum to 1,
// causal rows are zero above the diagonal, padding columns and padded query
// rows are zero, a sliding window is respected, the decoder's cross-attention
// sees the source. The capture changes no output bit and does not depend on
// the thread count or the prefill chunk. (The int8 probabilities' definition
// is checked against qs8_attention itself in tests/ops/qs8_attention_test.cc.)
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "engine/session.h"
#include "support/loaded_model.h"
#include "support/test_models.h"

namespace octet {
namespace {

using testing::LoadedModel;
using testing::TinyModelOptions;

// The residual stream after each layer, from the layer observer.
struct LayerInputs {
  std::vector<std::vector<float>> after;  // [layers][rows * hidden]
  static void Observe(void* ctx, LayerStack, uint32_t layer, const float* x, size_t rows,
                      size_t hidden) {
    auto* self = static_cast<LayerInputs*>(ctx);
    if (self->after.size() <= layer) self->after.resize(layer + 1);
    self->after[layer].assign(x, x + rows * hidden);
  }
};

// A padded batch: ids [batch, seq] with lengths.
struct Batch {
  std::vector<int32_t> ids;
  std::vector<uint32_t> lengths;
  uint32_t seq = 0;
  uint32_t batch() const { return static_cast<uint32_t>(lengths.size()); }
};

Batch MakeBatch(const std::vector<uint32_t>& lengths, uint32_t vocab, uint32_t salt = 0) {
  Batch b;
  b.lengths = lengths;
  for (uint32_t n : lengths) b.seq = n > b.seq ? n : b.seq;
  b.ids.assign(static_cast<size_t>(lengths.size()) * b.seq, 0);
  for (size_t s = 0; s < lengths.size(); ++s) {
    for (uint32_t i = 0; i < lengths[s]; ++i) {
      b.ids[s * b.seq + i] = static_cast<int32_t>((s * 11 + i * 7 + 3 + salt) % vocab);
    }
  }
  return b;
}

std::vector<float> Capture(Session& session, AttentionCapture c, const Batch& in,
                           AttentionCapture* shape = nullptr,
                           std::vector<float>* output = nullptr) {
  constexpr uint32_t kHeads = 64;  // more than any test model has: the run sets c.heads
  std::vector<float> probs(static_cast<size_t>(in.batch()) * kHeads * in.seq * in.seq, -1.0f);
  c.probs = probs.data();
  c.capacity = probs.size();
  REQUIRE(session.SetAttentionCapture(&c).ok());
  const Status s = session.Run(in.ids.data(), in.lengths.data(), in.batch(), in.seq);
  REQUIRE_MESSAGE(s.ok(), std::string(s.message()));
  REQUIRE(session.SetAttentionCapture(nullptr).ok());
  REQUIRE(c.batch == in.batch());
  REQUIRE(c.q_len == in.seq);
  REQUIRE(c.k_len == in.seq);
  probs.resize(static_cast<size_t>(c.batch) * c.heads * c.q_len * c.k_len);
  if (shape != nullptr) *shape = c;
  if (output != nullptr) {
    const OutputView out = session.output();
    output->assign(out.data, out.data + static_cast<size_t>(out.batch) * out.seq * out.dim);
  }
  return probs;
}

// Element (r, c) of an F32 tensor.
double At(const Model& m, const std::string& name, size_t r, size_t c) {
  const TensorView* t = m.Find(name.c_str());
  REQUIRE_MESSAGE(t != nullptr, name);
  REQUIRE(t->dtype == fb::DType::F32);
  const size_t cols = t->rank > 1 ? t->shape[1] : t->shape[0];
  return static_cast<const float*>(t->data)[r * cols + c];
}

// The probabilities of layer l of an fp32 BERT model for sequence b, in
// double, from the layer's input x [seq, hidden] (real rows only): [heads, n, n].
std::vector<double> NaiveBertProbs(const Model& m, uint32_t l, const std::vector<double>& x,
                                   size_t n) {
  const fb::Architecture& a = m.architecture();
  const size_t h = a.hidden_size(), heads = a.attention()->num_heads(),
               d = a.attention()->head_dim();
  const std::string p = "layers." + std::to_string(l) + ".attn.";
  auto project = [&](const std::string& w) {
    std::vector<double> y(n * heads * d);
    for (size_t s = 0; s < n; ++s) {
      for (size_t o = 0; o < heads * d; ++o) {
        double acc = At(m, p + w + ".bias", 0, o);
        for (size_t i = 0; i < h; ++i) acc += x[s * h + i] * At(m, p + w + ".weight", o, i);
        y[s * heads * d + o] = acc;
      }
    }
    return y;
  };
  const std::vector<double> q = project("q"), k = project("k");
  std::vector<double> probs(heads * n * n);
  for (size_t hd = 0; hd < heads; ++hd) {
    for (size_t i = 0; i < n; ++i) {
      double* row = probs.data() + (hd * n + i) * n;
      double max = -INFINITY, sum = 0;
      for (size_t j = 0; j < n; ++j) {
        double dot = 0;
        for (size_t e = 0; e < d; ++e)
          dot += q[i * heads * d + hd * d + e] * k[j * heads * d + hd * d + e];
        row[j] = dot / std::sqrt(static_cast<double>(d));
        max = std::fmax(max, row[j]);
      }
      for (size_t j = 0; j < n; ++j) sum += row[j] = std::exp(row[j] - max);
      for (size_t j = 0; j < n; ++j) row[j] /= sum;
    }
  }
  return probs;
}

// BERT's embedding rows in double (token + type 0 + position, LayerNorm).
std::vector<double> BertEmbeddings(const Model& m, const Batch& in, uint32_t b) {
  const fb::Architecture& a = m.architecture();
  const size_t h = a.hidden_size(), n = in.lengths[b];
  std::vector<double> x(n * h);
  for (size_t s = 0; s < n; ++s) {
    double* row = x.data() + s * h;
    double mean = 0, var = 0;
    for (size_t i = 0; i < h; ++i) {
      row[i] = At(m, "token_embedding", in.ids[b * in.seq + s], i) +
               At(m, "token_type_embedding", 0, i) + At(m, "position_embedding", s, i);
      mean += row[i] / h;
    }
    for (size_t i = 0; i < h; ++i) var += (row[i] - mean) * (row[i] - mean) / h;
    for (size_t i = 0; i < h; ++i) {
      row[i] =
          (row[i] - mean) / std::sqrt(var + a.norm_eps()) * At(m, "embedding_norm.weight", 0, i) +
          At(m, "embedding_norm.bias", 0, i);
    }
  }
  return x;
}

// Row i of head h of sequence b.
const float* Row(const std::vector<float>& probs, const AttentionCapture& c, uint32_t b, uint32_t h,
                 uint32_t i) {
  return probs.data() + ((static_cast<size_t>(b) * c.heads + h) * c.q_len + i) * c.k_len;
}

// The structure every capture has: rows of real queries sum to 1 over the keys
// visible(b, i, j) says they see and are 0 elsewhere; padded rows are 0.
template <typename Visible>
void CheckStructure(const std::vector<float>& probs, const AttentionCapture& c,
                    const std::vector<uint32_t>& q_lengths, Visible visible) {
  for (uint32_t b = 0; b < c.batch; ++b) {
    for (uint32_t h = 0; h < c.heads; ++h) {
      for (uint32_t i = 0; i < c.q_len; ++i) {
        const float* row = Row(probs, c, b, h, i);
        double sum = 0;
        for (uint32_t j = 0; j < c.k_len; ++j) {
          const bool seen = i < q_lengths[b] && visible(b, i, j);
          if (!seen) {
            if (row[j] != 0.0f)
              FAIL_CHECK("b " << b << " h " << h << " row " << i << " key " << j << " = "
                              << row[j]);
            continue;
          }
          CHECK(row[j] >= 0.0f);
          sum += row[j];
        }
        if (i < q_lengths[b]) CHECK(std::fabs(sum - 1.0) <= 1e-5);
      }
    }
  }
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST_CASE("fp32 BERT: the captured probabilities equal a recomputation from Q and K") {
  TinyModelOptions o;
  o.family = fb::Family::Bert;
  o.int8 = false;
  o.layers = 2;
  o.hidden = 32;
  o.layer_stddev = 0.2f;  // peaky attention: the probabilities differ visibly
  LoadedModel loaded(o);
  const Model& m = loaded.model;
  const size_t h = m.architecture().hidden_size();
  const Batch in = MakeBatch({9, 5}, m.architecture().vocab_size());
  SessionLimits limits;
  limits.max_batch = 2;
  limits.max_seq = 9;
  Result<Session> session = Session::Create(m, limits);
  REQUIRE(session.ok());
  LayerInputs inputs;
  session->SetLayerObserver(&LayerInputs::Observe, &inputs);
  double worst = 0, spread = 0;
  for (uint32_t l = 0; l < 2; ++l) {
    CAPTURE(l);
    AttentionCapture c;
    c.layer = l;
    AttentionCapture shape;
    const std::vector<float> probs = Capture(*session, c, in, &shape);
    REQUIRE(shape.heads == m.architecture().attention()->num_heads());
    for (uint32_t b = 0; b < 2; ++b) {
      const size_t n = in.lengths[b];
      // Layer 0 reads the embeddings; layer l the residual stream after layer l - 1.
      std::vector<double> x = BertEmbeddings(m, in, b);
      if (l > 0) {
        const float* after = inputs.after[l - 1].data() + static_cast<size_t>(b) * in.seq * h;
        x.assign(after, after + n * h);
      }
      const std::vector<double> want = NaiveBertProbs(m, l, x, n);
      for (uint32_t hd = 0; hd < shape.heads; ++hd) {
        for (uint32_t i = 0; i < n; ++i) {
          const float* row = Row(probs, shape, b, hd, i);
          for (uint32_t j = 0; j < n; ++j) {
            const double w = want[(hd * n + i) * n + j];
            worst = std::fmax(worst, std::fabs(row[j] - w));
            spread = std::fmax(spread, w);
            CHECK(std::fabs(row[j] - w) <= 1e-6);
          }
        }
      }
    }
    CheckStructure(probs, shape, in.lengths,
                   [&](uint32_t b, uint32_t, uint32_t j) { return j < in.lengths[b]; });
  }
  MESSAGE("largest |captured - double| " << worst << "; largest probability " << spread);
  CHECK(spread > 0.5);  // the test data has peaked rows, not only uniform ones
}

// A decoder with a sliding window, fp32 and int8, on 1 and 3 threads, in one
// pass or in chunks: the same bits, the structure of a causal window.
TEST_CASE("decoder self-attention: causal, windowed, padded; threads and chunks change no bit") {
  constexpr uint32_t kWindow = 4;
  for (bool int8 : {false, true}) {
    CAPTURE(int8);
    TinyModelOptions o;
    o.family = fb::Family::Llama;
    o.int8 = int8;
    o.packed = int8;
    o.layers = 2;
    o.hidden = 32;
    o.layer_stddev = 0.2f;
    LoadedModel loaded(o, [](fb::ArchitectureT& a) { a.attention->sliding_window = kWindow; });
    const Model& m = loaded.model;
    const Batch in = MakeBatch({11, 6, 1}, m.architecture().vocab_size());
    std::vector<float> first, first_out;
    for (uint32_t threads : {1u, 3u}) {
      for (uint32_t chunk : {0u, 4u}) {
        CAPTURE(threads);
        CAPTURE(chunk);
        SessionLimits limits;
        limits.max_batch = 3;
        limits.max_seq = in.seq;
        limits.threads = threads;
        limits.prefill_chunk = chunk;
        Result<Session> session = Session::Create(m, limits);
        REQUIRE(session.ok());
        AttentionCapture c;
        c.layer = 1;
        AttentionCapture shape;
        std::vector<float> out;
        const std::vector<float> probs = Capture(*session, c, in, &shape, &out);
        CheckStructure(probs, shape, in.lengths, [&](uint32_t b, uint32_t i, uint32_t j) {
          return j < in.lengths[b] && j <= i && j + kWindow > i;
        });
        // Without a capture: the same output bits.
        const Status s = session->Run(in.ids.data(), in.lengths.data(), in.batch(), in.seq);
        REQUIRE(s.ok());
        const OutputView view = session->output();
        CHECK(SameBits(out, std::vector<float>(view.data, view.data + out.size())));
        if (first.empty()) {
          first = probs;
          first_out = out;
        } else {
          CHECK(SameBits(probs, first));
          CHECK(SameBits(out, first_out));
        }
      }
    }
  }
}

TEST_CASE("int8 captures stay close to the fp32 captures of the same weights") {
  std::vector<float> captured[2];
  for (bool int8 : {false, true}) {
    TinyModelOptions o;
    o.family = fb::Family::Bert;
    o.int8 = int8;
    o.layers = 2;
    o.hidden = 32;
    o.layer_stddev = 0.2f;
    LoadedModel loaded(o);
    const Batch in = MakeBatch({9, 5}, loaded.model.architecture().vocab_size());
    SessionLimits limits;
    limits.max_batch = 2;
    limits.max_seq = 9;
    Result<Session> session = Session::Create(loaded.model, limits);
    REQUIRE(session.ok());
    AttentionCapture c;
    c.layer = 1;
    captured[int8] = Capture(*session, c, in);
  }
  REQUIRE(captured[0].size() == captured[1].size());
  double worst = 0;
  for (size_t i = 0; i < captured[0].size(); ++i) {
    worst = std::fmax(worst, std::fabs(captured[0][i] - captured[1][i]));
  }
  MESSAGE("largest |int8 - fp32| probability: " << worst);
  CHECK(worst < 0.05);
}

TEST_CASE("encoder-decoder: encoder and decoder self-attention, and cross-attention") {
  for (bool int8 : {false, true}) {
    CAPTURE(int8);
    TinyModelOptions o;
    o.family = fb::Family::T5;
    o.int8 = int8;
    o.layers = 2;
    o.hidden = 32;
    o.layer_stddev = 0.2f;
    LoadedModel loaded(o);
    const Model& m = loaded.model;
    const uint32_t vocab = m.architecture().vocab_size();
    const Batch src = MakeBatch({7, 3}, vocab), dec = MakeBatch({4, 5}, vocab, 1);
    SessionLimits limits;
    limits.max_batch = 2;
    limits.max_seq = 7;
    limits.max_new_tokens = 2;
    Result<Session> session = Session::Create(m, limits);
    REQUIRE(session.ok());
    struct Site {
      LayerStack stack;
      AttentionSite site;
      uint32_t q_len, k_len;
    };
    for (const Site& site : {Site{LayerStack::kEncoder, AttentionSite::kSelf, src.seq, src.seq},
                             Site{LayerStack::kDecoder, AttentionSite::kSelf, dec.seq, dec.seq},
                             Site{LayerStack::kDecoder, AttentionSite::kCross, dec.seq, src.seq}}) {
      CAPTURE(static_cast<int>(site.stack));
      CAPTURE(static_cast<int>(site.site));
      std::vector<float> probs(2 * 2 * 7 * 7, -1.0f);
      AttentionCapture c;
      c.stack = site.stack;
      c.site = site.site;
      c.layer = 1;
      c.probs = probs.data();
      c.capacity = probs.size();
      REQUIRE(session->SetAttentionCapture(&c).ok());
      const Status s = session->RunEncoderDecoder(src.ids.data(), src.lengths.data(), src.seq,
                                                  dec.ids.data(), dec.lengths.data(), dec.seq, 2);
      REQUIRE_MESSAGE(s.ok(), std::string(s.message()));
      CHECK(c.batch == 2);
      CHECK(c.heads == m.architecture().attention()->num_heads());
      CHECK(c.q_len == site.q_len);
      CHECK(c.k_len == site.k_len);
      probs.resize(static_cast<size_t>(c.batch) * c.heads * c.q_len * c.k_len);
      if (site.site == AttentionSite::kCross) {
        CheckStructure(probs, c, dec.lengths,
                       [&](uint32_t b, uint32_t, uint32_t j) { return j < src.lengths[b]; });
      } else if (site.stack == LayerStack::kEncoder) {
        CheckStructure(probs, c, src.lengths,
                       [&](uint32_t b, uint32_t, uint32_t j) { return j < src.lengths[b]; });
        CHECK(Row(probs, c, 0, 0, 0)[1] > 0.0f);  // not causal
      } else {
        CheckStructure(probs, c, dec.lengths, [&](uint32_t b, uint32_t i, uint32_t j) {
          return j < dec.lengths[b] && j <= i;
        });
      }
    }
    // Steps do not capture.
    std::vector<float> probs(64, -3.0f);
    AttentionCapture c;
    c.stack = LayerStack::kDecoder;
    c.probs = probs.data();
    c.capacity = probs.size();
    REQUIRE(session->SetAttentionCapture(&c).ok());
    const int32_t next[2] = {1, 2};
    REQUIRE(session->StepEncoderDecoder(next, 2).ok());
    CHECK(probs[0] == -3.0f);
  }
}

TEST_CASE("capture requests are checked") {
  TinyModelOptions o;
  o.layers = 2;
  LoadedModel llama(o);
  o.family = fb::Family::T5;
  LoadedModel t5(o);
  Result<Session> session = Session::Create(llama.model, SessionLimits{1, 8, 0});
  REQUIRE(session.ok());
  std::vector<float> probs(2 * 8 * 8);
  AttentionCapture c;
  c.probs = probs.data();
  c.capacity = probs.size();
  c.layer = 2;
  CHECK(session->SetAttentionCapture(&c).code() == StatusCode::kInvalidArgument);
  c.layer = 1;
  c.site = AttentionSite::kCross;
  CHECK(session->SetAttentionCapture(&c).code() == StatusCode::kInvalidArgument);
  c.site = AttentionSite::kSelf;
  c.stack = LayerStack::kDecoder;
  CHECK(session->SetAttentionCapture(&c).code() == StatusCode::kInvalidArgument);
  c.stack = LayerStack::kSingle;
  REQUIRE(session->SetAttentionCapture(&c).ok());
  // Too small for [1, 2, 8, 8]: the run fails before computing anything.
  c.capacity = probs.size() - 1;
  const int32_t ids[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const uint32_t length = 8;
  const Status s = session->Run(ids, &length, 1, 8);
  CHECK(s.code() == StatusCode::kBufferTooSmall);
  CHECK((c.batch == 1 && c.heads == 2 && c.q_len == 8 && c.k_len == 8));
  CHECK(session->output().data == nullptr);
  c.capacity = probs.size();
  CHECK(session->Run(ids, &length, 1, 8).ok());
  CHECK(c.q_len == 8);

  Result<Session> t5_session = Session::Create(t5.model, SessionLimits{1, 8, 0});
  REQUIRE(t5_session.ok());
  AttentionCapture e;
  e.stack = LayerStack::kSingle;
  CHECK(t5_session->SetAttentionCapture(&e).code() == StatusCode::kInvalidArgument);
  e.stack = LayerStack::kEncoder;
  e.site = AttentionSite::kCross;
  CHECK(t5_session->SetAttentionCapture(&e).code() == StatusCode::kInvalidArgument);
  e.stack = LayerStack::kDecoder;
  CHECK(t5_session->SetAttentionCapture(&e).ok());
}

// The rows a Gated DeltaNet layer's products read and the output they write
// before lin.out (ProductInput kAttention and kLinearOutput of one layer).
struct DeltaRows {
  uint32_t layer = 0;
  std::vector<float> in, out;  // [rows, hidden], [rows, value_heads * value_dim]
  static void Observe(void* ctx, LayerStack, uint32_t layer, ProductInput which, const float* x,
                      size_t rows, size_t cols, size_t ld) {
    auto* self = static_cast<DeltaRows*>(ctx);
    if (layer != self->layer) return;
    std::vector<float>* dst = which == ProductInput::kAttention      ? &self->in
                              : which == ProductInput::kLinearOutput ? &self->out
                                                                     : nullptr;
    if (dst == nullptr) return;
    dst->clear();
    for (size_t r = 0; r < rows; ++r) dst->insert(dst->end(), x + r * ld, x + r * ld + cols);
  }
};

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// A Gated DeltaNet layer of an fp32 model recomputed in double from its normed
// input x [n, hidden]: its token-mixing matrix [value_heads, n, n], by another
// route than the engine's (each query carried back through A_i, A_{i-1}, ...
// toward the keys, where the engine carries each key forward), and its output
// y [n, value_heads * value_dim] = RMSNorm(sum_j c_ij v_j) * norm * silu(z).
struct NaiveDelta {
  std::vector<double> c, y;
};
NaiveDelta NaiveDeltaNet(const Model& m, uint32_t l, const std::vector<double>& x, size_t n) {
  const fb::Architecture& a = m.architecture();
  const fb::LinearAttention& la = *a.linear_attention();
  const size_t h = a.hidden_size(), hk = la.key_heads(), hv = la.value_heads(),
               dk = la.key_dim(), dv = la.value_dim(), taps = la.conv_kernel();
  const size_t channels = 2 * hk * dk + hv * dv, group = hv / hk;
  const std::string p = "layers." + std::to_string(l) + ".lin.";
  auto project = [&](const std::string& w, size_t outs) {
    std::vector<double> y(n * outs);
    for (size_t t = 0; t < n; ++t) {
      for (size_t o = 0; o < outs; ++o) {
        double acc = 0;
        for (size_t i = 0; i < h; ++i) acc += x[t * h + i] * At(m, p + w, o, i);
        y[t * outs + o] = acc;
      }
    }
    return y;
  };
  const std::vector<double> raw = project("in_qkv.weight", channels);
  const std::vector<double> z = project("in_z.weight", hv * dv);
  const std::vector<double> bl = project("in_b.weight", hv), al = project("in_a.weight", hv);
  // Causal depthwise conv (tap taps-1 on the current position), SiLU.
  std::vector<double> mixed(n * channels);
  for (size_t t = 0; t < n; ++t) {
    for (size_t ch = 0; ch < channels; ++ch) {
      double acc = 0;
      for (size_t k = 0; k < taps; ++k) {
        if (t + k + 1 >= taps) acc += At(m, p + "conv.weight", ch, k) * raw[(t + k + 1 - taps) * channels + ch];
      }
      mixed[t * channels + ch] = acc * Sigmoid(acc);
    }
  }
  for (size_t t = 0; t < n; ++t) {  // l2-normed q (scaled) and k
    for (size_t part = 0; part < 2; ++part) {
      for (size_t kh = 0; kh < hk; ++kh) {
        double* v = mixed.data() + t * channels + (part * hk + kh) * dk;
        double ss = 0;
        for (size_t d = 0; d < dk; ++d) ss += v[d] * v[d];
        const double inv = 1.0 / std::sqrt(ss + 1e-6) / (part == 0 ? std::sqrt(double(dk)) : 1.0);
        for (size_t d = 0; d < dk; ++d) v[d] *= inv;
      }
    }
  }
  NaiveDelta r;
  r.c.assign(hv * n * n, 0.0);
  r.y.assign(n * hv * dv, 0.0);
  for (size_t v = 0; v < hv; ++v) {
    const size_t kh = v / group;
    auto q = [&](size_t t) { return mixed.data() + t * channels + kh * dk; };
    auto k = [&](size_t t) { return mixed.data() + t * channels + (hk + kh) * dk; };
    auto beta = [&](size_t t) { return Sigmoid(bl[t * hv + v]); };
    auto decay = [&](size_t t) {
      const double s = al[t * hv + v] + At(m, p + "dt_bias", 0, v);
      return std::exp(-std::exp(At(m, p + "a_log", 0, v)) * std::log1p(std::exp(s)));
    };
    for (size_t i = 0; i < n; ++i) {
      std::vector<double> u(q(i), q(i) + dk);  // A_{j+1} ... A_i q_i, for j from i down
      for (size_t j = i + 1; j-- > 0;) {
        if (j < i) {  // u <- A_{j+1} u
          const double* kr = k(j + 1);
          double ku = 0;
          for (size_t d = 0; d < dk; ++d) ku += kr[d] * u[d];
          for (size_t d = 0; d < dk; ++d) u[d] = decay(j + 1) * (u[d] - beta(j + 1) * ku * kr[d]);
        }
        double cij = 0;
        for (size_t d = 0; d < dk; ++d) cij += k(j)[d] * u[d];
        r.c[(v * n + i) * n + j] = beta(j) * cij;
      }
      // o_i = sum_j c_ij v_j, then the gated norm.
      std::vector<double> o(dv, 0.0);
      for (size_t j = 0; j <= i; ++j) {
        const double* vj = mixed.data() + j * channels + 2 * hk * dk + v * dv;
        for (size_t e = 0; e < dv; ++e) o[e] += r.c[(v * n + i) * n + j] * vj[e];
      }
      double ss = 0;
      for (size_t e = 0; e < dv; ++e) ss += o[e] * o[e];
      const double inv = 1.0 / std::sqrt(ss / dv + a.norm_eps());
      for (size_t e = 0; e < dv; ++e) {
        const double ze = z[i * hv * dv + v * dv + e];
        r.y[i * hv * dv + v * dv + e] = At(m, p + "norm.weight", 0, e) * o[e] * inv * ze * Sigmoid(ze);
      }
    }
  }
  return r;
}

TEST_CASE("Gated DeltaNet: the captured mixing matrix equals a recomputation and gives the layer's output") {
  TinyModelOptions o;
  o.family = fb::Family::Qwen35;
  o.int8 = false;
  o.layers = 2;  // layer 0 a Gated DeltaNet, layer 1 attention
  o.hidden = 32;
  o.layer_stddev = 0.3f;
  LoadedModel loaded(o);
  const Model& m = loaded.model;
  const fb::Architecture& a = m.architecture();
  REQUIRE(a.linear_attention() != nullptr);
  const size_t h = a.hidden_size(), hv = a.linear_attention()->value_heads(),
               values = hv * a.linear_attention()->value_dim();
  const Batch in = MakeBatch({70, 23}, a.vocab_size());  // crosses the 64-row chunk
  for (uint32_t threads : {1u, 2u}) {
    CAPTURE(threads);
    SessionLimits limits;
    limits.max_batch = 2;
    limits.max_seq = in.seq;
    limits.threads = threads;
    Result<Session> session = Session::Create(m, limits);
    REQUIRE(session.ok());
    DeltaRows rows;
    session->SetProductObserver(&DeltaRows::Observe, &rows);
    AttentionCapture c;
    c.layer = 0;
    AttentionCapture shape;
    std::vector<float> out;
    const std::vector<float> mix = Capture(*session, c, in, &shape, &out);
    CHECK(shape.kind == CaptureKind::kMixing);
    REQUIRE(shape.heads == hv);
    REQUIRE(rows.in.size() == static_cast<size_t>(in.batch()) * in.seq * h);
    REQUIRE(rows.out.size() == static_cast<size_t>(in.batch()) * in.seq * values);
    double worst_c = 0, largest_c = 0, worst_y = 0, largest_y = 0, negative = 0;
    for (uint32_t b = 0; b < in.batch(); ++b) {
      const size_t n = in.lengths[b];
      const float* xb = rows.in.data() + static_cast<size_t>(b) * in.seq * h;
      const NaiveDelta want = NaiveDeltaNet(m, 0, std::vector<double>(xb, xb + n * h), n);
      for (uint32_t v = 0; v < hv; ++v) {
        for (uint32_t i = 0; i < in.seq; ++i) {
          const float* row = Row(mix, shape, b, v, i);
          for (uint32_t j = 0; j < in.seq; ++j) {
            if (i >= n || j > i) {  // padding and the future: empty
              if (row[j] != 0.0f) FAIL_CHECK("b " << b << " head " << v << " (" << i << ", " << j << ") = " << row[j]);
              continue;
            }
            const double w = want.c[(v * n + i) * n + j];
            worst_c = std::fmax(worst_c, std::fabs(row[j] - w));
            largest_c = std::fmax(largest_c, std::fabs(w));
            negative = std::fmin(negative, w);
          }
        }
      }
      const float* yb = rows.out.data() + static_cast<size_t>(b) * in.seq * values;
      for (size_t e = 0; e < n * values; ++e) {
        worst_y = std::fmax(worst_y, std::fabs(yb[e] - want.y[e]));
        largest_y = std::fmax(largest_y, std::fabs(want.y[e]));
      }
    }
    MESSAGE("mixing: largest |captured - double| " << worst_c << " of largest |c| " << largest_c
            << " (most negative " << negative << "); output through the matrix: " << worst_y
            << " of " << largest_y);
    CHECK(worst_c <= 1e-5 * largest_c);
    CHECK(worst_y <= 1e-4 * largest_y);
    CHECK(negative < -1e-3 * largest_c);  // the delta rule's erasures show as negative weights
    // Without a capture: the same output bits.
    const Status s = session->Run(in.ids.data(), in.lengths.data(), in.batch(), in.seq);
    REQUIRE(s.ok());
    const OutputView view = session->output();
    CHECK(SameBits(out, std::vector<float>(view.data, view.data + out.size())));
  }
  // Prompts in chunks hold a chunk's q and k at a time: the capture is refused, the run says why.
  SessionLimits chunked;
  chunked.max_batch = 2;
  chunked.max_seq = in.seq;
  chunked.prefill_chunk = 16;
  Result<Session> session = Session::Create(m, chunked);
  REQUIRE(session.ok());
  std::vector<float> probs(static_cast<size_t>(2) * hv * in.seq * in.seq);
  AttentionCapture c;
  c.layer = 0;
  c.probs = probs.data();
  c.capacity = probs.size();
  REQUIRE(session->SetAttentionCapture(&c).ok());
  const Status refused = session->Run(in.ids.data(), in.lengths.data(), in.batch(), in.seq);
  CHECK(refused.code() == StatusCode::kInvalidArgument);
  CHECK(std::string(refused.message()).find("prefill_chunk 0") != std::string::npos);
}

}  // namespace
}  // namespace octet
