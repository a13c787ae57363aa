#include "format/tensor_roles.h"

#include <cstdio>
#include <cstring>

namespace octet {
namespace {

using P = Presence;
using S = RoleStorage;
using In = ProductInput;

// Presence rules: the conditions a row's tensor depends on.
P Always(const RoleArch&) { return P::kRequired; }
P NormBias(const RoleArch& a) {  // LayerNorm has a bias; read beside an RMSNorm when present
  return a.norm == fb::NormKind::LayerNorm ? P::kRequired : P::kOptional;
}
P LearnedPositions(const RoleArch& a) {
  return a.position == fb::PositionKind::Learned ? P::kRequired : P::kAbsent;
}
P TokenTypes(const RoleArch& a) { return a.type_vocab > 0 ? P::kRequired : P::kAbsent; }
P EmbeddingNorm(const RoleArch& a) {  // layer-free BERT files may leave it out
  return (FamilyIsBertLike(a.family) || a.family == fb::Family::ModernBert ||
          a.family == fb::Family::Rwkv) &&
                 a.num_layers + a.num_decoder_layers > 0
             ? P::kRequired
             : P::kOptional;
}
P RelativeBias(const RoleArch& a, fb::Structure without) {
  return a.position == fb::PositionKind::RelativeBias && a.structure != without ? P::kRequired
                                                                                : P::kAbsent;
}
P EncoderRelativeBias(const RoleArch& a) { return RelativeBias(a, fb::Structure::DecoderOnly); }
P DecoderRelativeBias(const RoleArch& a) { return RelativeBias(a, fb::Structure::EncoderOnly); }
P FinalNormOf(const RoleArch& a, fb::Structure structure) {  // pre-norm stacks end with a norm
  if (a.structure != structure) return P::kAbsent;
  return a.placement == fb::NormPlacement::Pre ? P::kRequired : P::kOptional;
}
P FinalNorm(const RoleArch& a) {  // a pre-norm encoder (ModernBERT) ends with one too
  if (a.structure == fb::Structure::EncoderOnly) {
    return a.placement == fb::NormPlacement::Pre ? P::kRequired : P::kAbsent;
  }
  return FinalNormOf(a, fb::Structure::DecoderOnly);
}
P StackFinalNorm(const RoleArch& a) { return FinalNormOf(a, fb::Structure::EncoderDecoder); }
P LmHead(const RoleArch& a) {  // a tied head is the token embedding
  return a.structure != fb::Structure::EncoderOnly && !a.tied_embeddings ? P::kRequired
                                                                          : P::kOptional;
}
P FinalLogitsBias(const RoleArch& a) {
  if (a.structure == fb::Structure::EncoderOnly) return P::kAbsent;
  return a.family == fb::Family::Marian ? P::kRequired : P::kOptional;
}
P Sandwich(const RoleArch& a) { return a.sandwich_norms ? P::kRequired : P::kAbsent; }
P QkvBias(const RoleArch& a) { return a.qkv_bias ? P::kRequired : P::kAbsent; }
P OutBias(const RoleArch& a) { return a.out_bias ? P::kRequired : P::kAbsent; }
P QkNorm(const RoleArch& a) { return a.qk_norm ? P::kRequired : P::kAbsent; }
P GatedFfn(const RoleArch& a) { return a.gated_ffn ? P::kRequired : P::kAbsent; }
P OutputGate(const RoleArch& a) { return a.output_gate ? P::kRequired : P::kAbsent; }
P ConvBias(const RoleArch& a) { return a.conv_bias ? P::kRequired : P::kAbsent; }
P FfnBias(const RoleArch& a) { return FamilyHasFfnBias(a.family) ? P::kRequired : P::kAbsent; }

constexpr Dim kN = Dim::kNone, kH = Dim::kHidden, kI = Dim::kIntermediate, kQ = Dim::kQRows,
              kKv = Dim::kKvRows;
constexpr In kAny = In::kAttention;  // the input field of rows that are not kProduct

#define ROW(role, group, name, rows, cols, presence, with, storage, input)                      \
  RoleInfo {                                                                                    \
    Role::role, RoleGroup::group, name, rows, cols, presence, Role::with, storage, input       \
  }
constexpr RoleInfo kRoles[] = {
    ROW(kTokenEmbedding, kEmbeddings, "token_embedding", Dim::kVocab, kH, Always,
        kTokenEmbedding, S::kLookup, kAny),
    ROW(kPositionEmbedding, kEmbeddings, "position_embedding", Dim::kPositions, kH,
        LearnedPositions, kPositionEmbedding, S::kLookup, kAny),
    ROW(kTokenTypeEmbedding, kEmbeddings, "token_type_embedding", Dim::kTypeVocab, kH, TokenTypes,
        kTokenTypeEmbedding, S::kLookup, kAny),
    ROW(kEmbeddingNorm, kEmbeddings, "embedding_norm.weight", kH, kN, EmbeddingNorm,
        kEmbeddingNorm, S::kF32, kAny),
    ROW(kEmbeddingNormBias, kEmbeddings, "embedding_norm.bias", kH, kN, NormBias, kEmbeddingNorm,
        S::kF32, kAny),

    ROW(kEncoderRelativeBias, kStacks, "encoder.relative_bias", Dim::kBuckets, Dim::kHeads,
        EncoderRelativeBias, kEncoderRelativeBias, S::kF32, kAny),
    ROW(kDecoderRelativeBias, kStacks, "decoder.relative_bias", Dim::kBuckets, Dim::kHeads,
        DecoderRelativeBias, kDecoderRelativeBias, S::kF32, kAny),
    ROW(kFinalNorm, kStacks, "final_norm.weight", kH, kN, FinalNorm, kFinalNorm, S::kF32, kAny),
    ROW(kFinalNormBias, kStacks, "final_norm.bias", kH, kN, NormBias, kFinalNorm, S::kF32, kAny),
    ROW(kEncoderFinalNorm, kStacks, "encoder.final_norm.weight", kH, kN, StackFinalNorm,
        kEncoderFinalNorm, S::kF32, kAny),
    ROW(kEncoderFinalNormBias, kStacks, "encoder.final_norm.bias", kH, kN, NormBias,
        kEncoderFinalNorm, S::kF32, kAny),
    ROW(kDecoderFinalNorm, kStacks, "decoder.final_norm.weight", kH, kN, StackFinalNorm,
        kDecoderFinalNorm, S::kF32, kAny),
    ROW(kDecoderFinalNormBias, kStacks, "decoder.final_norm.bias", kH, kN, NormBias,
        kDecoderFinalNorm, S::kF32, kAny),

    ROW(kLmHead, kHead, "lm_head", Dim::kVocab, kH, LmHead, kLmHead, S::kProduct, In::kHead),
    ROW(kFinalLogitsBias, kHead, "final_logits_bias", Dim::kVocab, kN, FinalLogitsBias,
        kFinalLogitsBias, S::kF32, kAny),

    ROW(kAttnNorm, kLayerFrame, "attn_norm.weight", kH, kN, Always, kAttnNorm, S::kF32, kAny),
    ROW(kAttnNormBias, kLayerFrame, "attn_norm.bias", kH, kN, NormBias, kAttnNorm, S::kF32, kAny),
    ROW(kPostAttnNorm, kLayerFrame, "post_attn_norm.weight", kH, kN, Sandwich, kPostAttnNorm,
        S::kF32, kAny),
    ROW(kPostAttnNormBias, kLayerFrame, "post_attn_norm.bias", kH, kN, NormBias, kPostAttnNorm,
        S::kF32, kAny),
    ROW(kFfnNorm, kLayerFrame, "ffn_norm.weight", kH, kN, Always, kFfnNorm, S::kF32, kAny),
    ROW(kFfnNormBias, kLayerFrame, "ffn_norm.bias", kH, kN, NormBias, kFfnNorm, S::kF32, kAny),
    ROW(kPostFfnNorm, kLayerFrame, "post_ffn_norm.weight", kH, kN, Sandwich, kPostFfnNorm,
        S::kF32, kAny),
    ROW(kPostFfnNormBias, kLayerFrame, "post_ffn_norm.bias", kH, kN, NormBias, kPostFfnNorm,
        S::kF32, kAny),

    ROW(kAttnQ, kAttention, "attn.q.weight", kQ, kH, Always, kAttnQ, S::kProduct, In::kAttention),
    ROW(kAttnQBias, kAttention, "attn.q.bias", kQ, kN, QkvBias, kAttnQ, S::kF32, kAny),
    ROW(kAttnK, kAttention, "attn.k.weight", kKv, kH, Always, kAttnK, S::kProduct, In::kAttention),
    ROW(kAttnKBias, kAttention, "attn.k.bias", kKv, kN, QkvBias, kAttnK, S::kF32, kAny),
    ROW(kAttnV, kAttention, "attn.v.weight", kKv, kH, Always, kAttnV, S::kProduct, In::kAttention),
    ROW(kAttnVBias, kAttention, "attn.v.bias", kKv, kN, QkvBias, kAttnV, S::kF32, kAny),
    ROW(kAttnO, kAttention, "attn.o.weight", kH, kQ, Always, kAttnO, S::kProduct,
        In::kAttentionOutput),
    ROW(kAttnOBias, kAttention, "attn.o.bias", kH, kN, OutBias, kAttnO, S::kF32, kAny),
    ROW(kAttnQNorm, kAttention, "attn.q_norm.weight", Dim::kHeadDim, kN, QkNorm, kAttnQNorm,
        S::kF32, kAny),
    ROW(kAttnKNorm, kAttention, "attn.k_norm.weight", Dim::kHeadDim, kN, QkNorm, kAttnKNorm,
        S::kF32, kAny),
    ROW(kAttnGate, kAttention, "attn.gate.weight", kQ, kH, OutputGate, kAttnGate, S::kProduct,
        In::kAttention),

    ROW(kShift, kTokenShift, "shift.weight", kH, kN, Always, kShift, S::kF32, kAny),

    ROW(kConvIn, kShortConv, "conv.in_proj.weight", Dim::kHidden3, kH, Always, kConvIn,
        S::kProduct, In::kAttention),
    ROW(kConvInBias, kShortConv, "conv.in_proj.bias", Dim::kHidden3, kN, ConvBias, kConvIn,
        S::kF32, kAny),
    ROW(kConvKernel, kShortConv, "conv.conv.weight", kH, Dim::kConvTaps, Always, kConvKernel,
        S::kF32, kAny),
    ROW(kConvBias, kShortConv, "conv.conv.bias", kH, kN, ConvBias, kConvKernel, S::kF32, kAny),
    ROW(kConvOut, kShortConv, "conv.out_proj.weight", kH, kH, Always, kConvOut, S::kProduct,
        In::kConvOutput),
    ROW(kConvOutBias, kShortConv, "conv.out_proj.bias", kH, kN, ConvBias, kConvOut, S::kF32,
        kAny),

    ROW(kLinQkv, kGatedDeltaNet, "lin.in_qkv.weight", Dim::kLinChannels, kH, Always, kLinQkv,
        S::kProduct, In::kAttention),
    ROW(kLinZ, kGatedDeltaNet, "lin.in_z.weight", Dim::kLinValues, kH, Always, kLinZ, S::kProduct,
        In::kAttention),
    ROW(kLinB, kGatedDeltaNet, "lin.in_b.weight", Dim::kLinValueHeads, kH, Always, kLinB,
        S::kProduct, In::kAttention),
    ROW(kLinA, kGatedDeltaNet, "lin.in_a.weight", Dim::kLinValueHeads, kH, Always, kLinA,
        S::kProduct, In::kAttention),
    ROW(kLinConv, kGatedDeltaNet, "lin.conv.weight", Dim::kLinChannels, Dim::kLinTaps, Always,
        kLinConv, S::kF32, kAny),
    ROW(kLinALog, kGatedDeltaNet, "lin.a_log", Dim::kLinValueHeads, kN, Always, kLinALog, S::kF32,
        kAny),
    ROW(kLinDtBias, kGatedDeltaNet, "lin.dt_bias", Dim::kLinValueHeads, kN, Always, kLinDtBias,
        S::kF32, kAny),
    ROW(kLinNorm, kGatedDeltaNet, "lin.norm.weight", Dim::kLinValueDim, kN, Always, kLinNorm,
        S::kF32, kAny),
    ROW(kLinOut, kGatedDeltaNet, "lin.out.weight", kH, Dim::kLinValues, Always, kLinOut,
        S::kProduct, In::kLinearOutput),

    ROW(kTimeMixK, kRwkvTimeMix, "time_mix.mix_k", kH, kN, Always, kTimeMixK, S::kF32, kAny),
    ROW(kTimeMixV, kRwkvTimeMix, "time_mix.mix_v", kH, kN, Always, kTimeMixV, S::kF32, kAny),
    ROW(kTimeMixR, kRwkvTimeMix, "time_mix.mix_r", kH, kN, Always, kTimeMixR, S::kF32, kAny),
    ROW(kTimeDecay, kRwkvTimeMix, "time_mix.decay", kH, kN, Always, kTimeDecay, S::kF32, kAny),
    ROW(kTimeFirst, kRwkvTimeMix, "time_mix.first", kH, kN, Always, kTimeFirst, S::kF32, kAny),
    ROW(kTimeKey, kRwkvTimeMix, "time_mix.key.weight", kH, kH, Always, kTimeKey, S::kProduct,
        In::kRwkvKey),
    ROW(kTimeValue, kRwkvTimeMix, "time_mix.value.weight", kH, kH, Always, kTimeValue,
        S::kProduct, In::kRwkvValue),
    ROW(kTimeReceptance, kRwkvTimeMix, "time_mix.receptance.weight", kH, kH, Always,
        kTimeReceptance, S::kProduct, In::kRwkvReceptance),
    ROW(kTimeOutput, kRwkvTimeMix, "time_mix.output.weight", kH, kH, Always, kTimeOutput,
        S::kProduct, In::kRwkvOutput),

    ROW(kCrossAttnNorm, kCrossAttention, "cross_attn_norm.weight", kH, kN, Always, kCrossAttnNorm,
        S::kF32, kAny),
    ROW(kCrossAttnNormBias, kCrossAttention, "cross_attn_norm.bias", kH, kN, NormBias,
        kCrossAttnNorm, S::kF32, kAny),
    ROW(kCrossQ, kCrossAttention, "cross_attn.q.weight", kQ, kH, Always, kCrossQ, S::kProduct,
        In::kCrossQuery),
    ROW(kCrossQBias, kCrossAttention, "cross_attn.q.bias", kQ, kN, QkvBias, kCrossQ, S::kF32,
        kAny),
    ROW(kCrossK, kCrossAttention, "cross_attn.k.weight", kKv, kH, Always, kCrossK, S::kProduct,
        In::kCrossKv),
    ROW(kCrossKBias, kCrossAttention, "cross_attn.k.bias", kKv, kN, QkvBias, kCrossK, S::kF32,
        kAny),
    ROW(kCrossV, kCrossAttention, "cross_attn.v.weight", kKv, kH, Always, kCrossV, S::kProduct,
        In::kCrossKv),
    ROW(kCrossVBias, kCrossAttention, "cross_attn.v.bias", kKv, kN, QkvBias, kCrossV, S::kF32,
        kAny),
    ROW(kCrossO, kCrossAttention, "cross_attn.o.weight", kH, kQ, Always, kCrossO, S::kProduct,
        In::kCrossOutput),
    ROW(kCrossOBias, kCrossAttention, "cross_attn.o.bias", kH, kN, OutBias, kCrossO, S::kF32,
        kAny),

    ROW(kFfnGate, kFeedForward, "ffn.gate.weight", kI, kH, GatedFfn, kFfnGate, S::kProduct,
        In::kFfn),
    ROW(kFfnUp, kFeedForward, "ffn.up.weight", kI, kH, Always, kFfnUp, S::kProduct, In::kFfn),
    ROW(kFfnUpBias, kFeedForward, "ffn.up.bias", kI, kN, FfnBias, kFfnUp, S::kF32, kAny),
    ROW(kFfnDown, kFeedForward, "ffn.down.weight", kH, kI, Always, kFfnDown, S::kProduct,
        In::kFfnHidden),
    ROW(kFfnDownBias, kFeedForward, "ffn.down.bias", kH, kN, FfnBias, kFfnDown, S::kF32, kAny),

    ROW(kChannelMixK, kRwkvChannelMix, "channel_mix.mix_k", kH, kN, Always, kChannelMixK,
        S::kF32, kAny),
    ROW(kChannelMixR, kRwkvChannelMix, "channel_mix.mix_r", kH, kN, Always, kChannelMixR,
        S::kF32, kAny),
    ROW(kChannelKey, kRwkvChannelMix, "channel_mix.key.weight", kI, kH, Always, kChannelKey,
        S::kProduct, In::kRwkvChannelKey),
    ROW(kChannelReceptance, kRwkvChannelMix, "channel_mix.receptance.weight", kH, kH, Always,
        kChannelReceptance, S::kProduct, In::kRwkvChannelReceptance),
    ROW(kChannelValue, kRwkvChannelMix, "channel_mix.value.weight", kH, kI, Always,
        kChannelValue, S::kProduct, In::kRwkvChannelValue),
};
#undef ROW

bool EveryLayer(const RoleArch&, LayerStack, uint32_t) { return true; }
bool EncoderDecoderDecoder(const RoleArch& a, LayerStack stack, uint32_t) {
  return a.structure == fb::Structure::EncoderDecoder && stack == LayerStack::kDecoder;
}
template <fb::TokenMixer kMixer>
bool MixerLayers(const RoleArch& a, LayerStack stack, uint32_t layer) {
  return LayerMixer(a, stack, layer) == kMixer;
}
template <fb::ChannelMixer kMixer>
bool ChannelMixerLayers(const RoleArch& a, LayerStack, uint32_t) {
  return a.channel_mixer == kMixer;
}

constexpr RoleGroupInfo kGroups[] = {
    {RoleGroup::kEmbeddings, "embeddings", RoleScope::kModel, EveryLayer, RoleSlots::kNamed},
    {RoleGroup::kStacks, "stacks", RoleScope::kModel, EveryLayer, RoleSlots::kNamed},
    {RoleGroup::kHead, "head", RoleScope::kModel, EveryLayer, RoleSlots::kNamed},
    {RoleGroup::kLayerFrame, "layer frame", RoleScope::kLayer, EveryLayer, RoleSlots::kNamed},
    {RoleGroup::kAttention, "attention", RoleScope::kLayer,
     MixerLayers<fb::TokenMixer::Attention>, RoleSlots::kNamed},
    {RoleGroup::kTokenShift, "token shift", RoleScope::kLayer,
     MixerLayers<fb::TokenMixer::TokenShift>, RoleSlots::kTokenMixer},
    {RoleGroup::kShortConv, "short convolution", RoleScope::kLayer,
     MixerLayers<fb::TokenMixer::ShortConv>, RoleSlots::kTokenMixer},
    {RoleGroup::kGatedDeltaNet, "gated deltanet", RoleScope::kLayer,
     MixerLayers<fb::TokenMixer::GatedDeltaNet>, RoleSlots::kTokenMixer},
    {RoleGroup::kRwkvTimeMix, "rwkv time mix", RoleScope::kLayer,
     MixerLayers<fb::TokenMixer::RwkvTimeMix>, RoleSlots::kTokenMixer},
    {RoleGroup::kCrossAttention, "cross-attention", RoleScope::kLayer, EncoderDecoderDecoder,
     RoleSlots::kNamed},
    {RoleGroup::kFeedForward, "feed-forward", RoleScope::kLayer,
     ChannelMixerLayers<fb::ChannelMixer::FeedForward>, RoleSlots::kNamed},
    {RoleGroup::kRwkvChannelMix, "rwkv channel mix", RoleScope::kLayer,
     ChannelMixerLayers<fb::ChannelMixer::RwkvChannelMix>, RoleSlots::kChannelMixer},
};

// Row i is role i, groups are in enum order and their rows consecutive, and a
// `with` row goes with a row of its own group.
constexpr bool TablesInOrder() {
  if (sizeof(kRoles) / sizeof(kRoles[0]) != kRoleCount) return false;
  if (sizeof(kGroups) / sizeof(kGroups[0]) != static_cast<size_t>(RoleGroup::kCount)) {
    return false;
  }
  for (size_t g = 0; g < static_cast<size_t>(RoleGroup::kCount); ++g) {
    if (static_cast<size_t>(kGroups[g].group) != g) return false;
  }
  for (size_t i = 0; i < kRoleCount; ++i) {
    if (static_cast<size_t>(kRoles[i].role) != i) return false;
    if (i > 0 && kRoles[i].group < kRoles[i - 1].group) return false;
    if (kRoles[static_cast<size_t>(kRoles[i].with)].group != kRoles[i].group) return false;
  }
  return true;
}
static_assert(TablesInOrder(), "the role table must list every role once, in enum order");

const char* StackPrefix(LayerStack stack) {
  return stack == LayerStack::kEncoder   ? "encoder."
         : stack == LayerStack::kDecoder ? "decoder."
                                         : "";
}

}  // namespace

RoleArch RoleArchOf(const fb::Architecture& a) {
  const fb::Attention& att = *a.attention();
  RoleArch r;
  r.family = a.family();
  r.structure = a.structure();
  r.norm = a.norm();
  r.placement = a.norm_placement();
  r.position = a.position();
  r.vocab = a.vocab_size();
  r.hidden = a.hidden_size();
  r.intermediate = a.intermediate_size();
  r.num_layers = a.num_layers();
  r.num_decoder_layers = a.num_decoder_layers();
  r.type_vocab = a.type_vocab_size();
  r.max_positions = a.max_positions();
  r.position_offset = a.position_offset();
  r.heads = att.num_heads();
  r.kv_heads = att.num_kv_heads();
  r.head_dim = att.head_dim();
  r.relative_buckets = att.relative_buckets();
  r.gated_ffn = a.gated_ffn();
  r.tied_embeddings = a.tied_embeddings();
  r.sandwich_norms = a.sandwich_norms();
  r.qkv_bias = att.qkv_bias();
  r.out_bias = att.out_bias();
  r.qk_norm = att.qk_norm();
  r.first_attn_norm = a.first_attn_norm();
  if (const fb::ShortConv* conv = a.short_conv()) {
    r.conv_kernel = conv->kernel();
    r.conv_bias = conv->bias();
  }
  r.output_gate = att.output_gate();
  if (const fb::LinearAttention* lin = a.linear_attention()) {
    r.lin_key_heads = lin->key_heads();
    r.lin_value_heads = lin->value_heads();
    r.lin_key_dim = lin->key_dim();
    r.lin_value_dim = lin->value_dim();
    r.lin_taps = lin->conv_kernel();
  }
  r.channel_mixer = a.channel_mixer();
  if (const auto* mixers = a.layer_mixers()) {
    r.layer_mixers = mixers->data();
    r.num_layer_mixers = mixers->size();
  }
  return r;
}

RoleArch RoleArchOf(const fb::ArchitectureT& a) {
  RoleArch r;
  r.family = a.family;
  r.structure = a.structure;
  r.norm = a.norm;
  r.placement = a.norm_placement;
  r.position = a.position;
  r.vocab = a.vocab_size;
  r.hidden = a.hidden_size;
  r.intermediate = a.intermediate_size;
  r.num_layers = a.num_layers;
  r.num_decoder_layers = a.num_decoder_layers;
  r.type_vocab = a.type_vocab_size;
  r.max_positions = a.max_positions;
  r.position_offset = a.position_offset;
  if (const fb::AttentionT* att = a.attention.get()) {
    r.heads = att->num_heads;
    r.kv_heads = att->num_kv_heads;
    r.head_dim = att->head_dim;
    r.relative_buckets = att->relative_buckets;
    r.qkv_bias = att->qkv_bias;
    r.out_bias = att->out_bias;
    r.qk_norm = att->qk_norm;
  }
  r.gated_ffn = a.gated_ffn;
  r.tied_embeddings = a.tied_embeddings;
  r.sandwich_norms = a.sandwich_norms;
  r.first_attn_norm = a.first_attn_norm;
  if (const fb::ShortConvT* conv = a.short_conv.get()) {
    r.conv_kernel = conv->kernel;
    r.conv_bias = conv->bias;
  }
  if (a.attention) r.output_gate = a.attention->output_gate;
  if (const fb::LinearAttentionT* lin = a.linear_attention.get()) {
    r.lin_key_heads = lin->key_heads;
    r.lin_value_heads = lin->value_heads;
    r.lin_key_dim = lin->key_dim;
    r.lin_value_dim = lin->value_dim;
    r.lin_taps = lin->conv_kernel;
  }
  r.channel_mixer = a.channel_mixer;
  r.layer_mixers = a.layer_mixers.data();
  r.num_layer_mixers = static_cast<uint32_t>(a.layer_mixers.size());
  return r;
}

fb::TokenMixer LayerMixer(const RoleArch& a, LayerStack stack, uint32_t layer) {
  const uint64_t i = stack == LayerStack::kDecoder && a.structure == fb::Structure::EncoderDecoder
                         ? static_cast<uint64_t>(a.num_layers) + layer
                         : layer;
  return i < a.num_layer_mixers ? a.layer_mixers[i] : fb::TokenMixer::Attention;
}

size_t RoleIndexInGroup(Role role) {
  const RoleInfo& info = GetRole(role);
  return static_cast<size_t>(&info - RolesOf(info.group).begin());
}

const RoleInfo& GetRole(Role role) { return kRoles[static_cast<size_t>(role)]; }

const RoleGroupInfo& GetRoleGroup(RoleGroup group) {
  return kGroups[static_cast<size_t>(group)];
}

RoleRange RolesOf(RoleGroup group) {
  const RoleInfo* first = kRoles;
  const RoleInfo* end = kRoles + kRoleCount;
  while (first != end && first->group != group) ++first;
  const RoleInfo* last = first;
  while (last != end && last->group == group) ++last;
  return {first, last};
}

Presence RolePresence(const RoleInfo& role, const RoleArch& a, LayerStack stack,
                      uint32_t layer) {
  if (!GetRoleGroup(role.group).applies(a, stack, layer)) return Presence::kAbsent;
  if (role.with != role.role && GetRole(role.with).presence(a) == Presence::kAbsent) {
    return Presence::kAbsent;  // a bias without its weight
  }
  // Architecture.first_attn_norm false (ModernBERT): layer 0 of the stack has
  // no norm before its token mixer.
  if (!a.first_attn_norm && layer == 0 && stack != LayerStack::kDecoder &&
      (role.role == Role::kAttnNorm || role.with == Role::kAttnNorm)) {
    return Presence::kAbsent;
  }
  return role.presence(a);
}

uint32_t DimValue(Dim dim, const RoleArch& a) {
  switch (dim) {
    case Dim::kNone: return 0;
    case Dim::kHidden: return a.hidden;
    case Dim::kIntermediate: return a.intermediate;
    case Dim::kVocab: return a.vocab;
    case Dim::kPositions: return a.position_offset + a.max_positions;
    case Dim::kTypeVocab: return a.type_vocab;
    case Dim::kQRows: return a.heads * a.head_dim;
    case Dim::kKvRows: return a.kv_heads * a.head_dim;
    case Dim::kHeadDim: return a.head_dim;
    case Dim::kBuckets: return a.relative_buckets;
    case Dim::kHeads: return a.heads;
    case Dim::kHidden3: return 3 * a.hidden;
    case Dim::kConvTaps: return a.conv_kernel;
    case Dim::kLinChannels:
      return 2 * a.lin_key_heads * a.lin_key_dim + a.lin_value_heads * a.lin_value_dim;
    case Dim::kLinValues: return a.lin_value_heads * a.lin_value_dim;
    case Dim::kLinValueHeads: return a.lin_value_heads;
    case Dim::kLinValueDim: return a.lin_value_dim;
    case Dim::kLinTaps: return a.lin_taps;
  }
  return 0;
}

RoleShape ShapeOf(const RoleInfo& role, const RoleArch& a) {
  RoleShape s;
  s.rank = role.cols == Dim::kNone ? 1 : 2;
  s.dims[0] = DimValue(role.rows, a);
  s.dims[1] = DimValue(role.cols, a);
  return s;
}

bool RoleTensorName(char* out, size_t size, const RoleInfo& role, LayerStack stack,
                    uint32_t layer) {
  if (GetRoleGroup(role.group).scope == RoleScope::kLayer) {
    return LayerTensorName(out, size, stack, layer, role.name);
  }
  const int n = std::snprintf(out, size, "%s", role.name);
  return n > 0 && static_cast<size_t>(n) < size;
}

bool ParseLayerName(const char* name, LayerStack* stack, uint64_t* layer, const char** suffix) {
  for (LayerStack s : {LayerStack::kSingle, LayerStack::kEncoder, LayerStack::kDecoder}) {
    const char* prefix = StackPrefix(s);
    const size_t n = std::strlen(prefix);
    if (std::strncmp(name, prefix, n) != 0 || std::strncmp(name + n, "layers.", 7) != 0) continue;
    const char* p = name + n + 7;
    if (*p < '0' || *p > '9') return false;
    uint64_t value = 0;
    while (*p >= '0' && *p <= '9') {
      if (value <= (1ull << 32)) value = value * 10 + static_cast<uint64_t>(*p - '0');
      ++p;
    }
    *stack = s;
    *layer = value;
    *suffix = *p == '.' ? p + 1 : p;
    return true;
  }
  return false;
}

bool FindRole(const char* name, RoleTensor* out) {
  LayerStack stack = LayerStack::kSingle;
  uint64_t layer = 0;
  const char* suffix = nullptr;
  const bool layered = ParseLayerName(name, &stack, &layer, &suffix);
  if (layered && layer > UINT32_MAX) return false;
  for (const RoleInfo& r : kRoles) {
    const bool layer_row = GetRoleGroup(r.group).scope == RoleScope::kLayer;
    if (layer_row != layered || std::strcmp(layered ? suffix : name, r.name) != 0) continue;
    out->role = r.role;
    out->stack = stack;
    out->layer = static_cast<uint32_t>(layer);
    return true;
  }
  return false;
}

int LayerStacksOf(const RoleArch& a, LayerStackCount out[2]) {
  if (a.structure != fb::Structure::EncoderDecoder) {
    out[0] = {LayerStack::kSingle, a.num_layers};
    return 1;
  }
  out[0] = {LayerStack::kEncoder, a.num_layers};
  out[1] = {LayerStack::kDecoder, a.num_decoder_layers};
  return 2;
}

}  // namespace octet
