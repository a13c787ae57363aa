// The token-shift mixer: each position takes the previous position's (normed)
// row, scaled per channel,
//
//   out[t] = shift ⊙ in[t - 1]       (in[-1] = 0: a sequence's first position)
//
// with shift = layers.{i}.shift.weight [hidden]. It is the smallest mixer that
// moves information between positions and keeps a state between decoder calls
// (the last real row of each sequence: `hidden` floats, fixed in size), so the
// tests build models with it to hold the token-mixer seam to its promises (its
// own file, one role row, one registry row; decode, prefill in chunks, save and
// restore all agree). RWKV's time shift is this operation.
#include <cstring>

#include "engine/forward_internal.h"
#include "engine/mixer.h"

namespace octet {
namespace {

using namespace fwd;

MixerStateSize TokenShiftStateSize(const fb::Architecture& a, const ForwardMode&) {
  MixerStateSize s;
  s.fixed = static_cast<size_t>(a.hidden_size()) * sizeof(float);  // the last real row
  return s;
}

// Sequence b's state in decoder layer l: [hidden] floats.
float* StateRow(const Forward& f, uint32_t l, uint32_t b) {
  const LayerState& st = f.layer_states[l];
  return reinterpret_cast<float*>(f.buffer<FB::kMixerState>() + st.fixed_offset +
                                  static_cast<size_t>(b) * st.size.fixed);
}

void RunTokenShift(const Forward& f, const LayerWeights& w, const MixerCall& c, const float* in,
                   float* out) {
  const size_t h = f.arch->hidden_size();
  const float* shift = w.mixer.f32[RoleIndexInGroup(Role::kShift)];  // [hidden]
  for (uint32_t b = 0; b < c.batch; ++b) {
    const size_t p0 = c.pos0 != nullptr ? c.pos0[b] : 0;
    const float* xb = in + static_cast<size_t>(b) * c.seq * h;  // [seq, hidden]
    float* ob = out + static_cast<size_t>(b) * c.seq * h;       // [seq, hidden]
    // The row before this call's first: the sequence's state in a decoder
    // that has run before (p0 > 0), else none (zeros).
    const float* before = c.decoder && p0 > 0 ? StateRow(f, c.layer, b) : nullptr;
    for (uint32_t s = 0; s < c.seq; ++s) {
      const float* prev = s > 0 ? xb + (s - 1) * h : before;
      float* o = ob + static_cast<size_t>(s) * h;
      if (prev == nullptr) {
        std::memset(o, 0, h * sizeof(float));
        continue;
      }
      for (size_t i = 0; i < h; ++i) o[i] = shift[i] * prev[i];
    }
    if (!c.decoder) continue;
    // Keep the last real row of this call: the sequence's last real position
    // is valid[b] - 1 (later rows are padding); a prompt chunk before it ends
    // at p0 + seq - 1. A call with no real row keeps the state.
    if (c.valid[b] == 0 || c.valid[b] - 1 < p0) continue;
    const uint64_t end = p0 + c.seq - 1;
    const uint64_t last = c.valid[b] - 1 < end ? c.valid[b] - 1 : end;
    std::memcpy(StateRow(f, c.layer, b), xb + (last - p0) * h, h * sizeof(float));
  }
}

void CopyTokenShiftState(const Forward& f, uint32_t l, uint32_t b, uint32_t, bool save,
                         uint8_t** cursor) {
  const size_t bytes = f.layer_states[l].size.fixed;
  float* row = StateRow(f, l, b);
  if (save) std::memcpy(*cursor, row, bytes); else std::memcpy(row, *cursor, bytes);
  *cursor += bytes;
}

}  // namespace

const TokenMixer kTokenShiftMixer = {fb::TokenMixer::TokenShift, "token_shift",
                                     RoleGroup::kTokenShift, CaptureKind::kNone, nullptr,
                                     TokenShiftStateSize,
                                     RunTokenShift, NoMixerScratch, NoMixerScratch,
                                     NoMixerScratch, CopyTokenShiftState,
                                     nullptr};

}  // namespace octet
