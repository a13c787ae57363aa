// The C API's handles and the helpers its files share (runtime/api/*.cc).
// Statuses cross the boundary as codes; the message goes to a per-thread
// buffer read by octet_last_error().
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <utility>

#include "core/alloc.h"
#include "core/status.h"
#include "engine/generator.h"
#include "engine/session.h"
#include "format/model.h"
#include "octet/octet.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

struct octet_model {
  OCTET_ALLOCATED_THROUGH_ALLOCATE
  octet::Model model;
  // The file's tokenizer, compiled once at load (shared by every tokenizer,
  // text stream and session of the model: immutable after Init).
  octet::text::Tokenizer tokenizer;
  bool has_tokenizer = false;
  // The chat template, parsed at load; chat_status says why not when it failed.
  octet::text::ChatTemplate chat_template;
  bool has_chat_template = false;
  octet::Status chat_status;
};

struct octet_session {
  OCTET_ALLOCATED_THROUGH_ALLOCATE
  octet_session(const octet_model* m, octet::Session s) : model(m), session(std::move(s)) {}

  const octet_model* model = nullptr;
  octet::Session session;
  bool has_output = false;
  // Generation (octet_generate, octet_session_cancel): decoders with layers;
  // null for other models.
  octet::Owned<octet::Generator> generator;
  // The caller's attention capture, and the engine's request it mirrors.
  octet_attention_capture* user_capture = nullptr;
  octet::AttentionCapture capture;
  // Diagnostics: the counters octet_session_profile_start hands to the engine.
  octet::ForwardProfile profile;
};

namespace octet {
namespace api {

// Records the message for octet_last_error() and returns the code.
octet_status Fail(const Status& status);
octet_status Fail(octet_status code, const char* format, ...)
    __attribute__((format(printf, 2, 3)));
inline octet_status Check(const Status& status) { return status.ok() ? OCTET_OK : Fail(status); }

// Copies `from` (the library's struct) into the caller's `to` of to_size bytes
// (its struct_size): only the fields both versions know.
template <typename T>
void CopyOut(const T& from, T* to) {
  const size_t n = to->struct_size < sizeof(T) ? to->struct_size : sizeof(T);
  const size_t size = to->struct_size;
  std::memcpy(static_cast<void*>(to), &from, n);
  to->struct_size = size;
}

// The start of every *_init: *s zeroed, its struct_size set. False when s is null.
template <typename T>
bool InitStruct(T* s) {
  if (s == nullptr) return false;
  std::memset(static_cast<void*>(s), 0, sizeof(T));
  s->struct_size = sizeof(T);
  return true;
}

// Reads the caller's `in` (struct_size bytes, at least the size field) over
// defaults: fields a older caller does not know keep their defaults.
template <typename T>
bool CopyIn(const T* in, T* out) {
  if (in->struct_size < sizeof(size_t)) return false;
  const size_t n = in->struct_size < sizeof(T) ? in->struct_size : sizeof(T);
  std::memcpy(static_cast<void*>(out), in, n);
  out->struct_size = sizeof(T);
  return true;
}

// The session entry points' argument checks, in one place. In order: the
// session and the other pointers the call requires are not null
// (OCTET_INVALID_ARGUMENT, "fn: session is null" or "fn: session, a and b
// must not be null"); then the model is of the kind the call needs
// (OCTET_UNSUPPORTED with the message `unsupported`).
enum class SessionKind {
  kAny,
  kNotEncoderDecoder,     // runs with octet_session_run
  kEncoderDecoder,
  kEncoderOnly,
  kLogits,                // not encoder-only
  kDecoderWithLayers,     // steps: decoder-only or encoder-decoder, with layers
  kDecoderOnlyWithLayers,
};
struct Required {
  const void* pointer;
  const char* name;
};
octet_status CheckSession(const char* fn, const octet_session* session,
                          std::initializer_list<Required> others = {},
                          SessionKind kind = SessionKind::kAny, const char* unsupported = nullptr);

bool IsEos(const octet_model& model, int32_t id);
// Sets up the session's generator (its arrays and, a model with a tokenizer,
// text streams) for `count` sequences.
octet_status InitGeneration(octet_session* session, uint32_t count);
// After a run: the caller's capture gets the shape the engine set.
void SyncCapture(octet_session* session);

}  // namespace api
}  // namespace octet
