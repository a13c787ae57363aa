// The weights of the forward pass, resolved once at prepare time
// (Session::Create) into plain pointers: every tensor the forward pass reads
// is looked up by its role (format/tensor_roles.h) and checked for presence,
// dtype and the exact shape the architecture implies. Run then
// reads these structs and never looks a tensor up or checks it again.
//
// Matrices (linear weights, embeddings, the LM head) are F32 or int8 with one
// symmetric scale per row (core/quant.h); vectors (norms, biases, the T5 bias)
// are F32.
//
// Pointers point into the Model's mapping; a struct is valid while the Model
// lives (the fc pointers: while the session that prepared them). Absent optional tensors (biases the architecture does not have, the
// cross-attention of layers that have none, ...) are null.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/alloc.h"
#include "core/status.h"
#include "format/model.h"
#include "format/tensor_roles.h"
#include "ops/f32_fully_connected.h"

namespace octet {

struct NormWeights {
  const float* weight = nullptr;  // [hidden]; null: no norm here
  const float* bias = nullptr;    // [hidden]; LayerNorm only
  float eps = 1e-5f;              // its epsilon: the layer's (Architecture.layer_norm_eps),
                                  // the final norm's (final_norm_eps) or norm_eps
};

// A matrix [rows, cols], either F32 or int8 with per-row scales:
// real[r, c] = q8[r, c] * scales[r].
struct Matrix {
  const float* f32 = nullptr;     // [rows, cols], or null
  const int8_t* q8 = nullptr;     // [rows, cols], or null
  const int8_t* packed = nullptr; // int8 in the GEMM's packed tiles (kernels/qs8_packed_gemm.h),
                                  // or null; matrices that products read, never lookups
  const float* scales = nullptr;  // [rows] with q8 or packed
  bool two_digit_input = false;   // int8 with 16-bit inputs (Tensor.input_bits 16): products
                                  // quantize their input as two int8 digits (forward.cc)
  bool present() const { return f32 != nullptr || q8 != nullptr || packed != nullptr; }
};

// y[rows, out] = x[rows, in] · weightᵀ (+ bias).
struct LinearWeights {
  Matrix weight;                  // [out, in]
  const float* bias = nullptr;    // [out] or null
  uint32_t out = 0;
  uint32_t in = 0;
  // The row strides of its calls' inputs and outputs, 0 for in and out
  // (contiguous); a token mixer whose products read or write columns of wider
  // rows sets them when the layer is bound (TokenMixer::product_strides), and
  // its F32 operators are made for them.
  uint32_t in_stride = 0;
  uint32_t out_stride = 0;
  // F32 weight: the session's XNNPACK operators for weight and bias
  // (PrepareF32Products), or null (f32_gemm__ref runs the product).
  const F32FullyConnected* fc = nullptr;
};

struct AttentionWeights {
  LinearWeights q;  // [heads * head_dim, hidden]
  LinearWeights k;  // [kv_heads * head_dim, hidden]
  LinearWeights v;  // [kv_heads * head_dim, hidden]
  LinearWeights o;  // [hidden, heads * head_dim]
  const float* q_norm = nullptr;  // [head_dim]: Attention.qk_norm (self-attention only)
  const float* k_norm = nullptr;  // [head_dim]
  LinearWeights gate;             // [heads * head_dim, hidden]: Attention.output_gate
};

// The tensors of a token mixer other than attention, or of a channel mixer
// other than the feed-forward (a role group with RoleSlots kTokenMixer or
// kChannelMixer, format/tensor_roles.h), each at its place in its group
// (RoleIndexInGroup): matrices that products read in linear[], F32 tensors in
// f32[]. Null / absent where the group has no such row.
constexpr size_t kMaxMixerTensors = 16;
struct MixerTensors {
  LinearWeights linear[kMaxMixerTensors];
  const float* f32[kMaxMixerTensors] = {};
};

struct LayerWeights {
  NormWeights attn_norm;
  AttentionWeights attn;   // the attention mixer's (absent in layers of other mixers)
  MixerTensors mixer;      // other token mixers' (engine/mixer.h)
  NormWeights post_attn_norm;   // sandwich_norms: the attention's output, before its residual
  NormWeights cross_attn_norm;  // encoder-decoder decoder layers only
  AttentionWeights cross_attn;  // k, v read the encoder output
  NormWeights ffn_norm;
  NormWeights post_ffn_norm;    // sandwich_norms: the feed-forward's output, before its residual
  LinearWeights gate;  // [intermediate, hidden]; gated_ffn only
  LinearWeights up;    // [intermediate, hidden]
  LinearWeights down;  // [hidden, intermediate]
  MixerTensors channel;  // other channel mixers' (Architecture.channel_mixer, engine/mixer.h)
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
  Matrix token_embedding;       // [vocab, hidden]
  Matrix position_embedding;    // [position_offset + max_positions, hidden] (Learned)
  Matrix token_type_embedding;  // [type_vocab, hidden]; row 0 is used
  NormWeights embedding_norm;                   // BERT-like families
  StackWeights encoder;                         // encoder-only and encoder-decoder
  StackWeights decoder;                         // decoder-only and encoder-decoder
  Matrix head;                                  // [vocab, hidden]: lm_head or the tied embedding
  const float* final_logits_bias = nullptr;     // [vocab] (Marian)
  const F32FullyConnected* head_fc = nullptr;   // F32 head: as LinearWeights::fc (no bias)
};

// True when the model has transformer layers; false for layer-free models
// (embedding -> norm (-> LM head)), which the forward pass runs too.
bool HasLayers(const fb::Architecture& a);

// Layer structs ResolveWeights fills: num_layers + num_decoder_layers.
size_t LayerWeightsCount(const fb::Architecture& a);

// Fills *out, with its layers in layers[0, LayerWeightsCount(a)); both may be
// uninitialized memory suitably aligned (the session's arena). kInvalidModel
// names the first tensor that is missing or misshapen; kUnsupported for what
// the forward pass does not run (other quantization schemes, zero points).
// True when the model's attention runs in int8 with an int8 KV cache: its
// transformer layers have an int8 matrix (a file may keep some in F32; each
// matrix is read in its own dtype either way).
bool UsesInt8Attention(const Model& model);

Status ResolveWeights(const Model& model, LayerWeights* layers, ModelWeights* out);

// Prepare, after ResolveWeights (the same layers and weights): creates in *set
// the XNNPACK operators (ops/f32_fully_connected.h) of every F32 matrix product,
// the layers' linear weights with their biases and the LM head, for `threads`
// threads, and points LinearWeights::fc and ModelWeights::head_fc at them. Does
// nothing (the products stay on f32_gemm__ref) when the op is unavailable or
// the model has no F32 product. *set must outlive every use of the weights.
// Memory: once XNNPACK has packed a matrix, its pages of the file mapping are
// released (Model::ReleasePages), so the packed copies replace the weights in
// the resident set instead of doubling them; whatever reads a matrix later (the
// reference path, the embedding lookup of a tied head) faults its pages in again.
Status PrepareF32Products(const Model& model, size_t threads, LayerWeights* layers,
                          ModelWeights* weights, F32FullyConnectedSet* set);

// SessionLimits::stream_weights: a pass holds about one layer's weights at a
// time, for models larger than memory (the converter's fp32 twin of a
// billion-parameter checkpoint). Instead of PrepareF32Products at creation:
//   - BeginLayer, as a pass reaches a layer: its F32 matrices get their XNNPACK
//     operators (packed copies; each matrix's file pages released once packed);
//   - EndLayer, once the layer has run: the operators are deleted and every
//     page of the file mapping that holds the layer's tensors is released
//     (Model::ReleasePages), F32 or int8;
//   - BeginHead / EndHead: the same for the LM head, and EndHead releases the
//     token embedding's pages too (a kept head's pass included: the rows the
//     lookups faulted in, and their neighbours, go).
// The operators are the ones PrepareF32Products makes (same pieces for the same
// threads), so results are bit-identical with an unstreamed session. Packing
// allocates: a streamed session's runs allocate and read the weights from the
// file (or the page cache) on every pass. When packing fails (out of memory),
// that layer's products run on f32_gemm__ref.
class WeightStream {
 public:
  OCTET_ALLOCATED_THROUGH_ALLOCATE  // the session's, made with new (std::nothrow)
  // keep_bytes (SessionLimits::stream_keep_bytes): the head, then the first
  // layers, whose file bytes fit this budget are packed once and kept, their
  // pages never released, as an unstreamed session would; the rest stream.
  explicit WeightStream(uint64_t keep_bytes) : keep_bytes_(keep_bytes) {}
  ~WeightStream();
  WeightStream(const WeightStream&) = delete;
  WeightStream& operator=(const WeightStream&) = delete;

  // After ResolveWeights, with the same layers and weights (the session's).
  Status Init(const Model& model, size_t threads, LayerWeights* layers, ModelWeights* weights);
  void BeginLayer(const LayerWeights& layer);
  void EndLayer(const LayerWeights& layer);
  void BeginHead();
  void EndHead();

 private:
  struct Range {
    const uint8_t* begin = nullptr;
    const uint8_t* end = nullptr;
    void Cover(const TensorView& t);
  };
  struct State {
    OCTET_ALLOCATED_THROUGH_ALLOCATE  // layers_state_, new (std::nothrow) State[count_]
    Range range;                              // the file bytes of its tensors
    bool keep = false;                        // within keep_bytes
    F32FullyConnectedSet* kept = nullptr;     // keep: its operators, once packed
  };
  void Release(const Range& r) const;
  F32FullyConnectedSet* PackLayer(LayerWeights& w) const;
  F32FullyConnectedSet* PackHead() const;
  static void ClearLayer(LayerWeights& w);
  void Drop();  // deletes the streamed operators and clears the pointers into them

  uint64_t keep_bytes_ = 0;
  const Model* model_ = nullptr;
  size_t threads_ = 1;
  LayerWeights* layers_ = nullptr;  // [count_]
  size_t count_ = 0;
  ModelWeights* weights_ = nullptr;
  State* layers_state_ = nullptr;   // [count_]
  State head_state_;                // lm_head, or the tied token embedding
  Range embedding_range_;
  LayerWeights* current_ = nullptr;  // the streamed layer whose operators exist, or null
  bool head_packed_ = false;         // the head's streamed operators exist
  F32FullyConnectedSet* set_ = nullptr;  // the streamed operators
};

}  // namespace octet
