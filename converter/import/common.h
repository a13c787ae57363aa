// Pieces the decoder importers (llama.cc, phi3.cc, gemma.cc) share: the
// config keys they read alike and the tensor layout they map alike.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "import/importer.h"

namespace octet {
namespace convert {

// vocab_size, hidden_size, num_hidden_layers, intermediate_size and
// max_position_embeddings (`default_max_positions` when absent), then RMSNorm
// before each block with rms_norm_eps (`default_eps` when absent).
void ReadRmsDecoderSizes(const ConfigView& config, uint32_t default_max_positions,
                         double default_eps, fb::ArchitectureT& a);

// num_attention_heads and num_key_value_heads (default: as many; must divide it).
void ReadHeadCounts(const ConfigView& config, fb::AttentionT& att);

// hidden_size / num_attention_heads, which must divide it (no head_dim key).
uint32_t HeadDimFromHidden(const ConfigView& config, const fb::ArchitectureT& a);

// dst + to + ".weight" ([out, in]) from src + from + ".weight", and the bias
// ([out]) when `bias`.
void MapLinear(ModelSpec& spec, const std::string& dst, const std::string& src,
               const std::string& to, const std::string& from, uint32_t out, uint32_t in,
               bool bias);

// lm_head ([vocab, hidden]) from lm_head.weight, or, when the config ties it
// to the embedding, a duplicate of prefix + embed_tokens.weight if present.
void MapLmHead(ModelSpec& spec, const std::string& prefix);

// The rotary inv_freq buffers older checkpoints keep under each layer.
std::function<bool(const std::string&)> IgnoreRotaryInvFreq(const std::string& prefix);

}  // namespace convert
}  // namespace octet
