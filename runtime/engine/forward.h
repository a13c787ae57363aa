// The forward pass: embedding, transformer layers (each layer's token mixer,
// engine/mixer.h, cross-attention, feed-forward; pre- or post-norm), final
// norm and LM head.
// fp32 files run it in float: the oracle the int8 path is checked against
// (matrix products on XNNPACK, ops/f32_fully_connected.h, where the build and
// the CPU have it, else f32_gemm__ref; attention on the table's f32_attention). int8
// files run every matrix product in int8 (linear layers through the dispatch
// table's qs8_gemm with dynamic per-row activation scales, attention through
// ops/qs8_attention.h with an int8 KV cache); norms, activations, residual adds
// and the softmax stay in fp32. Read forward.cc top to bottom.
//
// Rows are laid out [batch, seq] (padded): sequence b owns rows b * seq .. b * seq
// + seq - 1, of which the first lengths[b] are real. Padded rows are computed
// too (they stay finite) and their keys are masked, so they never reach a real row.
//
// Two phases: PlanForward (prepare) places every buffer in the session's arenas,
// PrepareForward resolves the weights and fills the position tables; the Run*
// functions only compute (no allocation, no checks: the Session checks the
// run-time inputs before calling them).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/arena.h"
#include "core/status.h"
#include "engine/forward_buffers.h"
#include "engine/weights.h"
#include "format/model.h"
#include "kernels/kernel_table.h"
#include "platform/thread_pool.h"

namespace octet {

// Called after each transformer layer with the residual stream x [rows, hidden]
// (rows = batch * seq, padded rows included). For the converter's
// quantization report and for debugging; it must not allocate.
typedef void (*LayerObserverFn)(void* ctx, LayerStack stack, uint32_t layer, const float* x,
                                size_t rows, size_t hidden);

// Called as a pass enters each transformer layer of a stack with the residual
// stream x [rows, hidden] it is about to read (rows = batch * seq, or one
// prompt chunk's rows), and once more as the stack ends, with layer = the
// stack's layer count and the stream its final norm reads; x may be
// overwritten. The converter's layer-by-layer calibration runs a one-layer
// model on the stream its earlier layers made (and an encoder-decoder's
// decoder layer on the encoder output they made). It must not allocate in a
// run it measures.
typedef void (*LayerInputFn)(void* ctx, LayerStack stack, uint32_t layer, float* x, size_t rows,
                             size_t hidden);

// The input of a layer's matrix products (ProductInput) is defined with the
// tensor roles (format/tensor_roles.h), whose product matrices name theirs.

// Called with each product input x [rows, cols] (row stride ld) of the
// following runs and steps; rows include padded positions. For the converter's
// calibration, not for speed; it must not allocate in a run it measures.
typedef void (*ProductObserverFn)(void* ctx, LayerStack stack, uint32_t layer,
                                  ProductInput which, const float* x, size_t rows, size_t cols,
                                  size_t ld);

// Which attention a pass captures the probabilities of (Session::SetAttentionCapture):
// the self-attention of a stack's layer, or a decoder layer's cross-attention.
enum class AttentionSite : uint8_t { kSelf, kCross };

// What a capture holds: nothing (a layer without attention), softmax
// probabilities, or the token-mixing matrix of a linear attention.
enum class CaptureKind : uint8_t { kNone, kProbabilities, kMixing };

// A capture request and its result. The caller owns probs; the pass writes
// [batch, heads, q_len, k_len] floats there (q_len, k_len: the run's padded
// query and key lengths) for the one layer named, and nothing else: a pass
// without a request (Forward::capture null) does no extra work.
//
// What is written, per sequence b, head h, query row i, key j:
//   softmax_j(logit(i, h, j)) for the keys row i sees (kernels/attention_params.h:
//   padding, causal, window), exactly as the pass's attention backend defines its
//   logits (fp32: f32_attention's; int8: qs8_attention's, from the int8 Q·Kᵀ and
//   the per-token scales, before P's 8-bit quantization, ops/qs8_attention.h);
//   the maximum is the row's final running maximum and the sum is taken in key
//   order (the kernels' online sum differs from it by rounding only);
//   0 for masked keys, and an all-zero row for a padded query (i >= lengths[b]).
//
// A Gated DeltaNet layer (kind kMixing; heads are its value heads) writes the
// exact token-mixing matrix its recurrence implies: its output before the
// gated norm is o_i = sum_j c_ij v_j over the run's tokens (the state starts
// empty in a run), with, for j <= i,
//   c_ij = beta_j k_j^T A_{j+1} ... A_i q_i,   A_r = exp(g_r) (I - beta_r k_r k_r^T)
// (q, k, beta, g as the pass computed them: l2-normed and scaled, after the
// conv); 0 for j > i and for padded queries and keys. Signed, rows need not sum
// to 1. Cost O(n^2 d_k) per head, beside the pass.
struct AttentionCapture {
  LayerStack stack = LayerStack::kSingle;  // kSingle: encoder-only and decoder-only models
  AttentionSite site = AttentionSite::kSelf;  // kCross: the decoder stack of an encoder-decoder
  uint32_t layer = 0;
  float* probs = nullptr;  // caller-owned, `capacity` floats
  size_t capacity = 0;
  // Set by the run that wrote probs (0 before):
  CaptureKind kind = CaptureKind::kNone;
  uint32_t batch = 0;
  uint32_t heads = 0;
  uint32_t q_len = 0;
  uint32_t k_len = 0;
};

// Where a pass spends its time, by kind of operation (`octet bench --profile`).
// Filled when Forward::profile is set; adds two clock reads per operation.
enum class OpKind : uint32_t {
  kEmbed,       // token (+ position) embeddings
  kNorm,        // LayerNorm / RMSNorm
  kLinear,      // the layers' matrix products (quantize, GEMM, dequantize + bias)
  kAttention,   // attention proper: Q·Kᵀ, softmax, P·V (and K/V into the cache)
  kLocalAttention,  // the same in layers with a sliding window (their cost grows as n·w)
  kConvolution, // short convolutions' gates and taps (and their state)
  kLinearAttention,  // Gated DeltaNet: the gates, the delta rule (chunked or recurrent), its norm;
                     // RWKV: the token shifts, the WKV recurrence, the receptance gate
  kRope,        // rotary position embeddings
  kActivation,  // GELU, SiLU, ... (gated: act(gate) * up)
  kResidual,    // residual adds
  kHead,        // the LM head's product
  kCount
};
const char* OpKindName(OpKind kind);

// Attention work is counted in tiles: a block of kProfileQueryRows queries
// against one tile of keys (AttentionParams::tile), per head; a block visits
// the tiles meeting the union of its rows' key ranges, as the int8 kernel's
// loop does (ops/qs8_attention.cc).
constexpr size_t kProfileQueryRows = 16;

struct AttentionTiles {
  double visited = 0;  // tiles the calls visited
  double full = 0;     // tiles a pass with every key visible would visit
};

struct ForwardProfile {
  int64_t nanos[static_cast<size_t>(OpKind::kCount)] = {};
  uint64_t calls[static_cast<size_t>(OpKind::kCount)] = {};
  double linear_ops = 0;  // 2 x multiply-adds of kLinear products
  double head_ops = 0;    // same for kHead
  // F32 products run on f32_gemm__ref: none has an operator (no XNNPACK), or
  // one's call strides are not its operator's (LinearWeights::in_stride).
  uint64_t reference_products = 0;
  AttentionTiles attention_tiles;        // layers without a window (and cross-attention)
  AttentionTiles local_attention_tiles;  // layers with a sliding window
  void Clear() { *this = ForwardProfile(); }
};

// What the model's tensors ask of the forward pass (engine/weights.h).
struct ForwardMode {
  bool int8_attention = false;  // int8 Q·Kᵀ / P·V and an int8 KV cache (UsesInt8Attention)
  bool int8_matrices = false;   // some matrix is int8: plan the quantized-row buffers
  bool two_digit_inputs = false;  // some int8 matrix has 16-bit inputs (Tensor.input_bits)
};

ForwardMode GetForwardMode(const Model& model);

// What a session is planned for (engine/session.h's SessionLimits, resolved).
struct ForwardLimits {
  uint32_t max_batch = 1;
  uint32_t max_seq = 1;
  uint32_t max_new_tokens = 0;
  uint32_t attention_tile = 0;  // 0 = the kernel's default
  uint32_t threads = 1;
  // Decoder-only prompts run through the layers in chunks of this many
  // positions (keys and values go to the KV cache chunk by chunk), so the
  // per-layer buffers hold max_batch x prefill_chunk rows, not max_seq.
  // 0 or >= max_seq: one pass. The results do not depend on it (bit for bit).
  uint32_t prefill_chunk = 0;
  // Decoders: logits of each sequence's last real row only ([batch, vocab]),
  // not of every row ([batch * seq, vocab]).
  bool last_logits_only = false;
};

struct LayerState;  // engine/mixer.h

// Keys and values of one attention: key row p of sequence b is row b * stride
// + p of k [batch, stride, kv_dim], in the element type of the pass's attention
// backend (AttentionBackend: f32, or int8 with one f32 scale per (row, kv head)
// in k_scales [batch, stride, kv_heads]; null without scales). v the same.
struct KvRows {
  void* k = nullptr;
  void* v = nullptr;
  float* k_scales = nullptr;
  float* v_scales = nullptr;
  size_t stride = 0;  // rows per sequence
};

// The attention/KV backend of a pass (forward.cc: fp32 or int8), chosen once at
// prepare time from ForwardMode::int8_attention. It owns the KV layout (bytes
// per element, scales), the storing of new key and value rows, and attention
// itself; the blocks call it without knowing the precision.
struct AttentionBackend;

// Where the forward pass's buffers sit in the session's arenas: the table
// (engine/forward_buffers.h) with each row's size and offset, and the sizes
// the run needs besides.
struct ForwardPlan {
  PlannedBuffer buffers[kNumForwardBuffers];  // indexed by ForwardBuffer, in placement order
  size_t attention_bytes = 0;  // per thread: f32_attention_scratch_floats floats or
                               // qs8_attention_scratch_bytes, rounded up to 64
  size_t acc_elements = 0;     // int32 elements of acc (forward.cc RowBlock)
  size_t residual_stride = 0;  // floats per thread of residual
  uint32_t kv_positions = 0;  // max_seq + max_new_tokens
  uint32_t rotary_dim = 0;
  uint32_t attention_tile = 0;  // keys per attention tile; 0 = kAttentionDefaultTile
  uint32_t chunk = 0;           // prompt rows per pass of a decoder-only prefill
  ForwardLimits limits;
  ForwardMode mode;

  const PlannedBuffer& buffer(ForwardBuffer b) const { return buffers[static_cast<size_t>(b)]; }
};

// Plans the pass of a model into the three arenas' layouts. Layer-free models
// (0 layers: embedding -> norm (-> LM head)) run through the same pass, except
// encoder-decoders, which need layers (the session refuses them).
// attention_tile: keys per attention tile (0 = the kernel's default).
// Per-thread scratch is planned for each of limits.threads.
Status PlanForward(const fb::Architecture& a, ForwardMode mode, const ForwardLimits& limits,
                   ArenaLayout* activations, ArenaLayout* scratch, ArenaLayout* kv_cache,
                   ForwardPlan* plan);

// What a pass tells the outside as it runs: the converter's observers and,
// with SessionLimits::stream_weights, the weight stream. Owned by the Session;
// Forward::hooks points at it only while one of them is set.
struct ForwardHooks {
  LayerObserverFn layer_observer = nullptr;  // optional
  void* layer_observer_ctx = nullptr;
  LayerInputFn layer_input = nullptr;  // optional
  void* layer_input_ctx = nullptr;
  ProductObserverFn product_observer = nullptr;  // optional
  void* product_observer_ctx = nullptr;
  // Told as a pass enters and leaves each layer and the head (engine/weights.h).
  WeightStream* weight_stream = nullptr;
  // The layer the product observer is told about, set as a pass reaches it.
  LayerStack observed_stack = LayerStack::kSingle;
  uint32_t observed_layer = 0;
  bool any() const {
    return layer_observer != nullptr || layer_input != nullptr || product_observer != nullptr ||
           weight_stream != nullptr;
  }
};

// Everything a run reads, as pointers into the model and the arenas. Built once
// by PrepareForward; valid while the Model and the arenas live (moving the
// Session keeps the arenas in place).
struct Forward {
  const fb::Architecture* arch = nullptr;
  const ModelWeights* weights = nullptr;
  const KernelTable* kernels = nullptr;
  ThreadPool* pool = nullptr;  // null: one thread
  const AttentionBackend* attention_backend = nullptr;  // fp32 or int8, for the whole pass
  ForwardProfile* profile = nullptr;   // optional: time per operation kind
  // The converter's observers and the weight stream; null when none is set,
  // so a pass tests one pointer (ForwardHooks).
  ForwardHooks* hooks = nullptr;
  // [decoder layers]: where each keeps its token mixer's state (engine/mixer.h)
  const LayerState* layer_states = nullptr;
  AttentionCapture* capture = nullptr;  // optional: set for one run by the Session
  const float* rope_inv_freq = nullptr;  // [rotary_dim / 2] or null
  // [rotary_dim / 2]: sliding-window layers' frequencies (rope.local_theta,
  // unscaled), or null: every layer uses rope_inv_freq
  const float* rope_local_inv_freq = nullptr;
  const float* alibi_slopes = nullptr;   // [heads] or null
  uint32_t rotary_dim = 0;
  float rope_attention_factor = 1.0f;  // LongRope's, else 1
  uint32_t max_batch = 0;
  uint32_t max_seq = 0;
  uint32_t kv_positions = 0;
  uint32_t attention_tile = 0;  // AttentionParams::tile
  uint32_t chunk = 0;           // ForwardPlan::chunk
  bool last_logits_only = false;
  size_t attention_bytes = 0;   // per thread, of buffer<kAttention>
  size_t acc_elements = 0;      // of buffer<kAcc>
  size_t residual_stride = 0;   // floats per thread of buffer<kResidual>
  // The planned buffers (engine/forward_buffers.h), null where the plan gave
  // a row no bytes; read them through buffer<B>().
  void* buffers[kNumForwardBuffers] = {};
  template <ForwardBuffer B>
  typename ForwardBufferType<B>::Type* buffer() const {
    return static_cast<typename ForwardBufferType<B>::Type*>(buffers[static_cast<size_t>(B)]);
  }
  // Keys and values, in the backend's element type (stride: set per call):
  KvRows encoder_kv;  // encoder stacks' self-attention, in scratch [max_batch, seq, kv_dim]
  KvRows self_kv;     // decoder layers' KV cache [decoder_layers, max_batch, kv_positions, kv_dim]
  KvRows cross_kv;    // enc-dec cross-attention [decoder_layers, max_batch, max_seq, kv_dim]
};

// Prepare: resolves and checks the weights (engine/weights.h) into the
// activations arena and fills the RoPE and ALiBi tables. int8 products call
// `kernels`, which must outlive the Forward; so must `pool` (null: one thread;
// else its thread count must be the one planned). Results are bit-identical
// for every thread count: the work is split so that each output value is
// computed by the same kernel calls whatever the split. F32 products run on
// XNNPACK operators created in *f32_products (PrepareF32Products), which must
// outlive the Forward too; null, or the op unavailable: on f32_gemm__ref.
// `stream` (SessionLimits::stream_weights), when not null, is initialized
// instead and makes the operators one layer at a time (engine/weights.h
// WeightStream); it must outlive the Forward, which reaches it through
// ForwardHooks::weight_stream (set by the caller).
Status PrepareForward(const Model& model, const KernelTable& kernels, ThreadPool* pool,
                      const ForwardPlan& plan, const Arena& activations, const Arena& scratch,
                      const Arena& kv_cache, F32FullyConnectedSet* f32_products,
                      WeightStream* stream, Forward* out);

// Encoder-only: the last hidden state [batch * seq, hidden].
const float* RunEncoder(const Forward& f, const int32_t* ids, const uint32_t* lengths,
                        uint32_t batch, uint32_t seq);

// Decoder-only, full sequences: logits [batch * seq, vocab] (last_logits_only:
// [batch, vocab], each sequence's row lengths[b] - 1); keys and values of
// positions 0..seq-1 stay in the KV cache for DecoderStep. The prompt goes
// through the layers in chunks of f.chunk positions.
const float* RunDecoderPrefill(const Forward& f, const int32_t* ids, const uint32_t* lengths,
                               uint32_t batch, uint32_t seq);

// Decoder-only, k more tokens per sequence after the cached ones: ids [batch,
// k] at positions positions[b] .. positions[b] + k - 1, in chunks of f.chunk
// positions, as a prompt's later chunks run. Logits of the last new token of
// each sequence [batch, vocab] (last_logits_only), else [batch * k, vocab].
const float* RunDecoderExtend(const Forward& f, const int32_t* ids, const uint32_t* positions,
                              uint32_t batch, uint32_t k);

// Decoder-only, one token per sequence: ids[b] at position positions[b] (the
// tokens before it are in the cache). Logits [batch, vocab].
const float* RunDecoderStep(const Forward& f, const int32_t* ids, const uint32_t* positions,
                            uint32_t batch);

// Encoder-decoder, once per source: runs the encoder over enc_ids and projects
// every decoder layer's cross-attention keys and values into the KV cache
// (cross_k, cross_v), which the decoder calls below then read.
void EncodeSource(const Forward& f, const int32_t* enc_ids, const uint32_t* enc_lengths,
                  uint32_t enc_seq, uint32_t batch);

// Encoder-decoder, teacher-forced on the source EncodeSource last encoded (the
// same enc_lengths, enc_seq and batch): logits [batch * dec_seq, vocab]
// (last_logits_only: [batch, vocab], row dec_lengths[b] - 1 of each); the
// decoder's keys and values of positions 0..dec_seq-1 stay in the KV cache.
const float* RunDecoderOnSource(const Forward& f, const uint32_t* enc_lengths, uint32_t enc_seq,
                                const int32_t* dec_ids, const uint32_t* dec_lengths,
                                uint32_t dec_seq, uint32_t batch);

// Encoder-decoder, one decoder token per sequence: ids[b] at position
// positions[b] (the tokens before it are in the cache), on the encoded source.
// Logits [batch, vocab].
const float* RunDecoderOnSourceStep(const Forward& f, const uint32_t* enc_lengths,
                                    uint32_t enc_seq, const int32_t* ids,
                                    const uint32_t* positions, uint32_t batch);

// Decoder layer l's cached keys and values (an attention layer's), for saving
// and restoring a session's state: sequence b's self-attention rows start at
// row b * stride (kv_positions), its cross-attention rows (encoder-decoder) at
// b * max_seq. KvValueBytes: bytes per key or value element (1 with int8
// attention, else 4); the scales are one f32 per (row, kv head) when non-null.
KvRows DecoderSelfKv(const Forward& f, uint32_t l);
KvRows DecoderCrossKv(const Forward& f, uint32_t l);
size_t KvValueBytes(const Forward& f);

// Copies sequence b's first `rows` rows of kv (keys, values, then their scales)
// to (save) or from (!save) *cursor, which it advances.
void CopyKvRows(const Forward& f, const KvRows& kv, uint32_t b, size_t rows, bool save,
                uint8_t** cursor);

// Encoder-decoder, teacher-forced: EncodeSource, then RunDecoderOnSource. The
// decoder logits [batch * dec_seq, vocab].
const float* RunEncoderDecoder(const Forward& f, const int32_t* enc_ids,
                               const uint32_t* enc_lengths, uint32_t enc_seq,
                               const int32_t* dec_ids, const uint32_t* dec_lengths,
                               uint32_t dec_seq, uint32_t batch);

}  // namespace octet
