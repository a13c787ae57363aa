// Generator: see generator.h.
#include "engine/generator.h"

#include <new>

namespace octet {

struct Generator::Stream {
  OCTET_ALLOCATED_THROUGH_ALLOCATE  // streams_: new (std::nothrow) Stream[max_batch]
  text::TokenizerWorkspace workspace;
  text::StreamDecoder decoder;
  bool keep_special = false;  // how the decoder was initialized
  OwnedArray<char> buffer;
  size_t capacity = 0;
};

bool IsEosToken(const Model& model, const text::Tokenizer* tokenizer, int32_t id) {
  if (tokenizer != nullptr) {
    const fb::TokenizerSpec& spec = tokenizer->spec();
    if (spec.eos_ids() != nullptr && spec.eos_ids()->size() > 0) return tokenizer->IsEos(id);
  }
  const int32_t eos = model.architecture().eos_token_id();
  return eos >= 0 && id == eos;
}

Result<Generator> Generator::Create(const Model& model, const text::Tokenizer* tokenizer,
                                    uint32_t max_batch) {
  const fb::Architecture& a = model.architecture();
  Generator g;
  g.model_ = &model;
  g.tokenizer_ = tokenizer;
  g.max_batch_ = max_batch;
  g.pad_ = a.pad_token_id() >= 0 ? a.pad_token_id() : 0;
  g.enc_dec_ = a.structure() == fb::Structure::EncoderDecoder;
  g.counts_.reset(NewArray<uint32_t>(max_batch));
  g.done_.reset(NewArray<uint8_t>(max_batch));
  g.next_.reset(NewArray<int32_t>(max_batch));
  g.feed_.reset(NewArray<int32_t>(max_batch));
  g.ones_.reset(NewArray<uint32_t>(max_batch));
  g.cancel_.reset(New<Cancellation>());
  if (!g.counts_ || !g.done_ || !g.next_ || !g.feed_ || !g.ones_ || !g.cancel_) {
    return Status::Error(StatusCode::kOutOfMemory,
                         "generation: out of memory for the per-sequence arrays (%u sequences)",
                         max_batch);
  }
  for (uint32_t i = 0; i < max_batch; ++i) g.ones_[i] = 1;
  if (tokenizer == nullptr) return g;
  g.streams_.reset(new (std::nothrow) Stream[max_batch]);
  if (g.streams_ == nullptr) {
    return Status::Error(StatusCode::kOutOfMemory,
                         "generation: out of memory for the text streams (%u sequences)",
                         max_batch);
  }
  for (uint32_t i = 0; i < max_batch; ++i) {
    Stream& s = g.streams_[i];
    Status st = tokenizer->CreateWorkspace(1, text::StreamDecoder::kWindow, &s.workspace);
    if (st.ok()) st = s.decoder.Init(tokenizer, &s.workspace, /*skip_special_tokens=*/true);
    if (!st.ok()) return st;
    s.keep_special = false;
    s.capacity = tokenizer->MaxDecodedBytes(text::StreamDecoder::kWindow);
    s.buffer.reset(NewArray<char>(s.capacity));
    if (s.buffer == nullptr) {
      return Status::Error(StatusCode::kOutOfMemory,
                           "generation: out of memory for the %zu-byte text buffer of sequence %u",
                           s.capacity, i);
    }
  }
  return g;
}

Generator::Generator(Generator&&) noexcept = default;
Generator& Generator::operator=(Generator&&) noexcept = default;
Generator::~Generator() = default;

uint64_t Generator::Begin() {
  return cancel_->handed_out.fetch_add(1, std::memory_order_acq_rel) + 1;
}

void Generator::Cancel() {
  cancel_->cancelled.store(cancel_->handed_out.load(std::memory_order_acquire),
                          std::memory_order_release);
}

Status Generator::Generate(Session* session, const int32_t* ids, const uint32_t* lengths,
                           uint32_t batch, uint32_t seq, const GenerateParams& params,
                           const GenerateCallbacks& callbacks, uint32_t* out_counts,
                           uint64_t generation) {
  if (params.max_new_tokens == 0) {
    return Status(StatusCode::kInvalidArgument, "max_new_tokens must be >= 1");
  }
  const fb::Architecture& a = model_->architecture();
  if (a.structure() == fb::Structure::EncoderOnly || a.num_layers() == 0) {
    return Status(StatusCode::kUnsupported, "octet_generate needs a decoder with layers; this "
                  "model is encoder-only or has none");
  }
  if (ids == nullptr || lengths == nullptr) {
    return Status(StatusCode::kInvalidArgument, "octet_generate: ids and lengths must not be null");
  }
  const SessionLimits& limits = session->limits();
  const uint32_t max_batch = limits.max_batch < max_batch_ ? limits.max_batch : max_batch_;
  if (batch < 1 || batch > max_batch) {
    return Status::Error(batch < 1 ? StatusCode::kInvalidArgument : StatusCode::kLimitExceeded,
                         "batch %u is outside [1, %u] (the session's max_batch)", batch,
                         max_batch);
  }
  // Room for every step: the last sampled token is not fed back.
  const uint64_t capacity = static_cast<uint64_t>(limits.max_seq) + limits.max_new_tokens;
  for (uint32_t b = 0; b < batch; ++b) {
    const uint64_t first = enc_dec_ ? 1 : lengths[b];  // the decoder start token
    if (lengths[b] >= 1 && first + params.max_new_tokens - 1 > capacity) {
      return Status::Error(StatusCode::kLimitExceeded,
                           "sequence %u: %u prompt tokens and %u new ones need %llu positions; "
                           "the session holds max_seq + max_new_tokens = %llu",
                           b, enc_dec_ ? 1u : lengths[b], params.max_new_tokens,
                           static_cast<unsigned long long>(first + params.max_new_tokens - 1),
                           static_cast<unsigned long long>(capacity));
    }
  }
  for (uint32_t b = 0; b < batch; ++b) counts_[b] = 0;
  Status status = StartStreams(params, enc_dec_ ? nullptr : ids, lengths, batch, seq);
  if (!status.ok()) return status;

  if (enc_dec_) {
    const int32_t start_id = a.decoder_start_token_id() >= 0 ? a.decoder_start_token_id() : pad_;
    for (uint32_t b = 0; b < batch; ++b) feed_[b] = start_id;
    status = session->RunEncoderDecoder(ids, lengths, seq, feed_.get(), ones_.get(), 1, batch);
  } else {
    status = session->Run(ids, lengths, batch, seq);
  }
  if (!status.ok()) return status;
  if (callbacks.on_prompt != nullptr) callbacks.on_prompt(callbacks.user);
  uint64_t rng = params.seed;
  status = Loop(session, batch, params, callbacks, &rng, generation);
  if (out_counts != nullptr) {
    for (uint32_t b = 0; b < batch; ++b) out_counts[b] = counts_[b];
  }
  return status;
}

Status Generator::Continue(Session* session, const GenerateParams& params,
                           const GenerateCallbacks& callbacks, uint64_t* rng_state,
                           uint32_t* out_counts, uint64_t generation) {
  const fb::Architecture& a = model_->architecture();
  if (a.structure() != fb::Structure::DecoderOnly || a.num_layers() == 0) {
    return Status(StatusCode::kUnsupported,
                  "continuing a generation needs a decoder-only model with layers");
  }
  if (params.max_new_tokens == 0) {
    return Status(StatusCode::kInvalidArgument, "max_new_tokens must be >= 1");
  }
  const uint32_t batch = session->output().batch;
  if (session->output().data == nullptr || batch == 0) {
    return Status(StatusCode::kFailedPrecondition,
                  "continuing a generation needs a run, extend or loaded state first");
  }
  if (batch > max_batch_) {
    return Status::Error(StatusCode::kLimitExceeded,
                         "the session holds %u sequences; the generator was made for %u", batch,
                         max_batch_);
  }
  for (uint32_t b = 0; b < batch; ++b) counts_[b] = 0;
  Status status = StartStreams(params, nullptr, nullptr, batch, 0);
  uint64_t seed = params.seed;
  if (status.ok()) {
    status = Loop(session, batch, params, callbacks, rng_state != nullptr ? rng_state : &seed,
                  generation);
  }
  if (out_counts != nullptr) {
    for (uint32_t b = 0; b < batch; ++b) out_counts[b] = counts_[b];
  }
  return status;
}

Status Generator::StartStreams(const GenerateParams& params, const int32_t* ids,
                               const uint32_t* lengths, uint32_t batch, uint32_t seq) {
  if (streams_ == nullptr) return Status::Ok();
  for (uint32_t b = 0; b < batch; ++b) {
    Stream& s = streams_[b];
    if (s.keep_special != params.keep_special) {  // a new decoder only when the flag changes
      const Status init = s.decoder.Init(tokenizer_, &s.workspace, !params.keep_special);
      if (!init.ok()) return init;
      s.keep_special = params.keep_special;
    }
    s.decoder.Reset();
    // Primed with the prompt so the pieces decode in its context.
    for (uint32_t i = 0; ids != nullptr && i < lengths[b] && lengths[b] <= seq; ++i) {
      size_t n = 0;
      const Status pushed =
          s.decoder.Push(ids[static_cast<size_t>(b) * seq + i], s.buffer.get(), s.capacity, &n);
      if (!pushed.ok()) return pushed;
    }
  }
  return Status::Ok();
}

Status Generator::Loop(Session* session, uint32_t batch, const GenerateParams& params,
                       const GenerateCallbacks& callbacks, uint64_t* rng, uint64_t generation) {
  for (uint32_t b = 0; b < batch; ++b) done_[b] = 0;
  stopped_ = false;
  Status status;
  TokenEvent event;
  for (;;) {
    if (cancel_->cancelled.load(std::memory_order_acquire) == generation) {
      return Status(StatusCode::kCancelled, "the generation was cancelled");
    }
    status = session->Sample(params.sampling, rng, next_.get());
    if (!status.ok()) return status;
    bool all_done = true;
    for (uint32_t b = 0; b < batch && !stopped_; ++b) {
      feed_[b] = done_[b] ? pad_ : next_[b];  // finished sequences feed padding (ignored)
      if (done_[b]) continue;
      const bool eos = !params.ignore_eos && IsEosToken(*model_, tokenizer_, next_[b]);
      event = TokenEvent();
      event.sequence = b;
      event.id = next_[b];
      event.index = counts_[b];
      event.is_eos = eos;
      if (streams_ != nullptr) {
        Stream& stream = streams_[b];
        event.text = stream.buffer.get();
        if (!eos) {
          status = stream.decoder.Push(next_[b], stream.buffer.get(), stream.capacity,
                                       &event.text_len);
          if (!status.ok()) return status;
        }
      }
      ++counts_[b];
      if (counts_[b] == params.max_new_tokens || eos) done_[b] = 1;
      if (callbacks.on_token != nullptr && callbacks.on_token(callbacks.user, event) != 0) {
        stopped_ = true;
      }
      all_done = all_done && done_[b] != 0;
    }
    if (stopped_) return Status::Ok();
    if (all_done) return Flush(batch, callbacks);
    status = enc_dec_ ? session->StepEncoderDecoder(feed_.get(), batch)
                      : session->Step(feed_.get(), batch);
    if (!status.ok()) return status;
  }
}

Status Generator::Flush(uint32_t batch, const GenerateCallbacks& callbacks) {
  if (streams_ == nullptr) return Status::Ok();
  for (uint32_t b = 0; b < batch && !stopped_; ++b) {
    Stream& stream = streams_[b];
    size_t n = 0;
    const Status finished = stream.decoder.Finish(stream.buffer.get(), stream.capacity, &n);
    if (!finished.ok()) return finished;
    if (n == 0 || callbacks.on_token == nullptr) continue;
    TokenEvent event;
    event.sequence = b;
    event.id = -1;
    event.index = counts_[b];
    event.text = stream.buffer.get();
    event.text_len = n;
    if (callbacks.on_token(callbacks.user, event) != 0) stopped_ = true;
  }
  return Status::Ok();
}

}  // namespace octet
