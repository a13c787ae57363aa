// One layer of a model as a model of its own, for the tuner's layer-by-layer
// pass (quantize/tuner.h): the runtime runs it on the residual stream the
// layers before it made (Session::SetLayerInput), so every error the tuner
// measures is the runtime's arithmetic, and the converter holds one layer's
// weights at a time.
//
// The block of layer l is the architecture cut to that one layer, its
// per-layer entries (attention.sliding_layers, layer_mixers) those of layer l,
// so it attends, rotates and mixes as layer l does. Its layer tensors are
// layer l's, named as layer 0's. The first block carries the embeddings (its
// input is made from token ids), the last the final norm and the head (and a
// tied head's table); the others get stand-ins (a one-token vocabulary, norms
// of ones, zeros), whose outputs nobody reads: what is read is the stream after
// the layer (Session::SetLayerObserver) and, in the last block, the logits.
// Single-stack models (decoder-only, encoder-only).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "import/spec.h"

namespace octet {
namespace convert {

struct BlockCut {
  ModelSpec spec;  // the one-layer model: its tensors made from the checkpoint or stand-ins
  // The model's tensor names the block carries -> their names in the block.
  std::map<std::string, std::string> to_block;
  bool first = false, last = false;
};

// The block of layer `layer` of single-stack `spec` (Error for other structures).
BlockCut CutBlock(const ModelSpec& spec, uint32_t layer);

// "layers.{layer}.<suffix>" -> "layers.0.<suffix>"; other names as they are.
std::string BlockTensorName(const std::string& name, uint32_t layer);

}  // namespace convert
}  // namespace octet
