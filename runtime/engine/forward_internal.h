// What the pieces of the forward pass share: the thread split, the matrix
// products, the hooks, norms and the attention backend. forward.cc (the
// pass: embedding, the layer stack, the head, plan and prepare), the token
// mixers (engine/mixer.h: mixer_attention.cc, mixer_token_shift.cc) and the
// channel mixer (ffn.cc) include it; nothing outside the engine does.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/forward.h"
#include "kernels/attention_params.h"
#include "platform/clock.h"

namespace octet {

// Where a backend's Attend writes the probabilities of a captured call
// (engine/forward.h AttentionCapture) for one sequence: query row i (position
// q_pos0 + i) of head h at probs + h * head_stride + i * ld, columns [0, kv_len)
// (the session zeroed the rest).
struct CaptureTarget {
  float* probs;        // [heads, q_len, ld] from the call's first query row
  size_t ld;           // floats per row: the capture's k_len
  size_t head_stride;  // floats per head: q_len * k_len
  size_t q_real;       // queries at positions >= q_real are padding: zero rows
};

// ---------------------------------------------------------------------------
// The attention/KV backends. A call's new keys and values [n, kv_dim] are
// projected in f32 (KvTargets), then Store puts them in the KV rows; Attend
// runs attention of a sequence's queries against their KV rows.
struct AttentionBackend {
  size_t value_bytes;  // bytes per stored key or value element
  bool row_scales;     // one f32 scale per (row, kv head) beside K and V
  // New keys and values are projected into f32 staging rows (k, v) and
  // stored from there; encoder stacks then keep their KV rows in scratch of
  // their own. Not staged: projected straight into the (f32) KV rows.
  bool staged;
  size_t query_bytes;  // quantized queries' bytes per element (q8 with a scale
                       // per (row, head)); 0: Attend reads the f32 queries
  // Prepare: why these parameters cannot run (null: they can).
  const char* (*params_error)(const AttentionParams& p);
  // Plan: one thread's scratch for Attend with p's tile and head_dim, rounded to 64 bytes.
  Status (*scratch_bytes)(const AttentionParams& p, size_t* bytes);
  // Puts new keys and values k, v [n, kv_dim] (from KvTargets) into the KV
  // rows p0 .. p0 + n - 1 of sequence b.
  void (*store)(const Forward& f, const KvRows& kv, uint32_t b, size_t p0, size_t n,
                const float* k, const float* v);
  // Sequence b's queries qb [q_len, heads * head_dim] (f32, overwritten with
  // the output) against its keys and values in kv. capture (null: none) gets
  // the probabilities as the backend defines them (AttentionCapture).
  void (*attend)(const Forward& f, const AttentionParams& p, const KvRows& kv, uint32_t b,
                 float* qb, const CaptureTarget* capture);
};

namespace fwd {

using FB = ForwardBuffer;

inline size_t QDim(const fb::Architecture& a) {
  return static_cast<size_t>(a.attention()->num_heads()) * a.attention()->head_dim();
}
inline size_t KvDim(const fb::Architecture& a) {
  return static_cast<size_t>(a.attention()->num_kv_heads()) * a.attention()->head_dim();
}
inline uint32_t DecoderLayers(const fb::Architecture& a) {
  return a.structure() == fb::Structure::EncoderDecoder ? a.num_decoder_layers()
         : a.structure() == fb::Structure::DecoderOnly  ? a.num_layers()
                                                        : 0;
}

// ---------------------------------------------------------------------------
// Threads. Every parallel loop below splits its outputs into disjoint pieces
// (columns of a product, rows of a row operation, heads of attention) and
// computes each piece with the same kernel calls whatever the split, so the
// results are bit-identical for every thread count.

// Adds the time of its scope to f.profile (when set) under `kind`.
class ProfileScope {
 public:
  ProfileScope(const Forward& f, OpKind kind) : profile_(f.profile), kind_(kind) {
    if (profile_ != nullptr) start_ = MonotonicNanos();
  }
  ~ProfileScope() {
    if (profile_ == nullptr) return;
    profile_->nanos[static_cast<size_t>(kind_)] += MonotonicNanos() - start_;
    profile_->calls[static_cast<size_t>(kind_)] += 1;
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  ForwardProfile* profile_;
  OpKind kind_;
  int64_t start_ = 0;
};

inline size_t Threads(const Forward& f) { return f.pool != nullptr ? f.pool->threads() : 1; }

// Calls fn(task, thread) for task < tasks on the session's threads.
template <typename Fn>
void ParallelFor(const Forward& f, size_t tasks, Fn&& fn) {
  if (f.pool == nullptr || tasks <= 1) {
    for (size_t t = 0; t < tasks; ++t) fn(t, size_t{0});
    return;
  }
  f.pool->For(tasks, fn);
}

// Splits `count` items (of `cost` work each) into pieces of a multiple of
// `align` items: about four per thread, so a late thread still finds work; one
// piece when the whole is too small to be worth a wake-up.
inline size_t PieceSize(const Forward& f, size_t count, size_t align, size_t cost) {
  const size_t threads = Threads(f);
  constexpr size_t kMinWork = 16 * 1024;  // multiply-adds or values per piece
  if (threads <= 1 || count * cost < 2 * kMinWork) return count > 0 ? count : 1;
  size_t piece = (count + threads * 4 - 1) / (threads * 4);
  const size_t min_piece = (kMinWork + cost - 1) / cost;
  if (piece < min_piece) piece = min_piece;
  piece = (piece + align - 1) / align * align;
  return piece;
}

// fn(begin, end, thread) over [0, count) in pieces of PieceSize.
template <typename Fn>
void ParallelRange(const Forward& f, size_t count, size_t align, size_t cost, Fn&& fn) {
  const size_t piece = PieceSize(f, count, align, cost);
  const size_t tasks = (count + piece - 1) / piece;
  ParallelFor(f, tasks, [&](size_t t, size_t thread) {
    const size_t begin = t * piece;
    const size_t end = count - begin < piece ? count : begin + piece;
    fn(begin, end, thread);
  });
}

// An input's rows already quantized as an int8 Linear quantizes them (rows of k
// values, row stride k): the projections that read the same input (Q, K and V;
// gate and up) quantize it once (Linear's `pre`).
struct QuantizedRows {
  const int8_t* q;       // [rows, k]
  const float* scales;   // [rows]
};

// out[rows, w.out] (row stride ldo) = in[rows, w.in] (row stride ldi) · w.weightᵀ + w.bias
// (forward.cc MatMul: int8 or f32, on the session's threads). pre: see QuantizedRows.
void Linear(const Forward& f, const LinearWeights& w, const float* in, size_t ldi, size_t rows,
            float* out, size_t ldo, const QuantizedRows* pre = nullptr);

// The hooks (if any) as a pass enters layer l of a stack: the weight stream
// readies its weights, the product observer learns where it is, the layer
// input hook may replace the residual stream x [rows, hidden] (null: none).
void BeginLayer(const Forward& f, LayerStack stack, uint32_t l, const LayerWeights& w,
                float* x = nullptr, size_t rows = 0);

// ... and as it leaves it: the weight stream lets the weights go, the layer
// observer sees the residual stream x [rows, hidden] (x null: not told).
void EndLayer(const Forward& f, LayerStack stack, uint32_t l, const LayerWeights& w,
              const float* x, size_t rows);

// Tells the product observer, if any, about the input x [rows, cols] (stride ld).
void ObserveInput(const Forward& f, ProductInput which, const float* x, size_t rows, size_t cols,
                  size_t ld);

// True when Linear(w) quantizes its input into qin as int8 rows (an int8
// product with 8-bit inputs), which the next projections of the input may reuse.
inline bool QuantizesInput(const LinearWeights& w) {
  return w.fc == nullptr && w.weight.f32 == nullptr && !w.weight.two_digit_input;
}

// Rows [row0, row0 + rows) of the input the last int8 Linear quantized (in
// rows of k values): for the next projections of the same input.
// None (nulls) when the pass has no int8 products (qin is not planned).
inline QuantizedRows LastQuantized(const Forward& f, size_t k, size_t row0) {
  if (f.buffer<FB::kQin>() == nullptr) return {nullptr, nullptr};
  return {f.buffer<FB::kQin>() + row0 * k, f.buffer<FB::kQinScales>() + row0};
}

// Per (row, head) symmetric quantization: x[rows, heads * head_dim] -> q (same
// layout) and scales[rows, heads]: rows * heads rows of head_dim values.
void QuantizeHeads(const Forward& f, const float* x, size_t rows, size_t heads, size_t head_dim,
                   int8_t* q, float* scales);

// out[rows, hidden] = Norm(in[rows, hidden]); out may be in.
void Normalize(const Forward& f, const NormWeights& n, const float* in, size_t rows, float* out);

// The attention backend of a pass (mixer_attention.cc): fp32 or int8.
const AttentionBackend& Backend(const ForwardMode& mode);

// The attention shape of the model and the tile size; the caller sets lengths,
// masks and biases.
AttentionParams BaseParams(const fb::Architecture& a, uint32_t tile = 0);

// What a decoder stack's layers attend to besides themselves: the source whose
// cross-attention keys and values ProjectCrossKv put in the KV cache.
struct CrossInput {
  const uint32_t* enc_lengths = nullptr;  // [batch]: real source tokens
  uint32_t enc_seq = 0;                   // source rows per sequence
};

// Projects encoder_out [batch * enc_seq, hidden] into every decoder layer's
// cross-attention keys and values, once per source.
void ProjectCrossKv(const Forward& f, const float* encoder_out, uint32_t enc_seq, uint32_t batch);

// The cross-attention sub-block of decoder layer l of an encoder-decoder:
// queries from in [batch * seq, hidden], keys and values of the source that
// ProjectCrossKv projected; out [batch * seq, hidden]. Queries from q_valid[b]
// on are padding (for the capture, null: none).
void CrossAttentionBlock(const Forward& f, const LayerWeights& w, uint32_t l,
                         const CrossInput& cross, const float* in, const uint32_t* q_valid,
                         uint32_t batch, uint32_t seq, float* out,
                         const AttentionCapture* capture);

// Feed-forward: in, out [rows, hidden].
// The channel mixer of a layer (ffn.cc): up (+ bias), [act(gate) * up | act(up)], down (+ bias).
void FeedForward(const Forward& f, const LayerWeights& w, const float* in, size_t rows,
                 float* out);

}  // namespace fwd
}  // namespace octet
