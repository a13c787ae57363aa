// The canonical tensor names of a .octet file: the one vocabulary the
// converter's importers write and the engine reads. Shapes are [rows, cols]
// with rows = output features (weights are [out, in], the file's GEMM layout).
//
// Model-level tensors                       shape
//   token_embedding                         [vocab, hidden]
//   position_embedding                      [position_offset +          PositionKind Learned
//                                            max_positions, hidden]     (row = offset + position)
//   token_type_embedding                    [type_vocab, hidden]        type_vocab_size > 0
//   embedding_norm.{weight,bias}            [hidden]                    BERT-like
//   (FamilyIsBertLike) final_norm.{weight,bias}                [hidden] decoder-only
//   encoder.final_norm.{weight,bias}        [hidden]                    encoder-decoder (T5)
//   decoder.final_norm.{weight,bias}        [hidden]                    encoder-decoder (T5)
//   encoder.relative_bias                   [buckets, heads]            T5 (shared by all layers)
//   decoder.relative_bias                   [buckets, heads]            T5
//   lm_head                                 [vocab, hidden]             absent when tied
//   final_logits_bias                       [vocab]                     Marian
//
// Per-layer tensors, prefix "layers.{i}." (encoder-only, decoder-only) or
// "encoder.layers.{i}." / "decoder.layers.{i}." (encoder-decoder):
//   attn_norm.{weight,bias}                 [hidden]        before attention (pre-norm) or
//                                                           after its residual add (post-norm)
//   attn.q.{weight,bias}                    [heads * head_dim, hidden]
//   attn.k.{weight,bias}                    [kv_heads * head_dim, hidden]
//   attn.v.{weight,bias}                    [kv_heads * head_dim, hidden]
//   attn.o.{weight,bias}                    [hidden, heads * head_dim]
//   attn.q_norm.weight, attn.k_norm.weight  [head_dim]      Attention.qk_norm (RMSNorm per head)
//   post_attn_norm.weight                   [hidden]        sandwich_norms: attention's output,
//                                                           before the residual add
//   post_ffn_norm.weight                    [hidden]        sandwich_norms: the FFN's output
//   cross_attn_norm.{weight,bias}           [hidden]        encoder-decoder decoder layers
//   cross_attn.{q,k,v,o}.{weight,bias}      as attn.*       (k, v read the encoder output)
//   ffn_norm.{weight,bias}                  [hidden]
//   ffn.gate.weight                         [intermediate, hidden]   gated_ffn only
//   ffn.up.{weight,bias}                    [intermediate, hidden]
//   ffn.down.{weight,bias}                  [hidden, intermediate]
// Biases are present exactly when the architecture says so (Attention.qkv_bias,
// out_bias; LayerNorm has biases, RMSNorm has none; FFN biases: FamilyHasFfnBias).
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
