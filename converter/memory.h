// The converter's heap between the steps of a conversion (glibc; elsewhere
// nothing): what it keeps for reuse and when it gives pages back.
#pragma once

#include <cstdint>

namespace octet {
namespace convert {

// Gives the heap's free pages back to the system: between phases, and within
// the tuner after each layer and each whole-model measurement. glibc keeps
// freed blocks for reuse (below the thresholds KeepFreedMemoryWithinPhases
// sets), and a step that allocates differently from the last one would add to
// them instead (the report's rows after the generation's packed weights, the
// next layer's product inputs after this one's Hessians).
void ReturnFreedMemory();

// Within a phase, freed blocks stay with the heap for the next pass to reuse:
// a streamed session packs each layer anew at every decode step, and handing
// those pages back to the system after each one (glibc's default trim) costs
// a page fault per page on the next. Setting the trim threshold stops glibc's
// dynamic mmap threshold, so that one is set too: blocks up to 64 MiB come
// from the heap and are reused. The heap keeps up to `bytes` free at its top
// (a layer's packed fp32 weights).
void KeepFreedMemoryWithinPhases(uint64_t bytes);

}  // namespace convert
}  // namespace octet
