// Status: the error value of the runtime. No exceptions, no heap: the message
// lives in a fixed buffer inside the Status, so returning an error from a run
// (a token id out of range, say) allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>

namespace octet {

// Grouped by kind; the numeric values are the C API's octet_status values.
enum class StatusCode : int32_t {
  kOk = 0,
  kInvalidArgument = 1,  // the caller passed something wrong (shape, id, flag)
  kInvalidModel = 2,     // the model file is malformed or inconsistent
  kUnsupported = 3,      // valid, but this build or version cannot do it
  kOutOfMemory = 4,      // an allocation or a planned limit was exceeded
  kIo = 5,               // a file could not be opened, mapped or written
  kInternal = 6,         // a bug in octet
  kFailedPrecondition = 7,  // a call in the wrong order (a step before any prompt)
  kLimitExceeded = 8,       // beyond the planned limits (a sequence longer than planned)
  kBufferTooSmall = 9,      // an output buffer is too small
  kCancelled = 10,          // stopped on request
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  static constexpr size_t kMaxMessage = 240;

  Status() = default;  // ok
  Status(StatusCode code, const char* message);

  static Status Ok() { return Status(); }
  // printf-style constructor; the message is truncated to kMaxMessage - 1.
  static Status Error(StatusCode code, const char* format, ...)
      __attribute__((format(printf, 2, 3)));

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const char* message() const { return message_; }

  // Prepends "context: " to the message (keeps the code).
  Status& WithContext(const char* format, ...) __attribute__((format(printf, 2, 3)));

 private:
  StatusCode code_ = StatusCode::kOk;
  char message_[kMaxMessage] = {0};
};

#define OCTET_STATUS_CONCAT_INNER(a, b) a##b
#define OCTET_STATUS_CONCAT(a, b) OCTET_STATUS_CONCAT_INNER(a, b)

// Evaluates `expr` (a Status); returns it from the enclosing function if not ok.
#define OCTET_RETURN_IF_ERROR(expr)              \
  do {                                           \
    ::octet::Status octet_status_tmp_ = (expr);  \
    if (!octet_status_tmp_.ok()) return octet_status_tmp_; \
  } while (0)

// Returns Status::Error(code, ...) when `cond` is false.
#define OCTET_CHECK_OR_RETURN(cond, code, ...)                  \
  do {                                                          \
    if (!(cond)) return ::octet::Status::Error(code, __VA_ARGS__); \
  } while (0)

}  // namespace octet
