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
// A call over several tokens runs the rule in chunks of kChunk (transformers'
// chunked form: within a chunk, with G the cumulative g and D[i][j] =
// exp(G_i - G_j) for j <= i, solve (I + strict(beta k k^T * D)) [U | W] =
// [beta v | beta exp(G) k] by forward substitution; u = U - W S; o = exp(G) q S +
// (q k^T * D) u; S = exp(G_last) S + (exp(G_last - G) k)^T u), every difference of
// G formed before its exp (g <= 0: no exp above 1); a step of one token runs
// the recurrence. Both are exact forms of the same rule.
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

namespace octet {
namespace {

using namespace fwd;

constexpr size_t kChunk = 64;

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

// Per thread: a chunk's q, k, W [kChunk, dk], U (then u), O [kChunk, dv], the
// two [kChunk, kChunk] matrices, G and beta (RuleChunked); the recurrence's one
// dv row; an even count, so that every thread's share starts 8-byte aligned (a
// capture's dk doubles, MixingMatrix, reuse it).
size_t ChunkFloats(const Shape& s) {
  return kChunk * (3 * s.dk + 2 * s.dv) + 2 * kChunk * kChunk + 3 * kChunk;  // G: doubles
}
size_t GdnThreadFloats(const fb::Architecture& a) {
  const Shape s = ShapeOf(a);
  return (ChunkFloats(s) + s.dv + 1) & ~static_cast<size_t>(1);
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

// One value head's recurrence over `n` rows of sequence rows `rows` (row stride
// ld): reads q, k, v from the conv columns and beta, g from the b, a columns
// (already transformed), writes o into the raw columns; S [dk, dv] in and out.
void RuleRecurrent(const Shape& sh, const Cols& c, size_t h, float* rows, size_t ld, size_t n,
                   float* S, float* tmp) {
  const size_t kh = h / sh.group, dk = sh.dk, dv = sh.dv;
  for (size_t t = 0; t < n; ++t) {
    float* row = rows + t * ld;
    const float* q = row + c.conv + kh * dk;
    const float* k = row + c.conv + sh.hk * dk + kh * dk;
    const float* v = row + c.conv + 2 * sh.hk * dk + h * dv;
    const float beta = row[c.b + h];
    const float decay = std::exp(row[c.a + h]);
    float* kv = tmp;  // S^T k after the decay
    for (size_t j = 0; j < dv; ++j) kv[j] = 0.0f;
    for (size_t i = 0; i < dk; ++i) {
      float* si = S + i * dv;
      const float ki = k[i];
      for (size_t j = 0; j < dv; ++j) {
        si[j] *= decay;
        kv[j] += ki * si[j];
      }
    }
    for (size_t j = 0; j < dv; ++j) kv[j] = beta * (v[j] - kv[j]);  // delta
    float* o = row + c.raw + h * dv;
    for (size_t j = 0; j < dv; ++j) o[j] = 0.0f;
    for (size_t i = 0; i < dk; ++i) {
      float* si = S + i * dv;
      const float ki = k[i], qi = q[i];
      for (size_t j = 0; j < dv; ++j) {
        si[j] += ki * kv[j];
        o[j] += qi * si[j];
      }
    }
  }
}

// The same rule in chunks of kChunk rows.
void RuleChunked(const Shape& sh, const Cols& c, size_t h, float* rows, size_t ld, size_t n,
                 float* S, float* scratch) {
  const size_t kh = h / sh.group, dk = sh.dk, dv = sh.dv;
  float* Q = scratch;              // [kChunk, dk]
  float* K = Q + kChunk * dk;      // [kChunk, dk]
  float* W = K + kChunk * dk;      // [kChunk, dk]
  float* V = W + kChunk * dk;      // [kChunk, dv]: beta v, then U, then u
  float* O = V + kChunk * dv;      // [kChunk, dv]
  float* M = O + kChunk * dv;      // [kChunk, kChunk]: beta_i k_i.k_j D_ij (j < i)
  float* A = M + kChunk * kChunk;  // [kChunk, kChunk]: q_i.k_j D_ij (j <= i)
  // [kChunk] doubles (the offset is a multiple of kChunk floats: 8-byte aligned): the
  // cumulative decays reach -100 within a chunk, where a float's exponent would be off by 1e-5.
  double* G = reinterpret_cast<double*>(A + kChunk * kChunk);
  float* B = A + kChunk * kChunk + 2 * kChunk;  // [kChunk]
  for (size_t t0 = 0; t0 < n; t0 += kChunk) {
    const size_t m = n - t0 < kChunk ? n - t0 : kChunk;
    double acc = 0.0;
    for (size_t i = 0; i < m; ++i) {
      const float* row = rows + (t0 + i) * ld;
      std::memcpy(Q + i * dk, row + c.conv + kh * dk, dk * sizeof(float));
      std::memcpy(K + i * dk, row + c.conv + sh.hk * dk + kh * dk, dk * sizeof(float));
      const float* v = row + c.conv + 2 * sh.hk * dk + h * dv;
      B[i] = row[c.b + h];
      acc += row[c.a + h];
      G[i] = acc;
      for (size_t j = 0; j < dv; ++j) V[i * dv + j] = B[i] * v[j];
      const float eg = static_cast<float>(std::exp(G[i]));
      for (size_t d = 0; d < dk; ++d) W[i * dk + d] = B[i] * eg * K[i * dk + d];
    }
    // M and A, and the forward substitutions (I + M) U = beta v, (I + M) W = beta exp(G) k.
    for (size_t i = 0; i < m; ++i) {
      const float* ki = K + i * dk;
      const float* qi = Q + i * dk;
      for (size_t j = 0; j <= i; ++j) {
        const float* kj = K + j * dk;
        double kk = 0.0, qk = 0.0;
        for (size_t d = 0; d < dk; ++d) {
          kk += static_cast<double>(ki[d]) * kj[d];
          qk += static_cast<double>(qi[d]) * kj[d];
        }
        const double dij = std::exp(G[i] - G[j]);
        M[i * kChunk + j] = static_cast<float>(B[i] * kk * dij);
        A[i * kChunk + j] = static_cast<float>(qk * dij);
      }
      for (size_t j = 0; j < i; ++j) {
        const float mij = M[i * kChunk + j];
        const float* uj = V + j * dv;
        float* ui = V + i * dv;
        for (size_t e = 0; e < dv; ++e) ui[e] -= mij * uj[e];
        const float* wj = W + j * dk;
        float* wi = W + i * dk;
        for (size_t d = 0; d < dk; ++d) wi[d] -= mij * wj[d];
      }
    }
    // u = U - W S; O = exp(G) q S + A u.
    for (size_t i = 0; i < m; ++i) {
      float* ui = V + i * dv;
      float* oi = O + i * dv;
      const float* wi = W + i * dk;
      const float* qi = Q + i * dk;
      const float eg = static_cast<float>(std::exp(G[i]));
      for (size_t e = 0; e < dv; ++e) oi[e] = 0.0f;
      for (size_t d = 0; d < dk; ++d) {
        const float* sd = S + d * dv;
        const float wd = wi[d], qd = eg * qi[d];
        for (size_t e = 0; e < dv; ++e) {
          ui[e] -= wd * sd[e];
          oi[e] += qd * sd[e];
        }
      }
    }
    for (size_t i = 0; i < m; ++i) {
      float* oi = O + i * dv;
      for (size_t j = 0; j <= i; ++j) {
        const float aij = A[i * kChunk + j];
        const float* uj = V + j * dv;
        for (size_t e = 0; e < dv; ++e) oi[e] += aij * uj[e];
      }
      std::memcpy(rows + (t0 + i) * ld + c.raw + h * dv, oi, dv * sizeof(float));
    }
    // S = exp(G_last) S + sum_j exp(G_last - G_j) k_j u_j^T.
    const double last = G[m - 1];
    const float el = static_cast<float>(std::exp(last));
    for (size_t d = 0; d < dk * dv; ++d) S[d] *= el;
    for (size_t j = 0; j < m; ++j) {
      const float f = static_cast<float>(std::exp(last - G[j]));
      const float* kj = K + j * dk;
      const float* uj = V + j * dv;
      for (size_t d = 0; d < dk; ++d) {
        const float kd = f * kj[d];
        float* sd = S + d * dv;
        for (size_t e = 0; e < dv; ++e) sd[e] += kd * uj[e];
      }
    }
  }
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
  conv.silu = true;
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
        if (real == 1) {
          RuleRecurrent(sh, c, v, rb, ld, real, S, mine + ChunkFloats(sh));
        } else if (real > 1) {
          RuleChunked(sh, c, v, rb, ld, real, S, mine);
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
      for (size_t v = 0; v < sh.hv; ++v) {
        float* o = row + c.raw + v * sh.dv;
        const float* zv = row + c.z + v * sh.dv;
        double ss = 0.0;
        for (size_t e = 0; e < sh.dv; ++e) ss += static_cast<double>(o[e]) * o[e];
        const float inv = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(sh.dv) + eps));
        for (size_t e = 0; e < sh.dv; ++e) {
          const float zs = zv[e] * Sigmoid(zv[e]);
          o[e] = norm[e] * (o[e] * inv) * zs;
        }
      }
    }
  });
  ObserveInput(f, ProductInput::kLinearOutput, buf + c.raw, rows, sh.value_cols, ld);
  Linear(f, linear(Role::kLinOut), buf + c.raw, ld, rows, out, h);
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
                                        GdnThreadFloats, CopyGdnState};

}  // namespace octet
