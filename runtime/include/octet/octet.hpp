// A thin C++ wrapper over octet.h: RAII handles and statuses with messages.
// Header-only; it uses only the C API, so it works with liboctet.so too.
#pragma once

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

  static Status FromCode(octet_status code) {
    return code == OCTET_OK ? Status() : Status{code, octet_last_error()};
  }
};

class Model {
 public:
  Model() = default;
  ~Model() { octet_model_free(handle_); }
  Model(Model&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Model& operator=(Model&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  Status Load(const std::string& path) {
    octet_model_free(std::exchange(handle_, nullptr));
    return Status::FromCode(octet_model_load(path.c_str(), &handle_));
  }
  const octet_model* get() const { return handle_; }
  uint32_t vocab_size() const { return octet_model_vocab_size(handle_); }
  uint32_t hidden_size() const { return octet_model_hidden_size(handle_); }

 private:
  octet_model* handle_ = nullptr;
};

class Session {
 public:
  Session() = default;
  ~Session() { octet_session_free(handle_); }
  Session(Session&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Session& operator=(Session&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // The model must outlive the session.
  Status Create(const Model& model, octet_session_limits limits) {
    octet_session_free(std::exchange(handle_, nullptr));
    return Status::FromCode(octet_session_create(model.get(), &limits, &handle_));
  }
  // ids [batch, seq] row-major, lengths [batch].
  Status Run(const std::vector<int32_t>& ids, const std::vector<uint32_t>& lengths, uint32_t seq) {
    if (ids.size() != lengths.size() * static_cast<size_t>(seq)) {
      return Status{OCTET_INVALID_ARGUMENT, "ids must hold batch x seq values"};
    }
    return Status::FromCode(octet_session_run(handle_, ids.data(), lengths.data(),
                                              static_cast<uint32_t>(lengths.size()), seq));
  }
  octet_output output() const {
    octet_output out{};
    octet_session_output(handle_, &out);
    return out;
  }
  size_t arena_bytes() const { return octet_session_arena_bytes(handle_); }

 private:
  octet_session* handle_ = nullptr;
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
