// The weights of the fp32 forward pass, resolved once at prepare time
// (Session::Create) into plain pointers: every tensor the forward pass reads
// is looked up by its canonical name (format/tensor_names.h) and checked for
// presence, dtype F32 and the exact shape the architecture implies. Run then
// reads these structs and never looks a tensor up or checks it again.
//
// Pointers point into the Model's mapping; a struct is valid while the Model
// lives. Absent optional tensors (biases the architecture does not have, the
// cross-attention of layers that have none, ...) are null.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "format/model.h"
#include "format/tensor_names.h"

namespace octet {

struct NormWeights {
  const float* weight = nullptr;  // [hidden]; null: no norm here
  const float* bias = nullptr;    // [hidden]; LayerNorm only
};

// y[rows, out] = x[rows, in] · weightᵀ (+ bias).
struct LinearWeights {
  const float* weight = nullptr;  // [out, in]
  const float* bias = nullptr;    // [out] or null
  uint32_t out = 0;
  uint32_t in = 0;
};

struct AttentionWeights {
  LinearWeights q;  // [heads * head_dim, hidden]
  LinearWeights k;  // [kv_heads * head_dim, hidden]
  LinearWeights v;  // [kv_heads * head_dim, hidden]
  LinearWeights o;  // [hidden, heads * head_dim]
};

struct LayerWeights {
  NormWeights attn_norm;
  AttentionWeights attn;
  NormWeights cross_attn_norm;  // encoder-decoder decoder layers only
  AttentionWeights cross_attn;  // k, v read the encoder output
  NormWeights ffn_norm;
  LinearWeights gate;  // [intermediate, hidden]; gated_ffn only
  LinearWeights up;    // [intermediate, hidden]
  LinearWeights down;  // [hidden, intermediate]
};

// One stack of layers: the only stack of an encoder-only or decoder-only model,
// or the encoder or decoder of an encoder-decoder.
struct StackWeights {
  const LayerWeights* layers = nullptr;  // [num_layers]
  uint32_t num_layers = 0;
  NormWeights final_norm;                // pre-norm stacks that end with a norm
  const float* relative_bias = nullptr;  // T5: [buckets, heads], shared by the stack's layers
};

struct ModelWeights {
  const float* token_embedding = nullptr;       // [vocab, hidden]
  const float* position_embedding = nullptr;    // [max_positions, hidden] (Learned)
  const float* token_type_embedding = nullptr;  // [type_vocab, hidden]; row 0 is used
  NormWeights embedding_norm;                   // BERT
  StackWeights encoder;                         // encoder-only and encoder-decoder
  StackWeights decoder;                         // decoder-only and encoder-decoder
  const float* head = nullptr;                  // [vocab, hidden]: lm_head or the tied embedding
  const float* final_logits_bias = nullptr;     // [vocab] (Marian)
};

// True when the model has transformer layers stored as F32 (the fp32 forward
// pass runs it); false for layer-free models.
bool HasLayers(const fb::Architecture& a);

// Layer structs ResolveWeights fills: num_layers + num_decoder_layers.
size_t LayerWeightsCount(const fb::Architecture& a);

// Fills *out, with its layers in layers[0, LayerWeightsCount(a)); both may be
// uninitialized memory suitably aligned (the session's arena). kInvalidModel
// names the first tensor that is missing or misshapen; kUnsupported for int8
// transformer layers (issue #4) and what the fp32 pass does not run.
Status ResolveWeights(const Model& model, LayerWeights* layers, ModelWeights* out);

}  // namespace octet
