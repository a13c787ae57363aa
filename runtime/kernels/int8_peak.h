// int8_peak: the machine's int8 multiply-accumulate throughput, for reports
// (`octet bench --profile` gives the GEMM's share of it). Each probe runs
// `iterations` rounds of the instruction the int8 kernels of its ISA are built
// on, on enough independent accumulators to hide its latency, and returns the
// operations done (2 per multiply-add); the caller times it. Not a kernel of
// the forward pass: nothing depends on its result.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace octet {

typedef uint64_t (*Int8PeakFn)(uint64_t iterations);

// vpdpbusd zmm (AVX512-VNNI): 64 multiply-adds per instruction.
uint64_t int8_peak__avx512vnni(uint64_t iterations);
// vpmaddubsw + vpmaddwd + vpaddd ymm (AVX2): 32 multiply-adds per triple.
uint64_t int8_peak__avx2(uint64_t iterations);

// The probe of the ISA the dispatch table's qs8_gemm uses on this machine, or
// null when there is none for it (*name: the instruction, for reports).
Int8PeakFn SelectInt8Peak(const char** name);

}  // namespace octet
