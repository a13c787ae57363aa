// The tensor roles of a .octet file: the one table of which tensors a model
// has, what they are called, their shapes, when the architecture has them,
// how they may be stored and which product input they multiply. The converter
// derives the tensors it writes from it (converter/import/spec.cc), the loader
// its checks of the embedding tables and the head (format/loader.cc), the
// engine its weight binding (engine/weights.cc). A new role is one row here
// (plus, in the engine, the slot it lands in).
//
// Rows come in groups. Model-level groups name one tensor per row; layer-level
// groups name a tensor of every layer their group applies to, "layers.{i}." +
// the row's suffix (encoder-only and decoder-only models) or
// "encoder.layers.{i}." / "decoder.layers.{i}." (encoder-decoders). A layer's
// groups are its frame (the norms around its sub-blocks, whatever mixes inside
// them), its token mixer (self-attention; linear attention, short
// convolutions, RWKV's time mixing, ... each a group of its own), the
// cross-attention of encoder-decoder decoder layers, and its channel mixer (the
// feed-forward, or RWKV's channel mixing).
//
// Shapes are [rows, cols] with rows = output features (matrices are [out, in],
// the file's GEMM layout), or [n] for vectors.
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/tensor_names.h"
#include "octet_model_generated.h"

namespace octet {

// The input of a layer's matrix products, as they read it (before an int8
// product quantizes it): what the converter calibrates its quantization on.
enum class ProductInput : uint8_t {
  kAttention,        // the token mixer's (normed) input [rows, hidden]: Q, K, V projections,
                     // a short convolution's in_proj
  kAttentionOutput,  // O projection: the attention's output [rows, heads * head_dim]
  kCrossQuery,       // cross-attention Q projection [rows, hidden]
  kCrossOutput,      // cross-attention O projection [rows, heads * head_dim]
  kCrossKv,          // cross-attention K, V projections: the encoder output [rows, hidden]
  kFfn,              // up (and gate) [rows, hidden]
  kFfnHidden,        // down: the activation's output [rows, intermediate]
  kHead,             // the LM head (layer 0 of its stack) [rows, hidden]
  kConvOutput,       // a short convolution's out_proj: its gated output [rows, hidden]
  kLinearOutput,     // a Gated DeltaNet's out projection: its gated, normed output
                     // [rows, value_heads * value_dim]
  // RWKV's mixers read rows mixed with the previous position's (token shift), a
  // different mix per product, so each product has an input of its own [rows, hidden]:
  kRwkvKey,          // time mix key: in * mix_k + shifted * (1 - mix_k)
  kRwkvValue,        // time mix value: with mix_v
  kRwkvReceptance,   // time mix receptance: with mix_r
  kRwkvOutput,       // time mix output: r * wkv
  kRwkvChannelKey,   // channel mix key: with its mix_k
  kRwkvChannelReceptance,  // channel mix receptance: with its mix_r
  kRwkvChannelValue, // channel mix value: relu(key(...))^2 [rows, intermediate]
};

enum class RoleGroup : uint8_t {
  kEmbeddings,      // model: token, position and token-type tables, the embedding norm
  kStacks,          // model: per-stack tables (T5's relative bias) and the stacks' final norms
  kHead,            // model: the LM head and its bias
  kLayerFrame,      // layer: the norms before and after the token and channel mixers
  kAttention,       // layer, token mixer: self-attention
  kTokenShift,      // layer, token mixer: the previous position's row, scaled (tests)
  kShortConv,       // layer, token mixer: a gated short convolution (LFM2)
  kGatedDeltaNet,   // layer, token mixer: linear attention, the gated delta rule (Qwen3.5)
  kRwkvTimeMix,     // layer, token mixer: RWKV-4's time mixing
  kCrossAttention,  // layer: cross-attention (decoder layers of encoder-decoders)
  kFeedForward,     // layer, channel mixer: the (gated) feed-forward
  kRwkvChannelMix,  // layer, channel mixer: RWKV-4's channel mixing
  kCount,
};

// The rows, grouped (a group's rows are consecutive), in the order a file lists them.
enum class Role : uint8_t {
  // kEmbeddings
  kTokenEmbedding,      // token_embedding                   [vocab, hidden]
  kPositionEmbedding,   // position_embedding                [position_offset + max_positions,
                        //                                    hidden]; row = offset + position
  kTokenTypeEmbedding,  // token_type_embedding              [type_vocab, hidden]
  kEmbeddingNorm,       // embedding_norm.weight             [hidden]
  kEmbeddingNormBias,   // embedding_norm.bias               [hidden]
  // kStacks
  kEncoderRelativeBias,  // encoder.relative_bias            [buckets, heads]
  kDecoderRelativeBias,  // decoder.relative_bias            [buckets, heads]
  kFinalNorm,            // final_norm.weight (decoder-only) [hidden]
  kFinalNormBias,        // final_norm.bias
  kEncoderFinalNorm,     // encoder.final_norm.weight
  kEncoderFinalNormBias,
  kDecoderFinalNorm,     // decoder.final_norm.weight
  kDecoderFinalNormBias,
  // kHead
  kLmHead,           // lm_head                              [vocab, hidden]
  kFinalLogitsBias,  // final_logits_bias                    [vocab]
  // kLayerFrame
  kAttnNorm,  // attn_norm.weight: before the token mixer (pre-norm) or after its residual add
  kAttnNormBias,
  kPostAttnNorm,  // post_attn_norm.weight: sandwich norms, the mixer's output before the add
  kPostAttnNormBias,
  kFfnNorm,  // ffn_norm.weight
  kFfnNormBias,
  kPostFfnNorm,  // post_ffn_norm.weight: sandwich norms, the feed-forward's output
  kPostFfnNormBias,
  // kAttention
  kAttnQ,      // attn.q.weight  [heads * head_dim, hidden]
  kAttnQBias,  // attn.q.bias    [heads * head_dim]
  kAttnK,      // attn.k.weight  [kv_heads * head_dim, hidden]
  kAttnKBias,
  kAttnV,      // attn.v.weight  [kv_heads * head_dim, hidden]
  kAttnVBias,
  kAttnO,      // attn.o.weight  [hidden, heads * head_dim]
  kAttnOBias,
  kAttnQNorm,  // attn.q_norm.weight [head_dim]: RMSNorm per head (Attention.qk_norm)
  kAttnKNorm,  // attn.k_norm.weight
  kAttnGate,   // attn.gate.weight [heads * head_dim, hidden]: Attention.output_gate
  // kTokenShift
  kShift,  // shift.weight [hidden]: out[t] = shift * in[t - 1] (engine/mixer_token_shift.cc)
  // kShortConv (engine/mixer_short_conv.cc)
  kConvIn,        // conv.in_proj.weight  [3 * hidden, hidden]: b, c, x
  kConvInBias,    // conv.in_proj.bias    [3 * hidden]
  kConvKernel,    // conv.conv.weight     [hidden, kernel]: tap kernel - 1 is the current row
  kConvBias,      // conv.conv.bias       [hidden]
  kConvOut,       // conv.out_proj.weight [hidden, hidden]
  kConvOutBias,   // conv.out_proj.bias   [hidden]
  // kGatedDeltaNet (engine/mixer_gated_deltanet.cc)
  kLinQkv,     // lin.in_qkv.weight [2 * key_heads * key_dim + value_heads * value_dim, hidden]:
               // q, k, v before the convolution
  kLinZ,       // lin.in_z.weight   [value_heads * value_dim, hidden]: the output gate
  kLinB,       // lin.in_b.weight   [value_heads, hidden]: beta = sigmoid(b)
  kLinA,       // lin.in_a.weight   [value_heads, hidden]: g = -exp(a_log) softplus(a + dt_bias)
  kLinConv,    // lin.conv.weight   [conv channels, conv_kernel]: tap kernel - 1 is the current row
  kLinALog,    // lin.a_log         [value_heads]
  kLinDtBias,  // lin.dt_bias       [value_heads]
  kLinNorm,    // lin.norm.weight   [value_dim]: RMSNorm of each head's output (weight as stored)
  kLinOut,     // lin.out.weight    [hidden, value_heads * value_dim]
  // kRwkvTimeMix (engine/mixer_rwkv.cc)
  kTimeMixK,        // time_mix.mix_k             [hidden]: key's share of the current row
  kTimeMixV,        // time_mix.mix_v             [hidden]
  kTimeMixR,        // time_mix.mix_r             [hidden]
  kTimeDecay,       // time_mix.decay             [hidden]: w = -exp(decay) per step
  kTimeFirst,       // time_mix.first             [hidden]: the current token's bonus u
  kTimeKey,         // time_mix.key.weight        [hidden, hidden]
  kTimeValue,       // time_mix.value.weight      [hidden, hidden]
  kTimeReceptance,  // time_mix.receptance.weight [hidden, hidden]
  kTimeOutput,      // time_mix.output.weight     [hidden, hidden]
  // kCrossAttention (K and V read the encoder output)
  kCrossAttnNorm,  // cross_attn_norm.weight
  kCrossAttnNormBias,
  kCrossQ,  // cross_attn.q.weight, as attn.*
  kCrossQBias,
  kCrossK,
  kCrossKBias,
  kCrossV,
  kCrossVBias,
  kCrossO,
  kCrossOBias,
  // kFeedForward
  kFfnGate,      // ffn.gate.weight [intermediate, hidden]: gated_ffn
  kFfnUp,        // ffn.up.weight   [intermediate, hidden]
  kFfnUpBias,    // ffn.up.bias     [intermediate]
  kFfnDown,      // ffn.down.weight [hidden, intermediate]
  kFfnDownBias,  // ffn.down.bias   [hidden]
  // kRwkvChannelMix (engine/mixer_rwkv.cc)
  kChannelMixK,           // channel_mix.mix_k              [hidden]
  kChannelMixR,           // channel_mix.mix_r              [hidden]
  kChannelKey,            // channel_mix.key.weight         [intermediate, hidden]
  kChannelReceptance,     // channel_mix.receptance.weight  [hidden, hidden]
  kChannelValue,          // channel_mix.value.weight       [hidden, intermediate]
  kCount,
};
constexpr size_t kRoleCount = static_cast<size_t>(Role::kCount);

// Whether a file of a given architecture has a role's tensor.
enum class Presence : uint8_t {
  kAbsent,    // not part of the architecture: never written, never read
  kOptional,  // the file may have it (the converter does not write it); when it does, it has
              // the role's shape, and the engine applies it where it has a use for it
  kRequired,  // every file of the architecture has it
};

// How a role's tensor may be stored.
enum class RoleStorage : uint8_t {
  kF32,      // F32 only: vectors (norms, biases) and T5's relative bias (logit offsets)
  kLookup,   // a matrix whose rows are looked up: F32, or int8 per row (row-major)
  kProduct,  // a matrix that products read: F32, or int8 per row (packed for the GEMM)
};

// The dimensions a shape is made of.
enum class Dim : uint8_t {
  kNone,          // a vector has no second dimension
  kHidden,        // hidden_size
  kIntermediate,  // intermediate_size
  kVocab,         // vocab_size
  kPositions,     // position_offset + max_positions
  kTypeVocab,     // type_vocab_size
  kQRows,         // num_heads * head_dim
  kKvRows,        // num_kv_heads * head_dim
  kHeadDim,       // head_dim
  kBuckets,       // attention.relative_buckets
  kHeads,         // num_heads
  kHidden3,       // 3 x hidden_size
  kConvTaps,      // short_conv.kernel
  kLinChannels,   // linear_attention: 2 * key_heads * key_dim + value_heads * value_dim
  kLinValues,     // linear_attention: value_heads * value_dim
  kLinValueHeads, // linear_attention.value_heads
  kLinValueDim,   // linear_attention.value_dim
  kLinTaps,       // linear_attention.conv_kernel
};

// What the table reads of an architecture, from the file (fb::Architecture)
// or the converter's spec (fb::ArchitectureT).
struct RoleArch {
  fb::Family family = fb::Family::Unknown;
  fb::Structure structure = fb::Structure::EncoderOnly;
  fb::NormKind norm = fb::NormKind::LayerNorm;
  fb::NormPlacement placement = fb::NormPlacement::Pre;
  fb::PositionKind position = fb::PositionKind::None;
  uint32_t vocab = 0, hidden = 0, intermediate = 0, num_layers = 0, num_decoder_layers = 0;
  uint32_t type_vocab = 0, max_positions = 0, position_offset = 0;
  uint32_t heads = 0, kv_heads = 0, head_dim = 0, relative_buckets = 0;
  bool gated_ffn = false, tied_embeddings = false, sandwich_norms = false;
  bool qkv_bias = false, out_bias = false, qk_norm = false;
  bool first_attn_norm = true;  // Architecture.first_attn_norm: layer 0 has attn_norm
  uint32_t conv_kernel = 0;     // Architecture.short_conv: its taps (0: no table)
  bool conv_bias = false;       // and its biases
  bool output_gate = false;     // Attention.output_gate
  // Architecture.linear_attention (0: no table)
  uint32_t lin_key_heads = 0, lin_value_heads = 0, lin_key_dim = 0, lin_value_dim = 0;
  uint32_t lin_taps = 0;
  fb::ChannelMixer channel_mixer = fb::ChannelMixer::FeedForward;  // Architecture.channel_mixer
  // Architecture.layer_mixers: the token mixer of each layer (the encoder's or
  // the only stack's first, then the decoder's), or null: attention everywhere.
  // Points into the architecture it was made from.
  const fb::TokenMixer* layer_mixers = nullptr;
  uint32_t num_layer_mixers = 0;
};
RoleArch RoleArchOf(const fb::Architecture& a);
RoleArch RoleArchOf(const fb::ArchitectureT& a);

// The token mixer of layer `layer` of `stack` (Architecture.layer_mixers;
// Attention when the file lists none).
fb::TokenMixer LayerMixer(const RoleArch& a, LayerStack stack, uint32_t layer);

enum class RoleScope : uint8_t { kModel, kLayer };

// Where the engine binds a layer group's tensors (engine/weights.h).
enum class RoleSlots : uint8_t {
  kNamed,         // each row to a field of its own (LayerWeights::attn, ffn_norm, up, ...)
  kTokenMixer,    // a token mixer other than attention: by the row's place in its group
                  // (RoleIndexInGroup) in LayerWeights::mixer, so a new mixer's rows need no
                  // field of their own
  kChannelMixer,  // a channel mixer other than the feed-forward: the same, in
                  // LayerWeights::channel
};

struct RoleInfo {
  Role role;
  RoleGroup group;
  const char* name;  // kModel: the tensor's name; kLayer: the suffix after the layer prefix
  Dim rows, cols;    // cols kNone: a vector [rows]
  // Given that the group applies (RoleGroupInfo::applies). A row that goes
  // with another (`with` != role: a bias with its weight, a norm's bias with
  // the norm) is only read beside it: without that tensor it is not read,
  // with it, it is as `presence` says.
  Presence (*presence)(const RoleArch& a);
  Role with;
  RoleStorage storage;
  ProductInput input;  // kProduct rows: the input the matrix multiplies; else unused
};

struct RoleGroupInfo {
  RoleGroup group;
  const char* name;
  RoleScope scope;
  // kLayer groups: whether layer `layer` of `stack` has the group (the token
  // mixer of a hybrid model may change from layer to layer). kModel: stack
  // kSingle, layer 0.
  bool (*applies)(const RoleArch& a, LayerStack stack, uint32_t layer);
  // Where the engine binds the group's tensors.
  RoleSlots slots;
};

// Rows [begin, end) of a group, for range-for.
struct RoleRange {
  const RoleInfo* first;
  const RoleInfo* last;
  const RoleInfo* begin() const { return first; }
  const RoleInfo* end() const { return last; }
};

const RoleInfo& GetRole(Role role);
const RoleGroupInfo& GetRoleGroup(RoleGroup group);
RoleRange RolesOf(RoleGroup group);
// A role's place among the rows of its group (0 for the first).
size_t RoleIndexInGroup(Role role);

// The role's presence in layer `layer` of `stack` (kModel rows: kSingle, 0):
// kAbsent when its group does not apply or it goes with an absent row, else
// the row's presence.
Presence RolePresence(const RoleInfo& role, const RoleArch& a, LayerStack stack, uint32_t layer);

struct RoleShape {
  int rank = 0;
  uint32_t dims[2] = {0, 0};
};
uint32_t DimValue(Dim dim, const RoleArch& a);
RoleShape ShapeOf(const RoleInfo& role, const RoleArch& a);

// The file name of a role's tensor ("token_embedding", "decoder.layers.3.attn.q.bias")
// into out[size]. False when it does not fit.
bool RoleTensorName(char* out, size_t size, const RoleInfo& role, LayerStack stack,
                    uint32_t layer);

// A tensor name split at its layer prefix: "layers." (kSingle), "encoder.layers."
// or "decoder.layers.", then decimal digits. False when the name has no layer
// prefix. *layer saturates above 2^32; *suffix points after the digits and
// their '.'.
bool ParseLayerName(const char* name, LayerStack* stack, uint64_t* layer, const char** suffix);

// A tensor name's role: false when the name is none of the table's.
struct RoleTensor {
  Role role = Role::kTokenEmbedding;
  LayerStack stack = LayerStack::kSingle;
  uint32_t layer = 0;
};
bool FindRole(const char* name, RoleTensor* out);

// The stacks of layers an architecture has, with their layer counts: one
// (kSingle) for encoder-only and decoder-only models, kEncoder and kDecoder
// for encoder-decoders. Returns the count.
struct LayerStackCount {
  LayerStack stack;
  uint32_t layers;
};
int LayerStacksOf(const RoleArch& a, LayerStackCount out[2]);

// Calls fn(role, stack, layer) for every tensor a complete file of the
// architecture has (the Required rows, a `with` row only beside a Required
// one), in file order: the embeddings, each stack's layers, the stacks' tables
// and norms, the head.
template <typename Fn>
void ForEachRequiredTensor(const RoleArch& a, Fn&& fn) {
  auto required = [&a](const RoleInfo& r, LayerStack stack, uint32_t layer) {
    return RolePresence(r, a, stack, layer) == Presence::kRequired &&
           (r.with == r.role ||
            RolePresence(GetRole(r.with), a, stack, layer) == Presence::kRequired);
  };
  auto model_group = [&](RoleGroup g) {
    for (const RoleInfo& r : RolesOf(g)) {
      if (required(r, LayerStack::kSingle, 0)) fn(r, LayerStack::kSingle, uint32_t{0});
    }
  };
  model_group(RoleGroup::kEmbeddings);
  LayerStackCount stacks[2];
  const int n = LayerStacksOf(a, stacks);
  for (int s = 0; s < n; ++s) {
    for (uint32_t layer = 0; layer < stacks[s].layers; ++layer) {
      for (size_t g = 0; g < static_cast<size_t>(RoleGroup::kCount); ++g) {
        const RoleGroup group = static_cast<RoleGroup>(g);
        if (GetRoleGroup(group).scope != RoleScope::kLayer) continue;
        for (const RoleInfo& r : RolesOf(group)) {
          if (required(r, stacks[s].stack, layer)) fn(r, stacks[s].stack, layer);
        }
      }
    }
  }
  model_group(RoleGroup::kStacks);
  model_group(RoleGroup::kHead);
}

}  // namespace octet
