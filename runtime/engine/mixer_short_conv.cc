// The short-convolution mixer (LFM2's gated short convolution), for layers whose
// Architecture.layer_mixers entry is ShortConv:
//
//   b, c, x = in_proj(in)            rows [0, H), [H, 2H), [2H, 3H) of its output
//   u[t]    = b[t] * x[t]            the input gate
//   v[t]    = bias + sum_k w[:, k] * u[t - K + 1 + k]    causal, depthwise, K taps
//   y[t]    = c[t] * v[t]            the output gate
//   out     = out_proj(y)
//
// with w = conv.conv.weight [H, K] (tap K - 1 multiplies the current row) and
// u before a sequence's first position taken as zero. In a decoder the state of
// a sequence is u of its last K - 1 positions ([K - 1, H] floats, oldest first,
// fixed in size), so a step or a prompt chunk continues where the last call
// stopped. in_proj and out_proj are matrix products like any other (int8 or
// fp32, through Linear); the gates and taps run in fp32 on the mixer's own rows
// (buffer kMixer, [rows, 3H]: b, c, x, of which b becomes u and x becomes y).
#include <cstring>

#include "engine/causal_conv.h"
#include "engine/forward_internal.h"
#include "engine/mixer.h"

namespace octet {
namespace {

using namespace fwd;

size_t Taps(const fb::Architecture& a) { return a.short_conv()->kernel(); }

MixerStateSize ShortConvStateSize(const fb::Architecture& a, const ForwardMode&) {
  MixerStateSize s;
  s.fixed = (Taps(a) - 1) * a.hidden_size() * sizeof(float);
  return s;
}

size_t ShortConvRowFloats(const fb::Architecture& a) { return 3 * size_t{a.hidden_size()}; }

// Sequence b's state in decoder layer l: [taps - 1, hidden] floats, row i
// holding u at position p0 - (taps - 1) + i for a call starting at p0.
float* StateRows(const Forward& f, uint32_t l, uint32_t b) {
  const LayerState& st = f.layer_states[l];
  return reinterpret_cast<float*>(f.buffer<FB::kMixerState>() + st.fixed_offset +
                                  static_cast<size_t>(b) * st.size.fixed);
}

// Channels [c0, c1) of sequence b's rows rb [seq, 3H] (b, c, x): u into the b
// columns, y into the x columns, then the state of a decoder sequence moved on
// to the call's last real position.
void ConvolveChannels(const Forward& f, const MixerCall& call, const CausalConv& conv, uint32_t b,
                      float* rb, size_t c0, size_t c1) {
  const size_t h = f.arch->hidden_size(), ld = 3 * h;
  const size_t p0 = call.pos0 != nullptr ? call.pos0[b] : 0;
  // u before the call: the decoder sequence's state (p0 > 0), else zeros.
  float* state = call.decoder ? StateRows(f, call.layer, b) : nullptr;
  const bool continues = state != nullptr && p0 > 0;
  for (size_t s = 0; s < call.seq; ++s) {
    float* row = rb + s * ld;
    for (size_t ch = c0; ch < c1; ++ch) row[ch] *= row[2 * h + ch];  // u = b * x
  }
  CausalConvRows(conv, rb, ld, rb + 2 * h, ld, call.seq, state, h, continues, c0, c1);
  for (size_t s = 0; s < call.seq; ++s) {
    float* row = rb + s * ld;
    for (size_t ch = c0; ch < c1; ++ch) row[2 * h + ch] *= row[h + ch];  // y = c * conv(u)
  }
  // The state after the call's last real position (valid[b] - 1; a call with
  // no real row keeps it).
  if (state == nullptr || call.valid[b] == 0 || call.valid[b] - 1 < p0) return;
  const size_t end = p0 + call.seq - 1;
  const size_t last = call.valid[b] - 1 < end ? call.valid[b] - 1 : end;
  AdvanceConvState(conv, rb, ld, state, h, p0, last, continues, c0, c1);
}

void RunShortConv(const Forward& f, const LayerWeights& w, const MixerCall& call, const float* in,
                  float* out) {
  const size_t h = f.arch->hidden_size(), ld = 3 * h;
  const size_t rows = static_cast<size_t>(call.batch) * call.seq;
  const LinearWeights& in_proj = w.mixer.linear[RoleIndexInGroup(Role::kConvIn)];
  const LinearWeights& out_proj = w.mixer.linear[RoleIndexInGroup(Role::kConvOut)];
  CausalConv conv;
  conv.weight = w.mixer.f32[RoleIndexInGroup(Role::kConvKernel)];  // [hidden, taps]
  conv.bias = w.mixer.f32[RoleIndexInGroup(Role::kConvBias)];      // [hidden] or null
  conv.taps = Taps(*f.arch);
  float* bcx = f.buffer<FB::kMixer>();  // [rows, 3 * hidden]
  ObserveInput(f, ProductInput::kAttention, in, rows, h, h);
  Linear(f, in_proj, in, h, rows, bcx, ld);
  {
    ProfileScope scope(f, OpKind::kConvolution);
    const size_t cost = call.seq * Taps(*f.arch) * 2;
    for (uint32_t b = 0; b < call.batch; ++b) {
      float* rb = bcx + static_cast<size_t>(b) * call.seq * ld;
      ParallelRange(f, h, 16, cost, [&](size_t c0, size_t c1, size_t) {
        ConvolveChannels(f, call, conv, b, rb, c0, c1);
      });
    }
  }
  const float* y = bcx + 2 * h;  // [rows, hidden] at stride 3 * hidden
  ObserveInput(f, ProductInput::kConvOutput, y, rows, h, ld);
  Linear(f, out_proj, y, ld, rows, out, h);
}

void CopyShortConvState(const Forward& f, uint32_t l, uint32_t b, uint32_t, bool save,
                        uint8_t** cursor) {
  const size_t bytes = f.layer_states[l].size.fixed;
  float* rows = StateRows(f, l, b);
  if (save) std::memcpy(*cursor, rows, bytes); else std::memcpy(rows, *cursor, bytes);
  *cursor += bytes;
}

}  // namespace

// The output product reads y, the last third of kMixer's rows.
void ShortConvProductStrides(const fb::Architecture& a, Role role, uint32_t* in_stride,
                             uint32_t* out_stride) {
  *in_stride = role == Role::kConvOut ? 3 * a.hidden_size() : 0;
  *out_stride = 0;
}

const TokenMixer kShortConvMixer = {fb::TokenMixer::ShortConv, "short_conv",
                                    RoleGroup::kShortConv, CaptureKind::kNone, nullptr,
                                    ShortConvStateSize,
                                    RunShortConv, ShortConvRowFloats, ShortConvRowFloats,
                                    NoMixerScratch, CopyShortConvState,
                                    ShortConvProductStrides};

}  // namespace octet
