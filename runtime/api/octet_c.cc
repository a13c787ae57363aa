// The C API over Model and Session. Statuses cross the boundary as codes; the
// message goes to a per-thread buffer read by octet_last_error().
#include <cstdio>
#include <new>

#include "engine/session.h"
#include "format/model.h"
#include "octet/octet.h"

#ifndef OCTET_VERSION_STRING
#define OCTET_VERSION_STRING "0.0.0"
#endif

struct octet_model {
  octet::Model model;
};

struct octet_session {
  octet::Session session;
  bool has_output = false;
};

namespace {

thread_local char g_last_error[octet::Status::kMaxMessage] = "";

octet_status Fail(const octet::Status& status) {
  std::snprintf(g_last_error, sizeof(g_last_error), "%s", status.message());
  return static_cast<octet_status>(status.code());
}

octet_status Fail(octet_status code, const char* message) {
  std::snprintf(g_last_error, sizeof(g_last_error), "%s", message);
  return code;
}

octet_status WrapModel(octet::Result<octet::Model> loaded, octet_model** out) {
  if (!loaded.ok()) return Fail(loaded.status());
  octet_model* model = new (std::nothrow) octet_model{std::move(loaded).value()};
  if (model == nullptr) return Fail(OCTET_OUT_OF_MEMORY, "cannot allocate a model handle");
  *out = model;
  return OCTET_OK;
}

}  // namespace

extern "C" {

OCTET_API const char* octet_version(void) { return OCTET_VERSION_STRING; }
OCTET_API const char* octet_last_error(void) { return g_last_error; }
OCTET_API const char* octet_status_name(octet_status status) {
  return octet::StatusCodeName(static_cast<octet::StatusCode>(status));
}

OCTET_API octet_status octet_model_load(const char* path, octet_model** out) {
  if (path == nullptr || out == nullptr) return Fail(OCTET_INVALID_ARGUMENT, "path and out must not be null");
  *out = nullptr;
  return WrapModel(octet::Model::Load(path), out);
}

OCTET_API octet_status octet_model_load_from_buffer(const void* data, size_t size,
                                                    octet_model** out) {
  if (out == nullptr) return Fail(OCTET_INVALID_ARGUMENT, "out must not be null");
  *out = nullptr;
  return WrapModel(octet::Model::FromBuffer(data, size), out);
}

OCTET_API void octet_model_free(octet_model* model) { delete model; }

OCTET_API uint32_t octet_model_vocab_size(const octet_model* model) {
  return model ? model->model.architecture().vocab_size() : 0;
}

OCTET_API uint32_t octet_model_hidden_size(const octet_model* model) {
  return model ? model->model.architecture().hidden_size() : 0;
}

OCTET_API octet_status octet_session_create(const octet_model* model,
                                            const octet_session_limits* limits,
                                            octet_session** out) {
  if (model == nullptr || out == nullptr) return Fail(OCTET_INVALID_ARGUMENT, "model and out must not be null");
  *out = nullptr;
  octet::SessionLimits session_limits;
  if (limits != nullptr) {
    session_limits.max_batch = limits->max_batch;
    session_limits.max_seq = limits->max_seq;
    session_limits.max_new_tokens = limits->max_new_tokens;
    session_limits.threads = limits->threads;
  }
  octet::Result<octet::Session> session = octet::Session::Create(model->model, session_limits);
  if (!session.ok()) return Fail(session.status());
  octet_session* handle = new (std::nothrow) octet_session{std::move(session).value(), false};
  if (handle == nullptr) return Fail(OCTET_OUT_OF_MEMORY, "cannot allocate a session handle");
  *out = handle;
  return OCTET_OK;
}

OCTET_API void octet_session_free(octet_session* session) { delete session; }

OCTET_API size_t octet_session_arena_bytes(const octet_session* session) {
  return session ? session->session.plan().total() : 0;
}

OCTET_API octet_status octet_session_run(octet_session* session, const int32_t* ids,
                                         const uint32_t* lengths, uint32_t batch, uint32_t seq) {
  if (session == nullptr) return Fail(OCTET_INVALID_ARGUMENT, "session must not be null");
  session->has_output = false;
  const octet::Status status = session->session.Run(ids, lengths, batch, seq);
  if (!status.ok()) return Fail(status);
  session->has_output = true;
  return OCTET_OK;
}

OCTET_API octet_status octet_session_output(const octet_session* session, octet_output* out) {
  if (session == nullptr || out == nullptr) return Fail(OCTET_INVALID_ARGUMENT, "session and out must not be null");
  if (!session->has_output) return Fail(OCTET_INVALID_ARGUMENT, "no successful run yet");
  const octet::OutputView view = session->session.output();
  *out = octet_output{view.data, view.batch, view.seq, view.dim};
  return OCTET_OK;
}

}  // extern "C"
