// Session: plan at creation, compute in Run.
//
// Every model runs the forward pass of engine/forward.h (fp32 or int8, as the
// file's tensors are), layer-free ones (embedding -> norm -> LM head) included;
// its buffers are planned here with everything else.
#include "engine/session.h"

#include <cstring>
#include <new>
#include <utility>

#include "core/checked_math.h"

namespace octet {
namespace {

constexpr uint32_t kMaxBatch = 4096;
constexpr uint64_t kMaxRows = 1u << 24;  // batch x seq

// SessionLimits::threads with 0 resolved to the machine's fast cores.
uint32_t ResolveThreads(const SessionLimits& limits) {
  if (limits.threads != 0) return limits.threads;
  const uint32_t n = DefaultThreadCount();
  return n < kMaxSessionThreads ? n : kMaxSessionThreads;
}

}  // namespace

// Every buffer of a run, as offsets into the arenas. Computed identically by
// Plan() and Create(), so the plan is the allocation.
struct Session::Layout {
  SessionPlan plan;
  ForwardPlan forward;
  size_t positions = 0; // activations: u32 [max_batch] (Step)
  size_t sample_rows = 0;     // activations: u32 [max_batch] (decoders: Sample)
  size_t sample_scratch = 0;  // scratch: SamplingScratchBytes(vocab) (decoders: Sample)

  static Status Compute(const Model& model, const SessionLimits& limits, Layout* out) {
    const fb::Architecture& a = model.architecture();
    if (limits.max_batch < 1 || limits.max_batch > kMaxBatch) {
      return Status::Error(StatusCode::kInvalidArgument, "max_batch %u must be in [1, %u]",
                           limits.max_batch, kMaxBatch);
    }
    if (limits.max_seq < 1) return Status(StatusCode::kInvalidArgument, "max_seq must be >= 1");
    if (a.position() == fb::PositionKind::Learned && limits.max_seq > a.max_positions()) {
      return Status::Error(StatusCode::kInvalidArgument,
                           "max_seq %u exceeds the model's %u learned positions", limits.max_seq,
                           a.max_positions());
    }
    const uint64_t rows = static_cast<uint64_t>(limits.max_batch) * limits.max_seq;
    if (rows > kMaxRows) {
      return Status::Error(StatusCode::kInvalidArgument, "max_batch x max_seq = %llu exceeds %llu",
                           static_cast<unsigned long long>(rows),
                           static_cast<unsigned long long>(kMaxRows));
    }
    if (limits.threads > kMaxSessionThreads) {
      return Status::Error(StatusCode::kInvalidArgument, "threads %u exceeds %u", limits.threads,
                           kMaxSessionThreads);
    }
    if (a.structure() == fb::Structure::EncoderDecoder && !HasLayers(a)) {
      return Status(StatusCode::kUnsupported, "encoder-decoder models need transformer layers");
    }
    // The forward pass, with its KV cache: K and V per decoder layer for
    // max_seq + max_new_tokens positions (bounded here as if f32, the larger).
    const fb::Attention& att = *a.attention();
    const uint64_t positions = static_cast<uint64_t>(limits.max_seq) + limits.max_new_tokens;
    uint64_t bytes = 0;
    if (!CheckedMul(static_cast<uint64_t>(a.num_layers()) + a.num_decoder_layers(),
                    limits.max_batch, &bytes) ||
        !CheckedMul(bytes, positions, &bytes) ||
        !CheckedMul(bytes, 2ull * att.num_kv_heads() * att.head_dim() * sizeof(float), &bytes) ||
        bytes > (1ull << 40) || positions > kMaxRows) {
      return Status(StatusCode::kInvalidArgument, "the KV cache for these limits is too large");
    }
    ForwardLimits fl;
    fl.max_batch = limits.max_batch;
    fl.max_seq = limits.max_seq;
    fl.max_new_tokens = limits.max_new_tokens;
    fl.attention_tile = limits.attention_tile;
    fl.threads = ResolveThreads(limits);
    fl.last_logits_only = limits.last_logits_only && a.structure() != fb::Structure::EncoderOnly;
    fl.prefill_chunk = limits.prefill_chunk != 0 ? limits.prefill_chunk
                       : fl.last_logits_only     ? kDefaultPrefillChunk
                                                 : 0;
    ArenaLayout activations, scratch, kv;
    OCTET_RETURN_IF_ERROR(PlanForward(a, GetForwardMode(model), fl, &activations, &scratch, &kv,
                                      &out->forward));
    // Step positions, then (encoder-decoders) the source lengths: u32 [max_batch] each.
    out->positions = activations.Reserve(2 * limits.max_batch * sizeof(uint32_t));
    if (a.structure() != fb::Structure::EncoderOnly) {
      out->sample_rows = activations.Reserve(limits.max_batch * sizeof(uint32_t));
      out->sample_scratch = scratch.Reserve(SamplingScratchBytes(a.vocab_size()));
    }
    if (!activations.ok() || !scratch.ok() || !kv.ok()) {
      return Status(StatusCode::kOutOfMemory, "the memory plan overflows the address space");
    }
    out->plan.activation_bytes = activations.size();
    out->plan.scratch_bytes = scratch.size();
    out->plan.kv_cache_bytes = kv.size();
    return Status::Ok();
  }
};

Result<SessionPlan> Session::Plan(const Model& model, const SessionLimits& limits) {
  Layout layout;
  OCTET_RETURN_IF_ERROR(Layout::Compute(model, limits, &layout));
  return SessionPlan(layout.plan);
}

Result<Session> Session::Create(const Model& model, const SessionLimits& limits) {
  return Build(model, limits, nullptr);
}

Result<Session> Session::CreateWithMemory(const Model& model, const SessionLimits& limits,
                                          const SessionMemory& memory) {
  return Build(model, limits, &memory);
}

Result<Session> Session::Build(const Model& model, const SessionLimits& limits,
                               const SessionMemory* memory) {
  Layout layout;
  OCTET_RETURN_IF_ERROR(Layout::Compute(model, limits, &layout));
  Session session;
  session.model_ = &model;
  session.kernels_ = &GetKernelTable();
  session.limits_ = limits;
  session.plan_ = layout.plan;
  session.threads_ = ResolveThreads(limits);
  if (session.threads_ > 1) {
    Result<ThreadPool*> pool = ThreadPool::Create(session.threads_);
    if (!pool.ok()) return pool.status();
    session.pool_.reset(pool.value());
  }
  if (memory == nullptr) {
    OCTET_RETURN_IF_ERROR(session.activations_.Allocate(layout.plan.activation_bytes));
    OCTET_RETURN_IF_ERROR(session.scratch_.Allocate(layout.plan.scratch_bytes));
    OCTET_RETURN_IF_ERROR(session.kv_cache_.Allocate(layout.plan.kv_cache_bytes));
  } else {
    OCTET_RETURN_IF_ERROR(session.activations_.Wrap(memory->activations, layout.plan.activation_bytes));
    OCTET_RETURN_IF_ERROR(session.scratch_.Wrap(memory->scratch, layout.plan.scratch_bytes));
    OCTET_RETURN_IF_ERROR(session.kv_cache_.Wrap(memory->kv_cache, layout.plan.kv_cache_bytes));
  }
  if (model.architecture().structure() != fb::Structure::EncoderOnly) {
    session.sample_rows_ = session.activations_.At<uint32_t>(layout.sample_rows);
    session.sample_scratch_ = session.scratch_.At<uint8_t>(layout.sample_scratch);
  }
  // Prepare the forward pass: weights resolved and checked, position tables filled.
  session.f32_products_.reset(new (std::nothrow) F32FullyConnectedSet());
  if (session.f32_products_ == nullptr) {
    return Status(StatusCode::kOutOfMemory, "no memory for the session's fp32 products");
  }
  OCTET_RETURN_IF_ERROR(PrepareForward(model, *session.kernels_, session.pool_.get(),
                                       layout.forward, session.activations_, session.scratch_,
                                       session.kv_cache_, session.f32_products_.get(),
                                       &session.forward_));
  session.positions_ = session.activations_.At<uint32_t>(layout.positions);
  session.source_lengths_ = session.positions_ + limits.max_batch;
  return session;
}

Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

// Run-time data: checked with plain ifs, errors as Status (no allocation).
Status Session::CheckBatch(const int32_t* ids, const uint32_t* lengths, uint32_t batch,
                           uint32_t seq, const char* what) const {
  const fb::Architecture& a = model_->architecture();
  if (ids == nullptr || lengths == nullptr) {
    return Status::Error(StatusCode::kInvalidArgument, "%s ids and lengths must not be null", what);
  }
  if (batch < 1 || batch > limits_.max_batch) {
    return Status::Error(StatusCode::kInvalidArgument, "batch %u is outside [1, %u]", batch,
                         limits_.max_batch);
  }
  if (seq < 1 || seq > limits_.max_seq) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "%s sequence length %u is outside [1, %u] (the session's max_seq)", what,
                         seq, limits_.max_seq);
  }
  for (uint32_t b = 0; b < batch; ++b) {
    if (lengths[b] < 1 || lengths[b] > seq) {
      return Status::Error(StatusCode::kInvalidArgument, "length of %s sequence %u is %u, "
                           "outside [1, %u]", what, b, lengths[b], seq);
    }
    for (uint32_t s = 0; s < lengths[b]; ++s) {
      const int32_t id = ids[static_cast<size_t>(b) * seq + s];
      if (id < 0 || static_cast<uint32_t>(id) >= a.vocab_size()) {
        return Status::Error(StatusCode::kInvalidArgument, "%s token id %d at sequence %u "
                             "position %u is outside the vocabulary [0, %u)", what, id, b, s,
                             a.vocab_size());
      }
    }
  }
  return Status::Ok();
}

Status Session::Run(const int32_t* ids, const uint32_t* lengths, uint32_t batch, uint32_t seq) {
  const fb::Structure structure = model_->architecture().structure();
  if (structure == fb::Structure::EncoderDecoder) {
    return Status(StatusCode::kInvalidArgument,
                  "encoder-decoder models run with RunEncoderDecoder (encoder and decoder ids)");
  }
  OCTET_RETURN_IF_ERROR(CheckBatch(ids, lengths, batch, seq, "input"));
  OCTET_RETURN_IF_ERROR(ArmCapture(batch, seq, seq));
  SetSampleRows(lengths, batch, seq);
  const uint32_t dim = structure == fb::Structure::EncoderOnly
                           ? model_->architecture().hidden_size()
                           : model_->architecture().vocab_size();
  const float* out = nullptr;
  if (structure == fb::Structure::EncoderOnly) {
    out = RunEncoder(forward_, ids, lengths, batch, seq);
    forward_.capture = nullptr;
  } else {
    out = RunDecoderPrefill(forward_, ids, lengths, batch, seq);
    forward_.capture = nullptr;
    for (uint32_t b = 0; b < batch; ++b) positions_[b] = lengths[b];
    step_batch_ = batch;
    if (forward_.last_logits_only) {
      output_ = OutputView{out, batch, 1, dim};
      SetSampleRows(nullptr, batch, 1);
      return Status::Ok();
    }
  }
  output_ = OutputView{out, batch, seq, dim};
  return Status::Ok();
}

Status Session::Step(const int32_t* ids, uint32_t batch) {
  const fb::Architecture& a = model_->architecture();
  if (!HasLayers(a) || a.structure() != fb::Structure::DecoderOnly) {
    return Status(StatusCode::kInvalidArgument, "Step needs a decoder-only model with layers");
  }
  OCTET_RETURN_IF_ERROR(CheckStep(ids, batch, "Step", "Run"));
  const float* out = RunDecoderStep(forward_, ids, positions_, batch);
  for (uint32_t b = 0; b < batch; ++b) ++positions_[b];
  output_ = OutputView{out, batch, 1, a.vocab_size()};
  SetSampleRows(nullptr, batch, 1);
  return Status::Ok();
}

Status Session::Extend(const int32_t* ids, uint32_t batch, uint32_t k) {
  const fb::Architecture& a = model_->architecture();
  if (!HasLayers(a) || a.structure() != fb::Structure::DecoderOnly) {
    return Status(StatusCode::kInvalidArgument, "Extend needs a decoder-only model with layers");
  }
  if (k == 0 || k > limits_.max_seq) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "Extend takes 1 to max_seq (%u) tokens per sequence, not %u",
                         limits_.max_seq, k);
  }
  if (ids == nullptr) return Status(StatusCode::kInvalidArgument, "Extend: ids is null");
  // Each new token as Step checks it: in the vocabulary, room in the cache.
  if (batch != step_batch_ || step_batch_ == 0) {
    return CheckStep(nullptr, batch, "Extend", "Run");  // names what is wrong
  }
  for (uint32_t b = 0; b < batch; ++b) {
    for (uint32_t i = 0; i < k; ++i) {
      const int32_t id = ids[static_cast<size_t>(b) * k + i];
      if (id < 0 || static_cast<uint32_t>(id) >= a.vocab_size()) {
        return Status::Error(StatusCode::kInvalidArgument, "token id %d of sequence %u is "
                             "outside the vocabulary [0, %u)", id, b, a.vocab_size());
      }
    }
  }
  const uint32_t capacity = limits_.max_seq + limits_.max_new_tokens;
  for (uint32_t b = 0; b < batch; ++b) {
    const uint64_t end = static_cast<uint64_t>(positions_[b]) + k;
    if (end > capacity || (a.position() == fb::PositionKind::Learned && end > a.max_positions())) {
      return Status::Error(StatusCode::kInvalidArgument, "sequence %u is full: %u more tokens "
                           "after position %u pass the session's max_seq + max_new_tokens or "
                           "the model's positions", b, k, positions_[b]);
    }
  }
  const float* out = RunDecoderExtend(forward_, ids, positions_, batch, k);
  for (uint32_t b = 0; b < batch; ++b) positions_[b] += k;
  if (forward_.last_logits_only) {
    output_ = OutputView{out, batch, 1, a.vocab_size()};
    SetSampleRows(nullptr, batch, 1);
  } else {
    output_ = OutputView{out, batch, k, a.vocab_size()};
    for (uint32_t b = 0; b < batch && sample_rows_ != nullptr; ++b) sample_rows_[b] = b * k + k - 1;
  }
  return Status::Ok();
}

Status Session::StepEncoderDecoder(const int32_t* ids, uint32_t batch) {
  const fb::Architecture& a = model_->architecture();
  if (a.structure() != fb::Structure::EncoderDecoder) {
    return Status(StatusCode::kInvalidArgument,
                  "StepEncoderDecoder needs an encoder-decoder model");
  }
  OCTET_RETURN_IF_ERROR(CheckStep(ids, batch, "StepEncoderDecoder", "RunEncoderDecoder"));
  const float* out =
      RunDecoderOnSourceStep(forward_, source_lengths_, source_seq_, ids, positions_, batch);
  for (uint32_t b = 0; b < batch; ++b) ++positions_[b];
  output_ = OutputView{out, batch, 1, a.vocab_size()};
  SetSampleRows(nullptr, batch, 1);
  return Status::Ok();
}

// A step's run-time data: one id per sequence of the last batch, room in the cache.
Status Session::CheckStep(const int32_t* ids, uint32_t batch, const char* what,
                          const char* first) const {
  const fb::Architecture& a = model_->architecture();
  if (step_batch_ == 0) {
    return Status::Error(StatusCode::kInvalidArgument, "%s needs a %s first", what, first);
  }
  if (ids == nullptr || batch != step_batch_) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "%s takes one id for each of the %u sequences of the last %s", what,
                         step_batch_, first);
  }
  const uint32_t capacity = limits_.max_seq + limits_.max_new_tokens;
  for (uint32_t b = 0; b < batch; ++b) {
    if (ids[b] < 0 || static_cast<uint32_t>(ids[b]) >= a.vocab_size()) {
      return Status::Error(StatusCode::kInvalidArgument, "token id %d of sequence %u is outside "
                           "the vocabulary [0, %u)", ids[b], b, a.vocab_size());
    }
    if (positions_[b] >= capacity ||
        (a.position() == fb::PositionKind::Learned && positions_[b] >= a.max_positions())) {
      return Status::Error(StatusCode::kInvalidArgument, "sequence %u is full: position %u is "
                           "beyond the session's max_seq + max_new_tokens or the model's "
                           "positions", b, positions_[b]);
    }
  }
  return Status::Ok();
}

// The row of the output that holds sequence b's next-token logits: the last
// real position (lengths[b] - 1), or the single row of a Step (lengths null).
void Session::SetSampleRows(const uint32_t* lengths, uint32_t batch, uint32_t seq) {
  if (sample_rows_ == nullptr) return;
  for (uint32_t b = 0; b < batch; ++b) {
    sample_rows_[b] = lengths == nullptr ? b : b * seq + lengths[b] - 1;
  }
}

Status Session::Sample(const SamplingParams& params, uint64_t* rng_state, int32_t* out_ids) {
  if (sample_rows_ == nullptr) {
    return Status(StatusCode::kInvalidArgument, "Sample needs a model that outputs logits");
  }
  if (output_.data == nullptr) {
    return Status(StatusCode::kInvalidArgument, "Sample needs a Run or Step first");
  }
  if (rng_state == nullptr || out_ids == nullptr) {
    return Status(StatusCode::kInvalidArgument, "Sample needs a random state and out_ids");
  }
  if (!(params.temperature >= 0.0f && params.temperature <= 1e30f) ||
      !(params.top_p > 0.0f && params.top_p <= 1.0f)) {
    return Status(StatusCode::kInvalidArgument,
                  "sampling needs a finite temperature >= 0 and top_p in (0, 1]");
  }
  const uint32_t vocab = output_.dim;
  for (uint32_t b = 0; b < output_.batch; ++b) {
    const float* row = output_.data + static_cast<size_t>(sample_rows_[b]) * vocab;
    out_ids[b] = SampleToken(row, vocab, params, rng_state, sample_scratch_);
  }
  return Status::Ok();
}

Status Session::RunEncoderDecoder(const int32_t* enc_ids, const uint32_t* enc_lengths,
                                  uint32_t enc_seq, const int32_t* dec_ids,
                                  const uint32_t* dec_lengths, uint32_t dec_seq, uint32_t batch) {
  const fb::Architecture& a = model_->architecture();
  if (a.structure() != fb::Structure::EncoderDecoder) {
    return Status(StatusCode::kInvalidArgument, "RunEncoderDecoder needs an encoder-decoder model");
  }
  OCTET_RETURN_IF_ERROR(CheckBatch(enc_ids, enc_lengths, batch, enc_seq, "encoder"));
  OCTET_RETURN_IF_ERROR(CheckBatch(dec_ids, dec_lengths, batch, dec_seq, "decoder"));
  if (capture_ != nullptr) {
    const bool encoder = capture_->stack == LayerStack::kEncoder;
    const bool cross = capture_->site == AttentionSite::kCross;
    OCTET_RETURN_IF_ERROR(ArmCapture(batch, encoder ? enc_seq : dec_seq,
                                     encoder || cross ? enc_seq : dec_seq));
  }
  SetSampleRows(dec_lengths, batch, dec_seq);
  // The source once: encoder and cross-attention keys and values, kept for
  // StepEncoderDecoder; then the decoder, whose keys and values stay cached.
  EncodeSource(forward_, enc_ids, enc_lengths, enc_seq, batch);
  for (uint32_t b = 0; b < batch; ++b) {
    source_lengths_[b] = enc_lengths[b];
    positions_[b] = dec_lengths[b];
  }
  source_seq_ = enc_seq;
  step_batch_ = batch;
  const float* out = RunDecoderOnSource(forward_, source_lengths_, source_seq_, dec_ids,
                                        dec_lengths, dec_seq, batch);
  forward_.capture = nullptr;
  if (forward_.last_logits_only) {
    output_ = OutputView{out, batch, 1, a.vocab_size()};
    SetSampleRows(nullptr, batch, 1);
    return Status::Ok();
  }
  output_ = OutputView{out, batch, dec_seq, a.vocab_size()};
  return Status::Ok();
}

Status Session::SetAttentionCapture(AttentionCapture* capture) {
  if (capture == nullptr) {
    capture_ = nullptr;
    return Status::Ok();
  }
  const fb::Architecture& a = model_->architecture();
  const bool enc_dec = a.structure() == fb::Structure::EncoderDecoder;
  uint32_t layers = 0;
  if (enc_dec) {
    if (capture->stack == LayerStack::kEncoder) layers = a.num_layers();
    if (capture->stack == LayerStack::kDecoder) layers = a.num_decoder_layers();
  } else if (capture->stack == LayerStack::kSingle) {
    layers = a.num_layers();
  }
  if (layers == 0) {
    return Status(StatusCode::kInvalidArgument, enc_dec
                      ? "an encoder-decoder model captures from its encoder or decoder stack"
                      : "this model has a single stack of layers (LayerStack::kSingle)");
  }
  if (capture->layer >= layers) {
    return Status::Error(StatusCode::kInvalidArgument, "layer %u is out of range (the stack has "
                         "%u layers)", capture->layer, layers);
  }
  if (capture->site == AttentionSite::kCross &&
      !(enc_dec && capture->stack == LayerStack::kDecoder)) {
    return Status(StatusCode::kInvalidArgument,
                  "cross-attention exists only in the decoder of an encoder-decoder model");
  }
  if (capture->probs == nullptr && capture->capacity != 0) {
    return Status(StatusCode::kInvalidArgument, "the capture has a capacity but no buffer");
  }
  capture->batch = capture->heads = capture->q_len = capture->k_len = 0;
  capture_ = capture;
  return Status::Ok();
}

Status Session::ArmCapture(uint32_t batch, uint32_t q_len, uint32_t k_len) {
  forward_.capture = nullptr;
  if (capture_ == nullptr) return Status::Ok();
  const uint32_t heads = model_->architecture().attention()->num_heads();
  uint64_t floats = 0;
  if (!CheckedMul(static_cast<uint64_t>(batch) * heads, static_cast<uint64_t>(q_len) * k_len,
                  &floats) ||
      floats > capture_->capacity) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "the attention capture needs [%u, %u, %u, %u] floats; its buffer holds "
                         "%llu", batch, heads, q_len, k_len,
                         static_cast<unsigned long long>(capture_->capacity));
  }
  capture_->batch = batch;
  capture_->heads = heads;
  capture_->q_len = q_len;
  capture_->k_len = k_len;
  std::memset(capture_->probs, 0, static_cast<size_t>(floats) * sizeof(float));
  forward_.capture = capture_;
  return Status::Ok();
}

}  // namespace octet
