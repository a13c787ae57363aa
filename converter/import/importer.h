// Importers: one per architecture, each in its own file, each turning a
// Hugging Face config.json and checkpoint into a ModelSpec (import/spec.h).
//   bert.cc        bert, roberta, xlm-roberta
//   distilbert.cc  distilbert
//   gpt2.cc        gpt2
//   gemma.cc       gemma, gemma2, gemma3_text
//   llama.cc       llama, qwen2, qwen3, mistral
//   phi3.cc        phi3
//   marian.cc      marian
//   t5.cc          t5
//   modernbert.cc  modernbert
//   lfm2.cc        lfm2
//   qwen3_5.cc     qwen3_5, qwen3_5_text, qwen3_next
//   rwkv.cc        rwkv
// An importer reads only the config values it understands and rejects, with
// one line naming the field and its value, any value that changes the
// computation in a way the architecture table cannot express.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "import/checkpoint.h"
#include "import/json_util.h"
#include "import/spec.h"

namespace octet {
namespace convert {

// Names for the error messages of the helpers below.
extern const char kSupportedActivations[];

// config.json's model_type values octet-convert understands, for messages.
extern const char kSupportedModelTypes[];

// config.json's model_type; fails when it is absent or not supported.
std::string SupportedModelType(const ConfigView& config);

// Dispatches on config.json's model_type; the result is not yet validated.
ModelSpec Import(const ConfigView& config, const Checkpoint& checkpoint);

ModelSpec ImportBert(const ConfigView& config, const Checkpoint& checkpoint);
// model_type "roberta" or "xlm-roberta".
ModelSpec ImportRoberta(const ConfigView& config, const Checkpoint& checkpoint,
                        const std::string& model_type);
ModelSpec ImportDistilBert(const ConfigView& config, const Checkpoint& checkpoint);
ModelSpec ImportGemma(const ConfigView& config, const Checkpoint& checkpoint);
ModelSpec ImportGpt2(const ConfigView& config, const Checkpoint& checkpoint);
ModelSpec ImportLlama(const ConfigView& config, const Checkpoint& checkpoint);
ModelSpec ImportMarian(const ConfigView& config, const Checkpoint& checkpoint);
ModelSpec ImportT5(const ConfigView& config, const Checkpoint& checkpoint);
ModelSpec ImportPhi3(const ConfigView& config, const Checkpoint& checkpoint);
ModelSpec ImportModernBert(const ConfigView& config, const Checkpoint& checkpoint);
ModelSpec ImportLfm2(const ConfigView& config, const Checkpoint& checkpoint);
ModelSpec ImportQwen35(const ConfigView& config, const Checkpoint& checkpoint);
ModelSpec ImportRwkv(const ConfigView& config, const Checkpoint& checkpoint);

// --- Helpers shared by the importers ------------------------------------------

// A Hugging Face activation name (ACT2FN's keys) as ours; false for names
// the architecture table cannot express.
bool ActivationFromName(const std::string& name, fb::Activation* activation);
// The activation config[key] (or `fallback` when absent); other names fail,
// naming `key` and its value.
fb::Activation ActivationFromConfig(const ConfigView& config, const std::string& key,
                                    const std::string& fallback);

// rope_theta and rope_scaling (transformers 4.x), or rope_parameters (5.x): the
// theta, scaling (default, linear, llama3; others fail naming the key) and
// partial_rotary_factor of the llama family's RoPE (llama.cc). Adds the
// scaling table to spec.provenance.
std::unique_ptr<fb::RopeT> ReadRope(const ConfigView& config, uint32_t head_dim, ModelSpec& spec);

// Call once the dimensions are set: checks them against the limits the
// runtime accepts (format/model.h), then sets pad/bos/eos/decoder_start token
// ids from the config. An id outside the vocabulary (common in small test
// configs that keep a large model's ids) is dropped with a warning. A list of
// eos ids keeps the first; provenance keeps them all.
void FinishArchitecture(const ConfigView& config, ModelSpec& spec);

// The first of `prefixes` for which `prefix + probe` is in the checkpoint for
// one of `probes` (e.g. "bert." or "" before "embeddings.word_embeddings.weight"),
// else the first prefix (the missing-tensor message then names that layout).
std::string DetectPrefix(const Checkpoint& checkpoint, const std::vector<std::string>& prefixes,
                         const std::vector<std::string>& probes);

// A new spec for `model_type` with an attention table and common provenance.
ModelSpec NewSpec(const ConfigView& config, const std::string& model_type, fb::Family family,
                  fb::Structure structure);

inline bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The largest difference a stored table of a formula (sinusoidal positions)
// may have from the formula: 1e-6 in F32; a unit in the last place at 1.0 when
// the checkpoint was saved in a 16-bit type (the table then holds rounded values).
double StoredTableTolerance(const std::string& dtype);

// Fails when config.json sets `key` to true (a feature the family's octet
// implementation does not have).
void RejectTrue(const ConfigView& config, const std::string& key, const std::string& why);

}  // namespace convert
}  // namespace octet
