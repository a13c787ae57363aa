// The vocabulary the tensor names are built from: the layer stacks, the layer
// prefix ("layers.{i}.", "encoder.layers.{i}.", "decoder.layers.{i}.") and the
// family traits the role table's presence rules read. Which tensors a model
// has, their names, shapes and storage: format/tensor_roles.h.
#pragma once

#include <cstddef>
#include <cstdio>

#include "octet_model_generated.h"

namespace octet {

// BERT and the families that keep its layout (DistilBERT, RoBERTa, XLM-R): a LayerNorm
// after the embeddings (embedding_norm) and biases in every linear layer.
inline bool FamilyIsBertLike(fb::Family family) {
  return family == fb::Family::Bert || family == fb::Family::DistilBert ||
         family == fb::Family::Roberta || family == fb::Family::XlmRoberta;
}

// The families whose feed-forward layers have biases (ffn.up.bias, ffn.down.bias).
// The one definition: the converter requires them, the engine reads them.
inline bool FamilyHasFfnBias(fb::Family family) {
  return FamilyIsBertLike(family) || family == fb::Family::Gpt2 || family == fb::Family::Marian;
}

enum class LayerStack { kSingle, kEncoder, kDecoder };

// "layers.3.attn.q.weight", "encoder.layers.0.ffn.up.bias", ... into out[size].
// Returns false when the name does not fit.
inline bool LayerTensorName(char* out, size_t size, LayerStack stack, unsigned layer,
                            const char* suffix) {
  const char* prefix = stack == LayerStack::kEncoder   ? "encoder."
                       : stack == LayerStack::kDecoder ? "decoder."
                                                       : "";
  const int n = std::snprintf(out, size, "%slayers.%u.%s", prefix, layer, suffix);
  return n > 0 && static_cast<size_t>(n) < size;
}

}  // namespace octet
