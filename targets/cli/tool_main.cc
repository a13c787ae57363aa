#include "cli/tool_main.h"

#include <cstdio>
#include <exception>
#include <new>

#include "cli/args.h"

namespace octet {
namespace cli {
namespace {

int Report(const char* tool, const std::string& message, int status) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s\n", tool, OneLine(message).c_str());
  return status;
}

}  // namespace

std::string OneLine(const std::string& message) {
  std::string line = message;
  for (char& c : line) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return line;
}

int GuardedMain(const char* tool, int argc, char** argv,
                const std::function<int(const std::vector<std::string>&)>& body) {
  try {
    const std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + (argc > 0 ? argc : 0));
    const int status = body(args);
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      return Report(tool, "cannot write to standard output", kExitFailure);
    }
    return status;
  } catch (const UsageError& e) {
    return Report(tool, e.what(), kExitUsage);
  } catch (const Failure& e) {
    return Report(tool, e.what(), kExitFailure);
  } catch (const std::bad_alloc&) {
    return Report(tool, "out of memory", kExitFailure);
  } catch (const std::exception& e) {
    return Report(tool, std::string("internal error: ") + e.what(), kExitFailure);
  } catch (...) {
    return Report(tool, "internal error: unknown exception", kExitFailure);
  }
}

}  // namespace cli
}  // namespace octet
