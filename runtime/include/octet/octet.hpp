// A thin C++ wrapper over octet.h: RAII handles, std::string and std::vector
// in and out, statuses with their messages. Header-only; it uses only the C
// API, so it works with liboctet.so too. No exceptions: every call that can
// fail returns a Status (and its results through out-parameters).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "octet/octet.h"

namespace octet {
namespace api {

struct Status {
  octet_status code = OCTET_OK;
  std::string message;
  bool ok() const { return code == OCTET_OK; }
  // "message (status name)"
  std::string ToString() const {
    return message + " (" + octet_status_name(code) + ")";
  }

  static Status FromCode(octet_status code) {
    return code == OCTET_OK ? Status() : Status{code, octet_last_error()};
  }
};

// A handle that frees itself: T is the C handle type, Free its free function.
template <typename T, void (*Free)(T*)>
class Handle {
 public:
  Handle() = default;
  ~Handle() { Free(handle_); }
  Handle(Handle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Handle& operator=(Handle&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  T* get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }

 protected:
  // Frees the current handle and returns where the C call writes the new one.
  T** ResetHandle() {
    Free(std::exchange(handle_, nullptr));
    return &handle_;
  }

 private:
  T* handle_ = nullptr;
};

class Model : public Handle<octet_model, octet_model_free> {
 public:
  Status Load(const std::string& path) {
    return Status::FromCode(octet_model_load(path.c_str(), ResetHandle()));
  }
  // The buffer (64-byte aligned) must outlive the model.
  Status LoadFromBuffer(const void* data, size_t size) {
    return Status::FromCode(octet_model_load_from_buffer(data, size, ResetHandle()));
  }
  Status LoadFromFd(int fd, uint64_t offset, uint64_t length) {
    return Status::FromCode(octet_model_load_from_fd(fd, offset, length, ResetHandle()));
  }

  octet_model_info info() const {
    octet_model_info i{};
    i.struct_size = sizeof(i);
    octet_model_get_info(get(), &i);
    return i;
  }
  uint32_t vocab_size() const { return octet_model_vocab_size(get()); }
  uint32_t hidden_size() const { return octet_model_hidden_size(get()); }
  bool is_eos(int32_t id) const { return octet_model_is_eos(get(), id) != 0; }

  // The chat template rendered for (role, content) messages.
  Status RenderChat(const std::vector<std::pair<std::string, std::string>>& messages,
                    const octet_chat_options* options, std::string* text) const {
    std::vector<octet_chat_message> m;
    m.reserve(messages.size());
    for (const auto& [role, content] : messages) m.push_back({role.c_str(), content.c_str()});
    size_t n = 0;
    text->assign(4096, '\0');
    octet_status st = octet_chat_render(get(), m.data(), m.size(), options, &(*text)[0],
                                        text->size(), &n);
    if (st == OCTET_BUFFER_TOO_SMALL) {
      text->assign(n, '\0');
      st = octet_chat_render(get(), m.data(), m.size(), options, &(*text)[0], text->size(), &n);
    }
    text->resize(st == OCTET_OK ? n : 0);
    return Status::FromCode(st);
  }

  // The JSON description of the model file (octet_model_describe).
  Status Describe(std::string* json) const {
    size_t n = 0;
    json->assign(1 << 16, '\0');
    octet_status st = octet_model_describe(get(), &(*json)[0], json->size(), &n);
    if (st == OCTET_BUFFER_TOO_SMALL) {
      json->assign(n, '\0');
      st = octet_model_describe(get(), &(*json)[0], json->size(), &n);
    }
    json->resize(st == OCTET_OK ? n : 0);
    return Status::FromCode(st);
  }
};

// Options with the C defaults.
inline octet_session_options SessionOptions() {
  octet_session_options o;
  octet_session_options_init(&o);
  return o;
}
inline octet_generate_options GenerateOptions() {
  octet_generate_options o;
  octet_generate_options_init(&o);
  return o;
}
inline octet_sampling Sampling() {
  octet_sampling s;
  octet_sampling_init(&s);
  return s;
}

class Session : public Handle<octet_session, octet_session_free> {
 public:
  // The model must outlive the session.
  Status Create(const Model& model, octet_session_limits limits) {
    hidden_size_ = model.hidden_size();
    return Status::FromCode(octet_session_create(model.get(), &limits, ResetHandle()));
  }
  // memory: null, or a 64-byte aligned buffer of PlanMemory's memory_bytes.
  Status Create(const Model& model, const octet_session_options& options, void* memory = nullptr,
                size_t memory_bytes = 0) {
    hidden_size_ = model.hidden_size();
    return Status::FromCode(octet_session_create_with_options(model.get(), &options, memory,
                                                              memory_bytes, ResetHandle()));
  }
  static Status PlanMemory(const Model& model, const octet_session_options& options,
                           octet_session_plan* plan) {
    plan->struct_size = sizeof(*plan);
    return Status::FromCode(octet_session_plan_memory(model.get(), &options, plan));
  }

  // ids [batch, seq] row-major, lengths [batch].
  Status Run(const std::vector<int32_t>& ids, const std::vector<uint32_t>& lengths, uint32_t seq) {
    if (ids.size() != lengths.size() * static_cast<size_t>(seq)) {
      return Status{OCTET_INVALID_ARGUMENT, "ids must hold batch x seq values"};
    }
    return Status::FromCode(octet_session_run(get(), ids.data(), lengths.data(),
                                              static_cast<uint32_t>(lengths.size()), seq));
  }
  Status RunEncoderDecoder(const std::vector<int32_t>& enc_ids,
                           const std::vector<uint32_t>& enc_lengths, uint32_t enc_seq,
                           const std::vector<int32_t>& dec_ids,
                           const std::vector<uint32_t>& dec_lengths, uint32_t dec_seq) {
    if (enc_ids.size() != enc_lengths.size() * static_cast<size_t>(enc_seq) ||
        dec_ids.size() != dec_lengths.size() * static_cast<size_t>(dec_seq) ||
        enc_lengths.size() != dec_lengths.size()) {
      return Status{OCTET_INVALID_ARGUMENT, "ids must hold batch x seq values on both sides"};
    }
    return Status::FromCode(octet_session_run_encoder_decoder(
        get(), enc_ids.data(), enc_lengths.data(), enc_seq, dec_ids.data(), dec_lengths.data(),
        dec_seq, static_cast<uint32_t>(enc_lengths.size())));
  }
  Status Step(const std::vector<int32_t>& ids) {
    return Status::FromCode(
        octet_session_step(get(), ids.data(), static_cast<uint32_t>(ids.size())));
  }
  // ids [batch, k] row-major.
  Status Extend(const int32_t* ids, uint32_t batch, uint32_t k) {
    return Status::FromCode(octet_session_extend(get(), ids, batch, k));
  }
  octet_output output() const {
    octet_output out{};
    octet_session_output(get(), &out);
    return out;
  }
  // out_ids[batch] of the last run or step.
  Status Sample(const octet_sampling& sampling, uint64_t* rng_state, int32_t* out_ids) {
    return Status::FromCode(octet_session_sample(get(), &sampling, rng_state, out_ids));
  }

  // on_token returns false to stop. options.on_token is set by this call.
  using TokenFn = std::function<bool(const octet_token_event&)>;
  Status Generate(const std::vector<int32_t>& ids, const std::vector<uint32_t>& lengths,
                  uint32_t seq, octet_generate_options options, const TokenFn& on_token,
                  std::vector<uint32_t>* counts = nullptr) {
    if (ids.size() != lengths.size() * static_cast<size_t>(seq)) {
      return Status{OCTET_INVALID_ARGUMENT, "ids must hold batch x seq values"};
    }
    SetTokenFn(on_token, &options);
    std::vector<uint32_t> n(lengths.size());
    const octet_status st = octet_generate(get(), ids.data(), lengths.data(),
                                           static_cast<uint32_t>(lengths.size()), seq, &options,
                                           n.data());
    if (counts != nullptr) *counts = std::move(n);
    return Status::FromCode(st);
  }
  // Generates on from what the session holds (octet_generate_continue): after
  // a Run, Extend or LoadState. rng_state: null, or the random state to draw
  // from and advance. counts: one per sequence of the last output.
  Status GenerateContinue(octet_generate_options options, const TokenFn& on_token,
                          uint64_t* rng_state = nullptr, std::vector<uint32_t>* counts = nullptr) {
    SetTokenFn(on_token, &options);
    std::vector<uint32_t> n(output().batch);
    const octet_status st = octet_generate_continue(get(), &options, rng_state, n.data());
    if (counts != nullptr) *counts = std::move(n);
    return Status::FromCode(st);
  }
  // Safe from any thread.
  void Cancel() { octet_session_cancel(get()); }

  // out [batch, hidden]: the sentence embeddings of an encoder-only model.
  Status Embed(const std::vector<int32_t>& ids, const std::vector<uint32_t>& lengths, uint32_t seq,
               octet_pooling pooling, uint32_t flags, std::vector<float>* out) {
    if (ids.size() != lengths.size() * static_cast<size_t>(seq)) {
      return Status{OCTET_INVALID_ARGUMENT, "ids must hold batch x seq values"};
    }
    out->resize(lengths.size() * static_cast<size_t>(hidden_size_));
    const octet_status st = octet_session_embed(get(), ids.data(), lengths.data(),
                                                static_cast<uint32_t>(lengths.size()), seq,
                                                pooling, flags, out->data(), out->size());
    if (st != OCTET_OK) out->clear();
    return Status::FromCode(st);
  }

  // capture must stay alive while set; null stops capturing.
  Status CaptureAttention(octet_attention_capture* capture) {
    if (capture != nullptr) capture->struct_size = sizeof(*capture);
    return Status::FromCode(octet_session_capture_attention(get(), capture));
  }

  Status SaveState(std::vector<uint8_t>* state) const {
    size_t n = 0;
    octet_status st = octet_session_state_size(get(), &n);
    if (st != OCTET_OK) return Status::FromCode(st);
    state->resize(n);
    st = octet_session_state_save(get(), state->data(), state->size(), &n);
    state->resize(st == OCTET_OK ? n : 0);
    return Status::FromCode(st);
  }
  Status LoadState(const std::vector<uint8_t>& state) {
    return Status::FromCode(octet_session_state_load(get(), state.data(), state.size()));
  }

  size_t arena_bytes() const { return octet_session_arena_bytes(get()); }

 private:
  // options->on_token calls on_token (which must outlive the generation).
  static void SetTokenFn(const TokenFn& on_token, octet_generate_options* options) {
    if (!on_token) return;
    options->on_token = [](void* user, const octet_token_event* event) {
      return (*static_cast<const TokenFn*>(user))(*event) ? 0 : 1;
    };
    options->on_token_user = const_cast<TokenFn*>(&on_token);
  }

  uint32_t hidden_size_ = 0;
};

class Tokenizer : public Handle<octet_tokenizer, octet_tokenizer_free> {
 public:
  Status Create(const Model& model) {
    return Status::FromCode(octet_tokenizer_create(model.get(), ResetHandle()));
  }
  // flags: OCTET_ENCODE_*.
  Status Encode(const std::string& text, uint32_t flags, std::vector<int32_t>* ids) {
    size_t n = 0;
    ids->resize(text.size() + 16);
    octet_status st =
        octet_tokenizer_encode(get(), text.data(), text.size(), flags, ids->data(), ids->size(), &n);
    if (st == OCTET_BUFFER_TOO_SMALL) {
      ids->resize(n);
      st = octet_tokenizer_encode(get(), text.data(), text.size(), flags, ids->data(),
                                  ids->size(), &n);
    }
    ids->resize(st == OCTET_OK ? n : 0);
    return Status::FromCode(st);
  }
  // flags: OCTET_DECODE_*.
  Status Decode(const int32_t* ids, size_t n_ids, uint32_t flags, std::string* text) {
    size_t n = 0;
    text->assign(n_ids * 8 + 16, '\0');
    octet_status st = octet_tokenizer_decode(get(), ids, n_ids, flags, &(*text)[0], text->size(), &n);
    if (st == OCTET_BUFFER_TOO_SMALL) {
      text->assign(n, '\0');
      st = octet_tokenizer_decode(get(), ids, n_ids, flags, &(*text)[0], text->size(), &n);
    }
    text->resize(st == OCTET_OK ? n : 0);
    return Status::FromCode(st);
  }
  Status Decode(const std::vector<int32_t>& ids, uint32_t flags, std::string* text) {
    return Decode(ids.data(), ids.size(), flags, text);
  }
  // The token's string as the vocabulary spells it.
  std::string Token(int32_t id) const {
    const char* bytes = nullptr;
    size_t n = 0;
    if (octet_tokenizer_token(get(), id, &bytes, &n) != OCTET_OK) return std::string();
    return std::string(bytes, n);
  }
  uint32_t vocab_size() const { return octet_tokenizer_vocab_size(get()); }
  std::vector<octet_special_token> Specials() const {
    std::vector<octet_special_token> out(octet_tokenizer_special_count(get()));
    for (size_t i = 0; i < out.size(); ++i) {
      out[i].struct_size = sizeof(out[i]);
      octet_tokenizer_special(get(), i, &out[i]);
    }
    return out;
  }
};

class TextStream : public Handle<octet_text_stream, octet_text_stream_free> {
 public:
  // flags: OCTET_DECODE_*.
  Status Create(const Model& model, uint32_t flags) {
    return Status::FromCode(octet_text_stream_create(model.get(), flags, ResetHandle()));
  }
  // Appends the text `id` completes to *text.
  Status Push(int32_t id, std::string* text) {
    const char* piece = nullptr;
    size_t n = 0;
    const octet_status st = octet_text_stream_push(get(), id, &piece, &n);
    if (st == OCTET_OK) text->append(piece, n);
    return Status::FromCode(st);
  }
  // Appends the held-back text to *text; the stream starts over.
  Status Finish(std::string* text) {
    const char* piece = nullptr;
    size_t n = 0;
    const octet_status st = octet_text_stream_finish(get(), &piece, &n);
    if (st == OCTET_OK) text->append(piece, n);
    return Status::FromCode(st);
  }
  void Reset() { octet_text_stream_reset(get()); }
};

}  // namespace api
}  // namespace octet

// ---- Diagnostics (octet.h's last section): for tools and benchmarks ---------
// Free functions on the C handles (Model::get(), or a handle of your own), so
// they stand apart from the classes above.
namespace octet {
namespace api {

// octet_model_describe's JSON, whatever its size.
inline Status DescribeModel(const octet_model* model, std::string* json) {
  json->clear();
  size_t size = 0;
  octet_status st = octet_model_describe(model, nullptr, 0, &size);
  if (st != OCTET_BUFFER_TOO_SMALL) return Status::FromCode(st);
  json->resize(size);
  st = octet_model_describe(model, &(*json)[0], json->size(), &size);
  json->resize(st == OCTET_OK ? size : 0);
  return Status::FromCode(st);
}

// The info structs with struct_size set.
inline Status GetRuntimeInfo(octet_runtime_info* info) {
  *info = octet_runtime_info{};
  info->struct_size = sizeof(*info);
  return Status::FromCode(octet_get_runtime_info(info));
}

inline Status GetSessionInfo(const octet_session* session, octet_session_info* info) {
  *info = octet_session_info{};
  info->struct_size = sizeof(*info);
  return Status::FromCode(octet_session_get_info(session, info));
}

inline Status GetProfile(const octet_session* session, octet_profile* profile) {
  *profile = octet_profile{};
  profile->struct_size = sizeof(*profile);
  return Status::FromCode(octet_session_profile(session, profile));
}

}  // namespace api
}  // namespace octet
