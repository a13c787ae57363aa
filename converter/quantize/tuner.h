// The int8 tuner: makes the int8 file as close to its fp32 twin as
// the calibration can tell, step by step, and stops when a target is met.
//
//   step                  what changes (per layer, kept where it lowers the error)
//   round to nearest      nothing: symmetric per-channel scales (today's file)
//   smoothing             per-input-channel factors folded into the norm or
//                         the layer that writes the input (rounding.h)
//   clipping              per-row weight scales that minimize eᵀ H e
//   compensated rounding  GPTQ rounding with those scales
//   16-bit inputs         mixed precision, by measurement: the matrices whose
//                         8-bit inputs cost the most per unit of their work
//                         quantize their inputs as two int8 digits
//                         (Tensor.input_bits 16; same weights, same bytes,
//                         twice the product's work)
//   fp32 products         the last resort: the matrices whose int8 form costs
//                         the most per extra byte stay F32, within
//                         max_extra_bytes
// The last two (the escalation) have no cap of their own: they take matrices
// in that order, in batches that double while each lowers the loss (halving
// when one does not), until the target is met or nothing is left.
//
// Each step is measured end to end against the fp32 twin (the runtime runs
// both), on evaluation sequences apart from the calibration; a step that does
// not lower the mean KL divergence (decoders) or raise the output SQNR
// (encoders) is undone. The tuner stops once the perplexity ratio meets the
// target. Every decision is in the result, for the report and the file.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "import/checkpoint.h"
#include "format/model.h"
#include "import/spec.h"
#include "quantize/calibrate.h"
#include "quantize/report.h"

namespace octet {
namespace convert {

struct TuneOptions {
  // false: round to nearest, nothing measured (octet-convert --no-tune).
  bool enabled = true;
  // Stop when int8 perplexity / fp32 perplexity on the evaluation sequences is
  // at most this (decoders); encoders run every step.
  double target_ppl_ratio = 1.01;
  // Canonical tensor names (glob: * and ?) kept F32 whatever the steps find.
  std::vector<std::string> keep_fp32;
  // Steps to try (tests turn them off to measure one alone).
  bool smoothing = true;
  bool clipping = true;
  bool compensation = true;
  bool wide_inputs = true;
  bool fp32_fallback = true;
  // The escalation's size budget: fp32 products may add at most this many
  // bytes to the int8 file (16-bit inputs add none). Unbounded by default.
  uint64_t max_extra_bytes = UINT64_MAX;
  size_t max_rows = 4096;  // calibration rows kept per product input
  // With the converter's mapped fp32 twin: the bytes of it its streamed
  // sessions keep packed (SessionLimits::stream_keep_bytes).
  uint64_t twin_keep_bytes = 0;
  // A path the tuner may write a temporary model to (and removes): the fp32
  // block of the last layer, which carries the head (and a tied head's
  // table), is mapped from it, so its session's packed copy of the head
  // replaces the file's pages instead of joining them. Empty: in memory.
  std::string scratch_file;
  // Told as the tuner reaches each layer (what, done, of total) and each
  // measurement of its escalation (total 0); optional.
  std::function<void(const std::string& what, size_t done, size_t total)> progress;
  // Keep every step whatever it measures (to inspect what a step does; tests).
  bool keep_all = false;
};

struct TuneStep {
  std::string name;        // "round to nearest", "smoothing", ...
  std::string detail;      // what it changed ("14 of 21 inputs smoothed", ...)
  OutputMetrics metrics;   // after the step (or of what was tried, when undone)
  bool kept = true;        // false: measured worse and undone
};

// How smoothing changed a matrix: its columns multiplied by `col` (it reads
// the smoothed input), its rows divided by `row` (it writes one); empty: not.
struct MatrixSmoothing {
  std::vector<float> col, row;
};

// Applies `s` to a matrix's values [rows, cols].
void ApplyMatrixSmoothing(const MatrixSmoothing& s, std::vector<float>* values);

struct TuneResult {
  // The int8 form of every linear layer's matrix, and the values of the F32
  // tensors smoothing changed (norms, biases) or the escalation kept in fp32.
  QuantOverrides overrides;
  // The matrices smoothing changed, and how.
  std::map<std::string, MatrixSmoothing> smoothing;
  std::vector<TuneStep> steps;
  std::vector<std::string> fp32_matrices;  // chosen by the last step or by --keep-fp32
  std::vector<std::string> wide_input_matrices;  // int8 with 16-bit inputs (step 4)
  OutputMetrics final_metrics;
  size_t int8_matrices = 0;   // linear-layer and head matrices in int8 at the end
  size_t total_matrices = 0;  // linear-layer and head matrices
  std::string evaluation;     // what the metrics ran on
  bool target_met = false;
  bool skipped = false;       // off (--no-tune): round to nearest, not measured
};

// True when `name` matches the glob `pattern` (* any run, ? one character).
bool GlobMatch(const std::string& pattern, const std::string& name);

// Tunes the int8 quantization of `spec`'s matrices on `calibration`,
// measuring on `evaluation` (sequences of ids) against `fp32_twin` (the
// model's fp32 file, mapped: its sessions stream its weights), or when null
// an fp32 model made in memory. Throws Error when a --keep-fp32 pattern
// matches no matrix.
TuneResult TuneQuantization(const ModelSpec& spec, const Checkpoint& checkpoint,
                            const Calibration& calibration,
                            const std::vector<std::vector<int32_t>>& evaluation,
                            const TuneOptions& options, const Model* fp32_twin = nullptr);

}  // namespace convert
}  // namespace octet
