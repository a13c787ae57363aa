// A monotonic clock for benchmarks and timeouts.
#pragma once

#include <cstdint>

namespace octet {

// Nanoseconds from an arbitrary fixed point; never goes backwards.
int64_t MonotonicNanos();

}  // namespace octet
