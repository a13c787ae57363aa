// A small command-line parser for the octet tools, and the two errors every
// command reports through main(): UsageError (exit 2) and Failure (exit 1).
//
// Options are "--name VALUE", "--name=VALUE" or a bare "--name" switch; "--"
// ends the options. "--help" / "-h" anywhere wins over every other error, so
// `octet run --bogus --help` still prints the help.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace octet {
namespace cli {

// The command line is wrong: exit status 2.
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& what) : std::runtime_error(what) {}
};

// The command line is fine but the work failed (bad file, runtime status): exit status 1.
class Failure : public std::runtime_error {
 public:
  explicit Failure(const std::string& what) : std::runtime_error(what) {}
};

struct OptionSpec {
  std::string name;         // "--ids" or "-o"
  bool takes_value = true;  // false: a switch such as "--json"
  bool repeatable = false;  // may be given more than once (e.g. one --ids per sequence)
  std::string alias = {};   // another spelling, e.g. "--output" for "-o"
};

// The three kinds of option, for readable option tables.
inline OptionSpec ValueOption(const std::string& name, const std::string& alias = "") {
  return OptionSpec{name, true, false, alias};
}
inline OptionSpec RepeatedOption(const std::string& name) { return OptionSpec{name, true, true}; }
inline OptionSpec SwitchOption(const std::string& name) { return OptionSpec{name, false, false}; }

struct ParsedArgs {
  bool help = false;
  std::vector<std::string> positionals;
  std::map<std::string, std::vector<std::string>> values;  // by OptionSpec::name, in order
  std::map<std::string, bool> switches;                    // by OptionSpec::name

  bool Has(const std::string& name) const;
  // The value of a non-repeatable option; only call when Has(name).
  const std::string& Value(const std::string& name) const;
  // Every value of an option, in command-line order (empty when absent).
  const std::vector<std::string>& Values(const std::string& name) const;
  bool Switch(const std::string& name) const;
};

// Parses args against `options`. `command` names the command in messages
// ("octet run"). Positionals must number in [min_positionals, max_positionals].
// Throws UsageError unless --help was given.
ParsedArgs ParseArgs(const std::string& command, const std::vector<OptionSpec>& options,
                     const std::vector<std::string>& args, size_t min_positionals,
                     size_t max_positionals, const std::string& positional_name);

// Strict number parsing for flag values; `flag` names the flag in messages.
// Throws UsageError for anything but a plain decimal number inside [min, max].
uint64_t ParseUint(const std::string& flag, const std::string& text, uint64_t min, uint64_t max);
// A finite decimal number inside [min, max].
double ParseDouble(const std::string& flag, const std::string& text, double min, double max);
// A comma-separated list of token ids ("5,17,42"): at least one, each in [0, 2^31 - 1].
std::vector<int32_t> ParseIdList(const std::string& flag, const std::string& text);

}  // namespace cli
}  // namespace octet
