// Result<T>: a T or a non-ok Status, for load and setup functions.
// T may be move-only. No exceptions: reading value() of an error is a bug
// the caller must rule out with ok().
#pragma once

#include <new>
#include <type_traits>
#include <utility>

#include "core/status.h"

namespace octet {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T&& value) : has_value_(true) { new (&storage_) T(std::move(value)); }  // NOLINT
  Result(Status status) : status_(status), has_value_(false) {                   // NOLINT
    if (status_.ok()) {
      status_ = Status(StatusCode::kInternal, "Result built from an ok Status without a value");
    }
  }
  Result(Result&& other) noexcept : status_(other.status_), has_value_(other.has_value_) {
    if (has_value_) new (&storage_) T(std::move(other.value()));
  }
  Result& operator=(Result&& other) noexcept {
    if (this != &other) {
      Reset();
      status_ = other.status_;
      has_value_ = other.has_value_;
      if (has_value_) new (&storage_) T(std::move(other.value()));
    }
    return *this;
  }
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  ~Result() { Reset(); }

  bool ok() const { return has_value_; }
  const Status& status() const { return status_; }

  T& value() & { return *reinterpret_cast<T*>(&storage_); }
  const T& value() const& { return *reinterpret_cast<const T*>(&storage_); }
  T&& value() && { return std::move(*reinterpret_cast<T*>(&storage_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  void Reset() {
    if (has_value_) reinterpret_cast<T*>(&storage_)->~T();
    has_value_ = false;
  }

  Status status_;
  bool has_value_;
  typename std::aligned_storage<sizeof(T), alignof(T)>::type storage_;
};

// Declares `lhs` from a Result expression, or returns its Status.
#define OCTET_ASSIGN_OR_RETURN(lhs, expr)                                   \
  auto OCTET_STATUS_CONCAT(octet_result_, __LINE__) = (expr);               \
  if (!OCTET_STATUS_CONCAT(octet_result_, __LINE__).ok())                   \
    return OCTET_STATUS_CONCAT(octet_result_, __LINE__).status();           \
  lhs = std::move(OCTET_STATUS_CONCAT(octet_result_, __LINE__)).value()

}  // namespace octet
