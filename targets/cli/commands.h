// The octet subcommands. Each takes the arguments after its name, prints its
// results on stdout and returns the exit status; errors are thrown as
// UsageError / Failure (cli/args.h) and reported by main().
#pragma once

#include <string>
#include <vector>

namespace octet {
namespace cli {

int RunCommand(const std::vector<std::string>& args);      // octet run
int BenchCommand(const std::vector<std::string>& args);    // octet bench
int InspectCommand(const std::vector<std::string>& args);  // octet inspect
int ChatTemplateCommand(const std::vector<std::string>& args);  // octet chat-template
int TokenizeCommand(const std::vector<std::string>& args);    // octet tokenize
int DetokenizeCommand(const std::vector<std::string>& args);  // octet detokenize

}  // namespace cli
}  // namespace octet
