// The C API: status, models, sessions, runs, steps, sampling, embeddings,
// attention capture and session state (generation: octet_generate.cc; text:
// octet_text.cc).
#include <cmath>
#include <cstddef>
#include <cstdarg>
#include <cstdio>
#include <new>
#include <type_traits>
#include <utility>

#include "api/internal.h"
#include "engine/pooling.h"

#ifndef OCTET_VERSION_STRING
#define OCTET_VERSION_STRING "0.0.0"
#endif

namespace octet {
namespace api {
namespace {

thread_local char g_last_error[Status::kMaxMessage] = "";

static_assert(static_cast<int>(StatusCode::kCancelled) == OCTET_CANCELLED &&
                  static_cast<int>(StatusCode::kBufferTooSmall) == OCTET_BUFFER_TOO_SMALL &&
                  static_cast<int>(StatusCode::kLimitExceeded) == OCTET_LIMIT_EXCEEDED &&
                  static_cast<int>(StatusCode::kFailedPrecondition) == OCTET_INVALID_STATE &&
                  static_cast<int>(StatusCode::kInternal) == OCTET_INTERNAL,
              "the C status codes are the engine's");

const char* FamilyName(fb::Family family) {
  switch (family) {
    case fb::Family::Bert: return "bert";
    case fb::Family::Gpt2: return "gpt2";
    case fb::Family::Llama: return "llama";
    case fb::Family::Qwen2: return "qwen2";
    case fb::Family::Mistral: return "mistral";
    case fb::Family::Marian: return "marian";
    case fb::Family::T5: return "t5";
    case fb::Family::Qwen3: return "qwen3";
    case fb::Family::Gemma: return "gemma";
    case fb::Family::Gemma2: return "gemma2";
    case fb::Family::Gemma3: return "gemma3_text";
    case fb::Family::Phi3: return "phi3";
    case fb::Family::DistilBert: return "distilbert";
    case fb::Family::Roberta: return "roberta";
    case fb::Family::XlmRoberta: return "xlm-roberta";
    case fb::Family::ModernBert: return "modernbert";
    case fb::Family::Lfm2: return "lfm2";
    case fb::Family::Qwen35: return "qwen3_5";
    case fb::Family::Rwkv: return "rwkv";
    default: return "unknown";
  }
}

octet_status WrapModel(Result<Model> loaded, octet_model** out) {
  if (!loaded.ok()) return Fail(loaded.status());
  std::unique_ptr<octet_model> handle(new (std::nothrow) octet_model);
  if (handle == nullptr) return Fail(OCTET_OUT_OF_MEMORY, "cannot allocate a model handle");
  handle->model = std::move(loaded).value();
  if (const fb::TokenizerSpec* spec = handle->model.tokenizer_spec()) {
    const Status st = handle->tokenizer.Init(spec);
    if (!st.ok()) return Fail(st);
    handle->has_tokenizer = true;
    if (spec->chat_template() != nullptr && spec->chat_template()->size() > 0) {
      Result<text::ChatTemplate> parsed = text::ChatTemplate::Parse(
          std::string_view(spec->chat_template()->c_str(), spec->chat_template()->size()));
      handle->has_chat_template = true;
      if (parsed.ok()) {
        handle->chat_template = std::move(parsed).value();
      } else {
        handle->chat_status = parsed.status();
      }
    }
  }
  *out = handle.release();
  return OCTET_OK;
}

bool HasSteps(const fb::Architecture& a) {
  return a.structure() != fb::Structure::EncoderOnly && a.num_layers() > 0;
}

fb::Structure Structure(const octet_session* session) {
  return session->model->model.architecture().structure();
}

SessionLimits ToLimits(const octet_session_options& o, const fb::Architecture& a) {
  SessionLimits limits;
  limits.max_batch = o.max_batch;
  limits.max_seq = o.max_seq;
  limits.max_new_tokens = o.max_new_tokens;
  limits.threads = o.threads;
  limits.prefill_chunk = o.prefill_chunk;
  limits.last_logits_only =
      a.structure() != fb::Structure::EncoderOnly && (o.flags & OCTET_SESSION_ALL_LOGITS) == 0;
  return limits;
}

octet_status ReadOptions(const octet_session_options* in, octet_session_options* out) {
  octet_session_options_init(out);
  if (in == nullptr) return OCTET_OK;
  if (!CopyIn(in, out)) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_session_options.struct_size is %zu (unset?)",
                in->struct_size);
  }
  if ((out->flags & ~OCTET_SESSION_ALL_LOGITS) != 0) {
    return Fail(OCTET_INVALID_ARGUMENT, "unknown session flags 0x%x", out->flags);
  }
  return OCTET_OK;
}

// Offsets of the three arenas in one caller buffer.
struct MemorySplit {
  size_t activations = 0, scratch = 0, kv_cache = 0, total = 0;
};
constexpr size_t kArenaAlign = 64;
size_t AlignUp(size_t n) { return (n + kArenaAlign - 1) / kArenaAlign * kArenaAlign; }
MemorySplit Split(const SessionPlan& plan) {
  MemorySplit s;
  s.activations = 0;
  s.scratch = AlignUp(plan.activation_bytes);
  s.kv_cache = s.scratch + AlignUp(plan.scratch_bytes);
  s.total = s.kv_cache + AlignUp(plan.kv_cache_bytes);
  return s;
}

octet_status FinishSession(const octet_model* model, Result<Session> created, octet_session** out) {
  if (!created.ok()) return Fail(created.status());
  std::unique_ptr<octet_session> handle(new (std::nothrow)
                                            octet_session(model, std::move(created).value()));
  if (handle == nullptr) return Fail(OCTET_OUT_OF_MEMORY, "cannot allocate a session handle");
  const fb::Architecture& a = model->model.architecture();
  if (HasSteps(a)) {
    const octet_status st = InitGeneration(handle.get(), handle->session.limits().max_batch);
    if (st != OCTET_OK) return st;
  }
  *out = handle.release();
  return OCTET_OK;
}

// After a run: the output is valid, and the capture mirrored. A failed run
// failed its checks before computing: the last output stays valid.
octet_status Ran(octet_session* session, const Status& status) {
  if (!status.ok()) {
    // A capture buffer too small: the shape it needs is reported in the capture.
    if (status.code() == octet::StatusCode::kBufferTooSmall) SyncCapture(session);
    return Fail(status);
  }
  session->has_output = true;
  SyncCapture(session);
  return OCTET_OK;
}

}  // namespace

octet_status Fail(const Status& status) {
  std::snprintf(g_last_error, sizeof(g_last_error), "%s", status.message());
  return static_cast<octet_status>(status.code());
}

octet_status Fail(octet_status code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vsnprintf(g_last_error, sizeof(g_last_error), format, args);
  va_end(args);
  return code;
}

namespace {

bool IsKind(const fb::Architecture& a, SessionKind kind) {
  const fb::Structure s = a.structure();
  switch (kind) {
    case SessionKind::kAny: return true;
    case SessionKind::kNotEncoderDecoder: return s != fb::Structure::EncoderDecoder;
    case SessionKind::kEncoderDecoder: return s == fb::Structure::EncoderDecoder;
    case SessionKind::kEncoderOnly: return s == fb::Structure::EncoderOnly;
    case SessionKind::kLogits: return s != fb::Structure::EncoderOnly;
    case SessionKind::kDecoderWithLayers: return HasSteps(a);
    case SessionKind::kDecoderOnlyWithLayers:
      return s == fb::Structure::DecoderOnly && HasSteps(a);
  }
  return false;
}

}  // namespace

octet_status CheckSession(const char* fn, const octet_session* session,
                          std::initializer_list<Required> others, SessionKind kind,
                          const char* unsupported) {
  bool missing = session == nullptr;
  for (const Required& r : others) missing = missing || r.pointer == nullptr;
  if (missing) {
    if (others.size() == 0) return Fail(OCTET_INVALID_ARGUMENT, "%s: session is null", fn);
    // "session, a and b must not be null"
    char names[160] = "session";
    size_t i = 0;
    for (const Required& r : others) {
      const size_t n = std::strlen(names);
      std::snprintf(names + n, sizeof(names) - n, "%s%s", ++i == others.size() ? " and " : ", ",
                    r.name);
    }
    return Fail(OCTET_INVALID_ARGUMENT, "%s: %s must not be null", fn, names);
  }
  if (!IsKind(session->model->model.architecture(), kind)) {
    return Fail(OCTET_UNSUPPORTED, "%s", unsupported);
  }
  return OCTET_OK;
}

bool IsEos(const octet_model& model, int32_t id) {
  return IsEosToken(model.model, model.has_tokenizer ? &model.tokenizer : nullptr, id);
}

void SyncCapture(octet_session* session) {
  octet_attention_capture* user = session->user_capture;
  if (user == nullptr) return;
  user->batch = session->capture.batch;
  user->heads = session->capture.heads;
  user->q_len = session->capture.q_len;
  user->k_len = session->capture.k_len;
  if (user->struct_size >= sizeof(octet_attention_capture)) {
    user->kind = session->capture.kind == CaptureKind::kMixing ? OCTET_CAPTURE_MIXING
                                                               : OCTET_CAPTURE_PROBABILITIES;
  }
}

}  // namespace api
}  // namespace octet

using octet::api::Fail;

extern "C" {

// ---- Status ----

OCTET_API const char* octet_version(void) { return OCTET_VERSION_STRING; }
OCTET_API uint32_t octet_version_number(void) { return OCTET_VERSION_NUMBER; }
OCTET_API const char* octet_last_error(void) { return octet::api::g_last_error; }
OCTET_API const char* octet_status_name(octet_status status) {
  return octet::StatusCodeName(static_cast<octet::StatusCode>(status));
}

// ---- Models ----

OCTET_API octet_status octet_model_load(const char* path, octet_model** out) {
  if (out != nullptr) *out = nullptr;
  if (path == nullptr || out == nullptr) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_model_load: path and out must not be null");
  }
  return octet::api::WrapModel(octet::Model::Load(path), out);
}

OCTET_API octet_status octet_model_load_from_buffer(const void* data, size_t size,
                                                    octet_model** out) {
  if (out == nullptr) return Fail(OCTET_INVALID_ARGUMENT, "octet_model_load_from_buffer: out is null");
  *out = nullptr;
  return octet::api::WrapModel(octet::Model::FromBuffer(data, size), out);
}

OCTET_API octet_status octet_model_load_from_fd(int fd, uint64_t offset, uint64_t length,
                                                octet_model** out) {
  if (out == nullptr) return Fail(OCTET_INVALID_ARGUMENT, "octet_model_load_from_fd: out is null");
  *out = nullptr;
  return octet::api::WrapModel(octet::Model::FromFileRange(fd, offset, length), out);
}

OCTET_API void octet_model_free(octet_model* model) { delete model; }

OCTET_API octet_status octet_model_get_info(const octet_model* model, octet_model_info* info) {
  if (model == nullptr || info == nullptr) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_model_get_info: model and info must not be null");
  }
  if (info->struct_size < sizeof(size_t)) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_model_info.struct_size is %zu (unset?)",
                info->struct_size);
  }
  const octet::fb::Architecture& a = model->model.architecture();
  const octet::fb::Attention& att = *a.attention();
  octet_model_info i;
  std::memset(&i, 0, sizeof(i));
  i.struct_size = sizeof(i);
  i.family = octet::api::FamilyName(a.family());
  i.structure = static_cast<int32_t>(a.structure());
  i.vocab_size = a.vocab_size();
  i.hidden_size = a.hidden_size();
  i.num_layers = a.num_layers();
  i.num_decoder_layers = a.num_decoder_layers();
  i.num_heads = att.num_heads();
  i.num_kv_heads = att.num_kv_heads();
  i.head_dim = att.head_dim();
  // The usable length: a table with a position_offset (RoBERTa) has that many more rows.
  i.max_positions = a.max_positions();
  i.bos_token_id = a.bos_token_id();
  i.eos_token_id = a.eos_token_id();
  i.pad_token_id = a.pad_token_id();
  i.decoder_start_token_id = a.decoder_start_token_id();
  i.has_tokenizer = model->has_tokenizer ? 1 : 0;
  i.has_chat_template = model->has_chat_template ? 1 : 0;
  i.int8 = 0;
  uint64_t weights = 0;
  for (size_t t = 0; t < model->model.num_tensors(); ++t) {
    const octet::TensorView& view = model->model.tensor(t);
    weights += view.size;
    if (view.dtype == octet::fb::DType::I8) i.int8 = 1;
  }
  i.mapped = model->model.is_mapped() ? 1 : 0;
  i.file_bytes = model->model.file_size();
  i.weights_bytes = weights;
  i.positions_bounded = a.position() == octet::fb::PositionKind::Learned ? 1 : 0;
  octet::api::CopyOut(i, info);
  return OCTET_OK;
}

OCTET_API uint32_t octet_model_vocab_size(const octet_model* model) {
  return model ? model->model.architecture().vocab_size() : 0;
}

OCTET_API uint32_t octet_model_hidden_size(const octet_model* model) {
  return model ? model->model.architecture().hidden_size() : 0;
}

OCTET_API int octet_model_is_eos(const octet_model* model, int32_t id) {
  return model != nullptr && octet::api::IsEos(*model, id) ? 1 : 0;
}

// ---- Sessions ----

OCTET_API void octet_session_options_init(octet_session_options* options) {
  if (!octet::api::InitStruct(options)) return;
  options->max_batch = 1;  // the rest (max_new_tokens, flags, prefill_chunk) 0
  options->max_seq = 128;
  options->threads = 1;
}

OCTET_API octet_status octet_session_plan_memory(const octet_model* model,
                                                 const octet_session_options* options,
                                                 octet_session_plan* plan) {
  if (model == nullptr || plan == nullptr) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_session_plan_memory: model and plan must not be null");
  }
  if (plan->struct_size < sizeof(size_t)) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_session_plan.struct_size is %zu (unset?)",
                plan->struct_size);
  }
  octet_session_options o;
  const octet_status st = octet::api::ReadOptions(options, &o);
  if (st != OCTET_OK) return st;
  const octet::Result<octet::SessionPlan> planned =
      octet::Session::Plan(model->model, octet::api::ToLimits(o, model->model.architecture()));
  if (!planned.ok()) return Fail(planned.status());
  octet_session_plan p;
  p.struct_size = sizeof(p);
  p.activation_bytes = planned.value().activation_bytes;
  p.scratch_bytes = planned.value().scratch_bytes;
  p.kv_cache_bytes = planned.value().kv_cache_bytes;
  p.memory_bytes = octet::api::Split(planned.value()).total;
  octet::api::CopyOut(p, plan);
  return OCTET_OK;
}

OCTET_API octet_status octet_session_create(const octet_model* model,
                                            const octet_session_limits* limits,
                                            octet_session** out) {
  if (out != nullptr) *out = nullptr;
  if (model == nullptr || out == nullptr) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_session_create: model and out must not be null");
  }
  octet::SessionLimits session_limits;
  if (limits != nullptr) {
    session_limits.max_batch = limits->max_batch;
    session_limits.max_seq = limits->max_seq;
    session_limits.max_new_tokens = limits->max_new_tokens;
    session_limits.threads = limits->threads;
  }
  return octet::api::FinishSession(model, octet::Session::Create(model->model, session_limits),
                                   out);
}

OCTET_API octet_status octet_session_create_with_options(const octet_model* model,
                                                         const octet_session_options* options,
                                                         void* memory, size_t memory_bytes,
                                                         octet_session** out) {
  if (out != nullptr) *out = nullptr;
  if (model == nullptr || out == nullptr) {
    return Fail(OCTET_INVALID_ARGUMENT,
                "octet_session_create_with_options: model and out must not be null");
  }
  octet_session_options o;
  const octet_status st = octet::api::ReadOptions(options, &o);
  if (st != OCTET_OK) return st;
  const octet::SessionLimits limits = octet::api::ToLimits(o, model->model.architecture());
  if (memory == nullptr) {
    return octet::api::FinishSession(model, octet::Session::Create(model->model, limits), out);
  }
  if (reinterpret_cast<uintptr_t>(memory) % octet::api::kArenaAlign != 0) {
    return Fail(OCTET_INVALID_ARGUMENT, "the session's memory must be 64-byte aligned");
  }
  const octet::Result<octet::SessionPlan> plan = octet::Session::Plan(model->model, limits);
  if (!plan.ok()) return Fail(plan.status());
  const octet::api::MemorySplit split = octet::api::Split(plan.value());
  if (memory_bytes < split.total) {
    return Fail(OCTET_BUFFER_TOO_SMALL, "the session needs %zu bytes of memory, given %zu",
                split.total, memory_bytes);
  }
  uint8_t* base = static_cast<uint8_t*>(memory);
  octet::SessionMemory arenas;
  arenas.activations = base + split.activations;
  arenas.scratch = base + split.scratch;
  arenas.kv_cache = base + split.kv_cache;
  return octet::api::FinishSession(
      model, octet::Session::CreateWithMemory(model->model, limits, arenas), out);
}

OCTET_API void octet_session_free(octet_session* session) { delete session; }

OCTET_API size_t octet_session_arena_bytes(const octet_session* session) {
  return session ? session->session.plan().total() : 0;
}

OCTET_API octet_status octet_session_run(octet_session* session, const int32_t* ids,
                                         const uint32_t* lengths, uint32_t batch, uint32_t seq) {
  const octet_status st = octet::api::CheckSession(
      "octet_session_run", session, {}, octet::api::SessionKind::kNotEncoderDecoder,
      "encoder-decoder models run with octet_session_run_encoder_decoder (encoder and decoder "
      "ids)");
  if (st != OCTET_OK) return st;
  return octet::api::Ran(session, session->session.Run(ids, lengths, batch, seq));
}

OCTET_API octet_status octet_session_run_encoder_decoder(
    octet_session* session, const int32_t* enc_ids, const uint32_t* enc_lengths, uint32_t enc_seq,
    const int32_t* dec_ids, const uint32_t* dec_lengths, uint32_t dec_seq, uint32_t batch) {
  const octet_status st = octet::api::CheckSession(
      "octet_session_run_encoder_decoder", session, {}, octet::api::SessionKind::kEncoderDecoder,
      "octet_session_run_encoder_decoder needs an encoder-decoder model (marian, t5); this one "
      "runs with octet_session_run");
  if (st != OCTET_OK) return st;
  return octet::api::Ran(session, session->session.RunEncoderDecoder(
                                      enc_ids, enc_lengths, enc_seq, dec_ids, dec_lengths,
                                      dec_seq, batch));
}

OCTET_API octet_status octet_session_step(octet_session* session, const int32_t* ids,
                                          uint32_t batch) {
  const octet_status checked = octet::api::CheckSession(
      "octet_session_step", session, {}, octet::api::SessionKind::kDecoderWithLayers,
      "octet_session_step needs a decoder with layers (decoder-only or encoder-decoder); this "
      "model is encoder-only or has no layers");
  if (checked != OCTET_OK) return checked;
  const bool enc_dec = octet::api::Structure(session) == octet::fb::Structure::EncoderDecoder;
  const octet::Status st = enc_dec ? session->session.StepEncoderDecoder(ids, batch)
                                   : session->session.Step(ids, batch);
  // A failed step leaves the cache as it was: the last output stays valid.
  if (!st.ok()) return Fail(st);
  session->has_output = true;
  return OCTET_OK;
}

OCTET_API octet_status octet_session_extend(octet_session* session, const int32_t* ids,
                                            uint32_t batch, uint32_t k) {
  const octet_status checked = octet::api::CheckSession(
      "octet_session_extend", session, {}, octet::api::SessionKind::kDecoderOnlyWithLayers,
      "octet_session_extend needs a decoder-only model with layers");
  if (checked != OCTET_OK) return checked;
  const octet::Status st = session->session.Extend(ids, batch, k);
  if (!st.ok()) return Fail(st);
  session->has_output = true;
  return OCTET_OK;
}

OCTET_API octet_status octet_session_output(const octet_session* session, octet_output* out) {
  const octet_status st = octet::api::CheckSession("octet_session_output", session, {{out, "out"}});
  if (st != OCTET_OK) return st;
  if (!session->has_output) {
    return Fail(OCTET_INVALID_STATE, "octet_session_output: no successful run yet");
  }
  const octet::OutputView view = session->session.output();
  *out = octet_output{view.data, view.batch, view.seq, view.dim};
  return OCTET_OK;
}

// ---- Sampling ----

OCTET_API void octet_sampling_init(octet_sampling* sampling) {
  if (!octet::api::InitStruct(sampling)) return;
  sampling->temperature = 1.0f;  // top_k 0, no hook
  sampling->top_p = 1.0f;
}

OCTET_API octet_status octet_session_sample(octet_session* session,
                                            const octet_sampling* sampling,
                                            uint64_t* rng_state, int32_t* out_ids) {
  const octet_status st = octet::api::CheckSession(
      "octet_session_sample", session, {{rng_state, "rng_state"}, {out_ids, "out_ids"}},
      octet::api::SessionKind::kLogits,
      "octet_session_sample needs a model that outputs logits (a decoder); this one is "
      "encoder-only");
  if (st != OCTET_OK) return st;
  octet_sampling s;
  octet_sampling_init(&s);
  if (sampling != nullptr && !octet::api::CopyIn(sampling, &s)) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_sampling.struct_size is %zu (unset?)",
                sampling->struct_size);
  }
  octet::SamplingParams params;
  params.temperature = s.temperature;
  params.top_k = s.top_k;
  params.top_p = s.top_p;
  params.logits_hook = s.logits_hook;
  params.logits_hook_user = s.logits_hook_user;
  if (!session->has_output) {
    return Fail(OCTET_INVALID_STATE, "octet_session_sample: no run, step or extend yet");
  }
  return octet::api::Check(session->session.Sample(params, rng_state, out_ids));
}

// ---- Embeddings ----

OCTET_API octet_status octet_session_embed(octet_session* session, const int32_t* ids,
                                           const uint32_t* lengths, uint32_t batch, uint32_t seq,
                                           octet_pooling pooling, uint32_t flags, float* out,
                                           size_t out_floats) {
  const octet_status checked = octet::api::CheckSession(
      "octet_session_embed", session, {{out, "out"}}, octet::api::SessionKind::kEncoderOnly,
      "octet_session_embed needs an encoder-only model (bert)");
  if (checked != OCTET_OK) return checked;
  const octet::fb::Architecture& a = session->model->model.architecture();
  if (pooling != OCTET_POOLING_MEAN && pooling != OCTET_POOLING_CLS) {
    return Fail(OCTET_INVALID_ARGUMENT, "unknown pooling %d", static_cast<int>(pooling));
  }
  if ((flags & ~OCTET_EMBED_NORMALIZE) != 0) {
    return Fail(OCTET_INVALID_ARGUMENT, "unknown embedding flags 0x%x", flags);
  }
  const size_t hidden = a.hidden_size();
  if (batch > 0 && out_floats / batch < hidden) {
    return Fail(OCTET_BUFFER_TOO_SMALL, "the embeddings take %zu floats, the buffer %zu",
                static_cast<size_t>(batch) * hidden, out_floats);
  }
  const octet_status st = octet_session_run(session, ids, lengths, batch, seq);
  if (st != OCTET_OK) return st;
  const octet::Status pooled = octet::PoolHidden(
      session->session.output(), lengths,
      pooling == OCTET_POOLING_CLS ? octet::Pooling::kCls : octet::Pooling::kMean, out);
  if (!pooled.ok()) return Fail(pooled);
  if ((flags & OCTET_EMBED_NORMALIZE) != 0) {
    // sentence-transformers' Normalize: x / max(||x||, 1e-12), the norm in float.
    for (uint32_t b = 0; b < batch; ++b) {
      float* v = out + static_cast<size_t>(b) * hidden;
      float sum = 0.0f;
      for (size_t i = 0; i < hidden; ++i) sum += v[i] * v[i];
      const float norm = std::fmax(std::sqrt(sum), 1e-12f);
      for (size_t i = 0; i < hidden; ++i) v[i] /= norm;
    }
  }
  return OCTET_OK;
}

// ---- Attention capture ----

OCTET_API octet_status octet_session_capture_attention(octet_session* session,
                                                       octet_attention_capture* capture) {
  const octet_status checked = octet::api::CheckSession("octet_session_capture_attention", session);
  if (checked != OCTET_OK) return checked;
  if (capture == nullptr) {
    session->user_capture = nullptr;
    return octet::api::Check(session->session.SetAttentionCapture(nullptr));
  }
  // Callers built before `kind` existed pass the struct up to k_len.
  constexpr size_t kBeforeKind = offsetof(octet_attention_capture, kind);
  if (capture->struct_size < kBeforeKind) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_attention_capture.struct_size is %zu, expected %zu",
                capture->struct_size, sizeof(octet_attention_capture));
  }
  // The field as the integer a C caller stored: any value may arrive, and C++
  // may not load one outside the enumerators' range as the enum type.
  const int32_t stack = capture->stack;
  octet::AttentionCapture c;
  switch (stack) {
    case OCTET_STACK_MODEL: c.stack = octet::LayerStack::kSingle; break;
    case OCTET_STACK_ENCODER: c.stack = octet::LayerStack::kEncoder; break;
    case OCTET_STACK_DECODER: c.stack = octet::LayerStack::kDecoder; break;
    default:
      return Fail(OCTET_INVALID_ARGUMENT, "unknown attention stack %lld",
                  static_cast<long long>(stack));
  }
  if (capture->cross != 0 && stack != OCTET_STACK_DECODER) {
    return Fail(OCTET_INVALID_ARGUMENT,
                "cross-attention is captured from the decoder stack (OCTET_STACK_DECODER)");
  }
  c.site = capture->cross != 0 ? octet::AttentionSite::kCross : octet::AttentionSite::kSelf;
  c.layer = capture->layer;
  c.probs = capture->probs;
  c.capacity = capture->capacity;
  session->capture = c;
  const octet::Status st = session->session.SetAttentionCapture(&session->capture);
  if (!st.ok()) {
    session->user_capture = nullptr;
    (void)session->session.SetAttentionCapture(nullptr);
    return Fail(st);
  }
  session->user_capture = capture;
  capture->batch = capture->heads = capture->q_len = capture->k_len = 0;
  if (capture->struct_size >= sizeof(octet_attention_capture)) {
    capture->kind = OCTET_CAPTURE_PROBABILITIES;
  }
  return OCTET_OK;
}

// ---- Session state ----

OCTET_API octet_status octet_session_state_size(const octet_session* session, size_t* bytes) {
  const octet_status checked =
      octet::api::CheckSession("octet_session_state_size", session, {{bytes, "bytes"}});
  if (checked != OCTET_OK) return checked;
  *bytes = 0;
  size_t written = 0;
  const octet::Status st = session->session.SaveState(nullptr, 0, &written);
  if (st.code() != octet::StatusCode::kBufferTooSmall) return Fail(st);
  *bytes = written;
  return OCTET_OK;
}

OCTET_API octet_status octet_session_state_save(const octet_session* session, void* buffer,
                                                size_t capacity, size_t* written) {
  const octet_status checked =
      octet::api::CheckSession("octet_session_state_save", session, {{written, "written"}});
  if (checked != OCTET_OK) return checked;
  return octet::api::Check(session->session.SaveState(buffer, capacity, written));
}

OCTET_API octet_status octet_session_state_load(octet_session* session, const void* data,
                                                size_t size) {
  const octet_status checked = octet::api::CheckSession("octet_session_state_load", session);
  if (checked != OCTET_OK) return checked;
  const octet::Status st = session->session.LoadState(data, size);
  if (!st.ok()) return Fail(st);
  session->has_output = true;
  return OCTET_OK;
}

}  // extern "C"
