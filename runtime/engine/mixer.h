// Token and channel mixers. A layer of a stack is a frame of norms and
// residual adds (forward.cc RunStack) around a token mixer, which moves
// information between positions, (in encoder-decoder decoders) a
// cross-attention, and a channel mixer, which mixes the channels of each
// position (the feed-forward, ffn.cc; RWKV's channel mix, which also reads the
// previous position's row):
//
//   x += Mixer(Norm(x));  [x += Cross(Norm(x));]  x += Channel(Norm(x))   (pre-norm)
//
// The token mixer is chosen per layer by the model file
// (Architecture.layer_mixers; attention when it lists none), so a stack may mix
// kinds (local and global attention, linear attention, convolutions). Each
// kind is one row of the registry (mixer.cc) and one file of its own:
//
//   attention     mixer_attention.cc    state: the KV cache (grows with positions)
//   token_shift   mixer_token_shift.cc  state: the last row (fixed); tests build models
//                                       with it to prove the seam
//   short_conv    mixer_short_conv.cc   state: the last kernel - 1 gated rows (fixed)
//   gated_deltanet mixer_gated_deltanet.cc state: the conv's last inputs and a d_k x d_v
//                                       matrix per value head (fixed)
//   rwkv_time_mix mixer_rwkv.cc         state: the last row and the WKV sums (fixed)
//
// The channel mixer is the model's (Architecture.channel_mixer), from a
// registry of its own beside the token mixers':
//
//   feed_forward     ffn.cc         no state
//   rwkv_channel_mix mixer_rwkv.cc  state: the last row (fixed)
//
// A mixer owns its tensors (a group of the role table, format/tensor_roles.h),
// its per-sequence state in decoder layers (sized here, placed by the plan in
// the KV-cache arena, saved and restored through copy_state, so the session
// needs no change for a new kind of state), how it computes (int8 or fp32, as
// the pass's ForwardMode says) and whether its probabilities can be captured
// (heatmaps, AttentionCapture).
//
// A channel mixer owns its tensors, its fixed state per sequence in decoder
// layers (after the token mixer's, copied by its own copy_state) and its
// scratch rows (buffer kChannel), the same way.
//
// State is per sequence: a call whose sequence starts at position 0 starts it
// afresh (the KV rows before a position are never read; a fixed state is
// taken as its kind's start: zeros, or RWKV's empty sums), so a new prompt
// needs no reset.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/forward.h"
#include "format/tensor_roles.h"

namespace octet {

// One sequence's state in one decoder layer.
struct MixerStateSize {
  size_t per_position = 0;  // bytes per position kept (a KV cache)
  size_t fixed = 0;         // bytes whatever the length (a recurrent state, a convolution tail)
};

// A call of a layer's token mixer over x [batch * seq, hidden] (rows laid out
// as forward.h says).
struct MixerCall {
  LayerStack stack = LayerStack::kSingle;
  uint32_t layer = 0;        // in its stack
  bool decoder = false;      // a decoder stack: causal, keeps its state across calls
  const float* relative_bias = nullptr;  // the stack's T5 bias, or null
  const uint32_t* pos0 = nullptr;   // [batch]: position of each sequence's first row (null: 0)
  const uint32_t* valid = nullptr;  // [batch]: the positions sequence b sees, its last real one
                                    // at valid[b] - 1
  uint32_t batch = 0;
  uint32_t seq = 0;
  const AttentionCapture* capture = nullptr;  // this layer's capture request, or null
};

struct TokenMixer {
  fb::TokenMixer kind;
  const char* name;  // as plans, errors and `octet inspect` name it
  RoleGroup roles;   // its tensors
  // What Session::SetAttentionCapture records of its layers (engine/forward.h
  // AttentionCapture): nothing, attention probabilities, or the token-mixing
  // matrix a linear attention implies; and over how many heads.
  CaptureKind capture;
  uint32_t (*capture_heads)(const fb::Architecture& a);  // null when capture is kNone
  // Per sequence, in a decoder layer: the state it keeps between calls.
  MixerStateSize (*state_size)(const fb::Architecture& a, const ForwardMode& mode);
  // out [batch * seq, hidden] from the normed rows in [batch * seq, hidden].
  void (*run)(const Forward& f, const LayerWeights& w, const MixerCall& call, const float* in,
              float* out);
  // Its own scratch rows (the plan's buffer kMixer: [rows, row_floats]) and the
  // widest input or output of its matrix products, beyond what attention's
  // and the feed-forward's need (the int8 rows' plan); 0 for none.
  size_t (*row_floats)(const fb::Architecture& a);
  size_t (*widest_product)(const fb::Architecture& a);
  // Floats of scratch each thread gets (buffer kMixerThreads; thread t's at
  // t * thread_floats); 0 for none.
  size_t (*thread_floats)(const fb::Architecture& a);
  // Copies sequence b's state in decoder layer l after `positions` positions
  // to (save) or from (!save) *cursor and advances it by positions x
  // per_position + fixed bytes.
  void (*copy_state)(const Forward& f, uint32_t l, uint32_t b, uint32_t positions, bool save,
                     uint8_t** cursor);
  // The row strides of the product in role `role` (one of its group's
  // products) where its calls read or write columns of wider rows, else 0
  // (contiguous); null when every product's are. Read when a layer is bound
  // (LinearWeights::in_stride), so fp32 operators are made for them.
  void (*product_strides)(const fb::Architecture& a, Role role, uint32_t* in_stride,
                          uint32_t* out_stride);
};

// A layer's channel mixer (one kind for the whole model, Architecture.channel_mixer).
// Its calls get the token mixer's MixerCall (capture null).
struct ChannelMixer {
  fb::ChannelMixer kind;
  const char* name;  // as plans, errors and `octet inspect` name it
  RoleGroup roles;   // its tensors
  // Per sequence, in a decoder layer: the fixed bytes it keeps between calls.
  size_t (*state_bytes)(const fb::Architecture& a);
  // out [batch * seq, hidden] from the normed rows in [batch * seq, hidden].
  void (*run)(const Forward& f, const LayerWeights& w, const MixerCall& call, const float* in,
              float* out);
  // Floats per row of its own scratch (the plan's buffer kChannel: [rows, row_floats]);
  // 0 for none.
  size_t (*row_floats)(const fb::Architecture& a);
  // Copies sequence b's state in decoder layer l to (save) or from (!save)
  // *cursor and advances it by state_bytes.
  void (*copy_state)(const Forward& f, uint32_t l, uint32_t b, bool save, uint8_t** cursor);
};

// The registry's row of a kind.
const TokenMixer& GetTokenMixer(fb::TokenMixer kind);
const ChannelMixer& GetChannelMixer(fb::ChannelMixer kind);
// The model's channel mixer.
const ChannelMixer& ModelChannelMixer(const fb::Architecture& a);
// The token mixer of layer `layer` of `stack`.
const TokenMixer& LayerTokenMixer(const fb::Architecture& a, LayerStack stack, uint32_t layer);

// Where decoder layer l's state sits, as PlanForward placed it
// (Forward::layer_states[l]).
struct LayerState {
  MixerStateSize size;     // the token mixer's, per sequence
  uint32_t kv_slot = 0;    // layers with per-position state: its rows of the KV cache
                           // (the kv_slot-th such decoder layer)
  size_t fixed_offset = 0; // bytes into buffer<kMixerState>: sequence b's fixed state
                           // at fixed_offset + b * size.fixed (each layer's max_batch
                           // sequences together)
  size_t channel_fixed = 0;   // the channel mixer's fixed bytes per sequence
  size_t channel_offset = 0;  // bytes into buffer<kMixerState>: sequence b's channel-mixer
                              // state at channel_offset + b * channel_fixed (after the
                              // layer's token-mixer states)
  // A sequence's state in this layer: the token mixer's and the channel mixer's.
  MixerStateSize total() const { return {size.per_position, size.fixed + channel_fixed}; }
};

// The rows of the registry (each defined in its mixer's file).
extern const TokenMixer kAttentionMixer;
extern const TokenMixer kTokenShiftMixer;
extern const TokenMixer kShortConvMixer;
extern const TokenMixer kGatedDeltaNetMixer;
extern const TokenMixer kRwkvTimeMixer;
extern const ChannelMixer kFeedForwardMixer;
extern const ChannelMixer kRwkvChannelMixer;

// For mixers with no scratch of their own (TokenMixer::row_floats, widest_product).
inline size_t NoMixerScratch(const fb::Architecture&) { return 0; }

}  // namespace octet
