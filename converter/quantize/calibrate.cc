#include "quantize/calibrate.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "engine/session.h"
#include "import/error.h"

namespace octet {
namespace convert {
namespace {

// One sequence through a model with the session set up by `setup` first:
// decoders read it whole; encoder-decoder models read it on both sides,
// teacher-forced on the same ids shifted right behind the start token.
// stream: SessionLimits::stream_weights, keeping keep_bytes packed.
template <typename Setup>
Session RunSequence(const Model& model, const std::vector<int32_t>& ids, Setup setup,
                    bool stream = false, uint64_t keep_bytes = 0) {
  const fb::Architecture& a = model.architecture();
  const auto len = static_cast<uint32_t>(ids.size());
  SessionLimits limits;
  limits.max_batch = 1;
  limits.max_seq = len;
  limits.threads = 0;  // the machine's fast cores: the same results on any count
  limits.stream_weights = stream;
  limits.stream_keep_bytes = keep_bytes;
  Result<Session> session = Session::Create(model, limits);
  if (!session.ok()) Fail("calibration: ", session.status().message());
  Session run = std::move(session.value());
  setup(run);
  Status s;
  if (a.structure() == fb::Structure::EncoderDecoder) {
    std::vector<int32_t> dec(ids.size());
    dec[0] = a.decoder_start_token_id() >= 0 ? a.decoder_start_token_id() : 0;
    for (size_t i = 1; i < ids.size(); ++i) dec[i] = ids[i - 1];
    s = run.RunEncoderDecoder(ids.data(), &len, len, dec.data(), &len, len, 1);
  } else {
    s = run.Run(ids.data(), &len, 1, len);
  }
  if (!s.ok()) Fail("calibration: ", s.message());
  return run;
}

struct CaptureState {
  std::map<ProductSite, ProductInputs>* sites = nullptr;
  std::map<ProductSite, size_t> seen;  // rows offered so far, per site
  size_t stride = 1;
};

void ObserveProduct(void* ctx, LayerStack stack, uint32_t layer, ProductInput which,
                    const float* x, size_t rows, size_t cols, size_t ld) {
  CaptureState& c = *static_cast<CaptureState*>(ctx);
  const ProductSite site{stack, layer, which};
  ProductInputs& in = (*c.sites)[site];
  if (in.k == 0) {
    in.k = cols;
    in.abs_max.assign(cols, 0.0f);
  }
  size_t& seen = c.seen[site];
  for (size_t r = 0; r < rows; ++r, ++seen) {
    const float* row = x + r * ld;
    for (size_t j = 0; j < cols; ++j) in.abs_max[j] = std::max(in.abs_max[j], std::fabs(row[j]));
    if (seen % c.stride == 0) in.rows.insert(in.rows.end(), row, row + cols);
  }
}

// log-softmax of logits[0..n) into out (double accumulation).
void LogSoftmax(const float* logits, size_t n, std::vector<double>* out) {
  out->resize(n);
  double max = -INFINITY;
  for (size_t i = 0; i < n; ++i) max = std::max(max, static_cast<double>(logits[i]));
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(logits[i]) - max);
  const double log_sum = max + std::log(sum);
  for (size_t i = 0; i < n; ++i) (*out)[i] = static_cast<double>(logits[i]) - log_sum;
}

}  // namespace

std::unique_ptr<InMemoryModel> LoadInMemory(const ModelWriter& writer) {
  auto m = std::make_unique<InMemoryModel>();
  uint64_t size = 0;
  writer.WriteToMemory([&](uint64_t bytes) {
    size = bytes;
    m->bytes = std::unique_ptr<uint8_t, void (*)(void*)>(
        static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)), &std::free);
    if (m->bytes == nullptr) Fail("out of memory for a model in memory");
    return m->bytes.get();
  });
  Result<Model> model = Model::FromBuffer(m->bytes.get(), size);
  if (!model.ok()) Fail("internal: the converted model does not load: ", model.status().message());
  m->model = std::move(model.value());
  return m;
}

std::map<ProductSite, ProductInputs> CaptureProductInputs(
    const Model& model, const std::vector<std::vector<int32_t>>& sequences, size_t max_rows) {
  std::map<ProductSite, ProductInputs> sites;
  CaptureState state;
  state.sites = &sites;
  size_t total = 0;
  for (const std::vector<int32_t>& s : sequences) total += s.size();
  state.stride = max_rows > 0 && total > max_rows ? (total + max_rows - 1) / max_rows : 1;
  for (const std::vector<int32_t>& ids : sequences) {
    RunSequence(model, ids, [&](Session& s) { s.SetProductObserver(ObserveProduct, &state); });
  }
  return sites;
}

namespace {

struct BlockState {
  // Where the streams go in: (stack, layer) and the sequence's rows.
  struct Put {
    LayerStack stack;
    uint32_t layer;
    const std::vector<float>* rows;
  };
  Put puts[2];
  size_t num_puts = 0;
  LayerStack stack = LayerStack::kSingle;  // the block's layer: its output is kept
  std::vector<float>* out = nullptr;
};

void InjectStream(void* ctx, LayerStack stack, uint32_t layer, float* x, size_t rows,
                  size_t hidden) {
  const BlockState& b = *static_cast<BlockState*>(ctx);
  for (size_t i = 0; i < b.num_puts; ++i) {
    const BlockState::Put& p = b.puts[i];
    if (p.stack != stack || p.layer != layer) continue;
    if (p.rows->size() != rows * hidden) Fail("internal: a block's input stream has the wrong size");
    std::memcpy(x, p.rows->data(), rows * hidden * sizeof(float));
  }
}

void KeepStream(void* ctx, LayerStack stack, uint32_t, const float* x, size_t rows,
                size_t hidden) {
  const BlockState& b = *static_cast<BlockState*>(ctx);
  if (stack == b.stack) b.out->assign(x, x + rows * hidden);
}

}  // namespace

BlockRun RunBlock(const Model& block, const BlockFeed& feed, size_t max_rows) {
  const fb::Architecture& a = block.architecture();
  const bool enc_dec = a.structure() == fb::Structure::EncoderDecoder;
  const std::vector<std::vector<int32_t>>& ids = *feed.ids;
  BlockRun run;
  size_t longest = 0, total = 0;
  for (const std::vector<int32_t>& s : ids) {
    longest = std::max(longest, s.size());
    total += s.size();
  }
  SessionLimits limits;
  limits.max_batch = 1;
  limits.max_seq = static_cast<uint32_t>(longest);
  limits.threads = 0;  // the machine's fast cores: the same results on any count
  Result<Session> created = Session::Create(block, limits);  // one pass per sequence: no chunks
  if (!created.ok()) Fail("calibration: ", created.status().message());
  Session& session = created.value();
  BlockState state;
  state.stack = feed.stack;
  session.SetLayerInput(InjectStream, &state);
  session.SetLayerObserver(KeepStream, &state);
  CaptureState capture;
  capture.sites = &run.inputs;
  capture.stride = max_rows > 0 && total > max_rows ? (total + max_rows - 1) / max_rows : 1;
  if (max_rows > 0) session.SetProductObserver(ObserveProduct, &capture);
  run.out.resize(ids.size());
  std::vector<int32_t> zeros, dec;
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto len = static_cast<uint32_t>(ids[i].size());
    state.num_puts = 0;
    if (feed.in != nullptr) state.puts[state.num_puts++] = {feed.stack, 0, &(*feed.in)[i]};
    // A decoder layer's block has no encoder layers: the encoder's output
    // goes in as its stack ends, before its final norm.
    if (feed.encoder_out != nullptr) {
      state.puts[state.num_puts++] = {LayerStack::kEncoder, 0, &(*feed.encoder_out)[i]};
    }
    state.out = &run.out[i];
    // Ids a stream replaces are stand-ins (the block's vocabulary may be one token).
    zeros.assign(len, 0);
    const bool source_ids = feed.stack != LayerStack::kDecoder && feed.in == nullptr;
    const int32_t* source = source_ids ? ids[i].data() : zeros.data();
    Status st;
    if (enc_dec) {
      dec.assign(len, 0);
      if (feed.stack == LayerStack::kDecoder && feed.in == nullptr) {
        dec[0] = a.decoder_start_token_id() >= 0 ? a.decoder_start_token_id() : 0;
        for (size_t t = 1; t < len; ++t) dec[t] = ids[i][t - 1];
      }
      st = session.RunEncoderDecoder(source, &len, len, dec.data(), &len, len, 1);
    } else {
      st = session.Run(source, &len, 1, len);
    }
    if (!st.ok()) Fail("calibration: ", st.message());
  }
  return run;
}

OutputReference::OutputReference(const Model& fp32, std::vector<std::vector<int32_t>> sequences,
                                 bool stream, uint64_t keep_bytes)
    : sequences_(std::move(sequences)) {
  const fb::Architecture& a = fp32.architecture();
  has_distribution_ = a.structure() != fb::Structure::EncoderOnly;
  encoder_decoder_ = a.structure() == fb::Structure::EncoderDecoder;
  std::vector<double> p;
  std::vector<int32_t> order;
  for (const std::vector<int32_t>& ids : sequences_) {
    const Session session = RunSequence(fp32, ids, [](Session&) {}, stream, keep_bytes);
    const OutputView out = session.output();
    dim_ = out.dim;
    Sequence seq;
    if (!has_distribution_) {
      seq.out.assign(out.data, out.data + size_t{out.seq} * out.dim);
      outputs_.push_back(std::move(seq));
      continue;
    }
    const size_t most = std::min(kMaxTopTokens, dim_);
    for (size_t i = 0; i < out.seq; ++i) {
      // Decoder-only: row i predicts ids[i + 1]; encoder-decoder (teacher
      // forced on the ids shifted right): row i predicts ids[i].
      const size_t target = encoder_decoder_ ? i : i + 1;
      if (target >= ids.size()) break;
      LogSoftmax(out.data + i * dim_, dim_, &p);
      order.resize(dim_);
      for (size_t d = 0; d < dim_; ++d) order[d] = static_cast<int32_t>(d);
      std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(most),
                        order.end(), [&](int32_t l, int32_t r) {
                          return p[l] > p[r] || (p[l] == p[r] && l < r);
                        });
      Position pos;
      pos.target_logp = static_cast<float>(p[static_cast<size_t>(ids[target])]);
      pos.argmax = order[0];
      double mass = 0;
      for (size_t k = 0; k < most && (k < kMinTopTokens || mass < kTopMass); ++k) {
        pos.top_ids.push_back(order[k]);
        pos.top_logp.push_back(static_cast<float>(p[order[k]]));
        mass += std::exp(p[order[k]]);
      }
      pos.rest = static_cast<float>(std::max(0.0, 1.0 - mass));
      seq.positions.push_back(std::move(pos));
    }
    outputs_.push_back(std::move(seq));
  }
}

OutputMetrics OutputReference::Compare(const Model& int8) const {
  OutputMetrics m;
  m.has_distribution = has_distribution_;
  double nll_fp32 = 0, nll_int8 = 0, kld = 0, signal = 0, noise = 0, cosine_sum = 0;
  size_t cosines = 0;
  size_t agree = 0;
  std::vector<double> q;
  for (size_t s = 0; s < sequences_.size(); ++s) {
    const std::vector<int32_t>& ids = sequences_[s];
    const Session session = RunSequence(int8, ids, [](Session&) {});
    const OutputView out = session.output();
    const float* got = out.data;
    if (!has_distribution_) {
      const float* want = outputs_[s].out.data();
      for (size_t i = 0; i < out.seq; ++i) {
        const float* x = want + i * dim_;
        const float* y = got + i * dim_;
        double dot = 0, nx = 0, ny = 0;
        for (size_t d = 0; d < dim_; ++d) {
          dot += static_cast<double>(x[d]) * y[d];
          nx += static_cast<double>(x[d]) * x[d];
          ny += static_cast<double>(y[d]) * y[d];
          noise += (static_cast<double>(y[d]) - x[d]) * (static_cast<double>(y[d]) - x[d]);
        }
        signal += nx;
        if (nx > 0 && ny > 0) {
          const double cosine = dot / std::sqrt(nx * ny);
          m.min_cosine = std::min(m.min_cosine, cosine);
          cosine_sum += cosine;
          ++cosines;
        }
      }
      continue;
    }
    const std::vector<Position>& positions = outputs_[s].positions;
    for (size_t i = 0; i < positions.size(); ++i) {
      const Position& pos = positions[i];
      const size_t target = encoder_decoder_ ? i : i + 1;
      LogSoftmax(got + i * dim_, dim_, &q);
      nll_fp32 -= pos.target_logp;
      nll_int8 -= q[static_cast<size_t>(ids[target])];
      // KL of the top tokens and the rest as one outcome.
      double k = 0, q_top = 0;
      for (size_t t = 0; t < pos.top_ids.size(); ++t) {
        const double lp = pos.top_logp[t], lq = q[static_cast<size_t>(pos.top_ids[t])];
        k += std::exp(lp) * (lp - lq);
        q_top += std::exp(lq);
      }
      if (pos.rest > 0) {
        const double q_rest = std::max(1.0 - q_top, 1e-30);
        k += pos.rest * (std::log(static_cast<double>(pos.rest)) - std::log(q_rest));
      }
      kld += k;
      size_t arg_q = 0;
      for (size_t d = 1; d < dim_; ++d) {
        if (q[d] > q[arg_q]) arg_q = d;
      }
      agree += static_cast<size_t>(pos.argmax) == arg_q ? 1 : 0;
      ++m.tokens;
    }
  }
  m.noise_to_signal = signal > 0 ? noise / signal : 0;
  if (cosines > 0) m.mean_cosine = cosine_sum / static_cast<double>(cosines);
  if (m.tokens > 0) {
    const auto n = static_cast<double>(m.tokens);
    m.fp32_ppl = std::exp(nll_fp32 / n);
    m.int8_ppl = std::exp(nll_int8 / n);
    m.kld = kld / n;
    m.top1 = static_cast<double>(agree) / n;
  }
  return m;
}

Calibration GeneratedCalibration(const Model& fp32, size_t count, size_t length, uint64_t seed,
                                 bool stream, uint64_t keep_bytes) {
  const fb::Architecture& a = fp32.architecture();
  if (a.structure() != fb::Structure::DecoderOnly) {
    Fail("internal: generated calibration is for decoder-only models");
  }
  const uint32_t max_positions = a.max_positions();
  if (max_positions != 0 && length > max_positions) length = max_positions;
  if (length < 2) length = 2;
  SessionLimits limits;
  limits.max_batch = static_cast<uint32_t>(count);
  limits.max_seq = 1;
  limits.max_new_tokens = static_cast<uint32_t>(length - 1);
  limits.last_logits_only = true;
  limits.stream_weights = stream;
  limits.stream_keep_bytes = keep_bytes;
  limits.threads = 0;  // the machine's fast cores: the same results on any count
  Result<Session> created = Session::Create(fp32, limits);
  if (!created.ok()) Fail("calibration: ", created.status().message());
  Session& session = created.value();
  const int32_t bos = a.bos_token_id() >= 0 ? a.bos_token_id() : 0;
  std::vector<std::vector<int32_t>> seqs(count, std::vector<int32_t>{bos});
  std::vector<int32_t> ids(count, bos);
  const std::vector<uint32_t> lengths(count, 1);
  Status s = session.Run(ids.data(), lengths.data(), static_cast<uint32_t>(count), 1);
  // Each sequence draws from a random stream of its own, so the first k of a
  // batch are the same k sequences whatever the batch size (a conversion with
  // and without held-out sequences calibrates on the same text). The hook
  // draws the token (temperature 1: the model's own distribution) and leaves
  // it the only candidate for Session::Sample.
  struct OwnStreams {
    std::vector<uint64_t> rng;
    std::vector<float> scratch;
    SamplingParams plain;
  } own;
  own.rng.resize(count);
  for (size_t b = 0; b < count; ++b) {
    uint64_t mix = seed + 0x9E3779B97F4A7C15ull * (b + 1);
    own.rng[b] = NextRandom(&mix);
  }
  own.scratch.resize((SamplingScratchBytes(a.vocab_size()) + sizeof(float) - 1) / sizeof(float));
  SamplingParams params;
  params.logits_hook_user = &own;
  params.logits_hook = [](void* user, uint32_t b, float* logits, uint32_t vocab) {
    OwnStreams& o = *static_cast<OwnStreams*>(user);
    const int32_t token = SampleToken(logits, vocab, o.plain, &o.rng[b], o.scratch.data());
    for (uint32_t i = 0; i < vocab; ++i) {
      logits[i] = i == static_cast<uint32_t>(token) ? 0.0f : -INFINITY;
    }
    return 0;
  };
  uint64_t rng = seed;  // Session::Sample's draw: the choice is already made
  for (size_t t = 1; s.ok() && t < length; ++t) {
    s = session.Sample(params, &rng, ids.data());
    if (!s.ok()) break;
    for (size_t b = 0; b < count; ++b) seqs[b].push_back(ids[b]);
    if (t + 1 < length) s = session.Step(ids.data(), static_cast<uint32_t>(count));
  }
  if (!s.ok()) Fail("calibration: ", s.message());
  Calibration c;
  c.sequences = std::move(seqs);
  c.description = std::to_string(count) + " x " + std::to_string(length) +
                  " ids the fp32 model generated (temperature 1, seed " + std::to_string(seed) +
                  ")";
  return c;
}

}  // namespace convert
}  // namespace octet
