// Small formatting helpers of the reports (inspect, bench): plain text, no
// runtime headers.
#pragma once

#include <cstdint>
#include <string>

namespace octet {
namespace cli {

// "1.5 MiB", "512 B": for people; reports also give the exact byte count.
std::string FormatBytes(uint64_t bytes);

}  // namespace cli
}  // namespace octet
