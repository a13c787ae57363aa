// Session: plan at creation, compute in Run.
//
// Every model runs the forward pass of engine/forward.h (fp32 or int8, as the
// file's tensors are), layer-free ones (embedding -> norm -> LM head) included;
// its buffers are planned here with everything else.
#include "engine/session.h"

#include "engine/mixer.h"

#include <cmath>
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
    // The default chunk halves (down to kMinDefaultPrefillChunk) while the
    // per-row buffers it plans exceed kPrefillBufferBytes: wide layers (a
    // Gated DeltaNet's rows are ~14 hidden sizes wide) then cost a few percent
    // of prefill speed instead of tens of MiB.
    while (limits.prefill_chunk == 0 && fl.prefill_chunk > kMinDefaultPrefillChunk &&
           activations.size() + scratch.size() > kPrefillBufferBytes) {
      fl.prefill_chunk /= 2;
      activations = ArenaLayout();
      scratch = ArenaLayout();
      kv = ArenaLayout();
      OCTET_RETURN_IF_ERROR(PlanForward(a, GetForwardMode(model), fl, &activations, &scratch,
                                        &kv, &out->forward));
    }
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
    const bool enc_dec = a.structure() == fb::Structure::EncoderDecoder;
    if (a.structure() != fb::Structure::EncoderOnly) {
      const ForwardMode mode = GetForwardMode(model);
      const uint32_t layers = enc_dec ? a.num_decoder_layers() : a.num_layers();
      const size_t channel = ModelChannelMixer(a).state_bytes(a);
      for (uint32_t l = 0; l < layers; ++l) {
        MixerStateSize size =
            LayerTokenMixer(a, enc_dec ? LayerStack::kDecoder : LayerStack::kSingle, l)
                .state_size(a, mode);
        size.fixed += channel;
        out->plan.kv_layers += size.per_position != 0;
        out->plan.kv_bytes_per_position += size.per_position;
        out->plan.fixed_state_layers += size.fixed != 0;
        out->plan.fixed_state_bytes += size.fixed;
      }
    }
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
    return Status(StatusCode::kOutOfMemory, "session: out of memory for the fp32 products' set");
  }
  if (limits.stream_weights) session.weight_stream_.reset(new (std::nothrow) WeightStream(limits.stream_keep_bytes));
  if (limits.stream_weights && session.weight_stream_ == nullptr) {
    return Status(StatusCode::kOutOfMemory, "session: out of memory for the weight stream");
  }
  session.hooks_.reset(New<ForwardHooks>());
  if (session.hooks_ == nullptr) {
    return Status(StatusCode::kOutOfMemory, "session: out of memory for the forward hooks");
  }
  OCTET_RETURN_IF_ERROR(PrepareForward(model, *session.kernels_, session.pool_.get(),
                                       layout.forward, session.activations_, session.scratch_,
                                       session.kv_cache_, session.f32_products_.get(),
                                       session.weight_stream_.get(),
                                       &session.forward_));
  session.hooks_->weight_stream = session.weight_stream_.get();
  session.UpdateHooks();
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
    return Status::Error(batch < 1 ? StatusCode::kInvalidArgument : StatusCode::kLimitExceeded,
                         "batch %u is outside [1, %u] (the session's max_batch)", batch,
                         limits_.max_batch);
  }
  if (seq < 1 || seq > limits_.max_seq) {
    return Status::Error(seq < 1 ? StatusCode::kInvalidArgument : StatusCode::kLimitExceeded,
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
    return Status::Error(k == 0 ? StatusCode::kInvalidArgument : StatusCode::kLimitExceeded,
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
      return Status::Error(StatusCode::kLimitExceeded, "sequence %u is full: %u more tokens "
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
    return Status::Error(StatusCode::kFailedPrecondition, "%s needs a %s first", what, first);
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
      return Status::Error(StatusCode::kLimitExceeded, "sequence %u is full: position %u is "
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
    return Status(StatusCode::kFailedPrecondition, "Sample needs a Run or Step first");
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
    // The logits live in this session's activations arena: the hook may edit them.
    float* row = const_cast<float*>(output_.data) + static_cast<size_t>(sample_rows_[b]) * vocab;
    if (params.logits_hook != nullptr) {
      if (params.logits_hook(params.logits_hook_user, b, row, vocab) != 0) {
        return Status::Error(StatusCode::kCancelled,
                             "the logits hook stopped sampling at sequence %u", b);
      }
      bool finite = false;
      for (uint32_t i = 0; i < vocab; ++i) {
        if (row[i] != row[i] || row[i] == INFINITY) {
          return Status::Error(StatusCode::kInvalidArgument,
                               "the logits hook left logit %u of sequence %u NaN or +infinity",
                               i, b);
        }
        finite = finite || row[i] != -INFINITY;
      }
      if (!finite) {
        return Status::Error(StatusCode::kInvalidArgument,
                             "the logits hook masked every token of sequence %u", b);
      }
    }
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
  const TokenMixer& mixer = LayerTokenMixer(a, capture->stack, capture->layer);
  if (capture->site == AttentionSite::kSelf && mixer.capture == CaptureKind::kNone) {
    return Status::Error(StatusCode::kInvalidArgument, "layer %u mixes its tokens with %s, "
                         "which has no attention weights to capture", capture->layer,
                         mixer.name);
  }
  if (capture->probs == nullptr && capture->capacity != 0) {
    return Status(StatusCode::kInvalidArgument, "the capture has a capacity but no buffer");
  }
  capture->batch = capture->heads = capture->q_len = capture->k_len = 0;
  capture->kind = CaptureKind::kNone;
  capture_ = capture;
  return Status::Ok();
}

Status Session::ArmCapture(uint32_t batch, uint32_t q_len, uint32_t k_len) {
  forward_.capture = nullptr;
  if (capture_ == nullptr) return Status::Ok();
  // Cross-attention is attention; a layer's own mixer says what it records.
  const fb::Architecture& a = model_->architecture();
  const TokenMixer& mixer = LayerTokenMixer(a, capture_->stack, capture_->layer);
  const bool cross = capture_->site == AttentionSite::kCross;
  const CaptureKind kind = cross ? CaptureKind::kProbabilities : mixer.capture;
  const uint32_t heads = cross ? a.attention()->num_heads() : mixer.capture_heads(a);
  if (kind == CaptureKind::kMixing && forward_.chunk != 0 && forward_.chunk < q_len) {
    // The matrix needs every token's q and k at once; a chunk's rows hold only its own.
    return Status::Error(StatusCode::kInvalidArgument,
                         "layer %u's token-mixing matrix (%s) is captured in one pass, but this "
                         "session runs prompts in chunks of %u positions: create it with "
                         "prefill_chunk 0 (and every row's logits)", capture_->layer, mixer.name,
                         forward_.chunk);
  }
  uint64_t floats = 0;
  if (!CheckedMul(static_cast<uint64_t>(batch) * heads, static_cast<uint64_t>(q_len) * k_len,
                  &floats) ||
      floats > capture_->capacity) {
    // The shape needed, for the caller to size a new buffer (the run stops here).
    capture_->batch = batch;
    capture_->heads = heads;
    capture_->q_len = q_len;
    capture_->k_len = k_len;
    return Status::Error(StatusCode::kBufferTooSmall,
                         "the attention capture needs [%u, %u, %u, %u] floats; its buffer holds "
                         "%llu", batch, heads, q_len, k_len,
                         static_cast<unsigned long long>(capture_->capacity));
  }
  capture_->kind = kind;
  capture_->batch = batch;
  capture_->heads = heads;
  capture_->q_len = q_len;
  capture_->k_len = k_len;
  std::memset(capture_->probs, 0, static_cast<size_t>(floats) * sizeof(float));
  forward_.capture = capture_;
  return Status::Ok();
}

// ---- State save and restore ----

namespace {

constexpr char kStateMagic[8] = {'o', 'c', 't', 'e', 't', 'k', 'v', '2'};
constexpr char kOldStateMagic[8] = {'o', 'c', 't', 'e', 't', 'k', 'v', '1'};  // no checksum

// The state's fixed part; then u32 positions[batch], u32 source_lengths[batch]
// (encoder-decoder), per decoder layer and sequence the self-attention keys,
// values (and their scales) of its positions, per decoder layer and sequence
// the cross-attention rows of the source (encoder-decoder), and f32
// logits[batch, vocab]. Native byte order (every target is little-endian).
struct StateHeader {
  char magic[8];
  uint64_t fingerprint;   // ModelFingerprint: the file's tables and a sample of every tensor
  uint32_t structure;
  uint32_t value_bytes;   // per key/value element
  uint32_t has_scales;
  uint32_t layers;        // decoder layers
  uint32_t kv_heads;
  uint32_t kv_dim;
  uint32_t vocab;
  uint32_t batch;
  uint32_t source_seq;    // encoder-decoder; else 0
  uint32_t reserved;      // 0
  uint64_t checksum;      // StateChecksum of the whole state with this field 0
};
static_assert(sizeof(StateHeader) == 64, "the state's fixed part is 64 bytes, unpadded");

// A 64-bit hash of the state's bytes, 8 at a time (FNV-1a's step on words):
// every step is a bijection of the running value, so one changed word always
// changes the result. A few GB/s: small beside the copies.
uint64_t StateChecksum(const uint8_t* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, sizeof(w));
    h = (h ^ w) * 0x100000001b3ull;
  }
  for (; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h ^ (h >> 29);
}

// The checksum of a state whose header sits at data: its own field read as 0.
uint64_t ChecksumOfState(const uint8_t* data, size_t size) {
  StateHeader h;
  std::memcpy(&h, data, sizeof(h));
  h.checksum = 0;
  const uint64_t head = StateChecksum(reinterpret_cast<const uint8_t*>(&h), sizeof(h));
  return head ^ (StateChecksum(data + sizeof(h), size - sizeof(h)) * 0x9e3779b97f4a7c15ull);
}

uint64_t Fnv1a(uint64_t h, const uint8_t* p, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// FNV-1a of the model file's tables (before the data segment: architecture,
// tensor names, shapes, scales, tokenizer) and of 16 bytes at four evenly
// spaced places of every tensor: models that share their tables (fp32 files of
// one architecture) differ there. Cost: the tables' bytes plus 64 per tensor.
uint64_t ModelFingerprint(const Model& model) {
  const uint64_t n = model.data_offset() < model.file_size() ? model.data_offset() : model.file_size();
  uint64_t h = Fnv1a(0xcbf29ce484222325ull, model.file_data(), n);
  for (size_t t = 0; t < model.num_tensors(); ++t) {
    const TensorView& view = model.tensor(t);
    const uint8_t* data = static_cast<const uint8_t*>(view.data);
    constexpr uint64_t kChunk = 16;
    if (view.size <= 4 * kChunk) {
      h = Fnv1a(h, data, view.size);
      continue;
    }
    for (uint64_t k = 0; k < 4; ++k) h = Fnv1a(h, data + (view.size - kChunk) * k / 3, kChunk);
  }
  return h;
}

uint32_t DecoderLayers(const fb::Architecture& a) {
  return a.structure() == fb::Structure::EncoderDecoder ? a.num_decoder_layers() : a.num_layers();
}

LayerStack DecoderStack(const fb::Architecture& a) {
  return a.structure() == fb::Structure::EncoderDecoder ? LayerStack::kDecoder
                                                        : LayerStack::kSingle;
}

// The bytes of one sequence's state in the decoder layers after `position`
// positions: each layer's token- and channel-mixer states (engine/mixer.h)
// and, with a source (encoder-decoder: source_seq > 0), its cross-attention rows.
size_t SequenceStateBytes(const Forward& f, const fb::Architecture& a, uint32_t position,
                          uint32_t source_seq) {
  const fb::Attention& att = *a.attention();
  const size_t kvh = att.num_kv_heads(), kvd = kvh * att.head_dim();
  const size_t cross_row = 2 * (kvd * KvValueBytes(f) +
                                (f.cross_kv.k_scales != nullptr ? kvh * sizeof(float) : 0));
  size_t bytes = 0;
  for (uint32_t l = 0; l < DecoderLayers(a); ++l) {
    const MixerStateSize size = f.layer_states[l].total();
    bytes += position * size.per_position + size.fixed + source_seq * cross_row;
  }
  return bytes;
}

// Copies the decoder layers' states of sequences [0, batch) to (save) or from
// (!save) *cursor, layer by layer and sequence by sequence through each
// layer's token mixer, then its channel mixer, then the cross-attention rows
// layer by layer.
void CopyDecoderState(const Forward& f, const fb::Architecture& a, const uint32_t* positions,
                      uint32_t batch, uint32_t source_seq, bool save, uint8_t** cursor) {
  const uint32_t layers = DecoderLayers(a);
  const ChannelMixer& channel = ModelChannelMixer(a);
  for (uint32_t l = 0; l < layers; ++l) {
    const TokenMixer& mixer = LayerTokenMixer(a, DecoderStack(a), l);
    for (uint32_t b = 0; b < batch; ++b) mixer.copy_state(f, l, b, positions[b], save, cursor);
    for (uint32_t b = 0; b < batch; ++b) channel.copy_state(f, l, b, save, cursor);
  }
  for (uint32_t l = 0; source_seq > 0 && l < layers; ++l) {
    const KvRows kv = DecoderCrossKv(f, l);
    for (uint32_t b = 0; b < batch; ++b) CopyKvRows(f, kv, b, source_seq, save, cursor);
  }
}

}  // namespace

size_t Session::StateBytes() const {
  const fb::Architecture& a = model_->architecture();
  if (step_batch_ == 0 || !HasLayers(a) || a.structure() == fb::Structure::EncoderOnly) return 0;
  const bool enc_dec = a.structure() == fb::Structure::EncoderDecoder;
  size_t states = 0;
  for (uint32_t b = 0; b < step_batch_; ++b) {
    states += SequenceStateBytes(forward_, a, positions_[b], enc_dec ? source_seq_ : 0);
  }
  return sizeof(StateHeader) + step_batch_ * sizeof(uint32_t) * (enc_dec ? 2 : 1) +
         states +
         static_cast<size_t>(step_batch_) * a.vocab_size() * sizeof(float);
}

Status Session::SaveState(void* out, size_t capacity, size_t* written) const {
  if (written == nullptr) return Status(StatusCode::kInvalidArgument, "SaveState: written is null");
  *written = 0;
  const fb::Architecture& a = model_->architecture();
  if (!HasLayers(a) || a.structure() == fb::Structure::EncoderOnly) {
    return Status(StatusCode::kUnsupported, "only decoders with layers have a state to save");
  }
  if (step_batch_ == 0 || output_.data == nullptr) {
    return Status(StatusCode::kFailedPrecondition, "SaveState needs a run first");
  }
  const size_t bytes = StateBytes();
  if (out == nullptr || capacity < bytes) {
    *written = bytes;
    return Status::Error(StatusCode::kBufferTooSmall, "the state takes %zu bytes, the buffer %zu",
                         bytes, out == nullptr ? size_t{0} : capacity);
  }
  const bool enc_dec = a.structure() == fb::Structure::EncoderDecoder;
  const fb::Attention& att = *a.attention();
  StateHeader h;
  std::memcpy(h.magic, kStateMagic, sizeof(h.magic));
  h.fingerprint = ModelFingerprint(*model_);
  h.structure = static_cast<uint32_t>(a.structure());
  h.value_bytes = static_cast<uint32_t>(KvValueBytes(forward_));
  h.has_scales = forward_.self_kv.k_scales != nullptr ? 1 : 0;
  h.layers = DecoderLayers(a);
  h.kv_heads = att.num_kv_heads();
  h.kv_dim = att.num_kv_heads() * att.head_dim();
  h.vocab = a.vocab_size();
  h.batch = step_batch_;
  h.source_seq = enc_dec ? source_seq_ : 0;
  h.reserved = 0;
  h.checksum = 0;
  uint8_t* cursor = static_cast<uint8_t*>(out);
  std::memcpy(cursor, &h, sizeof(h));
  cursor += sizeof(h);
  std::memcpy(cursor, positions_, step_batch_ * sizeof(uint32_t));
  cursor += step_batch_ * sizeof(uint32_t);
  if (enc_dec) {
    std::memcpy(cursor, source_lengths_, step_batch_ * sizeof(uint32_t));
    cursor += step_batch_ * sizeof(uint32_t);
  }
  CopyDecoderState(forward_, a, positions_, step_batch_, h.source_seq, true, &cursor);
  for (uint32_t b = 0; b < step_batch_; ++b) {
    const float* row = output_.data + static_cast<size_t>(sample_rows_[b]) * h.vocab;
    std::memcpy(cursor, row, h.vocab * sizeof(float));
    cursor += h.vocab * sizeof(float);
  }
  *written = static_cast<size_t>(cursor - static_cast<uint8_t*>(out));
  if (*written != bytes) return Status(StatusCode::kInternal, "SaveState wrote an unexpected size");
  h.checksum = ChecksumOfState(static_cast<const uint8_t*>(out), bytes);
  std::memcpy(out, &h, sizeof(h));
  return Status::Ok();
}

Status Session::LoadState(const void* data, size_t size) {
  const fb::Architecture& a = model_->architecture();
  if (!HasLayers(a) || a.structure() == fb::Structure::EncoderOnly) {
    return Status(StatusCode::kUnsupported, "only decoders with layers have a state to load");
  }
  if (data == nullptr) return Status(StatusCode::kInvalidArgument, "LoadState: data is null");
  StateHeader h;
  if (size < sizeof(h)) {
    return Status::Error(StatusCode::kInvalidArgument, "a state of %zu bytes is too short", size);
  }
  std::memcpy(&h, data, sizeof(h));
  if (std::memcmp(h.magic, kOldStateMagic, sizeof(h.magic)) == 0) {
    return Status(StatusCode::kInvalidArgument, "the state was saved by an older octet (state "
                  "format 1, without a checksum): run the prompt again and save a new one");
  }
  if (std::memcmp(h.magic, kStateMagic, sizeof(h.magic)) != 0) {
    return Status(StatusCode::kInvalidArgument, "the bytes are not an octet session state");
  }
  if (ChecksumOfState(static_cast<const uint8_t*>(data), size) != h.checksum) {
    return Status(StatusCode::kInvalidArgument, "the state is corrupt: its checksum does not match "
                  "its bytes (changed or cut after it was saved); nothing was loaded");
  }
  const bool enc_dec = a.structure() == fb::Structure::EncoderDecoder;
  const fb::Attention& att = *a.attention();
  if (h.fingerprint != ModelFingerprint(*model_) ||
      h.structure != static_cast<uint32_t>(a.structure()) ||
      h.value_bytes != KvValueBytes(forward_) ||
      h.has_scales != (forward_.self_kv.k_scales != nullptr ? 1u : 0u) ||
      h.layers != DecoderLayers(a) || h.kv_heads != att.num_kv_heads() ||
      h.kv_dim != att.num_kv_heads() * att.head_dim() || h.vocab != a.vocab_size()) {
    return Status(StatusCode::kInvalidArgument,
                  "the state was saved from a session of another model");
  }
  if (h.reserved != 0 || (!enc_dec && h.source_seq != 0)) {
    return Status(StatusCode::kInvalidArgument, "the state's header is corrupt");
  }
  if (h.batch < 1 || h.batch > limits_.max_batch) {
    return Status::Error(StatusCode::kLimitExceeded,
                         "the state holds %u sequences; the session takes %u", h.batch,
                         limits_.max_batch);
  }
  const size_t head_bytes = sizeof(h) + h.batch * sizeof(uint32_t) * (enc_dec ? 2 : 1);
  if (size < head_bytes) {
    return Status::Error(StatusCode::kInvalidArgument, "a state of %zu bytes is too short", size);
  }
  const uint8_t* in = static_cast<const uint8_t*>(data);
  const auto read_u32 = [in](size_t at) {
    uint32_t v;
    std::memcpy(&v, in + at, sizeof(v));
    return v;
  };
  const size_t positions_at = sizeof(h), sources_at = positions_at + h.batch * sizeof(uint32_t);
  const uint32_t capacity = limits_.max_seq + limits_.max_new_tokens;
  if (enc_dec && (h.source_seq < 1 || h.source_seq > limits_.max_seq)) {
    return Status::Error(StatusCode::kLimitExceeded, "the state's source has %u tokens; the "
                         "session's max_seq is %u", h.source_seq, limits_.max_seq);
  }
  size_t states = 0;
  for (uint32_t b = 0; b < h.batch; ++b) {
    const uint32_t p = read_u32(positions_at + b * sizeof(uint32_t));
    if (p < 1 || p > capacity ||
        (a.position() == fb::PositionKind::Learned && p > a.max_positions())) {
      return Status::Error(p < 1 ? StatusCode::kInvalidArgument : StatusCode::kLimitExceeded,
                           "sequence %u of the state has %u positions; the session holds 1 to %u",
                           b, p, capacity);
    }
    if (enc_dec) {
      const uint32_t n = read_u32(sources_at + b * sizeof(uint32_t));
      if (n < 1 || n > h.source_seq) {
        return Status::Error(StatusCode::kInvalidArgument,
                             "source length %u of sequence %u is outside [1, %u]", n, b,
                             h.source_seq);
      }
    }
    states += SequenceStateBytes(forward_, a, p, h.source_seq);
  }
  const size_t expected = head_bytes +
                          states +
                          static_cast<size_t>(h.batch) * h.vocab * sizeof(float);
  if (size != expected) {
    return Status::Error(StatusCode::kInvalidArgument,
                         "the state has %zu bytes where its header says %zu", size, expected);
  }
  // Checked: now nothing can fail.
  uint8_t* cursor = const_cast<uint8_t*>(in) + head_bytes;  // read only (CopyRows<false>)
  for (uint32_t b = 0; b < h.batch; ++b) {
    positions_[b] = read_u32(positions_at + b * sizeof(uint32_t));
    if (enc_dec) source_lengths_[b] = read_u32(sources_at + b * sizeof(uint32_t));
  }
  CopyDecoderState(forward_, a, positions_, h.batch, h.source_seq, false, &cursor);
  std::memcpy(forward_.buffer<ForwardBuffer::kLogits>(), cursor, static_cast<size_t>(h.batch) * h.vocab * sizeof(float));
  source_seq_ = enc_dec ? h.source_seq : 0;
  step_batch_ = h.batch;
  output_ = OutputView{forward_.buffer<ForwardBuffer::kLogits>(), h.batch, 1, h.vocab};
  SetSampleRows(nullptr, h.batch, 1);
  return Status::Ok();
}

}  // namespace octet
