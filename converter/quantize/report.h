// The per-layer quantization error report (octet-convert --dtype int8): the
// int8 model and its fp32 twin run the same calibration sequences through the
// runtime, and the residual stream after every transformer layer is compared.
// It tells a user where the error comes from and which layer to keep in higher
// precision. Stored in the file's provenance (layer_errors) with each weight
// tensor's SQNR; `octet inspect` prints it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "format/model.h"

namespace octet {
namespace convert {

struct Calibration {
  std::vector<std::vector<int32_t>> sequences;  // token ids, each < vocab
  std::string description;                      // for the provenance
};

// Token ids, one sequence per line, separated by commas or whitespace; or
// plain UTF-8 text (any file whose words are not all integers), encoded with
// the model's tokenizer (`encoder`: quantize/calibration_text.h; null when the
// checkpoint has none) into one stream of ids, without the tokenizer's
// template. Sequences longer than 256 ids (or max_positions, when not 0) are
// split. Throws Error naming the line of a bad id, or why the text cannot be
// encoded.
class TextEncoder;
Calibration ReadCalibration(const std::filesystem::path& path, uint32_t vocab,
                            uint32_t max_positions, const TextEncoder* encoder);

// Models without a tokenizer: 4 sequences of 64 (at most max_positions, when
// not 0) pseudo-random ids, from `seed`. Honest but weak: real text exercises
// the activations as the model will see them.
Calibration DefaultCalibration(uint32_t vocab, uint32_t max_positions, uint32_t seed = 1);

struct LayerReport {
  std::string name;           // "layers.3.output", "decoder.layers.0.output", ..., "output"
  double sqnr_db = 0;         // int8 model vs fp32 model at this point (errors compound)
  double min_cosine = 1;      // worst position
  double act_dynamic_db = 0;  // the fp32 stream quantized per row (the runtime's choice)
  double act_static_db = 0;   // ... with one static scale: the calibration maximum, clipped
                              // by the factor in [0.3, 1] that errs least
};

// Runs both models on the calibration; one entry per layer in execution order,
// then "output" (logits, or the last hidden state of encoders; its static
// activation figure is not measured: NaN). stream: the sessions hold one
// layer's weights at a time (SessionLimits::stream_weights; the same results),
// for models mapped from files larger than memory, the fp32 model's keeping
// keep_bytes of them packed (stream_keep_bytes). The layers' fp32 streams
// ([tokens, hidden] floats per layer) wait for the static figure in rows_file
// (a temporary file, removed on return) when it is named, else in memory.
std::vector<LayerReport> MeasureLayers(const Model& fp32, const Model& int8,
                                       const Calibration& calibration, bool stream = false,
                                       uint64_t keep_bytes = 0,
                                       const std::filesystem::path& rows_file = {});

}  // namespace convert
}  // namespace octet
