// Counts heap allocations made by the whole process (every malloc-family call,
// and so every operator new), for `octet bench` (heap_allocs_during_run) and
// the test that proves a run allocates nothing.
//
// Normal builds interpose malloc/calloc/realloc/free/aligned_alloc/
// posix_memalign/memalign in the executable and forward them to glibc's
// __libc_* entry points. Sanitizer builds cannot interpose (the sanitizer owns
// malloc), so there the counter uses the sanitizer's allocation hooks instead.
// Link this object library into an executable, never into liboctet.
#pragma once

#include <cstdint>

namespace octet {

// Allocations (malloc, calloc, realloc, aligned allocations; not free) so far.
uint64_t HeapAllocationCount();

// True when the counter is live (glibc interposition or sanitizer hooks).
bool HeapAllocationCounterActive();

}  // namespace octet
