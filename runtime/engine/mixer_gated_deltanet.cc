// The Gated DeltaNet mixer (Qwen3.5's and Qwen3-Next's linear attention), for
// layers whose Architecture.layer_mixers entry is GatedDeltaNet
// (Architecture.linear_attention gives Hk key heads of dk, Hv value heads of
// dv, K conv taps; value head h reads key head h / (Hv / Hk)):
//
//   qkv = silu(causal depthwise conv of lin.in_qkv(in))   channels q | k | v
//   q, k = l2norm per head (x / sqrt(sum x^2 + 1e-6)); q *= dk^-1/2
//   beta = sigmoid(lin.in_b(in)), g = -exp(a_log) * softplus(lin.in_a(in) + dt_bias)
//   per value head, with S [dk, dv]:  S = exp(g_t) S;  S += k_t (beta_t (v_t - S^T k_t))^T;
//                                     o_t = S^T q_t
//   y = RMSNorm(o) * lin.norm * silu(lin.in_z(in)) per head;  out = lin.out(y)
//
// A call over several tokens runs the rule in chunks of kDeltaChunk (64) tokens
// (transformers' chunked form; kernels/f32_delta_rule.h: within a chunk, with G
// the cumulative g and D[i][j] = exp(G_i - G_j) for j <= i, solve
// (I + strict(beta k k^T * D)) [U | W] = [beta v | beta exp(G) k] by forward
// substitution; u = U - W S; o = exp(G) q S + (q k^T * D) u;
// S = exp(G_last) S + (exp(G_last - G) k)^T u), every difference of G formed
// before its exp (g <= 0: no exp above 1); a step of one token runs the
// recurrence. Both are exact forms of the same rule; both run on the kernel
// table's f32_delta_chunk and f32_delta_step, and the gated norm on its
// f32_rmsnorm and f32_activation.
//
// State per sequence: the conv's last K - 1 inputs [K - 1, channels] and S per
// value head [Hv, dk, dv], fp32, fixed in size. The projections are matrix
// products like any other (int8 or fp32, through Linear; the four share the
// quantized input); the rest runs in fp32 on the mixer's rows (buffer kMixer:
// [raw qkv | conv output | z | b | a] per row; the output o and then y reuse
// the raw qkv columns) and each thread's chunk scratch (kMixerThreads).
#include <cmath>
#include <cstring>

#include "engine/causal_conv.h"
#include "engine/forward_internal.h"
#include "engine/mixer.h"
#include "kernels/f32_delta_rule.h"

namespace octet {
namespace {

using namespace fwd;

struct Shape {
  size_t hk, hv, dk, dv, taps;
  size_t channels;    // 2 * hk * dk + hv * dv
  size_t value_cols;  // hv * dv
  size_t row;         // floats per row of kMixer
  size_t group;       // value heads per key head
};

Shape ShapeOf(const fb::Architecture& a) {
  const fb::LinearAttention& l = *a.linear_attention();
  Shape s;
  s.hk = l.key_heads();
  s.hv = l.value_heads();
  s.dk = l.key_dim();
  s.dv = l.value_dim();
  s.taps = l.conv_kernel();
  s.channels = 2 * s.hk * s.dk + s.hv * s.dv;
  s.value_cols = s.hv * s.dv;
  s.row = 2 * s.channels + s.value_cols + 2 * s.hv;
  s.group = s.hv / s.hk;
  return s;
}

// Column offsets in a kMixer row.
struct Cols {
  size_t raw, conv, z, b, a;
};
Cols ColsOf(const Shape& s) {
  return {0, s.channels, 2 * s.channels, 2 * s.channels + s.value_cols,
          2 * s.channels + s.value_cols + s.hv};
}

size_t StateFloats(const Shape& s) { return (s.taps - 1) * s.channels + s.hv * s.dk * s.dv; }

MixerStateSize GdnStateSize(const fb::Architecture& a, const ForwardMode&) {
  MixerStateSize size;
  size.fixed = StateFloats(ShapeOf(a)) * sizeof(float);
  return size;
}

size_t GdnRowFloats(const fb::Architecture& a) { return ShapeOf(a).row; }

size_t GdnWidest(const fb::Architecture& a) {
  const Shape s = ShapeOf(a);
  return s.channels > s.value_cols ? s.channels : s.value_cols;
}

// Per thread: f32_delta_chunk's scratch (at least 2 dk floats: a capture's dk
// doubles, MixingMatrix, reuse it), an even count, so that every thread's
// share starts 8-byte aligned.
size_t GdnThreadFloats(const fb::Architecture& a) {
  const Shape s = ShapeOf(a);
  return (F32DeltaChunkScratchFloats(s.dk, s.dv) + 1) & ~static_cast<size_t>(1);
}

// Sequence b's state in decoder layer l: the conv rows, then S per value head.
float* StateOf(const Forward& f, uint32_t l, uint32_t b) {
  const LayerState& st = f.layer_states[l];
  return reinterpret_cast<float*>(f.buffer<FB::kMixerState>() + st.fixed_offset +
                                  static_cast<size_t>(b) * st.size.fixed);
}

float Sigmoid(float x) { return static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(x)))); }

// torch's softplus (beta 1, threshold 20: linear above it).
float Softplus(float x) {
  return x > 20.0f ? x : static_cast<float>(std::log1p(std::exp(static_cast<double>(x))));
}

// Value head h's token-mixing matrix over sequence rows `rows` (its first `n`
// rows real; engine/forward.h AttentionCapture, kind kMixing) into out
// [n, ld_out] (row i, column j <= i; the rest stays as it is): column j starts
// as w = beta_j k_j, is carried through each later row r as
// w <- exp(g_r) (w - beta_r (w . k_r) k_r), and c_ij = w . q_i. In double (w:
// dk doubles of scratch); O(n^2 dk).
void MixingMatrix(const Shape& sh, const Cols& c, size_t h, const float* rows, size_t ld,
                  size_t n, float* out, size_t ld_out, double* w) {
  const size_t kh = h / sh.group, dk = sh.dk;
  const auto q_of = [&](size_t t) { return rows + t * ld + c.conv + kh * dk; };
  const auto k_of = [&](size_t t) { return rows + t * ld + c.conv + sh.hk * dk + kh * dk; };
  for (size_t j = 0; j < n; ++j) {
    const double beta_j = rows[j * ld + c.b + h];
    const float* kj = k_of(j);
    for (size_t d = 0; d < dk; ++d) w[d] = beta_j * kj[d];
    for (size_t i = j; i < n; ++i) {
      if (i > j) {
        const float* ki = k_of(i);
        double wk = 0.0;
        for (size_t d = 0; d < dk; ++d) wk += w[d] * ki[d];
        const double beta = rows[i * ld + c.b + h];
        const double decay = std::exp(static_cast<double>(rows[i * ld + c.a + h]));
        for (size_t d = 0; d < dk; ++d) w[d] = decay * (w[d] - beta * wk * ki[d]);
      }
      const float* qi = q_of(i);
      double cij = 0.0;
      for (size_t d = 0; d < dk; ++d) cij += w[d] * qi[d];
      out[i * ld_out + j] = static_cast<float>(cij);
    }
  }
}

void RunGatedDeltaNet(const Forward& f, const LayerWeights& w, const MixerCall& call,
                      const float* in, float* out) {
  const fb::Architecture& a = *f.arch;
  const Shape sh = ShapeOf(a);
  const Cols c = ColsOf(sh);
  const size_t h = a.hidden_size(), ld = sh.row;
  const size_t rows = static_cast<size_t>(call.batch) * call.seq;
  const auto linear = [&](Role role) -> const LinearWeights& {
    return w.mixer.linear[RoleIndexInGroup(role)];
  };
  const LinearWeights& qkv = linear(Role::kLinQkv);
  const LinearWeights& z = linear(Role::kLinZ);
  const LinearWeights& bw = linear(Role::kLinB);
  const LinearWeights& aw = linear(Role::kLinA);
  const float* a_log = w.mixer.f32[RoleIndexInGroup(Role::kLinALog)];
  const float* dt_bias = w.mixer.f32[RoleIndexInGroup(Role::kLinDtBias)];
  const float* norm = w.mixer.f32[RoleIndexInGroup(Role::kLinNorm)];
  float* buf = f.buffer<FB::kMixer>();  // [rows, ld]

  // The four projections of the normed input (sharing its quantized rows).
  ObserveInput(f, ProductInput::kAttention, in, rows, h, h);
  Linear(f, qkv, in, h, rows, buf + c.raw, ld);
  const bool shared =
      QuantizesInput(qkv) && QuantizesInput(z) && QuantizesInput(bw) && QuantizesInput(aw);
  const QuantizedRows pre = LastQuantized(f, h, 0);
  Linear(f, z, in, h, rows, buf + c.z, ld, shared ? &pre : nullptr);
  Linear(f, bw, in, h, rows, buf + c.b, ld, shared ? &pre : nullptr);
  Linear(f, aw, in, h, rows, buf + c.a, ld, shared ? &pre : nullptr);

  CausalConv conv;
  conv.weight = w.mixer.f32[RoleIndexInGroup(Role::kLinConv)];  // [channels, taps]
  conv.taps = sh.taps;
  conv.silu = f.kernels->f32_activation;
  {
    ProfileScope scope(f, OpKind::kConvolution);
    for (uint32_t b = 0; b < call.batch; ++b) {
      float* rb = buf + static_cast<size_t>(b) * call.seq * ld;
      const size_t p0 = call.pos0 != nullptr ? call.pos0[b] : 0;
      float* state = call.decoder ? StateOf(f, call.layer, b) : nullptr;
      const bool continues = state != nullptr && p0 > 0;
      const bool advance = state != nullptr && call.valid[b] > 0 && call.valid[b] - 1 >= p0;
      const size_t end = p0 + call.seq - 1;
      const size_t last = advance && call.valid[b] - 1 < end ? call.valid[b] - 1 : end;
      ParallelRange(f, sh.channels, 16, call.seq * sh.taps * 2, [&](size_t c0, size_t c1, size_t) {
        CausalConvRows(conv, rb + c.raw, ld, rb + c.conv, ld, call.seq, state, sh.channels,
                       continues, c0, c1);
        if (advance) {
          AdvanceConvState(conv, rb + c.raw, ld, state, sh.channels, p0, last, continues, c0, c1);
        }
      });
    }
  }

  ProfileScope scope(f, OpKind::kLinearAttention);
  // Per row: l2-normed q (scaled) and k of each key head, beta and g of each value head.
  const float q_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(sh.dk)));
  ParallelRange(f, rows, 1, sh.channels, [&](size_t r0, size_t r1, size_t) {
    for (size_t r = r0; r < r1; ++r) {
      float* row = buf + r * ld;
      for (size_t part = 0; part < 2; ++part) {
        for (size_t kh = 0; kh < sh.hk; ++kh) {
          float* x = row + c.conv + (part * sh.hk + kh) * sh.dk;
          double ss = 0.0;
          for (size_t d = 0; d < sh.dk; ++d) ss += static_cast<double>(x[d]) * x[d];
          const float inv = static_cast<float>(1.0 / std::sqrt(ss + 1e-6)) *
                            (part == 0 ? q_scale : 1.0f);
          for (size_t d = 0; d < sh.dk; ++d) x[d] *= inv;
        }
      }
      for (size_t v = 0; v < sh.hv; ++v) {
        row[c.b + v] = Sigmoid(row[c.b + v]);
        row[c.a + v] = -std::exp(a_log[v]) * Softplus(row[c.a + v] + dt_bias[v]);
      }
    }
  });
  // The rule, sequence by sequence, value heads on the threads.
  float* scratch = f.buffer<FB::kMixerThreads>();
  const size_t thread_floats = GdnThreadFloats(a);
  for (uint32_t b = 0; b < call.batch; ++b) {
    float* rb = buf + static_cast<size_t>(b) * call.seq * ld;
    const size_t p0 = call.pos0 != nullptr ? call.pos0[b] : 0;
    // The rows up to the last real one (later rows are padding: they leave the
    // state alone and give zeros).
    const size_t real = call.valid[b] > p0 ? (call.valid[b] - p0 < call.seq ? call.valid[b] - p0
                                                                           : call.seq)
                                           : 0;
    // Decoder-only models (the loader refuses the mixer elsewhere): a state per sequence.
    float* state = StateOf(f, call.layer, b);
    const bool continues = p0 > 0;
    ParallelRange(f, sh.hv, 1, real * sh.dk * sh.dv * 4, [&](size_t h0, size_t h1, size_t t) {
      float* mine = scratch + t * thread_floats;
      for (size_t v = h0; v < h1; ++v) {
        float* S = state + (sh.taps - 1) * sh.channels + v * sh.dk * sh.dv;
        if (!continues) std::memset(S, 0, sh.dk * sh.dv * sizeof(float));
        const size_t kh = v / sh.group;
        F32DeltaChunkArgs args;
        args.dk = sh.dk;
        args.dv = sh.dv;
        args.ld = ld;
        args.S = S;
        args.scratch = mine;
        for (size_t t0 = 0; t0 < real; t0 += kDeltaChunk) {
          float* r0 = rb + t0 * ld;
          args.m = real - t0 < kDeltaChunk ? real - t0 : kDeltaChunk;
          args.q = r0 + c.conv + kh * sh.dk;
          args.k = r0 + c.conv + (sh.hk + kh) * sh.dk;
          args.v = r0 + c.conv + 2 * sh.hk * sh.dk + v * sh.dv;
          args.beta = r0 + c.b + v;
          args.g = r0 + c.a + v;
          args.o = r0 + c.raw + v * sh.dv;
          if (args.m == 1) {  // a decode step: the recurrence
            f.kernels->f32_delta_step(sh.dk, sh.dv, args.q, args.k, args.v, *args.beta, *args.g,
                                      S, args.o);
          } else {
            f.kernels->f32_delta_chunk(args);
          }
        }
        for (size_t s = real; s < call.seq; ++s) {
          std::memset(rb + s * ld + c.raw + v * sh.dv, 0, sh.dv * sizeof(float));
        }
      }
    });
    // A capture (Session::ArmCapture: a run from position 0 in one pass) of the
    // rows' mixing matrix, from the q, k, beta, g the rule read.
    if (call.capture != nullptr && real > 0) {
      const AttentionCapture& cap = *call.capture;
      ParallelRange(f, sh.hv, 1, real * real * sh.dk * 2, [&](size_t h0, size_t h1, size_t t) {
        double* carried = reinterpret_cast<double*>(scratch + t * thread_floats);
        for (size_t v = h0; v < h1; ++v) {
          float* panel = cap.probs + ((static_cast<size_t>(b) * cap.heads + v) * cap.q_len + p0) *
                                         cap.k_len + p0;
          MixingMatrix(sh, c, v, rb, ld, real, panel, cap.k_len, carried);
        }
      });
    }
  }
  // y = RMSNorm(o) * norm * silu(z), per row and value head, in the raw columns.
  const float eps = a.norm_eps();
  ParallelRange(f, rows, 1, sh.value_cols * 4, [&](size_t r0, size_t r1, size_t) {
    for (size_t r = r0; r < r1; ++r) {
      float* row = buf + r * ld;
      float* o = row + c.raw;
      float* zs = row + c.z;
      f.kernels->f32_rmsnorm(sh.hv, sh.dv, o, sh.dv, norm, eps, o, sh.dv);
      f.kernels->f32_activation(F32Activation::kSilu, sh.value_cols, zs);
      for (size_t e = 0; e < sh.value_cols; ++e) o[e] *= zs[e];
    }
  });
  ObserveInput(f, ProductInput::kLinearOutput, buf + c.raw, rows, sh.value_cols, ld);
  Linear(f, linear(Role::kLinOut), buf + c.raw, ld, rows, out, h);
}

// The projections write, and the output reads, columns of kMixer's rows.
void GdnProductStrides(const fb::Architecture& a, Role role, uint32_t* in_stride,
                       uint32_t* out_stride) {
  const uint32_t row = static_cast<uint32_t>(ShapeOf(a).row);
  *in_stride = role == Role::kLinOut ? row : 0;
  *out_stride = role == Role::kLinOut ? 0 : row;
}

uint32_t GdnCaptureHeads(const fb::Architecture& a) { return a.linear_attention()->value_heads(); }

void CopyGdnState(const Forward& f, uint32_t l, uint32_t b, uint32_t, bool save,
                  uint8_t** cursor) {
  const size_t bytes = f.layer_states[l].size.fixed;
  float* state = StateOf(f, l, b);
  if (save) std::memcpy(*cursor, state, bytes); else std::memcpy(state, *cursor, bytes);
  *cursor += bytes;
}

}  // namespace

const TokenMixer kGatedDeltaNetMixer = {fb::TokenMixer::GatedDeltaNet, "gated_deltanet",
                                        RoleGroup::kGatedDeltaNet, CaptureKind::kMixing,
                                        GdnCaptureHeads, GdnStateSize,
                                        RunGatedDeltaNet, GdnRowFloats, GdnWidest,
                                        GdnThreadFloats, CopyGdnState,
                                        GdnProductStrides};

}  // namespace octet
