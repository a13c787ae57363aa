// The causal depthwise convolution of the token mixers that have one (a short
// convolution, a Gated DeltaNet's conv over q, k, v), over one sequence's rows
// and a range of channels, and the state it keeps between calls: the last
// taps - 1 input rows, oldest first.
//
//   out[s][ch] = act(bias[ch] + sum_k w[ch * taps + k] * in(s - (taps - 1) + k)[ch])
//
// where in(t) for t < 0 (before the call's first row) is the state's row
// taps - 1 + t when the call continues a sequence, else 0 (a sequence's first
// position has no past). Tap taps - 1 multiplies the current row.
#pragma once

#include <cstddef>

#include "kernels/f32_elementwise.h"

namespace octet {

struct CausalConv {
  const float* weight = nullptr;  // [channels, taps]
  const float* bias = nullptr;    // [channels] or null
  size_t taps = 0;
  F32ActivationFn silu = nullptr;  // act: x * sigmoid(x) by this kernel (the table's), else none
};

// out rows may not overlap in rows. state: [taps - 1, lds] or null (continues false).
void CausalConvRows(const CausalConv& conv, const float* in, size_t ldi, float* out, size_t ldo,
                    size_t seq, const float* state, size_t lds, bool continues, size_t c0,
                    size_t c1);

// Moves the state on past a call of rows in[0 .. ] at positions p0.. whose last
// real row is at position `last` (>= p0): the inputs at last - (taps - 2) ..
// last, from the call's rows or (before p0) the old state when the call
// continues a sequence; positions before 0 get zeros.
void AdvanceConvState(const CausalConv& conv, const float* in, size_t ldi, float* state,
                      size_t lds, size_t p0, size_t last, bool continues, size_t c0, size_t c1);

}  // namespace octet
