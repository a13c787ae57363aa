// The C API's handles and the helpers its files share (runtime/api/*.cc).
// Statuses cross the boundary as codes; the message goes to a per-thread
// buffer read by octet_last_error().
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>

#include "core/alloc.h"
#include "core/status.h"
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

namespace octet {
namespace api {

// One sequence's streaming decoder for generation: its workspace and buffer.
struct GenerationStream {
  OCTET_ALLOCATED_THROUGH_ALLOCATE
  text::TokenizerWorkspace workspace;
  text::StreamDecoder decoder;
  bool keep_special = false;  // how the decoder was initialized
  std::unique_ptr<char[]> buffer;
  size_t capacity = 0;
};

// Generation's per-sequence arrays, [max_batch] each, made with the session.
struct GenerationScratch {
  std::unique_ptr<uint32_t[]> counts;   // tokens generated
  std::unique_ptr<uint8_t[]> done;
  std::unique_ptr<int32_t[]> next;      // sampled
  std::unique_ptr<int32_t[]> feed;      // fed to the step
  std::unique_ptr<uint32_t[]> ones;     // decoder lengths of the start token
};

}  // namespace api
}  // namespace octet

struct octet_session {
  OCTET_ALLOCATED_THROUGH_ALLOCATE
  octet_session(const octet_model* m, octet::Session s) : model(m), session(std::move(s)) {}

  const octet_model* model = nullptr;
  octet::Session session;
  bool has_output = false;
  // Cancel: each octet_generate takes the next number as it starts, and
  // octet_session_cancel marks the number of the one started last (running, or
  // finished: then it affects nothing). A cancel that lands while a generation
  // validates its arguments is not lost, and one made before a generation
  // starts does not touch it.
  std::atomic<uint64_t> generations{0};
  std::atomic<uint64_t> cancelled{0};
  // Generation's text streams, one per sequence of max_batch (with a tokenizer).
  std::unique_ptr<octet::api::GenerationStream[]> streams;
  uint32_t num_streams = 0;
  octet::api::GenerationScratch generation;  // decoders
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

bool IsEos(const octet_model& model, int32_t id);
// Sets up the session's generation arrays and (a model with a tokenizer) text
// streams for `count` sequences.
octet_status InitGeneration(octet_session* session, uint32_t count);
// After a run: the caller's capture gets the shape the engine set.
void SyncCapture(octet_session* session);

}  // namespace api
}  // namespace octet
