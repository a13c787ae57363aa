// The forward pass's buffers, in one table: one row per buffer with its
// element type, its arena and its lifetime (the phases it holds data through).
// Its size is computed in one place (forward.cc, BufferSize); PlanForward
// places the rows in table order, PrepareForward turns each placed row into a
// pointer (Forward::buffer<B>()). A new buffer is one row here and one case
// there.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/arena.h"
#include "engine/weights.h"

namespace octet {

struct LayerState;  // engine/mixer.h

// The arena a planned buffer sits in.
enum class ForwardArena : uint8_t { kActivations, kScratch, kKvCache };

// The phases of a pass, in order; a layer repeats kAttention .. kFeedForward.
// A buffer that holds data from one phase to a later one (or past the run)
// lives through every phase between; one that is written and read within a
// phase (each time it runs) lives in that phase only.
enum class ForwardPhase : uint8_t {
  kEmbed,        // embeddings (sinusoids), the embedding norm
  kAttention,    // token mixers (engine/mixer.h); projecting the cross-attention K, V
  kCross,        // cross-attention sub-blocks
  kFeedForward,  // feed-forward sub-blocks
  kHead,         // the LM head
};

// ROW(id, name, element type, arena, first phase, last phase). "rows": of the
// per-layer buffers, max_batch x prefill chunk for decoder-only models, else
// max_batch x max_seq; "full rows": max_batch x max_seq. Table order is
// placement order (greedy first-fit, PlannedBuffer).
#define OCTET_FORWARD_BUFFERS(ROW)                                                              \
  /* Prepare-time tables and the run's outputs and state: the whole pass. */                 \
  ROW(LayerWeights, "layer_weights", LayerWeights, kActivations, kEmbed, kHead)                 \
  /* [num_layers + num_decoder_layers] */                                                     \
  ROW(ModelWeights, "model_weights", ModelWeights, kActivations, kEmbed, kHead)                 \
  /* [decoder layers]: where each keeps its mixer's state (engine/mixer.h) */                 \
  ROW(LayerStates, "layer_states", LayerState, kActivations, kEmbed, kHead)                     \
  ROW(RopeInvFreq, "rope_inv_freq", float, kActivations, kEmbed, kHead) /* [rotary_dim / 2] */  \
  /* [rotary_dim / 2] (rope.local_theta) */                                                   \
  ROW(RopeLocalInvFreq, "rope_local_inv_freq", float, kActivations, kEmbed, kHead)              \
  ROW(AlibiSlopes, "alibi_slopes", float, kActivations, kEmbed, kHead) /* [heads] */            \
  /* [rows, hidden]: the residual stream (the decoder's in enc-dec) */                        \
  ROW(X, "x", float, kActivations, kEmbed, kHead)                                               \
  ROW(EncoderOut, "encoder_out", float, kActivations, kEmbed, kHead) /* [full rows, hidden] */  \
  /* [full rows, vocab], or [max_batch, vocab] (last_logits_only) */                          \
  ROW(Logits, "logits", float, kActivations, kEmbed, kHead)                                     \
  /* [max_batch, hidden]: last real rows (last_logits_only) */                                \
  ROW(LastX, "last_x", float, kActivations, kEmbed, kHead)                                      \
  /* [max_batch, chunk]: a prompt chunk's ids (decoder-only) */                               \
  ROW(ChunkIds, "chunk_ids", int32_t, kScratch, kEmbed, kHead)                                  \
  ROW(ChunkPos0, "chunk_pos0", uint32_t, kScratch, kEmbed, kHead) /* [max_batch] */             \
  ROW(ChunkReal, "chunk_real", uint32_t, kScratch, kEmbed, kHead) /* [max_batch] */             \
  /* [max_batch]: keys each sequence sees in a decoder step */                                \
  ROW(StepValid, "step_valid", uint32_t, kScratch, kEmbed, kHead)                               \
  /* Per-layer temporaries, reused by every layer; those of different phases share. */       \
  ROW(Normed, "normed", float, kScratch, kAttention, kFeedForward) /* [rows, hidden] */         \
  /* [rows, hidden]: a sub-block's output before the residual add (Embed's sinusoids) */      \
  ROW(Delta, "delta", float, kScratch, kEmbed, kFeedForward)                                    \
  /* [rows, heads * head_dim]: queries, then the attention output */                          \
  ROW(Q, "q", float, kScratch, kAttention, kCross)                                              \
  /* [rows, kv_heads * head_dim]: staged or encoder keys, values */                           \
  ROW(K, "k", float, kScratch, kAttention, kAttention)                                          \
  ROW(V, "v", float, kScratch, kAttention, kAttention)                                          \
  /* [threads][attention_bytes]: one attention scratch per thread */                          \
  ROW(Attention, "attention", uint8_t, kScratch, kAttention, kCross)                            \
  ROW(Q8, "q8", int8_t, kScratch, kAttention, kCross) /* [rows, heads * head_dim] */            \
  ROW(Q8Scales, "q8_scales", float, kScratch, kAttention, kCross) /* [rows, heads] */           \
  /* [rows, kv_heads * head_dim]: encoder stacks' int8 keys, values (staged backends) */      \
  ROW(K8, "k8", uint8_t, kScratch, kAttention, kAttention)                                      \
  ROW(K8Scales, "k8_scales", float, kScratch, kAttention, kAttention) /* [rows, kv_heads] */    \
  ROW(V8, "v8", uint8_t, kScratch, kAttention, kAttention)                                      \
  ROW(V8Scales, "v8_scales", float, kScratch, kAttention, kAttention)                           \
  /* [rows, the mixers' row_floats]: a token mixer's own rows (engine/mixer.h) */            \
  ROW(Mixer, "mixer", float, kScratch, kAttention, kAttention)                                  \
  /* [threads, the mixers' thread_floats]: a token mixer's scratch per thread */               \
  ROW(MixerThreads, "mixer_threads", float, kScratch, kAttention, kAttention)                   \
  /* [rows, intermediate]: the feed-forward's (engine/ffn.cc) */                              \
  ROW(Up, "up", float, kScratch, kFeedForward, kFeedForward)                                    \
  ROW(Gate, "gate", float, kScratch, kFeedForward, kFeedForward)                                \
  /* [rows, the channel mixer's row_floats]: another channel mixer's own rows */              \
  ROW(Channel, "channel", float, kScratch, kFeedForward, kFeedForward)                          \
  /* int8 matrices: quantized input rows, int32 block; 16-bit inputs: the low digits */       \
  ROW(Qin, "qin", int8_t, kScratch, kAttention, kHead) /* [rows, widest input] */               \
  ROW(QinScales, "qin_scales", float, kScratch, kAttention, kHead) /* [rows] */                 \
  ROW(Acc, "acc", int32_t, kScratch, kAttention, kHead)   /* [acc_elements] */                  \
  ROW(QinLo, "qin_lo", int8_t, kScratch, kAttention, kHead) /* [rows, widest input] */          \
  ROW(QinLoScales, "qin_lo_scales", float, kScratch, kAttention, kHead) /* [rows] */            \
  ROW(LoOut, "lo_out", float, kScratch, kAttention, kHead) /* [acc_elements] */                 \
  ROW(Residual, "residual", float, kScratch, kAttention, kHead) /* [threads, residual_stride] */ \
  /* The KV cache of the decoder layers, position-major, in the backend's element type: */    \
  /* [decoder_layers, max_batch, kv_positions, kv_heads * head_dim] (scales: kv_heads) */     \
  ROW(SelfK, "self_k", uint8_t, kKvCache, kEmbed, kHead)                                        \
  ROW(SelfV, "self_v", uint8_t, kKvCache, kEmbed, kHead)                                        \
  ROW(SelfKScales, "self_k_scales", float, kKvCache, kEmbed, kHead)                             \
  ROW(SelfVScales, "self_v_scales", float, kKvCache, kEmbed, kHead)                             \
  /* [decoder_layers, max_batch, max_seq, kv_heads * head_dim]: enc-dec cross-attention */    \
  ROW(CrossK, "cross_k", uint8_t, kKvCache, kEmbed, kHead)                                      \
  ROW(CrossV, "cross_v", uint8_t, kKvCache, kEmbed, kHead)                                      \
  ROW(CrossKScales, "cross_k_scales", float, kKvCache, kEmbed, kHead)                           \
  ROW(CrossVScales, "cross_v_scales", float, kKvCache, kEmbed, kHead)                           \
  /* [max_batch x the decoder layers' fixed state bytes]: the mixers' fixed states */         \
  ROW(MixerState, "mixer_state", uint8_t, kKvCache, kEmbed, kHead)

enum class ForwardBuffer : uint8_t {
#define OCTET_FORWARD_BUFFER_ENUM(id, name, type, arena, first, last) k##id,
  OCTET_FORWARD_BUFFERS(OCTET_FORWARD_BUFFER_ENUM)
#undef OCTET_FORWARD_BUFFER_ENUM
      kCount
};
constexpr size_t kNumForwardBuffers = static_cast<size_t>(ForwardBuffer::kCount);

// The element type of a buffer: Forward::buffer<B>() returns a pointer to it.
template <ForwardBuffer B>
struct ForwardBufferType;
#define OCTET_FORWARD_BUFFER_TYPE(id, name, type, arena, first, last) \
  template <>                                                       \
  struct ForwardBufferType<ForwardBuffer::k##id> {                  \
    using Type = type;                                              \
  };
OCTET_FORWARD_BUFFERS(OCTET_FORWARD_BUFFER_TYPE)
#undef OCTET_FORWARD_BUFFER_TYPE

// One row of the plan's table: PlanForward places each buffer at the lowest
// offset of its arena where it overlaps no buffer placed before it whose
// lifetime [first, last] overlaps its own (greedy first-fit, in table order).
struct PlannedBuffer {
  const char* name = nullptr;
  ForwardArena arena = ForwardArena::kScratch;
  ForwardPhase first = ForwardPhase::kEmbed;
  ForwardPhase last = ForwardPhase::kHead;
  size_t bytes = 0;  // 0: this model does not use it (offset 0, nothing reserved)
  size_t alignment = 0;
  size_t offset = 0;  // in its arena
};

// The table's fixed columns (everything but bytes and offset), indexed by ForwardBuffer.
constexpr PlannedBuffer kForwardBufferRows[kNumForwardBuffers] = {
#define OCTET_FORWARD_BUFFER_ROW(id, name, type, arena, first, last) \
  {name, ForwardArena::arena, ForwardPhase::first, ForwardPhase::last, 0, kArenaAlignment, 0},
    OCTET_FORWARD_BUFFERS(OCTET_FORWARD_BUFFER_ROW)
#undef OCTET_FORWARD_BUFFER_ROW
};

}  // namespace octet
