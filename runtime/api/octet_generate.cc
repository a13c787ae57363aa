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
  session->generator.reset(new (std::nothrow) Generator(std::move(created).value()));
  if (session->generator == nullptr) {
    return Fail(OCTET_OUT_OF_MEMORY, "cannot allocate the generation's arrays");
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

// The engine's callbacks for one call: the session's output after the
// prompts, the events as octet_token_event for the caller's on_token.
struct CallbackGlue {
  octet_session* session;
  const octet_generate_options* options;

  static void OnPrompt(void* user) {
    octet_session* session = static_cast<CallbackGlue*>(user)->session;
    session->has_output = true;
    SyncCapture(session);
  }
  static int OnToken(void* user, const TokenEvent& e) {
    const octet_generate_options& o = *static_cast<CallbackGlue*>(user)->options;
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
    if (options->on_token != nullptr) c.on_token = OnToken;
    return c;
  }
};

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
  if (session != nullptr && session->generator != nullptr) session->generator->Cancel();
}

OCTET_API octet_status octet_generate(octet_session* session, const int32_t* ids,
                                      const uint32_t* lengths, uint32_t batch, uint32_t seq,
                                      const octet_generate_options* options,
                                      uint32_t* out_counts) {
  using namespace octet;
  if (session == nullptr) return Fail(OCTET_INVALID_ARGUMENT, "octet_generate: session is null");
  Generator* generator = session->generator.get();
  // The number first: a cancel while the arguments are checked is not lost.
  const uint64_t generation = generator != nullptr ? generator->Begin() : 0;
  octet_generate_options o;
  GenerateParams params;
  const octet_status st = api::ReadGenerateOptions(options, &o, &params);
  if (st != OCTET_OK) return st;
  if (generator == nullptr) {
    return Fail(OCTET_UNSUPPORTED, "octet_generate needs a decoder with layers; this model is "
                "encoder-only or has none");
  }
  api::CallbackGlue glue{session, &o};
  return api::Check(generator->Generate(&session->session, ids, lengths, batch, seq, params,
                                        glue.Callbacks(), out_counts, generation));
}

OCTET_API octet_status octet_generate_continue(octet_session* session,
                                               const octet_generate_options* options,
                                               uint64_t* rng_state, uint32_t* out_counts) {
  using namespace octet;
  if (session == nullptr) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_generate_continue: session is null");
  }
  Generator* generator = session->generator.get();
  const uint64_t generation = generator != nullptr ? generator->Begin() : 0;
  octet_generate_options o;
  GenerateParams params;
  const octet_status st = api::ReadGenerateOptions(options, &o, &params);
  if (st != OCTET_OK) return st;
  if (generator == nullptr ||
      session->model->model.architecture().structure() != fb::Structure::DecoderOnly) {
    return Fail(OCTET_UNSUPPORTED, "octet_generate_continue needs a decoder-only model with layers");
  }
  if (!session->has_output) {
    return Fail(OCTET_INVALID_STATE, "octet_generate_continue: no run, extend or loaded state yet");
  }
  api::CallbackGlue glue{session, &o};
  return api::Check(generator->Continue(&session->session, params, glue.Callbacks(), rng_state,
                                        out_counts, generation));
}

}  // extern "C"
