// The C API's generation: prompts in one run, then sample -> callback -> step
// until every sequence ends, with streamed text and a cancel flag.
#include <new>

#include "api/internal.h"

namespace octet {
namespace api {

octet_status InitGeneration(octet_session* session, uint32_t count) {
  GenerationScratch& g = session->generation;
  g.counts.reset(new (std::nothrow) uint32_t[count]);
  g.done.reset(new (std::nothrow) uint8_t[count]);
  g.next.reset(new (std::nothrow) int32_t[count]);
  g.feed.reset(new (std::nothrow) int32_t[count]);
  g.ones.reset(new (std::nothrow) uint32_t[count]);
  if (!g.counts || !g.done || !g.next || !g.feed || !g.ones) {
    return Fail(OCTET_OUT_OF_MEMORY, "cannot allocate the generation's arrays");
  }
  for (uint32_t i = 0; i < count; ++i) g.ones[i] = 1;
  if (!session->model->has_tokenizer) return OCTET_OK;
  const text::Tokenizer& tokenizer = session->model->tokenizer;
  session->streams.reset(new (std::nothrow) GenerationStream[count]);
  if (session->streams == nullptr) {
    return Fail(OCTET_OUT_OF_MEMORY, "cannot allocate the generation's text streams");
  }
  for (uint32_t i = 0; i < count; ++i) {
    GenerationStream& s = session->streams[i];
    Status st = tokenizer.CreateWorkspace(1, text::StreamDecoder::kWindow, &s.workspace);
    if (st.ok()) st = s.decoder.Init(&tokenizer, &s.workspace, /*skip_special_tokens=*/true);
    if (!st.ok()) return Fail(st);
    s.keep_special = false;
    s.capacity = tokenizer.MaxDecodedBytes(text::StreamDecoder::kWindow);
    s.buffer.reset(new (std::nothrow) char[s.capacity]);
    if (s.buffer == nullptr) return Fail(OCTET_OUT_OF_MEMORY, "cannot allocate a text stream");
  }
  session->num_streams = count;
  return OCTET_OK;
}

namespace {

octet_status ReadGenerateOptions(const octet_generate_options* in, octet_generate_options* out) {
  octet_generate_options_init(out);
  if (in == nullptr) return OCTET_OK;
  if (!CopyIn(in, out)) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_generate_options.struct_size is %zu (unset?)",
                in->struct_size);
  }
  const uint32_t known = OCTET_GENERATE_KEEP_SPECIAL | OCTET_GENERATE_IGNORE_EOS;
  if ((out->flags & ~known) != 0) {
    return Fail(OCTET_INVALID_ARGUMENT, "unknown generation flags 0x%x", out->flags);
  }
  if (out->max_new_tokens == 0) {
    return Fail(OCTET_INVALID_ARGUMENT, "max_new_tokens must be >= 1");
  }
  return OCTET_OK;
}

}  // namespace
}  // namespace api
}  // namespace octet

using octet::api::Fail;

extern "C" {

OCTET_API void octet_generate_options_init(octet_generate_options* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->max_new_tokens = 128;
  options->temperature = 1.0f;
  options->top_k = 0;
  options->top_p = 1.0f;
  options->seed = 0;
  options->flags = 0;
}

OCTET_API void octet_session_cancel(octet_session* session) {
  if (session != nullptr) {
    session->cancelled.store(session->generations.load(std::memory_order_acquire),
                             std::memory_order_release);
  }
}

OCTET_API octet_status octet_generate(octet_session* session, const int32_t* ids,
                                      const uint32_t* lengths, uint32_t batch, uint32_t seq,
                                      const octet_generate_options* options,
                                      uint32_t* out_counts) {
  using namespace octet;
  if (session == nullptr) return Fail(OCTET_INVALID_ARGUMENT, "octet_generate: session is null");
  const uint64_t generation = session->generations.fetch_add(1, std::memory_order_acq_rel) + 1;
  octet_generate_options o;
  octet_status st = api::ReadGenerateOptions(options, &o);
  if (st != OCTET_OK) return st;
  const octet_model& model = *session->model;
  const fb::Architecture& a = model.model.architecture();
  const bool enc_dec = a.structure() == fb::Structure::EncoderDecoder;
  if (a.structure() == fb::Structure::EncoderOnly || a.num_layers() == 0) {
    return Fail(OCTET_UNSUPPORTED, "octet_generate needs a decoder with layers; this model is "
                "encoder-only or has none");
  }
  const SessionLimits& limits = session->session.limits();
  if (ids == nullptr || lengths == nullptr) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_generate: ids and lengths must not be null");
  }
  if (batch < 1 || batch > limits.max_batch) {
    return Fail(batch < 1 ? OCTET_INVALID_ARGUMENT : OCTET_LIMIT_EXCEEDED,
                "batch %u is outside [1, %u] (the session's max_batch)", batch, limits.max_batch);
  }
  // Room for every step: the last sampled token is not fed back.
  const uint64_t capacity = static_cast<uint64_t>(limits.max_seq) + limits.max_new_tokens;
  for (uint32_t b = 0; b < batch; ++b) {
    const uint64_t first = enc_dec ? 1 : lengths[b];  // the decoder start token
    if (lengths[b] >= 1 && first + o.max_new_tokens - 1 > capacity) {
      return Fail(OCTET_LIMIT_EXCEEDED,
                  "sequence %u: %u prompt tokens and %u new ones need %llu positions; the "
                  "session holds max_seq + max_new_tokens = %llu",
                  b, enc_dec ? 1u : lengths[b], o.max_new_tokens,
                  static_cast<unsigned long long>(first + o.max_new_tokens - 1),
                  static_cast<unsigned long long>(capacity));
    }
  }
  api::GenerationScratch& g = session->generation;
  uint32_t* const counts = g.counts.get();
  uint8_t* const done = g.done.get();
  int32_t* const next = g.next.get();
  int32_t* const feed = g.feed.get();
  for (uint32_t b = 0; b < batch; ++b) {
    counts[b] = 0;
    done[b] = 0;
  }

  // Text streams, primed with each prompt (decoder-only) so pieces decode in context.
  const bool text = model.has_tokenizer && session->streams != nullptr;
  const bool keep_special = (o.flags & OCTET_GENERATE_KEEP_SPECIAL) != 0;
  if (text) {
    for (uint32_t b = 0; b < batch; ++b) {
      api::GenerationStream& s = session->streams[b];
      if (s.keep_special != keep_special) {  // a new decoder only when the flag changes
        const Status init = s.decoder.Init(&model.tokenizer, &s.workspace, !keep_special);
        if (!init.ok()) return Fail(init);
        s.keep_special = keep_special;
      }
      s.decoder.Reset();
      for (uint32_t i = 0; !enc_dec && i < lengths[b] && lengths[b] <= seq; ++i) {
        size_t n = 0;
        const Status pushed =
            s.decoder.Push(ids[static_cast<size_t>(b) * seq + i], s.buffer.get(), s.capacity, &n);
        if (!pushed.ok()) return Fail(pushed);
      }
    }
  }

  const int32_t pad = a.pad_token_id() >= 0 ? a.pad_token_id() : 0;
  Status status;
  if (enc_dec) {
    const int32_t start_id = a.decoder_start_token_id() >= 0 ? a.decoder_start_token_id() : pad;
    for (uint32_t b = 0; b < batch; ++b) feed[b] = start_id;
    status = session->session.RunEncoderDecoder(ids, lengths, seq, feed, g.ones.get(), 1, batch);
  } else {
    status = session->session.Run(ids, lengths, batch, seq);
  }
  if (!status.ok()) return Fail(status);
  session->has_output = true;
  api::SyncCapture(session);

  SamplingParams params;
  params.temperature = o.temperature;
  params.top_k = o.top_k;
  params.top_p = o.top_p;
  params.logits_hook = o.logits_hook;
  params.logits_hook_user = o.logits_hook_user;
  uint64_t rng = o.seed;
  bool stopped = false;  // the callback asked to stop
  octet_token_event event;
  std::memset(&event, 0, sizeof(event));
  event.struct_size = sizeof(event);
  for (;;) {
    if (session->cancelled.load(std::memory_order_acquire) == generation) {
      status = Status(StatusCode::kCancelled, "the generation was cancelled");
      break;
    }
    status = session->session.Sample(params, &rng, next);
    if (!status.ok()) break;
    bool all_done = true;
    for (uint32_t b = 0; b < batch && !stopped; ++b) {
      feed[b] = done[b] ? pad : next[b];  // finished sequences feed padding (ignored)
      if (done[b]) continue;
      const bool eos = (o.flags & OCTET_GENERATE_IGNORE_EOS) == 0 && api::IsEos(model, next[b]);
      event.sequence = b;
      event.id = next[b];
      event.index = counts[b];
      event.is_eos = eos ? 1 : 0;
      event.text = nullptr;
      event.text_len = 0;
      if (text) {
        api::GenerationStream& stream = session->streams[b];
        event.text = stream.buffer.get();
        if (!eos) {
          const Status pushed =
              stream.decoder.Push(next[b], stream.buffer.get(), stream.capacity, &event.text_len);
          if (!pushed.ok()) {
            status = pushed;
            break;
          }
        }
      }
      ++counts[b];
      if (counts[b] == o.max_new_tokens || eos) done[b] = 1;
      if (o.on_token != nullptr && o.on_token(o.on_token_user, &event) != 0) stopped = true;
      all_done = all_done && done[b] != 0;
    }
    if (!status.ok() || stopped || all_done) break;
    status = enc_dec ? session->session.StepEncoderDecoder(feed, batch)
                     : session->session.Step(feed, batch);
    if (!status.ok()) break;
  }
  // The text still held back (a character cut short by the end).
  if (status.ok() && !stopped && text) {
    for (uint32_t b = 0; b < batch && !stopped; ++b) {
      api::GenerationStream& stream = session->streams[b];
      size_t n = 0;
      const Status finished = stream.decoder.Finish(stream.buffer.get(), stream.capacity, &n);
      if (!finished.ok()) {
        status = finished;
        break;
      }
      if (n == 0 || o.on_token == nullptr) continue;
      event.sequence = b;
      event.id = -1;
      event.index = counts[b];
      event.is_eos = 0;
      event.text = stream.buffer.get();
      event.text_len = n;
      if (o.on_token(o.on_token_user, &event) != 0) stopped = true;
    }
  }
  if (out_counts != nullptr) {
    for (uint32_t b = 0; b < batch; ++b) out_counts[b] = counts[b];
  }
  return status.ok() ? OCTET_OK : Fail(status);
}

}  // extern "C"
