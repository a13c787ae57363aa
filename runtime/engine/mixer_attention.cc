// The attention token mixer: self-attention of a layer with its variants
// (causal or bidirectional, the layer's sliding window and RoPE base, Q/K
// norms, soft-capping, ALiBi, T5's relative bias), behind one backend chosen
// at prepare time (AttentionBackend: fp32, or int8 with the KV cache in int8,
// ops/qs8_attention.h); its state is the KV cache of decoder layers, which
// grows with the positions. Also the cross-attention sub-block of
// encoder-decoder decoder layers, which reads the source's keys and values.
//
//   SelfAttention      Q, K, V projections (+ bias), Q/K norms, RoPE (the layer's base),
//                      tiled attention per sequence, output projection
//   CrossAttention     Q from the decoder, K, V from the encoder output (ProjectCrossKv)
#include <cmath>
#include <cstring>

#include "engine/forward_internal.h"
#include "engine/mixer.h"
#include "kernels/f32_attention.h"
#include "kernels/position.h"
#include "ops/qs8_attention.h"

namespace octet {
namespace {

using namespace fwd;

// Attention.qk_norm: x[rows, heads * head_dim] = RMSNorm of each head's vector
// (weight [head_dim], the model's norm_eps), in place.
void NormalizeHeads(const Forward& f, const float* weight, float* x, size_t rows, size_t heads) {
  ProfileScope scope(f, OpKind::kNorm);
  const size_t hd = f.arch->attention()->head_dim();
  const float eps = f.arch->norm_eps();
  ParallelRange(f, rows * heads, 1, hd, [&](size_t r0, size_t r1, size_t) {
    f.kernels->f32_rmsnorm(r1 - r0, hd, x + r0 * hd, hd, weight, eps, x + r0 * hd, hd);
  });
}

size_t RoundUp64(size_t bytes) { return (bytes + 63) & ~static_cast<size_t>(63); }

// fp32: keys and values are projected straight into the f32 KV rows;
// the table's f32_attention reads them.
const char* F32ParamsError(const AttentionParams& p) { return AttentionParamsError(p); }

Status F32ScratchBytes(const AttentionParams& p, size_t* bytes) {
  *bytes = RoundUp64(f32_attention_scratch_floats(p) * sizeof(float));
  return Status::Ok();
}

void F32Store(const Forward&, const KvRows&, uint32_t, size_t, size_t, const float*,
              const float*) {}  // already in place (not staged)

// Calls probs(h, rows of head h) for every head on the session's threads, then
// zeroes the rows of padded queries.
template <typename Fn>
void CaptureHeads(const Forward& f, const AttentionParams& p, const CaptureTarget& c, Fn&& probs) {
  const size_t heads = p.num_heads;
  ParallelRange(f, heads, 1, p.q_len * p.kv_len * p.head_dim, [&](size_t h0, size_t h1, size_t) {
    for (size_t h = h0; h < h1; ++h) {
      float* rows = c.probs + h * c.head_stride;  // [q_len, ld]
      probs(h, rows);
      for (size_t i = 0; i < p.q_len; ++i) {
        if (p.q_pos0 + i >= c.q_real) std::memset(rows + i * c.ld, 0, p.kv_len * sizeof(float));
      }
    }
  });
}

void F32Attend(const Forward& f, const AttentionParams& p, const KvRows& kv, uint32_t b,
               float* qb, const CaptureTarget* capture) {
  const fb::Attention& att = *f.arch->attention();
  const size_t heads = att.num_heads(), hd = att.head_dim();
  const size_t qd = heads * hd, kvd = att.num_kv_heads() * hd;
  const size_t kv0 = static_cast<size_t>(b) * kv.stride;  // sequence b's first kv row
  const float* k = static_cast<const float*>(kv.k) + kv0 * kvd;  // [kv_len, kvd]
  const float* v = static_cast<const float*>(kv.v) + kv0 * kvd;  // [kv_len, kvd]
  if (capture != nullptr) {  // before the kernel overwrites the queries
    CaptureHeads(f, p, *capture, [&](size_t h, float* rows) {
      f32_attention_probs__ref(p, h, qb, qd, k, kvd, rows, capture->ld);
    });
  }
  // Threads split the heads; each has its own scratch.
  const size_t cost = p.q_len * (p.kv_len < 64 ? 64 : p.kv_len) * hd;
  ParallelRange(f, heads, 1, cost, [&](size_t h0, size_t h1, size_t thread) {
    AttentionParams ph = p;
    ph.head_begin = h0;
    ph.head_end = h1;
    f.kernels->f32_attention(ph, qb, qd, k, kvd, v, kvd, qb, qd,
                             reinterpret_cast<float*>(f.buffer<FB::kAttention>() + thread * f.attention_bytes));
  });
}

// int8: keys and values are staged in f32 and quantized per (row, kv head)
// into the int8 KV rows; queries likewise into q8; ops/qs8_attention.h.
Status Qs8ScratchBytes(const AttentionParams& p, size_t* bytes) {
  if (p.head_dim > kQs8AttentionMaxHeadDim || AttentionTile(p) > kQs8AttentionMaxTile) {
    return Status(StatusCode::kUnsupported, "head_dim or the attention tile exceeds the int8 "
                  "attention's limits (4096)");
  }
  *bytes = RoundUp64(qs8_attention_scratch_bytes(p));
  return Status::Ok();
}

void Qs8Store(const Forward& f, const KvRows& kv, uint32_t b, size_t p0, size_t n,
              const float* k, const float* v) {
  const fb::Attention& att = *f.arch->attention();
  const size_t kvh = att.num_kv_heads(), hd = att.head_dim(), kvd = kvh * hd;
  const size_t row = static_cast<size_t>(b) * kv.stride + p0;
  QuantizeHeads(f, k, n, kvh, hd, static_cast<int8_t*>(kv.k) + row * kvd,
                kv.k_scales + row * kvh);
  QuantizeHeads(f, v, n, kvh, hd, static_cast<int8_t*>(kv.v) + row * kvd,
                kv.v_scales + row * kvh);
}

void Qs8Attend(const Forward& f, const AttentionParams& p, const KvRows& kv, uint32_t b,
               float* qb, const CaptureTarget* capture) {
  const fb::Attention& att = *f.arch->attention();
  const size_t heads = att.num_heads(), kvh = att.num_kv_heads(), hd = att.head_dim();
  const size_t qd = heads * hd, kvd = kvh * hd;
  const size_t kv0 = static_cast<size_t>(b) * kv.stride;  // sequence b's first kv row
  const int8_t* k = static_cast<const int8_t*>(kv.k) + kv0 * kvd;  // [kv_len, kvd]
  const int8_t* v = static_cast<const int8_t*>(kv.v) + kv0 * kvd;  // [kv_len, kvd]
  int8_t* q8 = f.buffer<FB::kQ8>();              // [q_len, qd]
  float* q_scales = f.buffer<FB::kQ8Scales>();  // [q_len, heads]
  QuantizeHeads(f, qb, p.q_len, heads, hd, q8, q_scales);
  if (capture != nullptr) {
    CaptureHeads(f, p, *capture, [&](size_t h, float* rows) {
      qs8_attention_probs(p, h, q8, qd, q_scales, k, kvd, kv.k_scales + kv0 * kvh, rows,
                          capture->ld);
    });
  }
  const Qs8AttentionKernels kernels{f.kernels->qs8_gemm, f.kernels->qu8s8_pv,
                                    f.kernels->qs8_softmax_tile};
  // Threads split the heads; each has its own scratch.
  const size_t cost = p.q_len * (p.kv_len < 64 ? 64 : p.kv_len) * hd;
  ParallelRange(f, heads, 1, cost, [&](size_t h0, size_t h1, size_t thread) {
    AttentionParams ph = p;
    ph.head_begin = h0;
    ph.head_end = h1;
    qs8_attention(kernels, ph, q8, qd, q_scales, k, kvd, kv.k_scales + kv0 * kvh, v, kvd,
                  kv.v_scales + kv0 * kvh, qb, qd, f.buffer<FB::kAttention>() + thread * f.attention_bytes);
  });
}

constexpr AttentionBackend kF32Attention = {
    sizeof(float), false, false, 0, F32ParamsError, F32ScratchBytes, F32Store, F32Attend};
constexpr AttentionBackend kQs8Attention = {
    1, true, true, 1, Qs8AttentionParamsError, Qs8ScratchBytes, Qs8Store, Qs8Attend};

}  // namespace

namespace fwd {

const AttentionBackend& Backend(const ForwardMode& mode) {
  return mode.int8_attention ? kQs8Attention : kF32Attention;
}

AttentionParams BaseParams(const fb::Architecture& a, uint32_t tile) {
  const fb::Attention& att = *a.attention();
  AttentionParams p;
  p.tile = tile;
  p.num_heads = att.num_heads();
  p.num_kv_heads = att.num_kv_heads();
  p.head_dim = att.head_dim();
  p.scale = att.scale() != 0.0f
                ? att.scale()
                : static_cast<float>(1.0 / std::sqrt(static_cast<double>(att.head_dim())));
  p.softcap = att.logit_softcap();
  return p;
}

}  // namespace fwd

namespace {

// Where new keys and values [n, kv_dim] of rows p0.. of sequence b are
// projected: the f32 staging rows k_stage, v_stage (staged backends) or the KV
// rows themselves.
void KvTargets(const Forward& f, const KvRows& kv, uint32_t b, size_t p0, float* k_stage,
               float* v_stage, float** k, float** v) {
  if (f.attention_backend->staged) {
    *k = k_stage;
    *v = v_stage;
    return;
  }
  const size_t kvd = KvDim(*f.arch), row = static_cast<size_t>(b) * kv.stride + p0;
  *k = static_cast<float*>(kv.k) + row * kvd;
  *v = static_cast<float*>(kv.v) + row * kvd;
}

// ---------------------------------------------------------------------------
// Where sequence b's probabilities go in capture's [batch, heads, q_len, k_len]
// when its call's first query sits at position q_pos0 and its first q_real
// queries are real (capture null: an unused target).
CaptureTarget Target(const AttentionCapture* capture, uint32_t b, size_t q_pos0, size_t q_real) {
  CaptureTarget t{nullptr, 0, 0, q_real};
  if (capture == nullptr) return t;
  t.ld = capture->k_len;
  t.head_stride = static_cast<size_t>(capture->q_len) * capture->k_len;
  t.probs = capture->probs + (static_cast<size_t>(b) * capture->heads * capture->q_len + q_pos0) *
                                 capture->k_len;
  return t;
}

// The sliding window of layer l's self-attention: Attention.sliding_window for
// every layer, or for the layers sliding_layers marks (the others: 0, global).
uint32_t LayerWindow(const fb::Architecture& a, uint32_t l) {
  const fb::Attention& att = *a.attention();
  const auto* sliding = att.sliding_layers();
  if (sliding == nullptr || sliding->size() == 0) return att.sliding_window();
  return l < sliding->size() && sliding->Get(l) ? att.sliding_window() : 0;
}

// The profile's kind of an attention call, whose tiles it counts when the pass
// is profiled (ForwardProfile::attention_tiles).
OpKind ProfileAttention(const Forward& f, const AttentionParams& p) {
  const OpKind kind = p.window != 0 ? OpKind::kLocalAttention : OpKind::kAttention;
  if (f.profile == nullptr) return kind;
  const size_t tile = AttentionTile(p);
  double visited = 0, blocks = 0;
  for (size_t i0 = 0; i0 < p.q_len; i0 += kProfileQueryRows) {
    const size_t rows = p.q_len - i0 < kProfileQueryRows ? p.q_len - i0 : kProfileQueryRows;
    size_t lo = static_cast<size_t>(-1), hi = 0;
    for (size_t r = 0; r < rows; ++r) {
      size_t a = 0, b = 0;
      AttentionKeyRange(p, i0 + r, &a, &b);
      if (a >= b) continue;
      lo = a < lo ? a : lo;
      hi = b > hi ? b : hi;
    }
    if (lo < hi) visited += static_cast<double>((hi - 1) / tile - lo / tile + 1);
    blocks += 1;
  }
  size_t h0 = 0, h1 = 0;
  AttentionHeads(p, &h0, &h1);
  const double heads = static_cast<double>(h1 - h0);
  AttentionTiles& t = kind == OpKind::kLocalAttention ? f.profile->local_attention_tiles
                                                      : f.profile->attention_tiles;
  t.visited += visited * heads;
  t.full += blocks * static_cast<double>((p.kv_len + tile - 1) / tile) * heads;
  return kind;
}

// Self-attention of `batch` sequences of `seq` rows: in, out [batch * seq, hidden],
// with a sliding `window` (0: none) and RoPE from inv_freq (null: no RoPE).
// Row s of sequence b sits at position pos0[b] + s (pos0 null: 0); its keys and
// values go to kv rows pos0[b] + s, and it attends to kv rows [0, pos0[b] + seq)
// of which the first valid[b] are real.
// The probabilities of sequence b's call go to capture (null: not captured).
void SelfAttention(const Forward& f, const AttentionWeights& w, const float* relative_bias,
                   bool causal, uint32_t window, const float* inv_freq, KvRows kv,
                   const float* in, const uint32_t* pos0, const uint32_t* valid, uint32_t batch,
                   uint32_t seq, float* out, const AttentionCapture* capture) {
  const fb::Architecture& a = *f.arch;
  const size_t h = a.hidden_size(), qd = QDim(a), kvd = KvDim(a);
  const size_t rows = static_cast<size_t>(batch) * seq;
  float* q = f.buffer<FB::kQ>();  // [rows, qd]: queries, then the attention output in place
  ObserveInput(f, ProductInput::kAttention, in, rows, h, h);
  Linear(f, w.q, in, h, rows, q, qd);
  // Q's quantized rows of `in` stay in qin until the next Linear: Attend
  // quantizes into q8, the backend's store into the KV rows.
  const bool shared_input = QuantizesInput(w.q) && QuantizesInput(w.k) && QuantizesInput(w.v);
  // Attention.output_gate: sigmoid(gate(in)) multiplies the heads' output.
  float* gate = nullptr;  // [rows, qd]
  if (w.gate.weight.present()) {
    gate = f.buffer<FB::kMixer>();
    const QuantizedRows pre = LastQuantized(f, h, 0);
    Linear(f, w.gate, in, h, rows, gate, qd, QuantizesInput(w.q) && QuantizesInput(w.gate) ? &pre
                                                                                         : nullptr);
  }
  for (uint32_t b = 0; b < batch; ++b) {
    const size_t p0 = pos0 != nullptr ? pos0[b] : 0;
    const float* xb = in + static_cast<size_t>(b) * seq * h;  // [seq, hidden]
    float* qb = q + static_cast<size_t>(b) * seq * qd;        // [seq, qd]
    // This call's keys and values [seq, kvd], f32: in the KV rows p0.. or staged
    // in k, v, as the backend stores them.
    float* kb = nullptr;
    float* vb = nullptr;
    KvTargets(f, kv, b, p0, f.buffer<FB::kK>() + static_cast<size_t>(b) * seq * kvd,
              f.buffer<FB::kV>() + static_cast<size_t>(b) * seq * kvd, &kb, &vb);
    // K and V read the rows of `in` that Q's projection quantized.
    const QuantizedRows pre = LastQuantized(f, h, static_cast<size_t>(b) * seq);
    Linear(f, w.k, xb, h, seq, kb, kvd, shared_input ? &pre : nullptr);
    Linear(f, w.v, xb, h, seq, vb, kvd, shared_input ? &pre : nullptr);
    // Q/K norms before RoPE: the cache keeps K normed and rotated.
    if (w.q_norm != nullptr) NormalizeHeads(f, w.q_norm, qb, seq, a.attention()->num_heads());
    if (w.k_norm != nullptr) NormalizeHeads(f, w.k_norm, kb, seq, a.attention()->num_kv_heads());
    if (inv_freq != nullptr) {
      F32RopeParams rp;
      rp.len = seq;
      rp.head_dim = a.attention()->head_dim();
      rp.rotary_dim = f.rotary_dim;
      rp.pos0 = p0;
      rp.inv_freq = inv_freq;
      rp.attention_factor = f.rope_attention_factor;
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
    AttentionParams p = BaseParams(a, f.attention_tile);
    p.q_len = seq;
    p.kv_len = p0 + seq;
    p.q_pos0 = p0;
    p.kv_valid = valid[b];
    p.causal = causal;
    p.window = window;
    // An encoder's sliding layers see a band (Attention.sliding_window_ahead).
    p.window_ahead = window != 0 && !causal ? a.attention()->sliding_window_ahead() : 0;
    p.alibi_slopes = f.alibi_slopes;
    if (relative_bias != nullptr) {
      p.t5_bias = relative_bias;
      p.t5_num_buckets = a.attention()->relative_buckets();
      p.t5_max_distance = a.attention()->relative_max_distance();
      p.t5_bidirectional = !causal;
    }
    const CaptureTarget target = Target(capture, b, p0, valid[b]);
    ProfileScope scope(f, ProfileAttention(f, p));
    f.attention_backend->store(f, kv, b, p0, seq, kb, vb);
    f.attention_backend->attend(f, p, kv, b, qb, capture != nullptr ? &target : nullptr);
  }
  if (gate != nullptr) {
    ProfileScope scope(f, OpKind::kActivation);
    ParallelRange(f, rows, 1, qd * 8, [&](size_t r0, size_t r1, size_t) {
      for (size_t i = r0 * qd; i < r1 * qd; ++i) {
        q[i] *= static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(gate[i]))));
      }
    });
  }
  ObserveInput(f, ProductInput::kAttentionOutput, q, rows, qd, qd);
  Linear(f, w.o, q, qd, rows, out, h);
}

// Cross-attention: queries from in [batch * seq, hidden], keys and values already
// projected from the encoder output into kv (ProjectCrossKv; enc_lengths[b] real).
// Queries from q_valid[b] on are padding (for the capture).
void CrossAttention(const Forward& f, const AttentionWeights& w, KvRows kv, const float* in,
                    const uint32_t* enc_lengths, uint32_t enc_seq, const uint32_t* q_valid,
                    uint32_t batch, uint32_t seq, float* out, const AttentionCapture* capture) {
  const fb::Architecture& a = *f.arch;
  const size_t h = a.hidden_size(), qd = QDim(a);
  const size_t rows = static_cast<size_t>(batch) * seq;
  float* q = f.buffer<FB::kQ>();  // [rows, qd]: queries, then the attention output in place
  ObserveInput(f, ProductInput::kCrossQuery, in, rows, h, h);
  Linear(f, w.q, in, h, rows, q, qd);
  for (uint32_t b = 0; b < batch; ++b) {
    float* qb = q + static_cast<size_t>(b) * seq * qd;  // [seq, qd]
    AttentionParams p = BaseParams(a, f.attention_tile);
    p.q_len = seq;
    p.kv_len = enc_seq;
    p.kv_valid = enc_lengths[b];
    const CaptureTarget target = Target(capture, b, 0, q_valid[b]);
    ProfileScope scope(f, ProfileAttention(f, p));
    f.attention_backend->attend(f, p, kv, b, qb, capture != nullptr ? &target : nullptr);
  }
  ObserveInput(f, ProductInput::kCrossOutput, q, rows, qd, qd);
  Linear(f, w.o, q, qd, rows, out, h);
}

// Layer l's rows of a KV region of `layer_rows` rows per layer, `stride` rows per sequence.
KvRows LayerKv(const Forward& f, const KvRows& all, size_t layer_rows, uint32_t l,
               size_t stride) {
  const fb::Attention& att = *f.arch->attention();
  const size_t kvh = att.num_kv_heads(), kvd = kvh * att.head_dim();
  const size_t row = l * layer_rows;  // the layer's first row
  const size_t bytes = row * kvd * f.attention_backend->value_bytes;
  KvRows kv;
  kv.k = static_cast<uint8_t*>(all.k) + bytes;
  kv.v = static_cast<uint8_t*>(all.v) + bytes;
  if (all.k_scales != nullptr) {
    kv.k_scales = all.k_scales + row * kvh;
    kv.v_scales = all.v_scales + row * kvh;
  }
  kv.stride = stride;
  return kv;
}

// The cross-attention keys and values of decoder layer l, [max_batch, max_seq, kv_dim].
KvRows CrossKv(const Forward& f, uint32_t l) {
  const size_t rows = static_cast<size_t>(f.max_batch) * f.max_seq;
  return LayerKv(f, f.cross_kv, rows, l, f.max_seq);
}

}  // namespace

KvRows DecoderSelfKv(const Forward& f, uint32_t l) {
  return LayerKv(f, f.self_kv, static_cast<size_t>(f.max_batch) * f.kv_positions,
                 f.layer_states[l].kv_slot, f.kv_positions);
}

KvRows DecoderCrossKv(const Forward& f, uint32_t l) { return CrossKv(f, l); }

size_t KvValueBytes(const Forward& f) { return f.attention_backend->value_bytes; }

void CopyKvRows(const Forward& f, const KvRows& kv, uint32_t b, size_t rows, bool save,
                uint8_t** cursor) {
  const fb::Attention& att = *f.arch->attention();
  const size_t kv_heads = att.num_kv_heads(), kv_dim = kv_heads * att.head_dim();
  const size_t value_bytes = f.attention_backend->value_bytes;
  const size_t first = static_cast<size_t>(b) * kv.stride;
  const size_t bytes = rows * kv_dim * value_bytes;
  void* const parts[2] = {kv.k, kv.v};
  for (void* part : parts) {
    uint8_t* at = static_cast<uint8_t*>(part) + first * kv_dim * value_bytes;
    if (save) std::memcpy(*cursor, at, bytes); else std::memcpy(at, *cursor, bytes);
    *cursor += bytes;
  }
  if (kv.k_scales == nullptr) return;
  float* const scales[2] = {kv.k_scales, kv.v_scales};
  for (float* part : scales) {
    float* at = part + first * kv_heads;
    const size_t n = rows * kv_heads * sizeof(float);
    if (save) std::memcpy(*cursor, at, n); else std::memcpy(at, *cursor, n);
    *cursor += n;
  }
}

// ---------------------------------------------------------------------------
// The registry's row (engine/mixer.h).
namespace {

// A position of a decoder layer keeps its key and value, in the backend's
// element type, and their scales (one f32 per kv head each) with int8.
MixerStateSize AttentionStateSize(const fb::Architecture& a, const ForwardMode& mode) {
  const AttentionBackend& be = Backend(mode);
  const size_t kvh = a.attention()->num_kv_heads(), kvd = KvDim(a);
  MixerStateSize s;
  s.per_position = 2 * (kvd * be.value_bytes + (be.row_scales ? kvh * sizeof(float) : 0));
  return s;
}

void RunAttention(const Forward& f, const LayerWeights& w, const MixerCall& c, const float* in,
                  float* out) {
  const uint32_t window = LayerWindow(*f.arch, c.layer);
  // rope.local_theta: the sliding layers' own RoPE base.
  const float* inv_freq =
      window != 0 && f.rope_local_inv_freq != nullptr ? f.rope_local_inv_freq : f.rope_inv_freq;
  // Decoders keep keys and values in the cache; encoders in scratch, one layer at a time.
  const KvRows kv = c.decoder ? DecoderSelfKv(f, c.layer) : LayerKv(f, f.encoder_kv, 0, 0, c.seq);
  SelfAttention(f, w.attn, c.relative_bias, c.decoder, window, inv_freq, kv, in, c.pos0, c.valid,
                c.batch, c.seq, out, c.capture);
}

void CopyAttentionState(const Forward& f, uint32_t l, uint32_t b, uint32_t positions, bool save,
                        uint8_t** cursor) {
  CopyKvRows(f, DecoderSelfKv(f, l), b, positions, save, cursor);
}

// Attention.output_gate: the gate's rows [rows, heads * head_dim].
size_t AttentionRowFloats(const fb::Architecture& a) {
  return a.attention()->output_gate() ? QDim(a) : 0;
}

uint32_t AttentionHeads(const fb::Architecture& a) { return a.attention()->num_heads(); }

}  // namespace

const TokenMixer kAttentionMixer = {fb::TokenMixer::Attention, "attention", RoleGroup::kAttention,
                                    CaptureKind::kProbabilities, AttentionHeads,
                                    AttentionStateSize, RunAttention, AttentionRowFloats,
                                    AttentionRowFloats, NoMixerScratch, CopyAttentionState,
                                    nullptr};

namespace fwd {

// Projects encoder_out [batch * enc_seq, hidden] into every decoder layer's
// cross-attention keys and values, once per source.
void ProjectCrossKv(const Forward& f, const float* encoder_out, uint32_t enc_seq,
                    uint32_t batch) {
  const size_t h = f.arch->hidden_size(), kvd = KvDim(*f.arch);
  const StackWeights& stack = f.weights->decoder;
  for (uint32_t l = 0; l < stack.num_layers; ++l) {
    const AttentionWeights& w = stack.layers[l].cross_attn;
    BeginLayer(f, LayerStack::kDecoder, l, stack.layers[l]);
    const KvRows kv = CrossKv(f, l);
    ObserveInput(f, ProductInput::kCrossKv, encoder_out, static_cast<size_t>(batch) * enc_seq, h,
                 h);
    for (uint32_t b = 0; b < batch; ++b) {
      const float* eb = encoder_out + static_cast<size_t>(b) * enc_seq * h;  // [enc_seq, hidden]
      float* kb = nullptr;  // [enc_seq, kvd]: in the KV rows or staged in k
      float* vb = nullptr;  // same, v
      KvTargets(f, kv, b, 0, f.buffer<FB::kK>(), f.buffer<FB::kV>(), &kb, &vb);
      Linear(f, w.k, eb, h, enc_seq, kb, kvd);
      Linear(f, w.v, eb, h, enc_seq, vb, kvd);
      ProfileScope scope(f, OpKind::kAttention);
      f.attention_backend->store(f, kv, b, 0, enc_seq, kb, vb);
    }
    EndLayer(f, LayerStack::kDecoder, l, stack.layers[l], nullptr, 0);
  }
}

void CrossAttentionBlock(const Forward& f, const LayerWeights& w, uint32_t l,
                         const CrossInput& cross, const float* in, const uint32_t* q_valid,
                         uint32_t batch, uint32_t seq, float* out,
                         const AttentionCapture* capture) {
  CrossAttention(f, w.cross_attn, CrossKv(f, l), in, cross.enc_lengths, cross.enc_seq, q_valid,
                 batch, seq, out, capture);
}

}  // namespace fwd
}  // namespace octet
