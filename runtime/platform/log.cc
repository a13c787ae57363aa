#include "platform/log.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace octet {
namespace {

LogLevel LevelFromEnvironment() {
  const char* env = std::getenv("OCTET_LOG_LEVEL");
  if (env == nullptr) return LogLevel::kWarning;
  if (std::strcmp(env, "debug") == 0) return LogLevel::kDebug;
  if (std::strcmp(env, "info") == 0) return LogLevel::kInfo;
  if (std::strcmp(env, "error") == 0) return LogLevel::kError;
  if (std::strcmp(env, "off") == 0) return LogLevel::kOff;
  return LogLevel::kWarning;
}

struct LogState {
  LogCallback callback = nullptr;
  void* user_data = nullptr;
  LogLevel level = LevelFromEnvironment();
};

LogState& State() {
  static LogState state;
  return state;
}

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "error";
    case LogLevel::kOff: break;
  }
  return "";
}

}  // namespace

void SetLogCallback(LogCallback callback, void* user_data) {
  State().callback = callback;
  State().user_data = user_data;
}
void SetLogLevel(LogLevel level) { State().level = level; }
LogLevel GetLogLevel() { return State().level; }

void Log(LogLevel level, const char* format, ...) {
  LogState& state = State();
  if (level < state.level || level == LogLevel::kOff) return;
  char message[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  if (state.callback != nullptr) {
    state.callback(level, message, state.user_data);
  } else {
    std::fprintf(stderr, "octet %s: %s\n", LevelName(level), message);
  }
}

}  // namespace octet
