// The forward pass. One function per block, each buffer with its shape. fp32
// files: products on XNNPACK (ops/f32_fully_connected.h) or f32_gemm__ref,
// attention on f32_attention__ref, the rest through the dispatch table. int8
// files: MatMul quantizes its input rows and calls the dispatch table's
// qs8_gemm; attention quantizes Q, K and V per (token, head) and calls
// ops/qs8_attention.h, with K and V stored in int8 in the KV cache.
//
//   Embed              token × embedding_scale (+ token type 0) (+ learned or
//                      sinusoidal position) (→ embedding norm)
//   Layer              pre-norm:  x += Attn(Norm(x)); [x += Cross(Norm(x))]; x += FFN(Norm(x))
//                      post-norm: x = Norm(x + Attn(x)); [x = Norm(x + Cross(x))];
//                                 x = Norm(x + FFN(x))
//   SelfAttention      Q, K, V projections (+ bias), RoPE, tiled attention per sequence
//                      (padding, causal, window, ALiBi, T5 bias), output projection
//   CrossAttention     Q from the decoder, K, V from the encoder output
//   FeedForward        up (+ bias), [act(gate) * up | act(up)], down (+ bias)
//   Head               logits = x · headᵀ × logits_scale (+ final_logits_bias)
#include "engine/forward.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/checked_math.h"
#include "kernels/attention_params.h"
#include "kernels/f32_attention.h"
#include "kernels/f32_elementwise.h"
#include "kernels/f32_gemm.h"
#include "kernels/position.h"
#include "ops/qs8_attention.h"
#include "platform/clock.h"

namespace octet {
namespace {

size_t QDim(const fb::Architecture& a) {
  return static_cast<size_t>(a.attention()->num_heads()) * a.attention()->head_dim();
}
size_t KvDim(const fb::Architecture& a) {
  return static_cast<size_t>(a.attention()->num_kv_heads()) * a.attention()->head_dim();
}
uint32_t DecoderLayers(const fb::Architecture& a) {
  return a.structure() == fb::Structure::EncoderDecoder ? a.num_decoder_layers()
         : a.structure() == fb::Structure::DecoderOnly  ? a.num_layers()
                                                        : 0;
}

F32Activation Activation(fb::Activation act) {
  switch (act) {
    case fb::Activation::GeluErf: return F32Activation::kGeluErf;
    case fb::Activation::GeluTanh: return F32Activation::kGeluTanh;
    case fb::Activation::Relu: return F32Activation::kRelu;
    case fb::Activation::Silu: return F32Activation::kSilu;
  }
  return F32Activation::kGeluErf;
}

// MatMul's int32 block f.acc holds at least kLinearRows rows of any product's
// outputs, and kLinearWideRows rows of the layers' (not the LM head's): the
// packed GEMM reaches its speed on tall blocks, which read each weight tile once.
constexpr size_t kLinearRows = 16;
constexpr size_t kLinearWideRows = 128;

// Rows of an n-column product per GEMM call: as many as f.acc holds.
size_t RowBlock(const Forward& f, size_t n) {
  const size_t block = f.acc_elements / n;
  return block < kLinearRows ? kLinearRows : block;
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

size_t Threads(const Forward& f) { return f.pool != nullptr ? f.pool->threads() : 1; }

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
size_t PieceSize(const Forward& f, size_t count, size_t align, size_t cost) {
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

// out[rows, n] (row stride ldo) = in[rows, k] (row stride ldi) · mᵀ (+ bias[n]),
// m [n, k]. int8 m: each input row is quantized with its own scale
// (qs8_quantize_rows), the product runs in int8 -> int32 (qs8_gemm), and
// qs8_dequantize_rows brings it back to f32 and adds the bias; all three through
// the dispatch table, each bit-exact with its reference. f32 m: on its XNNPACK
// operators fc (ops/f32_fully_connected.h; they hold m and bias) when the
// session made them, else on f32_gemm__ref.
void MatMul(const Forward& f, const Matrix& m, const F32FullyConnected* fc, size_t n, size_t k,
            const float* in, size_t ldi, size_t rows, float* out, size_t ldo,
            const float* bias = nullptr) {
  if (fc != nullptr && ldi == k && ldo == n) {  // one task per column piece
    ParallelFor(f, fc->pieces(), [&](size_t p, size_t) { fc->RunPiece(p, rows, in, out); });
    return;
  }
  // Threads split the output columns (in multiples of 16).
  if (m.f32 != nullptr) {
    ParallelRange(f, n, 16, rows * k, [&](size_t n0, size_t n1, size_t) {
      f32_gemm__ref(rows, n1 - n0, k, in, ldi, m.f32 + n0 * k, k, out + n0, ldo);
      if (bias != nullptr) f.kernels->f32_add_bias(rows, n1 - n0, out + n0, ldo, bias + n0);
    });
    return;
  }
  int8_t* qin = f.qin;               // [rows, k]
  float* row_scales = f.qin_scales;  // [rows]
  ParallelRange(f, rows, 1, k, [&](size_t r0, size_t r1, size_t) {
    f.kernels->qs8_quantize_rows(r1 - r0, k, in + r0 * ldi, ldi, qin + r0 * k, k,
                                 row_scales + r0);
  });
  int32_t* acc = f.acc;  // [block, n]: each piece of columns uses its own columns
  const size_t block = RowBlock(f, n);
  if (m.packed != nullptr) {  // pieces of whole 16-channel tiles
    const size_t tile_bytes = qs8_packed_tile_bytes(k);
    ParallelRange(f, n, kQs8PackedNr, rows * k, [&](size_t n0, size_t n1, size_t) {
      const int8_t* tiles = m.packed + n0 / kQs8PackedNr * tile_bytes;
      for (size_t r0 = 0; r0 < rows; r0 += block) {
        const size_t mr = rows - r0 < block ? rows - r0 : block;
        f.kernels->qs8_packed_gemm(mr, n1 - n0, k, qin + r0 * k, k, tiles, acc + n0, n);
        f.kernels->qs8_dequantize_rows(mr, n1 - n0, acc + n0, n, row_scales + r0,
                                       m.scales + n0, bias != nullptr ? bias + n0 : nullptr,
                                       out + r0 * ldo + n0, ldo);
      }
    });
    return;
  }
  ParallelRange(f, n, 16, rows * k, [&](size_t n0, size_t n1, size_t) {
    for (size_t r0 = 0; r0 < rows; r0 += block) {
      const size_t mr = rows - r0 < block ? rows - r0 : block;
      f.kernels->qs8_gemm(mr, n1 - n0, k, qin + r0 * k, k, m.q8 + n0 * k, k, acc + n0, n);
      f.kernels->qs8_dequantize_rows(mr, n1 - n0, acc + n0, n, row_scales + r0, m.scales + n0,
                                     bias != nullptr ? bias + n0 : nullptr,
                                     out + r0 * ldo + n0, ldo);
    }
  });
}

// out[rows, w.out] (row stride ldo) = in[rows, w.in] (row stride ldi) · w.weightᵀ + w.bias.
void Linear(const Forward& f, const LinearWeights& w, const float* in, size_t ldi, size_t rows,
            float* out, size_t ldo) {
  ProfileScope scope(f, OpKind::kLinear);
  if (f.profile != nullptr) f.profile->linear_ops += 2.0 * rows * w.out * w.in;
  MatMul(f, w.weight, w.fc, w.out, w.in, in, ldi, rows, out, ldo, w.bias);
}

// out[0..cols) += multiplier * row `row` of m (int8 rows dequantized first).
void AddMatrixRow(const Matrix& m, size_t cols, size_t row, float multiplier, float* out) {
  if (m.f32 != nullptr) {
    const float* src = m.f32 + row * cols;  // [cols]
    for (size_t i = 0; i < cols; ++i) out[i] += src[i] * multiplier;
    return;
  }
  const int8_t* src = m.q8 + row * cols;  // [cols]
  const float scale = m.scales[row];
  for (size_t i = 0; i < cols; ++i) out[i] += (static_cast<float>(src[i]) * scale) * multiplier;
}

// Per (row, head) symmetric quantization: x[rows, heads * head_dim] -> q (same
// layout) and scales[rows, heads]: rows * heads rows of head_dim values.
void QuantizeHeads(const Forward& f, const float* x, size_t rows, size_t heads, size_t head_dim,
                   int8_t* q, float* scales) {
  ParallelRange(f, rows * heads, 1, head_dim, [&](size_t r0, size_t r1, size_t) {
    f.kernels->qs8_quantize_rows(r1 - r0, head_dim, x + r0 * head_dim, head_dim,
                                 q + r0 * head_dim, head_dim, scales + r0);
  });
}

// out[rows, hidden] = Norm(in[rows, hidden]); out may be in.
void Normalize(const Forward& f, const NormWeights& n, const float* in, size_t rows, float* out) {
  ProfileScope scope(f, OpKind::kNorm);
  const fb::Architecture& a = *f.arch;
  const size_t h = a.hidden_size();
  ParallelRange(f, rows, 1, h, [&](size_t r0, size_t r1, size_t) {
    if (a.norm() == fb::NormKind::LayerNorm) {
      f.kernels->f32_layernorm(r1 - r0, h, in + r0 * h, h, n.weight, n.bias, a.norm_eps(), out + r0 * h,
                         h);
    } else {
      f.kernels->f32_rmsnorm(r1 - r0, h, in + r0 * h, h, n.weight, a.norm_eps(), out + r0 * h, h);
    }
  });
}

// x[n] += delta[n]: the residual connection.
void AddResidual(float* x, const float* delta, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] += delta[i];
}

// x[rows, h] += delta[rows, h], rows split over the threads.
void AddResidualRows(const Forward& f, float* x, const float* delta, size_t rows, size_t h) {
  ProfileScope scope(f, OpKind::kResidual);
  ParallelRange(f, rows, 1, h, [&](size_t r0, size_t r1, size_t) {
    f.kernels->f32_add((r1 - r0) * h, x + r0 * h, delta + r0 * h);
  });
}

// Rows of sequence b's keys and values for one layer: key row p (absolute
// position p) of sequence b is k + (b * stride + p) * kv_dim. fp32 attention
// uses k, v; int8 attention k8, v8 and their scales.
struct KvRows {
  float* k = nullptr;         // [batch, stride, kv_dim]
  float* v = nullptr;         // [batch, stride, kv_dim]
  int8_t* k8 = nullptr;       // [batch, stride, kv_dim]
  int8_t* v8 = nullptr;       // [batch, stride, kv_dim]
  float* k_scales = nullptr;  // [batch, stride, kv_heads]
  float* v_scales = nullptr;  // [batch, stride, kv_heads]
  size_t stride = 0;          // rows per sequence
};

// Quantizes rows [p0, p0 + n) of sequence b's keys and values from k, v [n, kv_dim].
void StoreKvInt8(const Forward& f, const KvRows& kv, uint32_t b, size_t p0, size_t n,
                 const float* k, const float* v) {
  ProfileScope scope(f, OpKind::kAttention);
  const fb::Attention& att = *f.arch->attention();
  const size_t kvh = att.num_kv_heads(), hd = att.head_dim(), kvd = kvh * hd;
  const size_t row = static_cast<size_t>(b) * kv.stride + p0;
  QuantizeHeads(f, k, n, kvh, hd, kv.k8 + row * kvd, kv.k_scales + row * kvh);
  QuantizeHeads(f, v, n, kvh, hd, kv.v8 + row * kvd, kv.v_scales + row * kvh);
}

// Attention of sequence b's queries qb [q_len, qd] (f32, overwritten with the
// output) against its keys and values in kv, in fp32 or int8.
void Attend(const Forward& f, const AttentionParams& p, const KvRows& kv, uint32_t b, float* qb) {
  ProfileScope scope(f, OpKind::kAttention);
  const fb::Attention& att = *f.arch->attention();
  const size_t heads = att.num_heads(), kvh = att.num_kv_heads(), hd = att.head_dim();
  const size_t qd = heads * hd, kvd = kvh * hd;
  const size_t kv0 = static_cast<size_t>(b) * kv.stride;  // sequence b's first kv row
  // Threads split the heads; each has its own scratch.
  const size_t cost = p.q_len * (p.kv_len < 64 ? 64 : p.kv_len) * hd;
  if (!f.int8_attention) {
    ParallelRange(f, heads, 1, cost, [&](size_t h0, size_t h1, size_t thread) {
      AttentionParams ph = p;
      ph.head_begin = h0;
      ph.head_end = h1;
      f32_attention__ref(ph, qb, qd, kv.k + kv0 * kvd, kvd, kv.v + kv0 * kvd, kvd, qb, qd,
                         reinterpret_cast<float*>(f.attention + thread * f.attention_bytes));
    });
    return;
  }
  int8_t* q8 = f.q8;              // [q_len, qd]
  float* q_scales = f.q8_scales;  // [q_len, heads]
  QuantizeHeads(f, qb, p.q_len, heads, hd, q8, q_scales);
  const Qs8AttentionKernels kernels{f.kernels->qs8_gemm, f.kernels->qu8s8_pv,
                                    f.kernels->qs8_softmax_tile};
  ParallelRange(f, heads, 1, cost, [&](size_t h0, size_t h1, size_t thread) {
    AttentionParams ph = p;
    ph.head_begin = h0;
    ph.head_end = h1;
    qs8_attention(kernels, ph, q8, qd, q_scales, kv.k8 + kv0 * kvd, kvd,
                  kv.k_scales + kv0 * kvh, kv.v8 + kv0 * kvd, kvd, kv.v_scales + kv0 * kvh, qb,
                  qd, f.attention + thread * f.attention_bytes);
  });
}

// The attention shape of the model and the tile size; the caller sets lengths,
// masks and biases.
AttentionParams BaseParams(const fb::Architecture& a, uint32_t tile = 0) {
  const fb::Attention& att = *a.attention();
  AttentionParams p;
  p.tile = tile;
  p.num_heads = att.num_heads();
  p.num_kv_heads = att.num_kv_heads();
  p.head_dim = att.head_dim();
  p.scale = att.scale() != 0.0f
                ? att.scale()
                : static_cast<float>(1.0 / std::sqrt(static_cast<double>(att.head_dim())));
  return p;
}

// ---------------------------------------------------------------------------
// Embedding: x[batch * seq, hidden] for tokens at positions pos0[b] + s
// (pos0 null: 0). Rows from lengths[b] on (lengths null: none) are zero.
void Embed(const Forward& f, const int32_t* ids, const uint32_t* lengths, const uint32_t* pos0,
           uint32_t batch, uint32_t seq, float* x) {
  ProfileScope scope(f, OpKind::kEmbed);
  const fb::Architecture& a = *f.arch;
  const ModelWeights& w = *f.weights;
  const size_t h = a.hidden_size();
  const bool sinusoidal = a.position() == fb::PositionKind::SinusoidalSplit ||
                          a.position() == fb::PositionKind::SinusoidalInterleaved;
  float* sinusoid = f.delta;  // [seq, hidden]
  std::memset(x, 0, static_cast<size_t>(batch) * seq * h * sizeof(float));
  for (uint32_t b = 0; b < batch; ++b) {
    const size_t p0 = pos0 != nullptr ? pos0[b] : 0;
    const uint32_t real = lengths != nullptr ? lengths[b] : seq;
    if (sinusoidal) {
      F32SinusoidalParams sp;
      sp.kind = a.position() == fb::PositionKind::SinusoidalSplit ? SinusoidalKind::kSplit
                                                                  : SinusoidalKind::kInterleaved;
      sp.dim = h;
      sp.len = real;
      sp.pos0 = p0;
      f32_sinusoidal__ref(sp, sinusoid, h);
    }
    for (uint32_t s = 0; s < real; ++s) {
      const size_t row = static_cast<size_t>(b) * seq + s;
      float* xr = x + row * h;  // [hidden], zero
      AddMatrixRow(w.token_embedding, h, static_cast<size_t>(ids[row]), a.embedding_scale(), xr);
      if (w.token_type_embedding.present()) AddMatrixRow(w.token_type_embedding, h, 0, 1.0f, xr);
      if (w.position_embedding.present()) AddMatrixRow(w.position_embedding, h, p0 + s, 1.0f, xr);
      if (sinusoidal) AddResidual(xr, sinusoid + s * h, h);
    }
  }
  if (w.embedding_norm.weight != nullptr) {
    Normalize(f, w.embedding_norm, x, static_cast<size_t>(batch) * seq, x);
  }
}

// ---------------------------------------------------------------------------
// Self-attention of `batch` sequences of `seq` rows: in, out [batch * seq, hidden].
// Row s of sequence b sits at position pos0[b] + s (pos0 null: 0); its keys and
// values go to kv rows pos0[b] + s, and it attends to kv rows [0, pos0[b] + seq)
// of which the first valid[b] are real.
void SelfAttention(const Forward& f, const AttentionWeights& w, const float* relative_bias,
                   bool causal, KvRows kv, const float* in, const uint32_t* pos0,
                   const uint32_t* valid, uint32_t batch, uint32_t seq, float* out) {
  const fb::Architecture& a = *f.arch;
  const size_t h = a.hidden_size(), qd = QDim(a), kvd = KvDim(a);
  const size_t rows = static_cast<size_t>(batch) * seq;
  float* q = f.q;  // [rows, qd]: queries, then the attention output in place
  Linear(f, w.q, in, h, rows, q, qd);
  for (uint32_t b = 0; b < batch; ++b) {
    const size_t p0 = pos0 != nullptr ? pos0[b] : 0;
    const float* xb = in + static_cast<size_t>(b) * seq * h;  // [seq, hidden]
    float* qb = q + static_cast<size_t>(b) * seq * qd;        // [seq, qd]
    // This call's keys and values [seq, kvd]: straight into the fp32 cache rows
    // p0.., or staged in f32 scratch and then quantized into the int8 rows.
    float* kb = f.int8_attention ? f.k + static_cast<size_t>(b) * seq * kvd
                                 : kv.k + (static_cast<size_t>(b) * kv.stride + p0) * kvd;
    float* vb = f.int8_attention ? f.v + static_cast<size_t>(b) * seq * kvd
                                 : kv.v + (static_cast<size_t>(b) * kv.stride + p0) * kvd;
    Linear(f, w.k, xb, h, seq, kb, kvd);
    Linear(f, w.v, xb, h, seq, vb, kvd);
    if (f.rope_inv_freq != nullptr) {
      F32RopeParams rp;
      rp.len = seq;
      rp.head_dim = a.attention()->head_dim();
      rp.rotary_dim = f.rotary_dim;
      rp.pos0 = p0;
      rp.inv_freq = f.rope_inv_freq;
      ProfileScope scope(f, OpKind::kRope);
      ParallelRange(f, seq, 1, qd + kvd, [&](size_t s0, size_t s1, size_t) {
        F32RopeParams part = rp;
        part.len = s1 - s0;
        part.pos0 = p0 + s0;
        part.heads = a.attention()->num_heads();
        f.kernels->f32_rope(part, qb + s0 * qd, qd);
        part.heads = a.attention()->num_kv_heads();
        f.kernels->f32_rope(part, kb + s0 * kvd, kvd);
      });
    }
    if (f.int8_attention) StoreKvInt8(f, kv, b, p0, seq, kb, vb);
    AttentionParams p = BaseParams(a, f.attention_tile);
    p.q_len = seq;
    p.kv_len = p0 + seq;
    p.q_pos0 = p0;
    p.kv_valid = valid[b];
    p.causal = causal;
    p.window = a.attention()->sliding_window();
    p.alibi_slopes = f.alibi_slopes;
    if (relative_bias != nullptr) {
      p.t5_bias = relative_bias;
      p.t5_num_buckets = a.attention()->relative_buckets();
      p.t5_max_distance = a.attention()->relative_max_distance();
      p.t5_bidirectional = !causal;
    }
    Attend(f, p, kv, b, qb);
  }
  Linear(f, w.o, q, qd, rows, out, h);
}

// Cross-attention: queries from in [batch * seq, hidden], keys and values already
// projected from the encoder output into kv (ProjectCrossKv; enc_lengths[b] real).
void CrossAttention(const Forward& f, const AttentionWeights& w, KvRows kv, const float* in,
                    const uint32_t* enc_lengths, uint32_t enc_seq, uint32_t batch, uint32_t seq,
                    float* out) {
  const fb::Architecture& a = *f.arch;
  const size_t h = a.hidden_size(), qd = QDim(a);
  const size_t rows = static_cast<size_t>(batch) * seq;
  float* q = f.q;  // [rows, qd]: queries, then the attention output in place
  Linear(f, w.q, in, h, rows, q, qd);
  for (uint32_t b = 0; b < batch; ++b) {
    float* qb = q + static_cast<size_t>(b) * seq * qd;  // [seq, qd]
    AttentionParams p = BaseParams(a, f.attention_tile);
    p.q_len = seq;
    p.kv_len = enc_seq;
    p.kv_valid = enc_lengths[b];
    Attend(f, p, kv, b, qb);
  }
  Linear(f, w.o, q, qd, rows, out, h);
}

// Feed-forward: in, out [rows, hidden].
void FeedForward(const Forward& f, const LayerWeights& w, const float* in, size_t rows,
                 float* out) {
  const fb::Architecture& a = *f.arch;
  const size_t h = a.hidden_size(), inter = a.intermediate_size();
  const F32Activation act = Activation(a.activation());
  float* up = f.up;  // [rows, intermediate]
  Linear(f, w.up, in, h, rows, up, inter);
  float* hidden = up;  // [rows, intermediate]: the down projection's input
  if (a.gated_ffn()) {
    hidden = f.gate;  // [rows, intermediate]
    Linear(f, w.gate, in, h, rows, hidden, inter);
    ProfileScope scope(f, OpKind::kActivation);
    ParallelRange(f, rows, 1, inter, [&](size_t r0, size_t r1, size_t) {
      f.kernels->f32_gated_activation(act, r1 - r0, inter, hidden + r0 * inter, inter, up + r0 * inter,
                                inter);
    });
  } else {
    // One call per row: the same calls whatever the split.
    ProfileScope scope(f, OpKind::kActivation);
    ParallelRange(f, rows, 1, inter, [&](size_t r0, size_t r1, size_t) {
      for (size_t r = r0; r < r1; ++r) f.kernels->f32_activation(act, inter, up + r * inter);
    });
  }
  Linear(f, w.down, hidden, inter, rows, out, h);
}

// One sub-block with its norm and residual around it: x [rows, hidden].
// `block` reads its input [rows, hidden] and writes f.delta.
template <typename Block>
void Residual(const Forward& f, const NormWeights& norm, size_t rows, float* x, Block block) {
  const size_t h = f.arch->hidden_size();
  if (f.arch->norm_placement() == fb::NormPlacement::Pre) {
    Normalize(f, norm, x, rows, f.normed);
    block(f.normed);
    AddResidualRows(f, x, f.delta, rows, h);
  } else {
    block(x);
    AddResidualRows(f, x, f.delta, rows, h);
    Normalize(f, norm, x, rows, x);
  }
}

// What a decoder stack's layers attend to besides themselves: the source whose
// cross-attention keys and values ProjectCrossKv put in the KV cache.
struct CrossInput {
  const uint32_t* enc_lengths = nullptr;  // [batch]: real source tokens
  uint32_t enc_seq = 0;                   // source rows per sequence
};

// Layer l's rows of a KV cache region of `rows` rows per layer (f32 or int8).
KvRows LayerKv(const Forward& f, void* k, void* v, float* k_scales, float* v_scales, size_t rows,
               uint32_t l, size_t stride) {
  const fb::Attention& att = *f.arch->attention();
  const size_t kvh = att.num_kv_heads(), kvd = kvh * att.head_dim();
  KvRows kv;
  kv.stride = stride;
  if (f.int8_attention) {
    kv.k8 = static_cast<int8_t*>(k) + l * rows * kvd;
    kv.v8 = static_cast<int8_t*>(v) + l * rows * kvd;
    kv.k_scales = k_scales + l * rows * kvh;
    kv.v_scales = v_scales + l * rows * kvh;
  } else {
    kv.k = static_cast<float*>(k) + l * rows * kvd;
    kv.v = static_cast<float*>(v) + l * rows * kvd;
  }
  return kv;
}

// The cross-attention keys and values of decoder layer l, [max_batch, max_seq, kv_dim].
KvRows CrossKv(const Forward& f, uint32_t l) {
  const size_t rows = static_cast<size_t>(f.max_batch) * f.max_seq;
  return LayerKv(f, f.cross_k, f.cross_v, f.cross_k_scales, f.cross_v_scales, rows, l, f.max_seq);
}

// Projects encoder_out [batch * enc_seq, hidden] into every decoder layer's
// cross-attention keys and values, once per source.
void ProjectCrossKv(const Forward& f, const float* encoder_out, uint32_t enc_seq,
                    uint32_t batch) {
  const size_t h = f.arch->hidden_size(), kvd = KvDim(*f.arch);
  const StackWeights& stack = f.weights->decoder;
  for (uint32_t l = 0; l < stack.num_layers; ++l) {
    const AttentionWeights& w = stack.layers[l].cross_attn;
    const KvRows kv = CrossKv(f, l);
    for (uint32_t b = 0; b < batch; ++b) {
      const float* eb = encoder_out + static_cast<size_t>(b) * enc_seq * h;  // [enc_seq, hidden]
      if (f.int8_attention) {
        Linear(f, w.k, eb, h, enc_seq, f.k, kvd);  // [enc_seq, kvd] staged, then quantized
        Linear(f, w.v, eb, h, enc_seq, f.v, kvd);
        StoreKvInt8(f, kv, b, 0, enc_seq, f.k, f.v);
      } else {
        Linear(f, w.k, eb, h, enc_seq, kv.k + static_cast<size_t>(b) * kv.stride * kvd, kvd);
        Linear(f, w.v, eb, h, enc_seq, kv.v + static_cast<size_t>(b) * kv.stride * kvd, kvd);
      }
    }
  }
}

// The layers of one stack over x [batch * seq, hidden], then its final norm.
// Decoder stacks keep keys and values in the KV cache; encoder stacks in scratch.
void RunStack(const Forward& f, const StackWeights& stack, bool decoder, const CrossInput* cross,
              const uint32_t* pos0, const uint32_t* valid, uint32_t batch, uint32_t seq,
              float* x) {
  const size_t rows = static_cast<size_t>(batch) * seq;
  const size_t self_rows = static_cast<size_t>(f.max_batch) * f.kv_positions;
  for (uint32_t l = 0; l < stack.num_layers; ++l) {
    const LayerWeights& w = stack.layers[l];
    // Decoders keep keys and values in the cache; encoders in scratch (f32 in
    // f.k, f.v; int8 in f.k8, f.v8).
    const KvRows self =
        decoder ? LayerKv(f, f.self_k, f.self_v, f.self_k_scales, f.self_v_scales, self_rows, l,
                          f.kv_positions)
                : LayerKv(f, f.int8_attention ? static_cast<void*>(f.k8) : f.k,
                          f.int8_attention ? static_cast<void*>(f.v8) : f.v, f.k8_scales,
                          f.v8_scales, 0, 0, seq);
    Residual(f, w.attn_norm, rows, x, [&](const float* in) {
      SelfAttention(f, w.attn, stack.relative_bias, decoder, self, in, pos0, valid, batch, seq,
                    f.delta);
    });
    if (cross != nullptr) {
      Residual(f, w.cross_attn_norm, rows, x, [&](const float* in) {
        CrossAttention(f, w.cross_attn, CrossKv(f, l), in, cross->enc_lengths, cross->enc_seq,
                       batch, seq, f.delta);
      });
    }
    Residual(f, w.ffn_norm, rows, x,
             [&](const float* in) { FeedForward(f, w, in, rows, f.delta); });
    if (f.observer != nullptr) {
      const bool enc_dec = f.arch->structure() == fb::Structure::EncoderDecoder;
      const LayerStack id = !enc_dec  ? LayerStack::kSingle
                            : decoder ? LayerStack::kDecoder
                                      : LayerStack::kEncoder;
      f.observer(f.observer_ctx, id, l, x, rows, f.arch->hidden_size());
    }
  }
  if (stack.final_norm.weight != nullptr) Normalize(f, stack.final_norm, x, rows, x);
}

// logits[rows, vocab] = x[rows, hidden] · headᵀ × logits_scale (+ final_logits_bias).
void HeadInto(const Forward& f, const float* x, size_t rows, float* logits) {
  const fb::Architecture& a = *f.arch;
  const size_t h = a.hidden_size(), vocab = a.vocab_size();
  ProfileScope scope(f, OpKind::kHead);
  if (f.profile != nullptr) f.profile->head_ops += 2.0 * rows * vocab * h;
  MatMul(f, f.weights->head, f.weights->head_fc, vocab, h, x, h, rows, logits, vocab);
  if (a.logits_scale() != 1.0f) {
    for (size_t i = 0; i < rows * vocab; ++i) logits[i] *= a.logits_scale();
  }
  if (f.weights->final_logits_bias != nullptr) {
    f.kernels->f32_add_bias(rows, vocab, logits, vocab, f.weights->final_logits_bias);
  }
}

// f.logits [rows, vocab] for x [rows, hidden].
const float* Head(const Forward& f, const float* x, size_t rows) {
  HeadInto(f, x, rows, f.logits);
  return f.logits;
}

// Copies into f.last_x the rows of x [batch, seq, hidden] (first position pos0)
// that hold a sequence's last real token, position lengths[b] - 1.
void KeepLastRows(const Forward& f, const float* x, const uint32_t* lengths, uint32_t batch,
                  uint32_t seq, uint32_t pos0) {
  const size_t h = f.arch->hidden_size();
  for (uint32_t b = 0; b < batch; ++b) {
    const uint32_t last = lengths[b] - 1;
    if (last < pos0 || last >= pos0 + seq) continue;
    std::memcpy(f.last_x + b * h, x + (static_cast<size_t>(b) * seq + last - pos0) * h,
                h * sizeof(float));
  }
}

}  // namespace

const char* OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kEmbed: return "embed";
    case OpKind::kNorm: return "norm";
    case OpKind::kLinear: return "linear";
    case OpKind::kAttention: return "attention";
    case OpKind::kRope: return "rope";
    case OpKind::kActivation: return "activation";
    case OpKind::kResidual: return "residual";
    case OpKind::kHead: return "head";
    case OpKind::kCount: break;
  }
  return "?";
}

ForwardMode GetForwardMode(const Model& model) {
  ForwardMode mode;
  mode.int8_attention = UsesInt8Attention(model);
  for (size_t i = 0; i < model.num_tensors(); ++i) {
    if (model.tensor(i).dtype == fb::DType::I8) mode.int8_matrices = true;
  }
  return mode;
}

Status PlanForward(const fb::Architecture& a, ForwardMode mode, const ForwardLimits& limits,
                   ArenaLayout* activations, ArenaLayout* scratch, ArenaLayout* kv_cache,
                   ForwardPlan* plan) {
  const uint32_t max_batch = limits.max_batch, max_seq = limits.max_seq;
  const uint32_t attention_tile = limits.attention_tile, threads = limits.threads;
  const fb::Attention& att = *a.attention();
  const uint64_t h = a.hidden_size(), inter = a.intermediate_size(), vocab = a.vocab_size();
  const uint64_t qd = QDim(a), kvd = KvDim(a);
  const bool enc_dec = a.structure() == fb::Structure::EncoderDecoder;
  constexpr uint64_t f = sizeof(float);
  *plan = ForwardPlan();
  plan->mode = mode;
  plan->limits = limits;
  plan->kv_positions = max_seq + limits.max_new_tokens;
  plan->attention_tile = attention_tile;
  const bool decoder_only = a.structure() == fb::Structure::DecoderOnly;
  plan->chunk = decoder_only && limits.prefill_chunk != 0 && limits.prefill_chunk < max_seq
                    ? limits.prefill_chunk
                    : max_seq;
  if (a.position() == fb::PositionKind::Rope) {
    const uint32_t rotary = a.rope() != nullptr ? a.rope()->rotary_dim() : 0;
    plan->rotary_dim = rotary != 0 ? rotary : att.head_dim();
    if (plan->rotary_dim % 2 != 0 || plan->rotary_dim < 2 || plan->rotary_dim > att.head_dim()) {
      return Status::Error(StatusCode::kInvalidModel, "rotary_dim %u must be even and in [2, %u]",
                           plan->rotary_dim, att.head_dim());
    }
  }

  // Reserves rows x cols floats (or bytes); the products are checked, so 32-bit
  // targets see an error instead of a wrapped size.
  bool fits = true;
  auto reserve = [&fits](ArenaLayout* layout, uint64_t count, uint64_t width) {
    uint64_t bytes = 0;
    if (!CheckedMul(count, width, &bytes) || bytes > SIZE_MAX / 2) {
      fits = false;
      return size_t{0};
    }
    return layout->Reserve(static_cast<size_t>(bytes));
  };
  // rows: of the per-layer buffers; full_rows: of whole sequences (encoder
  // output, cross-attention K/V, every logit row).
  const uint64_t full_rows = static_cast<uint64_t>(max_batch) * max_seq;
  const uint64_t rows = static_cast<uint64_t>(max_batch) * plan->chunk;
  plan->layer_weights = reserve(activations, LayerWeightsCount(a), sizeof(LayerWeights));
  plan->model_weights = reserve(activations, 1, sizeof(ModelWeights));
  plan->rope_inv_freq = reserve(activations, plan->rotary_dim / 2, f);
  plan->alibi_slopes = reserve(activations, att.num_heads(), f);
  plan->x = reserve(activations, rows * h, f);
  if (enc_dec) plan->encoder_out = reserve(activations, full_rows * h, f);
  if (a.structure() != fb::Structure::EncoderOnly) {
    plan->logits = reserve(activations, (limits.last_logits_only ? max_batch : full_rows) * vocab,
                           f);
    if (limits.last_logits_only) plan->last_x = reserve(activations, max_batch * h, f);
  }
  if (decoder_only) {
    plan->chunk_ids = reserve(scratch, rows, sizeof(int32_t));
    plan->chunk_pos0 = reserve(scratch, max_batch, sizeof(uint32_t));
    plan->chunk_real = reserve(scratch, max_batch, sizeof(uint32_t));
  }

  plan->normed = reserve(scratch, rows * h, f);
  plan->delta = reserve(scratch, rows * h, f);
  plan->q = reserve(scratch, rows * qd, f);
  plan->k = reserve(scratch, rows * kvd, f);
  plan->v = reserve(scratch, rows * kvd, f);
  plan->up = reserve(scratch, rows * inter, f);
  if (a.gated_ffn()) plan->gate = reserve(scratch, rows * inter, f);
  AttentionParams params;
  params.head_dim = att.head_dim();
  params.tile = attention_tile;
  if (mode.int8_attention) {
    if (att.head_dim() > kQs8AttentionMaxHeadDim || AttentionTile(params) > kQs8AttentionMaxTile) {
      return Status(StatusCode::kUnsupported, "head_dim or the attention tile exceeds the int8 "
                    "attention's limits (4096)");
    }
    plan->attention_bytes = qs8_attention_scratch_bytes(params);
  } else {
    plan->attention_bytes = f32_attention_scratch_floats(params) * f;
  }
  plan->attention_bytes = (plan->attention_bytes + 63) & ~static_cast<size_t>(63);
  plan->attention = reserve(scratch, threads < 1 ? 1 : threads, plan->attention_bytes);
  plan->step_valid = reserve(scratch, max_batch, sizeof(uint32_t));
  if (mode.int8_matrices) {
    uint64_t widest_in = h > inter ? h : inter, widest_out = widest_in;
    widest_in = qd > widest_in ? qd : widest_in;
    widest_out = qd > widest_out ? qd : widest_out;
    plan->qin = reserve(scratch, rows * widest_in, 1);
    plan->qin_scales = reserve(scratch, rows, f);
    // [kLinearWideRows, widest layer output] (fewer rows when fewer are run),
    // and at least [kLinearRows, vocab] for the head.
    const uint64_t wide_rows = rows < kLinearWideRows ? (rows < kLinearRows ? kLinearRows : rows)
                                                      : kLinearWideRows;
    uint64_t acc = wide_rows * widest_out;
    if (a.structure() != fb::Structure::EncoderOnly && kLinearRows * vocab > acc) {
      acc = kLinearRows * vocab;
    }
    plan->acc_elements = static_cast<size_t>(acc);
    plan->acc = reserve(scratch, acc, sizeof(int32_t));
  }
  const uint64_t heads = att.num_heads(), kv_heads = att.num_kv_heads();
  if (mode.int8_attention) {
    plan->q8 = reserve(scratch, rows * qd, 1);
    plan->q8_scales = reserve(scratch, rows * heads, f);
    plan->k8 = reserve(scratch, rows * kvd, 1);
    plan->k8_scales = reserve(scratch, rows * kv_heads, f);
    plan->v8 = reserve(scratch, rows * kvd, 1);
    plan->v8_scales = reserve(scratch, rows * kv_heads, f);
  }

  // The KV cache of the decoder layers: f32, or int8 with a scale per (position, kv head).
  const uint64_t layers = DecoderLayers(a);
  if (layers > 0) {
    const uint64_t self_rows = layers * max_batch * plan->kv_positions;
    const uint64_t value_bytes = mode.int8_attention ? 1 : f;
    plan->self_k = reserve(kv_cache, self_rows * kvd, value_bytes);
    plan->self_v = reserve(kv_cache, self_rows * kvd, value_bytes);
    if (mode.int8_attention) {
      plan->self_k_scales = reserve(kv_cache, self_rows * kv_heads, f);
      plan->self_v_scales = reserve(kv_cache, self_rows * kv_heads, f);
    }
    if (enc_dec) {
      plan->cross_k = reserve(kv_cache, layers * full_rows * kvd, value_bytes);
      plan->cross_v = reserve(kv_cache, layers * full_rows * kvd, value_bytes);
      if (mode.int8_attention) {
        plan->cross_k_scales = reserve(kv_cache, layers * full_rows * kv_heads, f);
        plan->cross_v_scales = reserve(kv_cache, layers * full_rows * kv_heads, f);
      }
    }
  }
  if (!fits) return Status(StatusCode::kOutOfMemory, "the memory plan overflows the address space");
  return Status::Ok();
}

Status PrepareForward(const Model& model, const KernelTable& kernels, ThreadPool* pool,
                      const ForwardPlan& plan, const Arena& activations, const Arena& scratch,
                      const Arena& kv_cache, F32FullyConnectedSet* f32_products, Forward* out) {
  const fb::Architecture& a = model.architecture();
  Forward f;
  f.arch = &a;
  f.kernels = &kernels;
  f.pool = pool;
  f.int8_attention = plan.mode.int8_attention;
  LayerWeights* layers = activations.At<LayerWeights>(plan.layer_weights);
  ModelWeights* weights = activations.At<ModelWeights>(plan.model_weights);
  OCTET_RETURN_IF_ERROR(ResolveWeights(model, layers, weights));
  if (f32_products != nullptr) {
    OCTET_RETURN_IF_ERROR(PrepareF32Products(model, pool != nullptr ? pool->threads() : 1, layers,
                                             weights, f32_products));
  }
  f.weights = weights;
  AttentionParams params = BaseParams(a, plan.attention_tile);
  if (const char* error = plan.mode.int8_attention ? Qs8AttentionParamsError(params)
                                                   : AttentionParamsError(params)) {
    return Status::Error(StatusCode::kInvalidModel, "attention: %s", error);
  }
  if (a.position() == fb::PositionKind::Rope) {
    const fb::Rope* rope = a.rope();
    RopeFreqParams rp;
    rp.rotary_dim = plan.rotary_dim;
    if (rope != nullptr) {
      rp.theta = rope->theta();
      rp.scaling = static_cast<RopeScalingKind>(rope->scaling());
      rp.factor = rope->factor();
      rp.low_freq_factor = rope->low_freq_factor();
      rp.high_freq_factor = rope->high_freq_factor();
      rp.original_max_positions = rope->original_max_positions();
      const bool llama3 = rope->scaling() == fb::RopeScaling::Llama3;
      if ((rope->scaling() != fb::RopeScaling::None && !(rp.factor > 0.0f)) ||
          (llama3 && (rp.original_max_positions == 0 ||
                      rp.high_freq_factor == rp.low_freq_factor)) ||
          !(rp.theta > 0.0f) || rope->scaling() > fb::RopeScaling::MAX) {
        return Status(StatusCode::kInvalidModel, "the RoPE parameters are inconsistent");
      }
    }
    float* inv_freq = activations.At<float>(plan.rope_inv_freq);
    rope_inv_freq(rp, inv_freq);
    f.rope_inv_freq = inv_freq;
    f.rotary_dim = plan.rotary_dim;
  }
  if (a.position() == fb::PositionKind::Alibi) {
    float* slopes = activations.At<float>(plan.alibi_slopes);
    alibi_slopes(a.attention()->num_heads(), slopes);
    f.alibi_slopes = slopes;
  }
  if (a.position() == fb::PositionKind::RelativeBias &&
      a.attention()->relative_buckets() <
          (a.structure() == fb::Structure::DecoderOnly ? 2u : 4u)) {
    return Status(StatusCode::kInvalidModel, "the relative position bias needs at least 4 buckets");
  }
  if ((pool != nullptr ? pool->threads() : 1) > (plan.limits.threads < 1 ? 1 : plan.limits.threads)) {
    return Status(StatusCode::kInternal, "the thread pool is larger than the plan's threads");
  }
  f.max_batch = plan.limits.max_batch;
  f.max_seq = plan.limits.max_seq;
  f.kv_positions = plan.kv_positions;
  f.attention_tile = plan.attention_tile;
  f.chunk = plan.chunk;
  f.last_logits_only = plan.limits.last_logits_only;
  f.x = activations.At<float>(plan.x);
  if (plan.encoder_out != 0) f.encoder_out = activations.At<float>(plan.encoder_out);
  if (plan.logits != 0) f.logits = activations.At<float>(plan.logits);
  if (plan.last_x != 0) f.last_x = activations.At<float>(plan.last_x);
  if (a.structure() == fb::Structure::DecoderOnly) {  // (scratch offsets may be 0)
    f.chunk_ids = scratch.At<int32_t>(plan.chunk_ids);
    f.chunk_pos0 = scratch.At<uint32_t>(plan.chunk_pos0);
    f.chunk_real = scratch.At<uint32_t>(plan.chunk_real);
  }
  f.normed = scratch.At<float>(plan.normed);
  f.delta = scratch.At<float>(plan.delta);
  f.q = scratch.At<float>(plan.q);
  f.k = scratch.At<float>(plan.k);
  f.v = scratch.At<float>(plan.v);
  f.up = scratch.At<float>(plan.up);
  if (a.gated_ffn()) f.gate = scratch.At<float>(plan.gate);
  f.attention = scratch.At<uint8_t>(plan.attention);
  f.attention_bytes = plan.attention_bytes;
  f.step_valid = scratch.At<uint32_t>(plan.step_valid);
  if (plan.mode.int8_matrices) {
    f.qin = scratch.At<int8_t>(plan.qin);
    f.qin_scales = scratch.At<float>(plan.qin_scales);
    f.acc = scratch.At<int32_t>(plan.acc);
    f.acc_elements = plan.acc_elements;
  }
  if (plan.mode.int8_attention) {
    f.q8 = scratch.At<int8_t>(plan.q8);
    f.q8_scales = scratch.At<float>(plan.q8_scales);
    f.k8 = scratch.At<int8_t>(plan.k8);
    f.k8_scales = scratch.At<float>(plan.k8_scales);
    f.v8 = scratch.At<int8_t>(plan.v8);
    f.v8_scales = scratch.At<float>(plan.v8_scales);
  }
  if (DecoderLayers(a) > 0) {
    f.self_k = kv_cache.At<uint8_t>(plan.self_k);
    f.self_v = kv_cache.At<uint8_t>(plan.self_v);
    if (plan.mode.int8_attention) {
      f.self_k_scales = kv_cache.At<float>(plan.self_k_scales);
      f.self_v_scales = kv_cache.At<float>(plan.self_v_scales);
    }
    if (a.structure() == fb::Structure::EncoderDecoder) {
      f.cross_k = kv_cache.At<uint8_t>(plan.cross_k);
      f.cross_v = kv_cache.At<uint8_t>(plan.cross_v);
      if (plan.mode.int8_attention) {
        f.cross_k_scales = kv_cache.At<float>(plan.cross_k_scales);
        f.cross_v_scales = kv_cache.At<float>(plan.cross_v_scales);
      }
    }
  }
  *out = f;
  return Status::Ok();
}

const float* RunEncoder(const Forward& f, const int32_t* ids, const uint32_t* lengths,
                        uint32_t batch, uint32_t seq) {
  float* x = f.x;  // [batch * seq, hidden]
  Embed(f, ids, lengths, nullptr, batch, seq, x);
  RunStack(f, f.weights->encoder, false, nullptr, nullptr, lengths, batch, seq, x);
  return x;
}

const float* RunDecoderPrefill(const Forward& f, const int32_t* ids, const uint32_t* lengths,
                               uint32_t batch, uint32_t seq) {
  const size_t h = f.arch->hidden_size(), vocab = f.arch->vocab_size();
  float* x = f.x;  // [batch * chunk, hidden]
  // Chunk by chunk: positions c0 .. c0 + n - 1 of every sequence, attending to
  // the keys of the earlier chunks in the cache (keys past lengths[b] masked).
  for (uint32_t c0 = 0; c0 < seq; c0 += f.chunk) {
    const uint32_t n = seq - c0 < f.chunk ? seq - c0 : f.chunk;
    int32_t* ids_c = f.chunk_ids;  // [batch, n]
    for (uint32_t b = 0; b < batch; ++b) {
      f.chunk_pos0[b] = c0;
      f.chunk_real[b] = lengths[b] <= c0 ? 0 : (lengths[b] - c0 < n ? lengths[b] - c0 : n);
      std::memcpy(ids_c + static_cast<size_t>(b) * n, ids + static_cast<size_t>(b) * seq + c0,
                  f.chunk_real[b] * sizeof(int32_t));
    }
    Embed(f, ids_c, f.chunk_real, f.chunk_pos0, batch, n, x);
    RunStack(f, f.weights->decoder, true, nullptr, f.chunk_pos0, lengths, batch, n, x);
    if (f.last_logits_only) {
      KeepLastRows(f, x, lengths, batch, n, c0);
    } else if (n == seq) {  // one pass: one product over every row
      HeadInto(f, x, static_cast<size_t>(batch) * seq, f.logits);
    } else {
      for (uint32_t b = 0; b < batch; ++b) {
        HeadInto(f, x + static_cast<size_t>(b) * n * h, n,
                 f.logits + (static_cast<size_t>(b) * seq + c0) * vocab);
      }
    }
  }
  return f.last_logits_only ? Head(f, f.last_x, batch) : f.logits;
}

const float* RunDecoderStep(const Forward& f, const int32_t* ids, const uint32_t* positions,
                            uint32_t batch) {
  float* x = f.x;  // [batch, hidden]
  // Each sequence sees its cached keys and the new one: positions[b] + 1 keys, all real.
  uint32_t* valid = f.step_valid;  // [batch]
  for (uint32_t b = 0; b < batch; ++b) valid[b] = positions[b] + 1;
  Embed(f, ids, nullptr, positions, batch, 1, x);
  RunStack(f, f.weights->decoder, true, nullptr, positions, valid, batch, 1, x);
  return Head(f, x, batch);
}

void EncodeSource(const Forward& f, const int32_t* enc_ids, const uint32_t* enc_lengths,
                  uint32_t enc_seq, uint32_t batch) {
  float* enc = f.encoder_out;  // [batch * enc_seq, hidden]
  Embed(f, enc_ids, enc_lengths, nullptr, batch, enc_seq, enc);
  RunStack(f, f.weights->encoder, false, nullptr, nullptr, enc_lengths, batch, enc_seq, enc);
  ProjectCrossKv(f, enc, enc_seq, batch);
}

const float* RunDecoderOnSource(const Forward& f, const uint32_t* enc_lengths, uint32_t enc_seq,
                                const int32_t* dec_ids, const uint32_t* dec_lengths,
                                uint32_t dec_seq, uint32_t batch) {
  float* x = f.x;  // [batch * dec_seq, hidden]
  const CrossInput cross{enc_lengths, enc_seq};
  Embed(f, dec_ids, dec_lengths, nullptr, batch, dec_seq, x);
  RunStack(f, f.weights->decoder, true, &cross, nullptr, dec_lengths, batch, dec_seq, x);
  if (f.last_logits_only) {
    KeepLastRows(f, x, dec_lengths, batch, dec_seq, 0);
    return Head(f, f.last_x, batch);
  }
  return Head(f, x, static_cast<size_t>(batch) * dec_seq);
}

const float* RunDecoderOnSourceStep(const Forward& f, const uint32_t* enc_lengths,
                                    uint32_t enc_seq, const int32_t* ids,
                                    const uint32_t* positions, uint32_t batch) {
  float* x = f.x;  // [batch, hidden]
  uint32_t* valid = f.step_valid;  // [batch]: the cached keys and the new one, all real
  for (uint32_t b = 0; b < batch; ++b) valid[b] = positions[b] + 1;
  const CrossInput cross{enc_lengths, enc_seq};
  Embed(f, ids, nullptr, positions, batch, 1, x);
  RunStack(f, f.weights->decoder, true, &cross, positions, valid, batch, 1, x);
  return Head(f, x, batch);
}

const float* RunEncoderDecoder(const Forward& f, const int32_t* enc_ids,
                               const uint32_t* enc_lengths, uint32_t enc_seq,
                               const int32_t* dec_ids, const uint32_t* dec_lengths,
                               uint32_t dec_seq, uint32_t batch) {
  EncodeSource(f, enc_ids, enc_lengths, enc_seq, batch);
  return RunDecoderOnSource(f, enc_lengths, enc_seq, dec_ids, dec_lengths, dec_seq, batch);
}

}  // namespace octet
