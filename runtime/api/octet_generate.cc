// The C API's generation: octet_generate and octet_generate_continue hand the
// C options to the engine's Generator (engine/generator.h) and its events back
// to the caller's callback.
#include <new>

#include "api/internal.h"

namespace octet {
namespace api {

octet_status InitGeneration(octet_session* session, uint32_t count) {
  const octet_model& model = *session->model;
  Result<Generator> created =
      Generator::Create(model.model, model.has_tokenizer ? &model.tokenizer : nullptr, count);
  if (!created.ok()) return Fail(created.status());
  session->generator.reset(New<Generator>(std::move(created).value()));
  if (session->generator == nullptr) {
    return Fail(OCTET_OUT_OF_MEMORY, "generation: out of memory for the generator");
  }
  return OCTET_OK;
}

namespace {

// The caller's options as the engine's parameters, checked.
octet_status ReadGenerateOptions(const octet_generate_options* in, octet_generate_options* out,
                                 GenerateParams* params) {
  octet_generate_options_init(out);
  if (in != nullptr && !CopyIn(in, out)) {
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
  params->max_new_tokens = out->max_new_tokens;
  params->sampling.temperature = out->temperature;
  params->sampling.top_k = out->top_k;
  params->sampling.top_p = out->top_p;
  params->sampling.logits_hook = out->logits_hook;
  params->sampling.logits_hook_user = out->logits_hook_user;
  params->seed = out->seed;
  params->ignore_eos = (out->flags & OCTET_GENERATE_IGNORE_EOS) != 0;
  params->keep_special = (out->flags & OCTET_GENERATE_KEEP_SPECIAL) != 0;
  return OCTET_OK;
}

// One octet_generate or octet_generate_continue: its start (the session
// checked, the generation's number taken before the options are read, so a
// cancel meanwhile is not lost; then the model's kind), and the engine's
// callbacks: the session's output after the prompts, the events as
// octet_token_event for the caller's on_token.
struct GenerateCall {
  octet_session* session = nullptr;
  Generator* generator = nullptr;
  uint64_t generation = 0;
  octet_generate_options options;
  GenerateParams params;

  octet_status Start(const char* fn, octet_session* s, const octet_generate_options* in,
                     SessionKind kind, const char* unsupported) {
    octet_status st = CheckSession(fn, s);
    if (st != OCTET_OK) return st;
    session = s;
    generator = s->generator.get();
    if (generator != nullptr) generation = generator->Begin();
    st = ReadGenerateOptions(in, &options, &params);
    if (st != OCTET_OK) return st;
    // Sessions of decoders with layers have a generator.
    return generator == nullptr ? Fail(OCTET_UNSUPPORTED, "%s", unsupported)
                                : CheckSession(fn, s, {}, kind, unsupported);
  }

  static void OnPrompt(void* user) {
    octet_session* session = static_cast<GenerateCall*>(user)->session;
    session->has_output = true;
    SyncCapture(session);
  }
  static int OnToken(void* user, const TokenEvent& e) {
    const octet_generate_options& o = static_cast<GenerateCall*>(user)->options;
    octet_token_event event;
    std::memset(&event, 0, sizeof(event));
    event.struct_size = sizeof(event);
    event.sequence = e.sequence;
    event.id = e.id;
    event.index = e.index;
    event.is_eos = e.is_eos ? 1 : 0;
    event.text = e.text;
    event.text_len = e.text_len;
    return o.on_token(o.on_token_user, &event);
  }
  GenerateCallbacks Callbacks() {
    GenerateCallbacks c;
    c.user = this;
    c.on_prompt = OnPrompt;
    if (options.on_token != nullptr) c.on_token = OnToken;
    return c;
  }
};

}  // namespace
}  // namespace api
}  // namespace octet

using octet::api::Fail;

extern "C" {

OCTET_API void octet_generate_options_init(octet_generate_options* options) {
  if (!octet::api::InitStruct(options)) return;
  options->max_new_tokens = 128;  // top_k, seed and flags 0, no callbacks
  options->temperature = 1.0f;
  options->top_p = 1.0f;
}

OCTET_API void octet_session_cancel(octet_session* session) {
  if (session != nullptr && session->generator != nullptr) session->generator->Cancel();
}

OCTET_API octet_status octet_generate(octet_session* session, const int32_t* ids,
                                      const uint32_t* lengths, uint32_t batch, uint32_t seq,
                                      const octet_generate_options* options,
                                      uint32_t* out_counts) {
  octet::api::GenerateCall call;
  const octet_status st = call.Start(
      "octet_generate", session, options, octet::api::SessionKind::kDecoderWithLayers,
      "octet_generate needs a decoder with layers; this model is encoder-only or has none");
  if (st != OCTET_OK) return st;
  return octet::api::Check(call.generator->Generate(&session->session, ids, lengths, batch, seq,
                                                    call.params, call.Callbacks(), out_counts,
                                                    call.generation));
}

OCTET_API octet_status octet_generate_continue(octet_session* session,
                                               const octet_generate_options* options,
                                               uint64_t* rng_state, uint32_t* out_counts) {
  octet::api::GenerateCall call;
  const octet_status st = call.Start(
      "octet_generate_continue", session, options,
      octet::api::SessionKind::kDecoderOnlyWithLayers,
      "octet_generate_continue needs a decoder-only model with layers");
  if (st != OCTET_OK) return st;
  if (!session->has_output) {
    return Fail(OCTET_INVALID_STATE, "octet_generate_continue: no run, extend or loaded state yet");
  }
  return octet::api::Check(call.generator->Continue(&session->session, call.params,
                                                    call.Callbacks(), rng_state, out_counts,
                                                    call.generation));
}

}  // extern "C"
