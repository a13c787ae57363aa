// The feed-forward channel mixer (engine/mixer.h): plain or gated, position
// by position, no state.
#include "engine/forward_internal.h"
#include "engine/mixer.h"
#include "kernels/f32_elementwise.h"

namespace octet {
namespace fwd {
namespace {

F32Activation Activation(fb::Activation act) {
  switch (act) {
    case fb::Activation::GeluErf: return F32Activation::kGeluErf;
    case fb::Activation::GeluTanh: return F32Activation::kGeluTanh;
    case fb::Activation::Relu: return F32Activation::kRelu;
    case fb::Activation::Silu: return F32Activation::kSilu;
  }
  return F32Activation::kGeluErf;
}

}  // namespace

// Feed-forward: in, out [rows, hidden].
void FeedForward(const Forward& f, const LayerWeights& w, const float* in, size_t rows,
                 float* out) {
  const fb::Architecture& a = *f.arch;
  const size_t h = a.hidden_size(), inter = a.intermediate_size();
  const F32Activation act = Activation(a.activation());
  float* up = f.buffer<FB::kUp>();  // [rows, intermediate]
  ObserveInput(f, ProductInput::kFfn, in, rows, h, h);
  Linear(f, w.up, in, h, rows, up, inter);
  float* hidden = up;  // [rows, intermediate]: the down projection's input
  if (a.gated_ffn()) {
    hidden = f.buffer<FB::kGate>();  // [rows, intermediate]
    const QuantizedRows pre = LastQuantized(f, h, 0);  // up's quantized rows of `in`
    const bool shared_input = QuantizesInput(w.up) && QuantizesInput(w.gate);
    Linear(f, w.gate, in, h, rows, hidden, inter, shared_input ? &pre : nullptr);
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
  ObserveInput(f, ProductInput::kFfnHidden, hidden, rows, inter, inter);
  Linear(f, w.down, hidden, inter, rows, out, h);
}

}  // namespace fwd

namespace {

size_t NoChannelState(const fb::Architecture&) { return 0; }
size_t NoChannelRows(const fb::Architecture&) { return 0; }  // up and gate are its rows

void RunFeedForward(const Forward& f, const LayerWeights& w, const MixerCall& call,
                    const float* in, float* out) {
  fwd::FeedForward(f, w, in, static_cast<size_t>(call.batch) * call.seq, out);
}

void CopyNoChannelState(const Forward&, uint32_t, uint32_t, bool, uint8_t**) {}

}  // namespace

const ChannelMixer kFeedForwardMixer = {fb::ChannelMixer::FeedForward, "feed_forward",
                                        RoleGroup::kFeedForward, NoChannelState, RunFeedForward,
                                        NoChannelRows, CopyNoChannelState};

}  // namespace octet
