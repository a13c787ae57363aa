// Pieces several importers share: the config keys they read alike and the
// tensor layout they map alike. The decoders (llama.cc, phi3.cc, gemma.cc),
// the BERT-layout encoders (bert.cc, distilbert.cc), the encoder-decoders
// (marian.cc, t5.cc) and GPT-2 each use the ones of their kind.
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

// A gated rotary decoder (llama.cc, phi3.cc): ReadRmsDecoderSizes, the
// activation hidden_act (SiLU when absent), a gated feed-forward, rotary
// positions, tie_word_embeddings (default false), then ReadHeadCounts.
void ReadGatedRopeDecoder(const ConfigView& config, uint32_t default_max_positions,
                          double default_eps, fb::ArchitectureT& a);

// hidden_size / num_attention_heads, which must divide it (no head_dim key).
uint32_t HeadDimFromHidden(const ConfigView& config, const fb::ArchitectureT& a);

// head_dim when the config has it; else `fallback` when not 0; else
// HeadDimFromHidden.
uint32_t ReadHeadDim(const ConfigView& config, const fb::ArchitectureT& a, uint32_t fallback = 0);

// Multi-head attention with as many KV heads as heads, hidden_size / heads
// per head and biases on every projection (BERT, DistilBERT, GPT-2, Marian).
// `heads` is the value of config key `heads_key`, which must divide
// hidden_size (config key `hidden_key`).
void SetBiasedMultiHeadAttention(const ConfigView& config, uint32_t heads, const char* heads_key,
                                 const char* hidden_key, fb::ArchitectureT& a);

// dst + to + ".weight" ([out, in]) from src + from + ".weight", and the bias
// ([out]) when `bias`.
void MapLinear(ModelSpec& spec, const std::string& dst, const std::string& src,
               const std::string& to, const std::string& from, uint32_t out, uint32_t in,
               bool bias);

// dst + ".weight" and dst + ".bias" ([size]) from src + ".weight" and
// src + ".bias": a LayerNorm. With `old_names` (the checkpoint), the
// TensorFlow-era src + ".gamma" / ".beta" stand in for them when the
// checkpoint has only those.
void MapLayerNorm(ModelSpec& spec, const std::string& dst, const std::string& src, uint32_t size,
                  const Checkpoint* old_names = nullptr);

// The checkpoint's names of a BERT-layout encoder layer's tensors, after the
// layer's prefix: the linear layers' and the LayerNorms' (without ".weight").
struct BertLayerNames {
  const char* q;
  const char* k;
  const char* v;
  const char* o;
  const char* attn_norm;
  const char* up;
  const char* down;
  const char* ffn_norm;
};

// A post-norm encoder layer (bert.cc, distilbert.cc): dst's attn.{q,k,v,o},
// attn_norm, ffn.up, ffn.down and ffn_norm, each with its bias, from src +
// `names`. `old_names` as for MapLayerNorm.
void MapBertLayer(ModelSpec& spec, const std::string& dst, const std::string& src,
                  const BertLayerNames& names, uint32_t hidden, uint32_t intermediate,
                  const Checkpoint* old_names);

// lm_head ([vocab, hidden]) from lm_head.weight, or, when the config ties it
// to the embedding, a duplicate of the checkpoint tensor `embedding` if present.
void MapLmHeadOrTied(ModelSpec& spec, const std::string& embedding);

// MapLmHeadOrTied with the embedding prefix + embed_tokens.weight (the decoders).
void MapLmHead(ModelSpec& spec, const std::string& prefix);

// The encoder-decoders' one embedding (marian.cc, t5.cc): token_embedding
// ([vocab, hidden]) from the first of prefix + shared.weight,
// encoder.embed_tokens.weight and decoder.embed_tokens.weight the checkpoint
// has (shared.weight when none); the others, where present, must hold the
// same values. Returns the name it reads.
std::string MapSharedEmbedding(ModelSpec& spec, const Checkpoint& checkpoint,
                               const std::string& prefix);

// The rotary inv_freq buffers older checkpoints keep under each layer.
std::function<bool(const std::string&)> IgnoreRotaryInvFreq(const std::string& prefix);

}  // namespace convert
}  // namespace octet
