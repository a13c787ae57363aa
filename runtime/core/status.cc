#include "core/status.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace octet {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kInvalidModel: return "invalid model";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kOutOfMemory: return "out of memory";
    case StatusCode::kIo: return "i/o error";
    case StatusCode::kInternal: return "internal error";
    case StatusCode::kFailedPrecondition: return "invalid state";
    case StatusCode::kLimitExceeded: return "limit exceeded";
    case StatusCode::kBufferTooSmall: return "buffer too small";
    case StatusCode::kCancelled: return "cancelled";
  }
  return "unknown status";
}

Status::Status(StatusCode code, const char* message) : code_(code) {
  if (message != nullptr) {
    std::snprintf(message_, sizeof(message_), "%s", message);
  }
}

Status Status::Error(StatusCode code, const char* format, ...) {
  Status s;
  s.code_ = code;
  va_list args;
  va_start(args, format);
  std::vsnprintf(s.message_, sizeof(s.message_), format, args);
  va_end(args);
  return s;
}

Status& Status::WithContext(const char* format, ...) {
  char prefix[kMaxMessage];
  va_list args;
  va_start(args, format);
  std::vsnprintf(prefix, sizeof(prefix), format, args);
  va_end(args);
  // Truncation to kMaxMessage - 1 is the intent.
  char joined[kMaxMessage];
  const int length = std::snprintf(joined, sizeof(joined), "%s: %s", prefix, message_);
  if (length < 0) return *this;
  std::memcpy(message_, joined, sizeof(message_));
  return *this;
}

}  // namespace octet
