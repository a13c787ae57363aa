// The converter's pipeline, as octet-convert runs it (docs/design.md §1):
//   config.json + safetensors -> importer (ModelSpec) -> Validate() -> write
// -> reload with the runtime's loader as a final check. Host-only code: every
// failure throws convert::Error with one line naming the problem.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "import/checkpoint.h"
#include "import/spec.h"
#include "quantize/report.h"
#include "quantize/tuner.h"
#include "write/model_writer.h"

namespace octet {
namespace convert {

// kInt8: quantize/quantize.h's matrices in int8 per output channel, the
// rest F32; the runtime runs every matrix product of such a file in int8.
enum class WeightType { kFp32, kInt8 };

// Told as a conversion moves from phase to phase ("calibration", "tuning",
// ...) and through a phase's units (the tuner's layers: done of total; total
// 0 when the phase has no count).
using PhaseProgress = std::function<void(const std::string& phase, size_t done, size_t total)>;

struct ConvertOptions {
  WeightType weights = WeightType::kInt8;
  // int8: token ids or text to calibrate on; empty = a sample the fp32 model
  // generates (decoders) or pseudo-random ids (other structures).
  std::filesystem::path calibration;
  // int8: token ids the tuner measures on; empty = a second generated sample
  // (decoders) or the calibration.
  std::filesystem::path heldout;
  TuneOptions tune;                   // int8: target, --keep-fp32 patterns
  // int8: what the tuner's fp32 products may add to the file: up to this size
  // in bytes (0: no bound), and at most this percentage of the int8 file
  // (0: no bound); both when both are set.
  uint64_t max_size_bytes = 0;
  double max_size_percent = 0;
  ModelWriter::Progress progress;     // optional: called as tensors are written
  PhaseProgress phase_progress;       // optional
};

// One phase of a conversion: its wall time and the peak resident memory of the
// process while it ran (0 where the system does not say).
struct ConvertPhase {
  std::string name;
  double seconds = 0;
  uint64_t peak_bytes = 0;
};

struct ConvertResult {
  std::string model_type;
  size_t num_tensors = 0;
  size_t num_tokenizer_files = 0;
  uint64_t file_bytes = 0;
  std::vector<std::string> warnings;  // for the user; the conversion succeeded
  // int8 only: the quantization report (also stored in the file's provenance).
  std::vector<ModelSpec::TensorError> tensor_errors;
  std::vector<LayerReport> layer_errors;
  std::string calibration;            // what the report ran on
  double block32_gain_db = 0;         // mean weight SQNR gain blocks of 32 would give
  TuneResult tuning;                  // int8: the tuner's steps and choices
  std::vector<ConvertPhase> phases;   // in order
};

// The size of `spec`'s int8 file before any tensor is kept in fp32: one byte
// per int8 weight, four per F32 value (tokenizer files not counted).
uint64_t Int8WeightBytes(const ModelSpec& spec);

// Reads `source_dir`/config.json.
nlohmann::json ReadConfig(const std::filesystem::path& source_dir);

// config.json + checkpoint -> a validated spec (no file written).
ModelSpec ImportDirectory(const nlohmann::json& config, const Checkpoint& checkpoint);

// Converts the Hugging Face checkpoint in `source_dir` into `output`. The file
// appears only when complete and loadable; a failure leaves no file behind.
ConvertResult ConvertCheckpoint(const std::filesystem::path& source_dir,
                                const std::filesystem::path& output,
                                const ConvertOptions& options = ConvertOptions());

// The tokenizer files octet-convert carries, in the order it looks for them.
const std::vector<std::string>& TokenizerFileNames();

}  // namespace convert
}  // namespace octet
