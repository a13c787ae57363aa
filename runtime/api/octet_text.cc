// The C API's text: tokenizers (encode, decode, the vocabulary and special
// tokens), streaming decode, and chat templates.
#include <new>
#include <string_view>

#include "api/internal.h"
#include "core/vector.h"

struct octet_tokenizer {
  OCTET_ALLOCATED_THROUGH_ALLOCATE
  const octet_model* model = nullptr;
  octet::text::TokenizerWorkspace workspace;
  // Grown on demand: encode's ids and decode's text before they are copied out.
  octet::OwnedArray<int32_t> ids;
  size_t ids_capacity = 0;
  octet::OwnedArray<char> text;
  size_t text_capacity = 0;
  // Indexes of the special added tokens in the spec's added_tokens.
  octet::OwnedArray<uint32_t> specials;
  size_t num_specials = 0;
};

struct octet_text_stream {
  OCTET_ALLOCATED_THROUGH_ALLOCATE
  const octet_model* model = nullptr;
  octet::text::TokenizerWorkspace workspace;
  octet::text::StreamDecoder decoder;
  octet::OwnedArray<char> buffer;
  size_t capacity = 0;
};

namespace octet {
namespace api {
namespace {

// Grows the workspace to take `text_bytes` of text and `ids` ids.
Status Reserve(octet_tokenizer* t, size_t text_bytes, size_t ids) {
  const size_t have_text = t->workspace.max_text_bytes(), have_ids = t->workspace.max_decode_ids();
  if (t->workspace.bytes() != 0 && text_bytes <= have_text && ids <= have_ids) return Status::Ok();
  const size_t want_text = text_bytes > have_text ? (text_bytes > 2 * have_text ? text_bytes : 2 * have_text) : have_text;
  const size_t want_ids = ids > have_ids ? (ids > 2 * have_ids ? ids : 2 * have_ids) : have_ids;
  return t->model->tokenizer.CreateWorkspace(want_text < 64 ? 64 : want_text,
                                             want_ids < 64 ? 64 : want_ids, &t->workspace);
}

template <typename T>
bool Grow(OwnedArray<T>* buffer, size_t* capacity, size_t needed) {
  if (needed <= *capacity) return true;
  const size_t n = needed > 2 * *capacity ? needed : 2 * *capacity;
  buffer->reset(NewArray<T>(n));
  *capacity = buffer->get() != nullptr ? n : 0;
  return buffer->get() != nullptr;
}

}  // namespace
}  // namespace api
}  // namespace octet

using octet::api::Fail;

extern "C" {

// ---- Tokenizer ----

OCTET_API octet_status octet_tokenizer_create(const octet_model* model, octet_tokenizer** out) {
  if (out != nullptr) *out = nullptr;
  if (model == nullptr || out == nullptr) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_tokenizer_create: model and out must not be null");
  }
  if (!model->has_tokenizer) {
    return Fail(OCTET_UNSUPPORTED, "the model file has no tokenizer (its checkpoint had none)");
  }
  std::unique_ptr<octet_tokenizer> t(new (std::nothrow) octet_tokenizer);
  if (t == nullptr) return Fail(OCTET_OUT_OF_MEMORY, "tokenizer: out of memory for the handle");
  t->model = model;
  const octet::Status st = octet::api::Reserve(t.get(), 256, 256);
  if (!st.ok()) return Fail(st);
  const auto* added = model->tokenizer.spec().added_tokens();
  if (added != nullptr && added->size() > 0) {
    t->specials.reset(octet::NewArray<uint32_t>(added->size()));
    if (t->specials == nullptr) {
      return Fail(OCTET_OUT_OF_MEMORY, "tokenizer: out of memory for the %u special-token indexes",
                  added->size());
    }
    for (uint32_t i = 0; i < added->size(); ++i) {
      const octet::fb::AddedToken* a = added->Get(i);
      if (a->special() && a->content() != nullptr && a->content()->size() > 0) {
        t->specials[t->num_specials++] = i;
      }
    }
  }
  *out = t.release();
  return OCTET_OK;
}

OCTET_API void octet_tokenizer_free(octet_tokenizer* tokenizer) { delete tokenizer; }

OCTET_API octet_status octet_tokenizer_encode(octet_tokenizer* tokenizer, const char* text,
                                              size_t text_len, uint32_t flags, int32_t* ids,
                                              size_t capacity, size_t* n_ids) {
  if (tokenizer == nullptr || n_ids == nullptr || (text == nullptr && text_len > 0)) {
    return Fail(OCTET_INVALID_ARGUMENT,
                "octet_tokenizer_encode: tokenizer, n_ids (and text) must not be null");
  }
  *n_ids = 0;
  if ((flags & ~(OCTET_ENCODE_NO_SPECIAL | OCTET_ENCODE_SPLIT_SPECIAL)) != 0) {
    return Fail(OCTET_INVALID_ARGUMENT, "unknown encode flags 0x%x", flags);
  }
  if (ids == nullptr && capacity > 0) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_tokenizer_encode: ids is null");
  }
  const octet::text::Tokenizer& tok = tokenizer->model->tokenizer;
  octet::Status st = octet::api::Reserve(tokenizer, text_len, 0);
  if (!st.ok()) return Fail(st);
  const size_t max_ids = tok.MaxIds(text_len);
  if (!octet::api::Grow(&tokenizer->ids, &tokenizer->ids_capacity, max_ids + 1)) {
    return Fail(OCTET_OUT_OF_MEMORY, "cannot allocate %zu ids", max_ids);
  }
  octet::text::EncodeOptions options;
  options.add_special_tokens = (flags & OCTET_ENCODE_NO_SPECIAL) == 0;
  options.split_special_tokens = (flags & OCTET_ENCODE_SPLIT_SPECIAL) != 0;
  size_t n = 0;
  st = tok.Encode(text == nullptr ? "" : text, text_len, options, tokenizer->workspace,
                  tokenizer->ids.get(), tokenizer->ids_capacity, &n);
  if (!st.ok()) return Fail(st);
  *n_ids = n;
  if (n > capacity) {
    return Fail(OCTET_BUFFER_TOO_SMALL, "the text encodes to %zu ids; the buffer holds %zu", n,
                capacity);
  }
  if (n > 0) std::memcpy(ids, tokenizer->ids.get(), n * sizeof(int32_t));
  return OCTET_OK;
}

OCTET_API octet_status octet_tokenizer_decode(octet_tokenizer* tokenizer, const int32_t* ids,
                                              size_t n_ids, uint32_t flags, char* text,
                                              size_t capacity, size_t* text_len) {
  if (tokenizer == nullptr || text_len == nullptr || (ids == nullptr && n_ids > 0)) {
    return Fail(OCTET_INVALID_ARGUMENT,
                "octet_tokenizer_decode: tokenizer, text_len (and ids) must not be null");
  }
  *text_len = 0;
  if ((flags & ~OCTET_DECODE_KEEP_SPECIAL) != 0) {
    return Fail(OCTET_INVALID_ARGUMENT, "unknown decode flags 0x%x", flags);
  }
  if (text == nullptr && capacity > 0) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_tokenizer_decode: text is null");
  }
  const octet::text::Tokenizer& tok = tokenizer->model->tokenizer;
  octet::Status st = octet::api::Reserve(tokenizer, 0, n_ids);
  if (!st.ok()) return Fail(st);
  const size_t max_bytes = tok.MaxDecodedBytes(n_ids);
  if (!octet::api::Grow(&tokenizer->text, &tokenizer->text_capacity, max_bytes + 1)) {
    return Fail(OCTET_OUT_OF_MEMORY, "cannot allocate %zu bytes of text", max_bytes);
  }
  size_t n = 0;
  st = tok.Decode(ids == nullptr ? tokenizer->ids.get() : ids, n_ids,
                  (flags & OCTET_DECODE_KEEP_SPECIAL) == 0, tokenizer->workspace,
                  tokenizer->text.get(), tokenizer->text_capacity, &n);
  if (!st.ok()) return Fail(st);
  *text_len = n;
  if (n > capacity) {
    return Fail(OCTET_BUFFER_TOO_SMALL, "the ids decode to %zu bytes; the buffer holds %zu", n,
                capacity);
  }
  if (n > 0) std::memcpy(text, tokenizer->text.get(), n);
  return OCTET_OK;
}

OCTET_API uint32_t octet_tokenizer_vocab_size(const octet_tokenizer* tokenizer) {
  return tokenizer ? tokenizer->model->tokenizer.vocab_size() : 0;
}

OCTET_API octet_status octet_tokenizer_token(const octet_tokenizer* tokenizer, int32_t id,
                                             const char** bytes, size_t* len) {
  if (tokenizer == nullptr || bytes == nullptr || len == nullptr) {
    return Fail(OCTET_INVALID_ARGUMENT,
                "octet_tokenizer_token: tokenizer, bytes and len must not be null");
  }
  *bytes = nullptr;
  *len = 0;
  const octet::text::Tokenizer& tok = tokenizer->model->tokenizer;
  if (id < 0 || static_cast<uint32_t>(id) >= tok.vocab_size()) {
    return Fail(OCTET_INVALID_ARGUMENT, "token id %d is outside the vocabulary [0, %u)", id,
                tok.vocab_size());
  }
  size_t n = 0;
  const char* p = tok.TokenBytes(id, &n);
  *bytes = p != nullptr ? p : "";
  *len = p != nullptr ? n : 0;
  return OCTET_OK;
}

OCTET_API size_t octet_tokenizer_special_count(const octet_tokenizer* tokenizer) {
  return tokenizer ? tokenizer->num_specials : 0;
}

OCTET_API octet_status octet_tokenizer_special(const octet_tokenizer* tokenizer, size_t index,
                                               octet_special_token* out) {
  if (tokenizer == nullptr || out == nullptr) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_tokenizer_special: tokenizer and out must not be null");
  }
  if (out->struct_size < sizeof(size_t)) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_special_token.struct_size is %zu (unset?)",
                out->struct_size);
  }
  if (index >= tokenizer->num_specials) {
    return Fail(OCTET_INVALID_ARGUMENT, "special token %zu of %zu", index, tokenizer->num_specials);
  }
  const octet::fb::AddedToken* a =
      tokenizer->model->tokenizer.spec().added_tokens()->Get(tokenizer->specials[index]);
  octet_special_token s;
  s.struct_size = sizeof(s);
  s.content = a->content()->c_str();
  s.content_len = a->content()->size();
  s.id = a->id();
  s.lstrip = a->lstrip() ? 1 : 0;
  s.rstrip = a->rstrip() ? 1 : 0;
  octet::api::CopyOut(s, out);
  return OCTET_OK;
}

// ---- Streaming decode ----

OCTET_API octet_status octet_text_stream_create(const octet_model* model, uint32_t flags,
                                                octet_text_stream** out) {
  if (out != nullptr) *out = nullptr;
  if (model == nullptr || out == nullptr) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_text_stream_create: model and out must not be null");
  }
  if ((flags & ~OCTET_DECODE_KEEP_SPECIAL) != 0) {
    return Fail(OCTET_INVALID_ARGUMENT, "unknown decode flags 0x%x", flags);
  }
  if (!model->has_tokenizer) {
    return Fail(OCTET_UNSUPPORTED, "the model file has no tokenizer (its checkpoint had none)");
  }
  std::unique_ptr<octet_text_stream> s(new (std::nothrow) octet_text_stream);
  if (s == nullptr) return Fail(OCTET_OUT_OF_MEMORY, "text stream: out of memory for the handle");
  s->model = model;
  const octet::text::Tokenizer& tok = model->tokenizer;
  octet::Status st = tok.CreateWorkspace(1, octet::text::StreamDecoder::kWindow, &s->workspace);
  if (st.ok()) st = s->decoder.Init(&tok, &s->workspace, (flags & OCTET_DECODE_KEEP_SPECIAL) == 0);
  if (!st.ok()) return Fail(st);
  s->capacity = tok.MaxDecodedBytes(octet::text::StreamDecoder::kWindow);
  s->buffer.reset(octet::NewArray<char>(s->capacity));
  if (s->buffer == nullptr) {
    return Fail(OCTET_OUT_OF_MEMORY, "text stream: out of memory for its %zu-byte text buffer",
                s->capacity);
  }
  *out = s.release();
  return OCTET_OK;
}

OCTET_API void octet_text_stream_free(octet_text_stream* stream) { delete stream; }

OCTET_API octet_status octet_text_stream_push(octet_text_stream* stream, int32_t id,
                                              const char** text, size_t* text_len) {
  if (stream == nullptr || text == nullptr || text_len == nullptr) {
    return Fail(OCTET_INVALID_ARGUMENT,
                "octet_text_stream_push: stream, text and text_len must not be null");
  }
  *text = stream->buffer.get();
  *text_len = 0;
  const uint32_t vocab = stream->model->tokenizer.vocab_size();
  if (id < 0 || static_cast<uint32_t>(id) >= vocab) {
    return Fail(OCTET_INVALID_ARGUMENT, "token id %d is outside the vocabulary [0, %u)", id, vocab);
  }
  return octet::api::Check(stream->decoder.Push(id, stream->buffer.get(), stream->capacity, text_len));
}

OCTET_API octet_status octet_text_stream_finish(octet_text_stream* stream, const char** text,
                                                size_t* text_len) {
  if (stream == nullptr || text == nullptr || text_len == nullptr) {
    return Fail(OCTET_INVALID_ARGUMENT,
                "octet_text_stream_finish: stream, text and text_len must not be null");
  }
  *text = stream->buffer.get();
  *text_len = 0;
  const octet::Status st = stream->decoder.Finish(stream->buffer.get(), stream->capacity, text_len);
  stream->decoder.Reset();
  return octet::api::Check(st);
}

OCTET_API void octet_text_stream_reset(octet_text_stream* stream) {
  if (stream != nullptr) stream->decoder.Reset();
}

// ---- Chat templates ----

OCTET_API void octet_chat_options_init(octet_chat_options* options) {
  octet::api::InitStruct(options);
}

OCTET_API octet_status octet_chat_render(const octet_model* model,
                                         const octet_chat_message* messages, size_t n_messages,
                                         const octet_chat_options* options, char* text,
                                         size_t capacity, size_t* text_len) {
  if (model == nullptr || text_len == nullptr || (messages == nullptr && n_messages > 0)) {
    return Fail(OCTET_INVALID_ARGUMENT,
                "octet_chat_render: model, text_len (and messages) must not be null");
  }
  *text_len = 0;
  if (text == nullptr && capacity > 0) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_chat_render: text is null");
  }
  octet_chat_options o;
  octet_chat_options_init(&o);
  if (options != nullptr && !octet::api::CopyIn(options, &o)) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_chat_options.struct_size is %zu (unset?)",
                options->struct_size);
  }
  if ((o.flags & ~OCTET_CHAT_NO_GENERATION_PROMPT) != 0) {
    return Fail(OCTET_INVALID_ARGUMENT, "unknown chat flags 0x%x", o.flags);
  }
  if (!model->has_chat_template) {
    return Fail(OCTET_UNSUPPORTED, "the model has no chat template (its checkpoint had none in "
                "tokenizer_config.json)");
  }
  if (!model->chat_status.ok()) return Fail(model->chat_status);
  octet::Vector<octet::text::ChatMessage> turns;
  if (!turns.Resize(n_messages == 0 ? 1 : n_messages)) {
    return Fail(OCTET_OUT_OF_MEMORY, "chat: out of memory for %zu messages", n_messages);
  }
  size_t bytes = 4096;
  for (size_t i = 0; i < n_messages; ++i) {
    if (messages[i].role == nullptr || messages[i].content == nullptr) {
      return Fail(OCTET_INVALID_ARGUMENT, "message %zu has a null role or content", i);
    }
    turns[i].role = messages[i].role;
    turns[i].content = messages[i].content;
    bytes += turns[i].role.size() + turns[i].content.size();
  }
  const octet::fb::TokenizerSpec& spec = model->tokenizer.spec();
  octet::text::ChatRenderInput input;
  input.messages = turns.data();
  input.num_messages = n_messages;
  input.add_generation_prompt = (o.flags & OCTET_CHAT_NO_GENERATION_PROMPT) == 0;
  if (spec.bos_token() != nullptr) {
    input.bos_token = {true, std::string_view(spec.bos_token()->c_str(), spec.bos_token()->size())};
  }
  if (spec.eos_token() != nullptr) {
    input.eos_token = {true, std::string_view(spec.eos_token()->c_str(), spec.eos_token()->size())};
  }
  struct tm local;
  if (o.now != nullptr) {
    input.now = o.now;
  } else {
    const time_t now = time(nullptr);
    input.now = localtime_r(&now, &local);
  }
  // Start from a size that fits the real templates, and double on shortage.
  size_t scratch_size = 64 * 1024 + 8 * bytes;
  size_t out_size = 4096 + 2 * bytes;
  constexpr size_t kCap = size_t{1} << 30;
  for (;;) {
    octet::OwnedArray<char> scratch(octet::NewArray<char>(scratch_size));
    octet::OwnedArray<char> out(octet::NewArray<char>(out_size));
    if (scratch == nullptr || out == nullptr) {
      return Fail(OCTET_OUT_OF_MEMORY, "cannot allocate %zu bytes to render the chat template",
                  scratch_size + out_size);
    }
    size_t written = 0;
    const octet::Status st = model->chat_template.Render(input, scratch.get(), scratch_size,
                                                         out.get(), out_size, &written);
    if (st.ok()) {
      *text_len = written;
      if (written > capacity) {
        return Fail(OCTET_BUFFER_TOO_SMALL, "the chat takes %zu bytes; the buffer holds %zu",
                    written, capacity);
      }
      if (written > 0) std::memcpy(text, out.get(), written);
      return OCTET_OK;
    }
    if (st.code() != octet::StatusCode::kOutOfMemory || (scratch_size >= kCap && out_size >= kCap)) {
      return Fail(st);
    }
    if (scratch_size < kCap) scratch_size *= 2;
    if (out_size < kCap) out_size *= 2;
  }
}

}  // extern "C"
