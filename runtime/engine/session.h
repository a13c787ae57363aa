// Session: the per-run state for one Model, created for limits. Creation plans
// every buffer into arenas (one allocation each, or memory the caller hands
// in); Run only computes: no allocation, no logging. Run-time data (token ids,
// lengths) is still checked and errors come back as a Status.
//
// One Session is used by one thread at a time; many Sessions may share a Model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/alloc.h"
#include "core/arena.h"
#include "core/result.h"
#include "engine/forward.h"
#include "engine/sampling.h"
#include "format/model.h"
#include "kernels/kernel_table.h"
#include "platform/thread_pool.h"

namespace octet {

struct SessionLimits {
  uint32_t max_batch = 1;        // sequences per Run
  uint32_t max_seq = 128;        // tokens per sequence (prompt + generated, for decoders)
  uint32_t max_new_tokens = 0;   // decoder steps after the prompt (reserved in the KV cache)
  // Keys per attention tile; 0 = the kernel's default (kAttentionDefaultTile).
  // Results depend on it only through float rounding: for tests and benchmarks.
  uint32_t attention_tile = 0;
  // Threads of the session's pool: 1 = the calling thread only; 0 = the
  // machine's fast cores (DefaultThreadCount()). Results are bit-identical for
  // every count. At most kMaxSessionThreads.
  uint32_t threads = 1;
  // Decoders: Run (and RunEncoderDecoder) output only each sequence's last
  // real row of logits, [batch, 1, vocab]: what generation needs. The logits
  // buffer is then planned for max_batch rows instead of max_batch x max_seq.
  bool last_logits_only = false;
  // Decoder-only prompts pass through the layers in chunks of this many
  // positions, so the per-layer buffers are planned for max_batch x
  // prefill_chunk rows (a long prompt needs little more than its KV cache).
  // Results are the same bit for bit, but in Gated DeltaNet layers, whose rule
  // then adds in another order (float rounding). 0 = kDefaultPrefillChunk when
  // last_logits_only (halved down to kMinDefaultPrefillChunk while its buffers
  // exceed kPrefillBufferBytes), else one pass.
  uint32_t prefill_chunk = 0;
  // Weights one layer at a time, for a model larger than memory (the
  // converter's fp32 twin and report of a billion-parameter checkpoint): a
  // pass packs each layer's F32 matrices as it reaches the layer and frees
  // them after, and releases the layer's pages of the file mapping once it has
  // run (engine/weights.h WeightStream), so it holds about one layer of
  // weights plus the head. Results are bit-identical; but runs then allocate
  // and read every weight again on each pass. Not for applications.
  bool stream_weights = false;
  // With stream_weights: the head, then the first layers, whose weights fit
  // this many bytes are packed once and kept (as without streaming); the
  // others stream. A model that fits runs as fast as unstreamed.
  uint64_t stream_keep_bytes = 0;
};

constexpr uint32_t kDefaultPrefillChunk = 512;
// The default chunk is halved, down to this, while the activations and scratch
// it plans exceed kPrefillBufferBytes.
constexpr uint32_t kMinDefaultPrefillChunk = 128;
constexpr size_t kPrefillBufferBytes = size_t{48} << 20;

constexpr uint32_t kMaxSessionThreads = 256;

// What creation planned, in bytes. `inspect` and `bench` print it.
struct SessionPlan {
  size_t activation_bytes = 0;  // hidden states, layer outputs, the output buffer
  size_t scratch_bytes = 0;     // per-op temporaries (quantized rows, accumulators)
  size_t kv_cache_bytes = 0;    // decoder keys and values
  size_t total() const { return activation_bytes + scratch_bytes + kv_cache_bytes; }
  // What one sequence keeps between calls, by its decoder layers' token and
  // channel mixers (engine/mixer.h): KV rows in the layers with attention
  // (bytes per position kept), a fixed state in the others (a short
  // convolution's, Gated DeltaNet's, RWKV's time and channel mixes': bytes
  // whatever the length); kv_cache_bytes holds both for max_batch sequences.
  // Encoder-only models: all 0.
  uint32_t kv_layers = 0;
  size_t kv_bytes_per_position = 0;
  uint32_t fixed_state_layers = 0;
  size_t fixed_state_bytes = 0;
};

// Caller-owned memory for the arenas (each 64-byte aligned, at least the planned size).
struct SessionMemory {
  void* activations = nullptr;
  void* scratch = nullptr;
  void* kv_cache = nullptr;
};

// A float output in the activations arena: [batch, seq, dim], row-major.
struct OutputView {
  const float* data = nullptr;
  uint32_t batch = 0;
  uint32_t seq = 0;
  uint32_t dim = 0;
};

class Session {
 public:
  // The plan for `limits`, without allocating.
  static Result<SessionPlan> Plan(const Model& model, const SessionLimits& limits);
  // Plans and allocates one arena per kind. `model` must outlive the session.
  static Result<Session> Create(const Model& model, const SessionLimits& limits);
  // Plans and uses the caller's memory: no arena allocation (what is still
  // allocated at creation: the thread pool's workers, and an fp32 file's
  // XNNPACK operators with their packed weights, ops/f32_fully_connected.h).
  static Result<Session> CreateWithMemory(const Model& model, const SessionLimits& limits,
                                          const SessionMemory& memory);

  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  ~Session();

  // One forward pass over a padded batch: ids is [batch, seq] row-major,
  // lengths[b] (1..seq) tokens of row b are real, the rest is padding (not read).
  // Output: encoder-only -> last hidden state [batch, seq, hidden];
  //         decoder-only -> logits [batch, seq, vocab], or [batch, 1, vocab]
  //         with SessionLimits::last_logits_only (row lengths[b] - 1).
  // Decoders with layers keep the keys and values of the batch in the KV cache
  // for Step. Encoder-decoder models run through RunEncoderDecoder.
  Status Run(const int32_t* ids, const uint32_t* lengths, uint32_t batch, uint32_t seq);

  // Decoder-only models with layers, after Run: one more token per sequence of
  // the last batch (ids[batch]), appended after its real tokens (position
  // lengths[b], then one more per Step). Output: logits [batch, 1, vocab].
  // At most max_seq + max_new_tokens positions per sequence.
  Status Step(const int32_t* ids, uint32_t batch);

  // Decoder-only models with layers, after Run: k (1..max_seq) more tokens
  // per sequence of the last batch at once (ids [batch, k] row-major),
  // appended after its cached ones as k Steps would append them, through the
  // layers in prompt chunks (SessionLimits::prefill_chunk). The cache then
  // holds what k Steps leave (bit for bit with int8 attention; fp32 attention
  // rounds as a prompt does). Output: logits [batch, 1, vocab] of each last
  // new token with last_logits_only, else [batch, k, vocab]; Sample reads the
  // last. For a chat's next turn. Positions as for Step.
  Status Extend(const int32_t* ids, uint32_t batch, uint32_t k);

  // Decoders, after Run, Step or RunEncoderDecoder: picks the next token of
  // each sequence of that batch (out_ids[batch]) from its last real row of
  // logits (after Run: position lengths[b] - 1; after Step: the single row),
  // as engine/sampling.h describes, drawing for sequence 0, 1, ... in order
  // from *rng_state. Uses scratch planned at creation: no allocation.
  Status Sample(const SamplingParams& params, uint64_t* rng_state, int32_t* out_ids);

  // Encoder-decoder models, teacher-forced: the encoder reads enc_ids [batch,
  // enc_seq] (enc_lengths[b] real), the decoder dec_ids [batch, dec_seq]
  // (dec_lengths[b] real, starting with the decoder start token), both within
  // max_seq. Output: decoder logits [batch, dec_seq, vocab].
  Status RunEncoderDecoder(const int32_t* enc_ids, const uint32_t* enc_lengths, uint32_t enc_seq,
                           const int32_t* dec_ids, const uint32_t* dec_lengths, uint32_t dec_seq,
                           uint32_t batch);

  // Encoder-decoder models, after RunEncoderDecoder: one more decoder token per
  // sequence of that batch (ids[batch]), appended after its real decoder tokens
  // (position dec_lengths[b], then one more per step), attending to the cached
  // decoder keys and the source's cross-attention keys and values, computed once
  // by RunEncoderDecoder. Output: logits [batch, 1, vocab]. At most max_seq +
  // max_new_tokens decoder positions per sequence.
  Status StepEncoderDecoder(const int32_t* ids, uint32_t batch);

  // Decoders with layers, after a Run (or RunEncoderDecoder): the state of the
  // cached sequences as bytes: their positions, the keys and values in the KV
  // cache (int8 with scales, or f32), the source's cross-attention rows
  // (encoder-decoder), and each sequence's next-token logits. LoadState into a
  // session of the same model (checked by a fingerprint of the file's tables)
  // whose limits hold the state gives bit-identical samples and steps after it,
  // as if that session had run the prompt. No allocation.
  // StateBytes: 0 before any run. SaveState: kBufferTooSmall (with *written =
  // StateBytes()) when capacity is short.
  size_t StateBytes() const;
  Status SaveState(void* out, size_t capacity, size_t* written) const;
  Status LoadState(const void* data, size_t size);

  // Calls fn(ctx, ...) after every transformer layer of the following runs and
  // steps (engine/forward.h, LayerObserverFn); null stops it. For inspection
  // (the converter's per-layer quantization report), not for speed.
  void SetLayerObserver(LayerObserverFn fn, void* ctx) {
    hooks_->layer_observer = fn;
    hooks_->layer_observer_ctx = ctx;
    UpdateHooks();
  }

  // Calls fn(ctx, ...) as every transformer layer of the following runs and
  // steps begins, and as each stack ends, with the residual stream it may
  // overwrite (engine/forward.h, LayerInputFn); null stops it. For the converter's layer-by-layer
  // calibration: a one-layer model run on the stream of the layers before.
  void SetLayerInput(LayerInputFn fn, void* ctx) {
    hooks_->layer_input = fn;
    hooks_->layer_input_ctx = ctx;
    UpdateHooks();
  }

  // Calls fn(ctx, ...) with the input of every matrix product of a layer and of
  // the head (engine/forward.h, ProductObserverFn); null stops it. For the
  // converter's calibration.
  void SetProductObserver(ProductObserverFn fn, void* ctx) {
    hooks_->product_observer = fn;
    hooks_->product_observer_ctx = ctx;
    UpdateHooks();
  }

  // Captures the attention probabilities of one layer (engine/forward.h,
  // AttentionCapture) in each following Run and RunEncoderDecoder (not in the
  // steps) into the caller's capture->probs, and sets its batch, heads, q_len
  // and k_len; null stops it. *capture must outlive its use. Checked here: the
  // stack, site and layer exist in this model (kInvalidArgument otherwise).
  // A run whose [batch, heads, q_len, k_len] exceeds capture->capacity fails
  // with kInvalidArgument before computing anything. Costs nothing when unset;
  // when set, the captured layer's probabilities are recomputed beside its
  // attention (no allocation, no planned bytes: the buffer is the caller's).
  Status SetAttentionCapture(AttentionCapture* capture);

  // Adds the time of the following runs and steps per operation kind to
  // *profile (engine/forward.h); null stops it. For `octet bench --profile`.
  void SetProfile(ForwardProfile* profile) { forward_.profile = profile; }

  OutputView output() const { return output_; }
  const SessionPlan& plan() const { return plan_; }
  const SessionLimits& limits() const { return limits_; }
  const KernelTable& kernels() const { return *kernels_; }
  // Threads the session runs on (the resolved SessionLimits::threads).
  uint32_t threads() const { return threads_; }
  // The XNNPACK operators of an fp32 file's products (ops/f32_fully_connected.h),
  // or null / empty when they run f32_gemm__ref (or the file is int8).
  const F32FullyConnectedSet* f32_products() const { return f32_products_.get(); }

 private:
  struct Layout;
  Session() = default;
  static Result<Session> Build(const Model& model, const SessionLimits& limits,
                               const SessionMemory* memory);
  Status CheckBatch(const int32_t* ids, const uint32_t* lengths, uint32_t batch, uint32_t seq,
                    const char* what) const;
  Status CheckStep(const int32_t* ids, uint32_t batch, const char* what, const char* first) const;
  void SetSampleRows(const uint32_t* lengths, uint32_t batch, uint32_t seq);
  // Before a run: checks the capture's capacity for [batch, heads, q_len,
  // k_len], sets its shape, zeroes it and hands it to the forward pass.
  Status ArmCapture(uint32_t batch, uint32_t q_len, uint32_t k_len);
  // forward_.hooks: hooks_ while it holds an observer or the weight stream, else null.
  void UpdateHooks() { forward_.hooks = hooks_->any() ? hooks_.get() : nullptr; }

  const Model* model_ = nullptr;
  const KernelTable* kernels_ = nullptr;
  std::unique_ptr<ThreadPool> pool_;  // created with the session; moves with it
  // fp32 files: the XNNPACK operators of the F32 products (packed copies of
  // the matrices), created with the session, deleted with it; the Forward's
  // weights point at them.
  std::unique_ptr<F32FullyConnectedSet> f32_products_;
  // SessionLimits::stream_weights: the operators of one layer at a time instead.
  std::unique_ptr<WeightStream> weight_stream_;
  // The observers and the weight stream (forward_.hooks while one is set);
  // on the heap, made at creation, so that moving the Session keeps it in place.
  Owned<ForwardHooks> hooks_;
  uint32_t threads_ = 1;
  SessionLimits limits_;
  SessionPlan plan_;
  Arena activations_;
  Arena scratch_;
  Arena kv_cache_;
  // The forward pass (engine/forward.h), layer-free models included.
  Forward forward_;
  uint32_t* positions_ = nullptr;  // [max_batch]: next position per sequence (Step)
  uint32_t step_batch_ = 0;        // sequences in the KV cache; 0 = none yet
  uint32_t* source_lengths_ = nullptr;  // [max_batch]: enc_lengths of the cached source
  uint32_t source_seq_ = 0;             // enc_seq of the cached source
  OutputView output_;
  AttentionCapture* capture_ = nullptr;  // SetAttentionCapture; forward_.capture during a run
  // Decoders: the output row that Sample reads per sequence, and its scratch.
  uint32_t* sample_rows_ = nullptr;  // [max_batch] (activations)
  void* sample_scratch_ = nullptr;   // SamplingScratchBytes(vocab) (scratch)
};

}  // namespace octet
