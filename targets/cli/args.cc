#include "cli/args.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace octet {
namespace cli {
namespace {

const OptionSpec* FindOption(const std::vector<OptionSpec>& options, const std::string& name) {
  for (const OptionSpec& spec : options) {
    if (spec.name == name || (!spec.alias.empty() && spec.alias == name)) return &spec;
  }
  return nullptr;
}

bool LooksLikeOption(const std::string& arg) {
  return arg.size() > 2 && arg.compare(0, 2, "--") == 0;
}

bool AllDigits(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Parses a string of digits; false on overflow of uint64_t.
bool DigitsToUint(const std::string& digits, uint64_t* out) {
  uint64_t value = 0;
  for (char c : digits) {
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - d) / 10) return false;
    value = value * 10 + d;
  }
  *out = value;
  return true;
}

std::string Quote(const std::string& text) { return "'" + text + "'"; }

std::string FormatDouble(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", value);
  return buffer;
}

}  // namespace

bool ParsedArgs::Has(const std::string& name) const {
  return values.count(name) != 0 || Switch(name);
}

const std::string& ParsedArgs::Value(const std::string& name) const {
  return values.at(name).back();
}

const std::vector<std::string>& ParsedArgs::Values(const std::string& name) const {
  static const std::vector<std::string> kNone;
  const auto it = values.find(name);
  return it == values.end() ? kNone : it->second;
}

bool ParsedArgs::Switch(const std::string& name) const {
  const auto it = switches.find(name);
  return it != switches.end() && it->second;
}

ParsedArgs ParseArgs(const std::string& command, const std::vector<OptionSpec>& options,
                     const std::vector<std::string>& args, size_t min_positionals,
                     size_t max_positionals, const std::string& positional_name) {
  ParsedArgs out;
  std::string first_error;  // reported only if no --help follows
  auto fail = [&first_error](const std::string& message) {
    if (first_error.empty()) first_error = message;
  };

  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (options_done || arg.size() < 2 || arg[0] != '-') {
      out.positionals.push_back(arg);
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      out.help = true;
      return out;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    const size_t equals = arg.find('=');
    const std::string name = arg.substr(0, equals);
    const OptionSpec* spec = FindOption(options, name);
    if (spec == nullptr) {
      fail("unknown option " + Quote(name) + " for '" + command + "'");
      continue;
    }
    if (!spec->takes_value) {
      if (equals != std::string::npos) {
        fail(spec->name + " takes no value");
      } else if (out.Switch(spec->name) && !spec->repeatable) {
        fail(spec->name + " is given more than once");
      }
      out.switches[spec->name] = true;
      continue;
    }
    std::string value;
    if (equals != std::string::npos) {
      value = arg.substr(equals + 1);
    } else if (i + 1 < args.size() && !LooksLikeOption(args[i + 1])) {
      value = args[++i];
    } else {
      fail("missing value for " + spec->name);
      continue;
    }
    if (!spec->repeatable && out.values.count(spec->name) != 0) {
      fail(spec->name + " is given more than once");
    }
    out.values[spec->name].push_back(value);
  }

  if (first_error.empty()) {
    if (out.positionals.size() < min_positionals) {
      first_error = "missing " + positional_name;
    } else if (out.positionals.size() > max_positionals) {
      first_error = "unexpected argument " + Quote(out.positionals[max_positionals]);
    }
  }
  if (!first_error.empty()) {
    throw UsageError(first_error + " (see '" + command + " --help')");
  }
  return out;
}

uint64_t ParseUint(const std::string& flag, const std::string& text, uint64_t min, uint64_t max) {
  const std::string range =
      "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  if (!text.empty() && text[0] == '-' && AllDigits(text.substr(1))) {
    throw UsageError(flag + " " + text + " is negative; " + range);
  }
  uint64_t value = 0;
  if (!AllDigits(text)) {
    throw UsageError(flag + " " + Quote(text) + " is not a whole number; " + range);
  }
  if (!DigitsToUint(text, &value) || value < min || value > max) {
    throw UsageError(flag + " " + text + " is out of range; " + range);
  }
  return value;
}

double ParseDouble(const std::string& flag, const std::string& text, double min, double max) {
  const std::string range =
      "expected a number from " + FormatDouble(min) + " to " + FormatDouble(max);
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) {
    throw UsageError(flag + " " + Quote(text) + " is not a number; " + range);
  }
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value) || errno == ERANGE) {
    throw UsageError(flag + " " + Quote(text) + " is not a finite number; " + range);
  }
  if (value < min || value > max) {
    throw UsageError(flag + " " + text + " is out of range; " + range);
  }
  return value;
}

std::vector<int32_t> ParseIdList(const std::string& flag, const std::string& text) {
  std::vector<int32_t> ids;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    uint64_t id = 0;
    if (item.empty()) {
      throw UsageError(flag + " " + Quote(text) + ": empty token id at position " +
                       std::to_string(ids.size() + 1) + " (expected e.g. 5,17,42)");
    }
    if (!AllDigits(item) || !DigitsToUint(item, &id) || id > INT32_MAX) {
      throw UsageError(flag + " " + Quote(text) + ": " + Quote(item) +
                       " is not a token id (a whole number from 0 to 2147483647)");
    }
    ids.push_back(static_cast<int32_t>(id));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return ids;
}

}  // namespace cli
}  // namespace octet
