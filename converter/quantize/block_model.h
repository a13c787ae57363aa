// One layer of a model as a model of its own, for the tuner's layer-by-layer
// pass (quantize/tuner.h): the runtime runs it on the residual stream the
// layers before it made (Session::SetLayerInput), so every error the tuner
// measures is the runtime's arithmetic, and the converter holds one layer's
// weights at a time.
//
// The block of layer l is the architecture cut to that one layer, its
// per-layer entries (attention.sliding_layers, layer_mixers, layer_norm_eps)
// those of layer l, so it attends, rotates, mixes and norms as layer l does. Its layer tensors are
// layer l's, named as layer 0's. The first block carries the embeddings (its
// input is made from token ids), the last the final norm and the head (and a
// tied head's table); the others get stand-ins (a one-token vocabulary, norms
// of ones, zeros), whose outputs nobody reads: what is read is the stream after
// the layer (Session::SetLayerObserver) and, in the last block, the logits.
// Encoder-decoders: an encoder layer's block is the model with that encoder
// layer and no decoder layers; a decoder layer's, the model with no encoder
// layers (the encoder's output is put before its final norm, which every
// decoder block carries) and that decoder layer. Each stack's first layer
// carries the embeddings; the decoder's last the head.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "format/tensor_names.h"
#include "import/spec.h"

namespace octet {
namespace convert {

struct BlockCut {
  ModelSpec spec;  // the one-layer model: its tensors made from the checkpoint or stand-ins
  // The model's tensor names the block carries -> their names in the block.
  std::map<std::string, std::string> to_block;
  LayerStack stack = LayerStack::kSingle;  // the layer's stack (the block's is the same)
  bool first = false;  // the stack's first layer: the block's input comes from token ids
  bool last = false;   // the model's last layer: the block computes the logits
  // A first block that does not compute logits, cut for the ids it will be fed:
  // its vocabulary is just those ids (block id i is model id vocabulary[i]), so
  // it carries their rows of the token table and a head of as many rows, not
  // two tables of the model's vocabulary. Empty: the model's vocabulary.
  std::vector<int32_t> vocabulary;
};

// The block of layer `layer` of `stack` (kSingle for single-stack models).
// ids: the sequences the block will be fed (its vocabulary is cut to them when
// it can be; feed it BlockIds(cut, *ids)), or null.
BlockCut CutBlock(const ModelSpec& spec, LayerStack stack, uint32_t layer,
                  const std::vector<std::vector<int32_t>>* ids = nullptr);

// `ids` in the block's numbering (unchanged when its vocabulary is the model's).
std::vector<std::vector<int32_t>> BlockIds(const BlockCut& cut,
                                           const std::vector<std::vector<int32_t>>& ids);

}  // namespace convert
}  // namespace octet
