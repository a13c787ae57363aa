// RWKV-4's mixers, as transformers' modeling_rwkv.py computes them: the time
// mix (the token mixer of layers whose Architecture.layer_mixers entry is
// RwkvTimeMix) and the channel mix (Architecture.channel_mixer RwkvChannelMix).
//
// Both start with a token shift: s[t] = in[t - 1], the previous position's
// normed row (a decoder sequence's last row from its state; zeros before
// position 0), mixed with the current one per channel, x = in * mix + s * (1 - mix).
//
// Time mix, over the rows of ln1 (attn_norm):
//   xk, xv, xr = the shifted mixes with time_mix.mix_k, mix_v, mix_r
//   k = key(xk), v = value(xv), r = sigmoid(receptance(xr))
//   wkv, per channel, with w = -exp(decay), u = first and the running sums a
//   (of e^k v) and b (of e^k), both kept as multiples of e^p (numerically
//   stable; transformers' rwkv_linear_attention_cpu):
//     q = max(p, u + k); e1 = exp(p - q); e2 = exp(u + k - q)
//     wkv = (e1 a + e2 v) / (e1 b + e2)
//     q = max(p + w, k); e1 = exp(p + w - q); e2 = exp(k - q)
//     a = e1 a + e2 v;  b = e1 b + e2;  p = q
//   from a = b = 0, p = -1e38 at a sequence's first position
//   out = output(r * wkv)
// State per sequence: s, a, b, p: [4, hidden] floats.
//
// Channel mix, over the rows of ln2 (ffn_norm), with its own token shift:
//   xk, xr = the shifted mixes with channel_mix.mix_k, mix_r
//   out = sigmoid(receptance(xr)) * value(relu(key(xk))^2)
// State per sequence: s: [hidden] floats.
//
// The products are int8 or fp32 like any other (Linear); the mixes, the WKV
// recurrence and the gates run in fp32 on the mixers' own rows, each a block
// of rows x width: the time mix's in buffer kMixer (xk, xv, xr, k, v, r; wkv
// and then r * wkv replace xk), the channel mix's in buffer kChannel (xk, xr,
// r: hidden each; k: intermediate). A prompt in chunks and decode steps run
// the same recurrence in the same order, position by position.
#include <cmath>
#include <cstring>

#include "engine/forward_internal.h"
#include "engine/mixer.h"

namespace octet {
namespace {

using namespace fwd;

// The start of a sequence's running maximum p (transformers' -1e38: exp(p - q)
// is 0 against any finite key).
constexpr float kEmptyMax = -1e38f;

float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// Sequence b's time-mix state in decoder layer l: [4, hidden] floats (s, a, b, p).
float* TimeState(const Forward& f, uint32_t l, uint32_t b) {
  const LayerState& st = f.layer_states[l];
  return reinterpret_cast<float*>(f.buffer<FB::kMixerState>() + st.fixed_offset +
                                  static_cast<size_t>(b) * st.size.fixed);
}

// Sequence b's channel-mix state in decoder layer l: [hidden] floats (s).
float* ChannelState(const Forward& f, uint32_t l, uint32_t b) {
  const LayerState& st = f.layer_states[l];
  return reinterpret_cast<float*>(f.buffer<FB::kMixerState>() + st.channel_offset +
                                  static_cast<size_t>(b) * st.channel_fixed);
}

size_t Pos0(const MixerCall& c, uint32_t b) { return c.pos0 != nullptr ? c.pos0[b] : 0; }

// True when sequence b's call continues from its state (a decoder sequence past position 0).
bool Continues(const MixerCall& c, uint32_t b) { return c.decoder && Pos0(c, b) > 0; }

// The row of sequence b's call that holds its last real position (valid[b] -
// 1), or -1 when the call has none (a prompt chunk past the sequence's end):
// the state stays as it was.
int64_t LastRealRow(const MixerCall& c, uint32_t b) {
  const uint64_t p0 = Pos0(c, b);
  if (c.valid[b] == 0 || c.valid[b] - 1 < p0) return -1;
  const uint64_t end = p0 + c.seq - 1;
  const uint64_t last = c.valid[b] - 1 < end ? c.valid[b] - 1 : end;
  return static_cast<int64_t>(last - p0);
}

// The token shift's mixes of in [batch * seq, hidden]: out[j] [batch * seq,
// hidden] = in * mix[j] + s * (1 - mix[j]) for j < n, where s is the previous
// row of the sequence, before[b] for its first row (null: zeros). Then, in a
// decoder, each sequence's last real row becomes its state (state_of(b), a
// [hidden] row).
template <typename StateOf>
void ShiftMix(const Forward& f, const MixerCall& call, const float* in, const float* const* mix,
              float* const* out, size_t n, StateOf&& state_of) {
  ProfileScope scope(f, OpKind::kLinearAttention);
  const size_t h = f.arch->hidden_size();
  const size_t rows = static_cast<size_t>(call.batch) * call.seq;
  ParallelRange(f, rows, 1, n * h, [&](size_t r0, size_t r1, size_t) {
    for (size_t r = r0; r < r1; ++r) {
      const uint32_t b = static_cast<uint32_t>(r / call.seq);
      const bool first = r % call.seq == 0;
      const float* prev = !first             ? in + (r - 1) * h
                          : Continues(call, b) ? state_of(b)
                                               : nullptr;
      const float* x = in + r * h;  // [hidden]
      for (size_t j = 0; j < n; ++j) {
        const float* m = mix[j];
        float* o = out[j] + r * h;
        if (prev == nullptr) {
          for (size_t c = 0; c < h; ++c) o[c] = x[c] * m[c];
        } else {
          for (size_t c = 0; c < h; ++c) o[c] = x[c] * m[c] + prev[c] * (1.0f - m[c]);
        }
      }
    }
  });
  if (!call.decoder) return;
  for (uint32_t b = 0; b < call.batch; ++b) {
    const int64_t last = LastRealRow(call, b);
    if (last < 0) continue;
    std::memcpy(state_of(b), in + (static_cast<size_t>(b) * call.seq + last) * h,
                h * sizeof(float));
  }
}

// ---------------------------------------------------------------------------
// Time mix.

MixerStateSize TimeMixStateSize(const fb::Architecture& a, const ForwardMode&) {
  MixerStateSize s;
  s.fixed = 4 * static_cast<size_t>(a.hidden_size()) * sizeof(float);  // s, a, b, p
  return s;
}

size_t TimeMixRowFloats(const fb::Architecture& a) { return 6 * size_t{a.hidden_size()}; }

const float* MixerF32(const MixerTensors& t, Role role) { return t.f32[RoleIndexInGroup(role)]; }
const LinearWeights& MixerLinear(const MixerTensors& t, Role role) {
  return t.linear[RoleIndexInGroup(role)];
}

// Channels [c0, c1) of sequence b's WKV: k, v [rows, hidden] in, wkv [rows,
// hidden] out (the call's rows; sequence b's from b * seq), the running sums
// from and back to the state of a decoder sequence.
void WkvChannels(const Forward& f, const LayerWeights& w, const MixerCall& call, uint32_t b,
                 const float* k, const float* v, float* wkv, size_t c0, size_t c1) {
  const size_t h = f.arch->hidden_size();
  const float* decay = MixerF32(w.mixer, Role::kTimeDecay);  // [hidden]
  const float* first = MixerF32(w.mixer, Role::kTimeFirst);  // [hidden]
  float* state = call.decoder ? TimeState(f, call.layer, b) : nullptr;  // [4, hidden]
  const bool continues = Continues(call, b);
  const int64_t save_at = state != nullptr ? LastRealRow(call, b) : -1;
  const size_t row0 = static_cast<size_t>(b) * call.seq;
  for (size_t c = c0; c < c1; ++c) {
    const float dw = -std::exp(decay[c]);
    const float u = first[c];
    float num = continues ? state[h + c] : 0.0f;
    float den = continues ? state[2 * h + c] : 0.0f;
    float p = continues ? state[3 * h + c] : kEmptyMax;
    for (size_t s = 0; s < call.seq; ++s) {
      const size_t at = (row0 + s) * h + c;
      const float kt = k[at], vt = v[at];
      const float uk = u + kt;
      float q = p > uk ? p : uk;
      float e1 = std::exp(p - q), e2 = std::exp(uk - q);
      wkv[at] = (e1 * num + e2 * vt) / (e1 * den + e2);
      const float pw = p + dw;
      q = pw > kt ? pw : kt;
      e1 = std::exp(pw - q);
      e2 = std::exp(kt - q);
      num = e1 * num + e2 * vt;
      den = e1 * den + e2;
      p = q;
      if (static_cast<int64_t>(s) == save_at) {
        state[h + c] = num;
        state[2 * h + c] = den;
        state[3 * h + c] = p;
      }
    }
  }
}

void RunTimeMix(const Forward& f, const LayerWeights& w, const MixerCall& call, const float* in,
                float* out) {
  const size_t h = f.arch->hidden_size();
  const size_t rows = static_cast<size_t>(call.batch) * call.seq;
  float* buf = f.buffer<FB::kMixer>();  // [6, rows, hidden]: xk, xv, xr, k, v, r
  float* x[3] = {buf, buf + rows * h, buf + 2 * rows * h};
  float* kvr[3] = {buf + 3 * rows * h, buf + 4 * rows * h, buf + 5 * rows * h};
  const float* mix[3] = {MixerF32(w.mixer, Role::kTimeMixK), MixerF32(w.mixer, Role::kTimeMixV),
                         MixerF32(w.mixer, Role::kTimeMixR)};
  ShiftMix(f, call, in, mix, x, 3, [&](uint32_t b) { return TimeState(f, call.layer, b); });
  constexpr Role kProducts[3] = {Role::kTimeKey, Role::kTimeValue, Role::kTimeReceptance};
  constexpr ProductInput kInputs[3] = {ProductInput::kRwkvKey, ProductInput::kRwkvValue,
                                       ProductInput::kRwkvReceptance};
  for (size_t j = 0; j < 3; ++j) {
    ObserveInput(f, kInputs[j], x[j], rows, h, h);
    Linear(f, MixerLinear(w.mixer, kProducts[j]), x[j], h, rows, kvr[j], h);
  }
  float* y = x[0];  // [rows, hidden]: wkv, then r * wkv
  {
    ProfileScope scope(f, OpKind::kLinearAttention);
    const size_t cost = 16 * static_cast<size_t>(call.seq);
    for (uint32_t b = 0; b < call.batch; ++b) {
      ParallelRange(f, h, 16, cost, [&](size_t c0, size_t c1, size_t) {
        WkvChannels(f, w, call, b, kvr[0], kvr[1], y, c0, c1);
      });
    }
    const float* r = kvr[2];
    ParallelRange(f, rows, 1, h, [&](size_t r0, size_t r1, size_t) {
      for (size_t i = r0 * h; i < r1 * h; ++i) y[i] = Sigmoid(r[i]) * y[i];
    });
  }
  ObserveInput(f, ProductInput::kRwkvOutput, y, rows, h, h);
  Linear(f, MixerLinear(w.mixer, Role::kTimeOutput), y, h, rows, out, h);
}

void CopyTimeMixState(const Forward& f, uint32_t l, uint32_t b, uint32_t, bool save,
                      uint8_t** cursor) {
  const size_t bytes = f.layer_states[l].size.fixed;
  float* state = TimeState(f, l, b);
  if (save) std::memcpy(*cursor, state, bytes); else std::memcpy(state, *cursor, bytes);
  *cursor += bytes;
}

// ---------------------------------------------------------------------------
// Channel mix.

size_t ChannelMixStateBytes(const fb::Architecture& a) {
  return static_cast<size_t>(a.hidden_size()) * sizeof(float);  // s
}

size_t ChannelMixRowFloats(const fb::Architecture& a) {
  return 3 * size_t{a.hidden_size()} + a.intermediate_size();
}

void RunChannelMix(const Forward& f, const LayerWeights& w, const MixerCall& call,
                   const float* in, float* out) {
  const size_t h = f.arch->hidden_size(), inter = f.arch->intermediate_size();
  const size_t rows = static_cast<size_t>(call.batch) * call.seq;
  float* buf = f.buffer<FB::kChannel>();  // xk, xr, r [rows, hidden]; k [rows, intermediate]
  float* x[2] = {buf, buf + rows * h};
  float* r = buf + 2 * rows * h;
  float* k = buf + 3 * rows * h;
  const float* mix[2] = {MixerF32(w.channel, Role::kChannelMixK),
                         MixerF32(w.channel, Role::kChannelMixR)};
  ShiftMix(f, call, in, mix, x, 2, [&](uint32_t b) { return ChannelState(f, call.layer, b); });
  ObserveInput(f, ProductInput::kRwkvChannelKey, x[0], rows, h, h);
  Linear(f, MixerLinear(w.channel, Role::kChannelKey), x[0], h, rows, k, inter);
  {
    ProfileScope scope(f, OpKind::kActivation);
    ParallelRange(f, rows, 1, inter, [&](size_t r0, size_t r1, size_t) {
      for (size_t i = r0 * inter; i < r1 * inter; ++i) {
        const float relu = k[i] > 0.0f ? k[i] : 0.0f;
        k[i] = relu * relu;
      }
    });
  }
  ObserveInput(f, ProductInput::kRwkvChannelReceptance, x[1], rows, h, h);
  Linear(f, MixerLinear(w.channel, Role::kChannelReceptance), x[1], h, rows, r, h);
  ObserveInput(f, ProductInput::kRwkvChannelValue, k, rows, inter, inter);
  Linear(f, MixerLinear(w.channel, Role::kChannelValue), k, inter, rows, out, h);
  ProfileScope scope(f, OpKind::kActivation);
  ParallelRange(f, rows, 1, h, [&](size_t r0, size_t r1, size_t) {
    for (size_t i = r0 * h; i < r1 * h; ++i) out[i] = Sigmoid(r[i]) * out[i];
  });
}

void CopyChannelMixState(const Forward& f, uint32_t l, uint32_t b, bool save, uint8_t** cursor) {
  const size_t bytes = f.layer_states[l].channel_fixed;
  float* state = ChannelState(f, l, b);
  if (save) std::memcpy(*cursor, state, bytes); else std::memcpy(state, *cursor, bytes);
  *cursor += bytes;
}

}  // namespace

const TokenMixer kRwkvTimeMixer = {fb::TokenMixer::RwkvTimeMix, "rwkv_time_mix",
                                   RoleGroup::kRwkvTimeMix, CaptureKind::kNone, nullptr,
                                   TimeMixStateSize, RunTimeMix, TimeMixRowFloats, NoMixerScratch,
                                   NoMixerScratch, CopyTimeMixState,
                                   nullptr};

const ChannelMixer kRwkvChannelMixer = {fb::ChannelMixer::RwkvChannelMix, "rwkv_channel_mix",
                                        RoleGroup::kRwkvChannelMix, ChannelMixStateBytes,
                                        RunChannelMix, ChannelMixRowFloats, CopyChannelMixState};

}  // namespace octet
