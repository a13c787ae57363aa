// The machine's int8 multiply-add peak, for `octet bench --profile` (the
// GEMM's share of it). A benchmarking tool, not part of liboctet's API: it
// lives with the CLI, in its own library (octet_cli_int8_peak) on the
// runtime's internal kernels and thread pool.
#pragma once

#include <cstdint>
#include <string>

namespace octet {
namespace cli {

struct Int8Peak {
  double gops = 0;             // all threads together; 0 where no probe exists for the CPU
  const char* probe = "none";  // the instruction it times ("vpdpbusd zmm", ...)
};

// Measured now on `threads` threads at once (0: the machine's fast cores; at
// most 256): the best of a few ~5 ms rounds, about 0.1 s in all. False with
// *error when it cannot run.
bool MeasureInt8Peak(uint32_t threads, Int8Peak* peak, std::string* error);

}  // namespace cli
}  // namespace octet
