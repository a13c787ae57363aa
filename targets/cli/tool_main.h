// The shared shape of the octet tools' main(): every error becomes exactly one
// line on stderr, "<tool>: <what is wrong>", and an exit status (2 for usage
// errors, 1 for everything else). Nothing escapes as an exception or an abort.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace octet {
namespace cli {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kExitTargetNotMet = 3;  // octet-convert --require-target: the file is written

// Runs `body` with the arguments after argv[0] and returns its exit status, or
// prints the error of whatever it throws and returns 1 or 2.
int GuardedMain(const char* tool, int argc, char** argv,
                const std::function<int(const std::vector<std::string>&)>& body);

// `message` with line breaks and other control characters replaced by spaces,
// so that an error stays on one line whatever a model file put in its names.
std::string OneLine(const std::string& message);

}  // namespace cli
}  // namespace octet
