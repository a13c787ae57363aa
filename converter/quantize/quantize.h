// Weight quantization for --dtype int8 (docs/design.md §4): which tensors become
// int8 and how, with the error each one takes. The arithmetic is the runtime's
// (core/quant.h: symmetric, one scale per output channel = row, round half to
// even), so the file holds exactly what the runtime would compute.
//
// Which tensors: the role table's (format/tensor_roles.h) kLookup and
// kProduct rows, every matrix a product or a lookup reads -- the linear
// layers' weights, the token / position / token-type embeddings and the LM
// head. Its kF32 rows, vectors (norms, biases) and the T5 relative-position
// bias (a table of logit offsets, read as floats), stay F32: together they are
// a fraction of a percent of the bytes.
//
// Granularity: per output channel. Blocks along K (one scale per 32 values)
// raise the weights' SQNR by a few dB (the converter reports the gain per
// model), but a block scale cannot be factored out of the int32 reduction: the
// kernels would need one partial sum per block. The end-to-end error of int8
// models is dominated by the activations' quantization (see the report), so the
// per-channel form is kept; the measured gain is recorded in the provenance.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/tensor_roles.h"

namespace octet {
namespace convert {

// The role table's row of canonical tensor `name`; throws Error (an internal
// one) when the name is none of the table's.
const RoleInfo& RoleOf(const std::string& name);

// True for the canonical tensors --dtype int8 stores as int8: the table's
// kLookup and kProduct rows.
bool QuantizedAsInt8(const std::string& name);

// True for the int8 matrices whose products take 16-bit inputs from the start
// (Tensor.input_bits 16), before any measurement: a short convolution's in_proj
// and out_proj, and a Gated DeltaNet's output product. A short convolution's
// output multiplies three of in_proj's outputs, so their rounding errors add up, and out_proj reads c * conv(b * x), whose rows are
// heavy-tailed (per-row int8 spends its resolution on a few large values).
// Measured on LFM2's two goldens over 5 seeds (round to nearest): lowest cosine
// per position 0.9945 with 16-bit inputs on out_proj alone, 0.9970 on both; on
// the committed seed out_proj is the first matrix the tuner's escalation picks.
// On the trained models/lfm2-tiny the gain is small (held-out perplexity +0.090%
// over fp32 with 8-bit inputs, +0.085% with these): random weights gate harder.
// A Gated DeltaNet's output product reads RMSNorm(o) * silu(z), gated the
// same way: with 16-bit inputs there, its int8 golden cases' lowest cosine per
// position goes from 0.99820 to 0.99845 (hybrid) and 0.99837 to 0.99843
// (BF16), the trained models/qwen3_5-tiny's held-out perplexity from +0.073%
// to +0.055% over fp32, and a random 4-layer W3 (scripts/peers) from 19.0 to
// 22.5 dB SQNR at its output (round to nearest). It is one of the layer's
// five products, a tenth of its work; the decay and beta products (in_a,
// in_b) gained nothing measurable there.
// The escalation may still make them fp32.
bool WideInputByDefault(const std::string& name);

// True for the int8 matrices that only products read (the table's kProduct
// rows: linear layers, the untied LM head): they are stored packed for the
// GEMM kernels. Embedding tables (kLookup) stay row-major: rows are looked up
// (a tied head then runs on the row-major table).
bool PackedForGemm(const std::string& name);

struct QuantizedMatrix {
  std::vector<int8_t> values;  // [rows, cols]
  std::vector<float> scales;   // [rows]
  double sqnr_db = 0;          // 10 log10(sum w^2 / sum (w - q s)^2); +inf when exact
  double sqnr_block32_db = 0;  // the same with one scale per 32 values of a row (not stored)
};

// Quantizes w [rows, cols] per row (core/quant.h QuantizeRowSymmetric), on
// the converter's threads. block32 false: sqnr_block32_db is not measured (it
// repeats sqnr_db; the tuner's trials need only the rounding).
QuantizedMatrix QuantizeRows(const float* w, uint64_t rows, uint64_t cols, bool block32 = true);

// 10 log10(signal / noise) in dB, +inf for zero noise, 0 for a zero signal.
double SqnrDb(double signal, double noise);

}  // namespace convert
}  // namespace octet
