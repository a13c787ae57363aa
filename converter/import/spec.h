// The converter's model spec: what an importer produces from config.json and
// the checkpoint, checked by Validate() before a byte is written.
//
// An importer (one file per architecture: bert.cc, gpt2.cc, llama.cc, phi3.cc,
// marian.cc, t5.cc) fills the architecture table from config.json and maps
// every canonical tensor (runtime/format/tensor_roles.h) to the checkpoint
// tensor it comes from, with the transform it needs (a transpose for [in, out]
// storage, one part of a fused tensor). Validate() then checks that
//   - the mapped canonical tensors are exactly the ones the architecture
//     requires, with the shapes it implies (RequiredTensors);
//   - every source tensor is in the checkpoint, is F32/F16/BF16 and has the
//     shape the mapping expects;
//   - every checkpoint tensor is used, verified (ExtraCheck) or a known extra
//     the importer ignores on purpose: nothing is dropped silently.
// Emit() then hands the tensors to the writer, each made at write time, one at
// a time (read, widened, transposed as mapped; the checkpoint's pages released
// after each read). With int8 weights, the matrices of
// quantize/quantize.h are quantized here (held in memory as int8, a quarter
// of their F32 size) and each one's error is returned.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "import/checkpoint.h"
#include "octet_model_generated.h"
#include "quantize/quantize.h"
#include "write/model_writer.h"

namespace octet {
namespace convert {

// One canonical tensor and how it is made.
struct TensorMapping {
  std::string name;                    // canonical, e.g. "layers.0.attn.q.weight"
  std::vector<uint32_t> shape;         // canonical: [out, in] for matrices, [n] for vectors
  std::string source;                  // checkpoint tensor; empty when `values` holds the data
  bool transpose = false;              // the source is stored [in, out] (GPT-2's Conv1D)
  uint32_t parts = 1;                  // the source fuses `parts` tensors along the output
  uint32_t part = 0;                   // features, and this is part `part` (GPT-2's c_attn)
  // Rows [first_row, first_row + shape[0]) of a source fused along its rows from parts
  // of different sizes (Phi-3's qkv_proj with GQA); source_shape then gives the whole
  // source. Not with transpose or parts.
  uint32_t first_row = 0;
  std::vector<uint64_t> source_shape;  // expected source shape; empty = implied by the above
  // Only these rows of the source, in this order (shape[0] of them; source_shape gives the
  // whole source): a layer block's vocabulary cut to the ids it is fed
  // (quantize/block_model.h). Not with transpose, parts or first_row.
  std::vector<uint32_t> rows;
  std::vector<float> values;           // a computed tensor (no source), product(shape) floats
  float add = 0.0f;                    // added to every value read from the source: Gemma's
                                       // norms scale by (1 + w), folded into the stored weight

  // The shape the source must have: `source_shape`, or the one implied by
  // shape, transpose and parts.
  std::vector<uint64_t> ExpectedSourceShape() const;
};

// A checkpoint tensor the model does not need but whose contents are checked
// (a duplicate of a tied embedding, a stored sinusoidal table).
struct ExtraCheck {
  std::string source;
  std::function<void(const Checkpoint&, const Tensor&)> check;  // throws Error when wrong
};

// What the quantization tuner (quantize/tuner.h) decided, applied by Emit.
struct QuantOverrides {
  // Canonical tensors whose values change (smoothing folded into norms and
  // matrices): F32, product(shape) floats each; used for fp32 and int8 files.
  std::map<std::string, std::vector<float>> values;
  // int8 matrices quantized already (clipped scales, compensated rounding).
  std::map<std::string, QuantizedMatrix> int8;
  // Matrices an int8 file keeps in F32 (the runtime then runs their products in fp32).
  std::set<std::string> keep_f32;
  // int8 matrices whose products take 16-bit inputs (Tensor.input_bits 16).
  std::set<std::string> wide_input;
};

struct ModelSpec {
  std::string model_type;  // config.json's, used in messages ("llama: missing tensor ...")
  fb::ArchitectureT architecture;
  std::vector<TensorMapping> tensors;
  std::vector<ExtraCheck> extra_checks;
  // Checkpoint tensors the architecture does not use, by design (BERT's pooler,
  // GPT-2's attention-mask buffers).
  std::function<bool(const std::string&)> ignore = [](const std::string&) { return false; };
  std::vector<std::pair<std::string, std::string>> provenance;  // extra key/values
  std::vector<std::string> warnings;  // printed by octet-convert unless --quiet

  // Adds a mapping from `source` (the canonical shape is checked later).
  TensorMapping& Map(const std::string& name, std::vector<uint32_t> shape,
                     const std::string& source);
  // Requires `source` to hold the same values as the checkpoint tensor
  // `same_as` (both converted to float32, compared exactly).
  void RequireDuplicate(const std::string& source, const std::string& same_as,
                        const std::string& why);

  // Throws Error with a one-line message naming the first problem.
  void Validate(const Checkpoint& checkpoint) const;
  // Adds every tensor to `writer`. The spec and the checkpoint must outlive
  // the writer's Write(). Call after Validate().
  // int8: quantize the matrices (quantize/quantize.h); the returned entries
  // are their errors (name, per-channel SQNR dB, per-32-block SQNR dB), in
  // tensor order. fp32: empty.
  struct TensorError {
    std::string name;
    double sqnr_db = 0;
    double sqnr_block32_db = 0;
  };
  // overrides (optional) must outlive the writer's Write() too.
  // hold_int8 false: int8 tensors rounded to nearest are made again as the
  // writer reaches them (their scales now), not held: for the converter's
  // measurement models, whose errors are not reported (none returned).
  std::vector<TensorError> Emit(const Checkpoint& checkpoint, ModelWriter& writer,
                                bool int8 = false, const QuantOverrides* overrides = nullptr,
                                bool hold_int8 = true) const;
  // The canonical tensor's values in F32 (read, widened, transposed as mapped).
  static std::vector<float> ReadValues(const TensorMapping& m, const Checkpoint& checkpoint);
  // The same into out[Numel(m.shape)] (no copy of its own but a transposed
  // source's).
  static void ReadValuesInto(const TensorMapping& m, const Checkpoint& checkpoint, float* out);
  // Rows [row0, row0 + rows) of a 2-D canonical tensor into out[rows, cols]:
  // read alone when the mapping is a block or a gather of rows, else from the
  // whole tensor.
  static void ReadRowsInto(const TensorMapping& m, const Checkpoint& checkpoint, uint64_t row0,
                           uint64_t rows, float* out);
};

// The canonical tensors an architecture needs, with their shapes
// (derived from the role table, runtime/format/tensor_roles.h).
std::vector<std::pair<std::string, std::vector<uint32_t>>> RequiredTensors(
    const fb::ArchitectureT& a);


}  // namespace convert
}  // namespace octet
