// Logging: setup and load paths only (never inside a run). Messages go to a
// callback the application may install (an Android app routes them to logcat),
// by default to stderr, filtered by level (env OCTET_LOG_LEVEL=debug|info|warning|error|off).
#pragma once

namespace octet {

enum class LogLevel : int { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4 };

using LogCallback = void (*)(LogLevel level, const char* message, void* user_data);

// Installs `callback` (nullptr restores stderr). Not thread-safe against concurrent logging.
void SetLogCallback(LogCallback callback, void* user_data);
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();

void Log(LogLevel level, const char* format, ...) __attribute__((format(printf, 2, 3)));

}  // namespace octet
