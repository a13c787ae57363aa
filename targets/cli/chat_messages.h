// Chat messages for the command line: a JSON list of {"role", "content"}
// objects read strictly. Host-side code: errors are thrown as Failure (cli/args.h).
#pragma once

#include <string>
#include <vector>

namespace octet {
namespace cli {

struct ChatTurn {
  std::string role;
  std::string content;
};

// Parses a JSON list of {"role": "...", "content": "..."} objects (strings
// only; other keys are refused so nothing is silently dropped).
std::vector<ChatTurn> ParseChatMessages(const std::string& json, const std::string& what);
std::vector<ChatTurn> ReadChatMessages(const std::string& path);

}  // namespace cli
}  // namespace octet
