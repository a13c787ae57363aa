// The forward pass. One function per block, each buffer with its shape. fp32
// files: products on XNNPACK (ops/f32_fully_connected.h) or f32_gemm__ref, the
// rest through the dispatch table. int8 files: MatMul quantizes its input rows
// and calls the dispatch table's packed GEMM (with the dequantization fused
// where the table has qs8_packed_gemm_f32). Each layer's token mixer is the one
// the file names for it (engine/mixer.h: attention in mixer_attention.cc, ...);
// the feed-forward is in ffn.cc; the pieces they share in forward_internal.h.
//
//   Embed              token × embedding_scale (+ token type 0) (+ learned or
//                      sinusoidal position) (→ embedding norm)
//   Layer              pre-norm:  x += Mixer(Norm(x)); [x += Cross(Norm(x))]; x += FFN(Norm(x))
//                      sandwich:  x += PostNorm(Mixer(Norm(x))); x += PostNorm(FFN(Norm(x)))
//                      post-norm: x = Norm(x + Mixer(x)); [x = Norm(x + Cross(x))];
//                                 x = Norm(x + FFN(x))
//   Head               logits = softcap(x · headᵀ × logits_scale) (+ final_logits_bias)
#include "engine/forward.h"

#include "engine/forward_internal.h"
#include "engine/mixer.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/checked_math.h"
#include "core/quant.h"
#include "kernels/attention_params.h"
#include "kernels/f32_elementwise.h"
#include "kernels/f32_gemm.h"
#include "kernels/position.h"
#include "platform/clock.h"

namespace octet {
namespace fwd {
namespace {

// MatMul's int32 block acc holds at least kLinearRows rows of any product's
// outputs, and kLinearWideRows rows of the layers' (not the LM head's): the
// packed GEMM reaches its speed on tall blocks, which read each weight tile once.
constexpr size_t kLinearRows = 16;
constexpr size_t kLinearWideRows = 128;

// Rows of an n-column product per GEMM call: as many as acc holds.
size_t RowBlock(const Forward& f, size_t n) {
  const size_t block = f.acc_elements / n;
  return block < kLinearRows ? kLinearRows : block;
}


// out[rows, n] (row stride ldo) = in[rows, k] (row stride ldi) · mᵀ (+ bias[n]),
// m [n, k]. int8 m: each input row is quantized with its own scale
// (qs8_quantize_rows), the product runs in int8 -> int32 (qs8_gemm), and
// qs8_dequantize_rows brings it back to f32 and adds the bias; all three through
// the dispatch table, each bit-exact with its reference. f32 m: on its XNNPACK
// operators fc (ops/f32_fully_connected.h; they hold m and bias) when the
// session made them, else on f32_gemm__ref.
//
// pre (int8 m only): in's rows already quantized, as this function quantizes
// them (rows of k values, row stride k): the projections that read the same
// input (Q, K and V; gate and up) quantize it once. Bit-identical: each row is
// quantized on its own.

// An int8 m with 16-bit inputs (Matrix::two_digit_input): each input row as two
// int8 digits (core/quant.h QuantizeRowTwoDigits: qs8_quantize_rows of the row
// into qin, then of its residual, staged in the thread's residual row, into
// qin_lo); two int8 products over the same weights, each dequantized with its
// digit's row scales; out = high product + bias, then += low product, in fp32.
// Every step is a table kernel (bit-exact with its reference) or fixed scalar
// arithmetic, so the result is the same on every kernel set and thread count.
void MatMulTwoDigits(const Forward& f, const Matrix& m, size_t n, size_t k, const float* in,
                     size_t ldi, size_t rows, float* out, size_t ldo, const float* bias) {
  ParallelRange(f, rows, 1, k, [&](size_t r0, size_t r1, size_t thread) {
    f.kernels->qs8_quantize_rows(r1 - r0, k, in + r0 * ldi, ldi, f.buffer<FB::kQin>() + r0 * k, k,
                                 f.buffer<FB::kQinScales>() + r0);
    float* residual = f.buffer<FB::kResidual>() + thread * f.residual_stride;  // [k]
    for (size_t r = r0; r < r1; ++r) {
      const float* x = in + r * ldi;
      const int8_t* hi = f.buffer<FB::kQin>() + r * k;
      const float scale = f.buffer<FB::kQinScales>()[r];
      for (size_t c = 0; c < k; ++c) residual[c] = QuantizationResidual(x[c], hi[c], scale);
      f.kernels->qs8_quantize_rows(1, k, residual, k, f.buffer<FB::kQinLo>() + r * k, k, f.buffer<FB::kQinLoScales>() + r);
    }
  });
  int32_t* acc = f.buffer<FB::kAcc>();  // [block, n]: each piece of columns uses its own columns
  float* lo_out = f.buffer<FB::kLoOut>();  // [block, n], the same
  const size_t block = RowBlock(f, n);
  const size_t tile_bytes = m.packed != nullptr ? qs8_packed_tile_bytes(k) : 0;
  const size_t align = m.packed != nullptr ? kQs8PackedNr : 16;
  ParallelRange(f, n, align, 2 * rows * k, [&](size_t n0, size_t n1, size_t) {
    const size_t cols = n1 - n0;
    // The high digits straight into out where the fused kernel exists (bit-identical).
    const bool fused = m.packed != nullptr && f.kernels->qs8_packed_gemm_f32 != nullptr;
    if (fused) {
      f.kernels->qs8_packed_gemm_f32(rows, cols, k, f.buffer<FB::kQin>(), k,
                                     m.packed + n0 / kQs8PackedNr * tile_bytes, f.buffer<FB::kQinScales>(),
                                     m.scales + n0, bias != nullptr ? bias + n0 : nullptr,
                                     out + n0, ldo);
    }
    for (size_t r0 = 0; r0 < rows; r0 += block) {
      const size_t mr = rows - r0 < block ? rows - r0 : block;
      for (int digit = fused ? 1 : 0; digit < 2; ++digit) {
        const int8_t* q = (digit == 0 ? f.buffer<FB::kQin>() : f.buffer<FB::kQinLo>()) + r0 * k;
        const float* row_scales = (digit == 0 ? f.buffer<FB::kQinScales>() : f.buffer<FB::kQinLoScales>()) + r0;
        if (m.packed != nullptr) {
          f.kernels->qs8_packed_gemm(mr, cols, k, q, k, m.packed + n0 / kQs8PackedNr * tile_bytes,
                                     acc + n0, n);
        } else {
          f.kernels->qs8_gemm(mr, cols, k, q, k, m.q8 + n0 * k, k, acc + n0, n);
        }
        if (digit == 0) {
          f.kernels->qs8_dequantize_rows(mr, cols, acc + n0, n, row_scales, m.scales + n0,
                                         bias != nullptr ? bias + n0 : nullptr,
                                         out + r0 * ldo + n0, ldo);
          continue;
        }
        f.kernels->qs8_dequantize_rows(mr, cols, acc + n0, n, row_scales, m.scales + n0, nullptr,
                                       lo_out + n0, n);
        for (size_t r = 0; r < mr; ++r) {
          float* o = out + (r0 + r) * ldo + n0;
          const float* lo = lo_out + r * n + n0;
          for (size_t c = 0; c < cols; ++c) o[c] += lo[c];
        }
      }
    }
  });
}

void MatMul(const Forward& f, const Matrix& m, const F32FullyConnected* fc, size_t n, size_t k,
            const float* in, size_t ldi, size_t rows, float* out, size_t ldo,
            const float* bias = nullptr, const QuantizedRows* pre = nullptr) {
  if (fc != nullptr && ldi == fc->in_stride() && ldo == fc->out_stride()) {  // a task per piece
    ParallelFor(f, fc->pieces(), [&](size_t p, size_t) { fc->RunPiece(p, rows, in, out); });
    return;
  }
  // Threads split the output columns (in multiples of 16).
  if (m.f32 != nullptr) {
    if (f.profile != nullptr) ++f.profile->reference_products;
    ParallelRange(f, n, 16, rows * k, [&](size_t n0, size_t n1, size_t) {
      f32_gemm__ref(rows, n1 - n0, k, in, ldi, m.f32 + n0 * k, k, out + n0, ldo);
      if (bias != nullptr) f.kernels->f32_add_bias(rows, n1 - n0, out + n0, ldo, bias + n0);
    });
    return;
  }
  if (m.two_digit_input) {
    MatMulTwoDigits(f, m, n, k, in, ldi, rows, out, ldo, bias);
    return;
  }
  const int8_t* qin = f.buffer<FB::kQin>();               // [rows, k]
  const float* row_scales = f.buffer<FB::kQinScales>();  // [rows]
  if (pre != nullptr) {
    qin = pre->q;
    row_scales = pre->scales;
  } else {
    ParallelRange(f, rows, 1, k, [&](size_t r0, size_t r1, size_t) {
      f.kernels->qs8_quantize_rows(r1 - r0, k, in + r0 * ldi, ldi, f.buffer<FB::kQin>() + r0 * k, k,
                                   f.buffer<FB::kQinScales>() + r0);
    });
  }
  int32_t* acc = f.buffer<FB::kAcc>();  // [block, n]: each piece of columns uses its own columns
  const size_t block = RowBlock(f, n);
  if (m.packed != nullptr) {  // pieces of whole 16-channel tiles
    const size_t tile_bytes = qs8_packed_tile_bytes(k);
    ParallelRange(f, n, kQs8PackedNr, rows * k, [&](size_t n0, size_t n1, size_t) {
      const int8_t* tiles = m.packed + n0 / kQs8PackedNr * tile_bytes;
      if (f.kernels->qs8_packed_gemm_f32 != nullptr) {  // dequantized in the kernel's stores
        f.kernels->qs8_packed_gemm_f32(rows, n1 - n0, k, qin, k, tiles, row_scales,
                                       m.scales + n0, bias != nullptr ? bias + n0 : nullptr,
                                       out + n0, ldo);
        return;
      }
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

}  // namespace

// out[rows, w.out] (row stride ldo) = in[rows, w.in] (row stride ldi) · w.weightᵀ + w.bias.
// pre: see MatMul.
void Linear(const Forward& f, const LinearWeights& w, const float* in, size_t ldi, size_t rows,
            float* out, size_t ldo, const QuantizedRows* pre) {
  ProfileScope scope(f, OpKind::kLinear);
  if (f.profile != nullptr) f.profile->linear_ops += 2.0 * rows * w.out * w.in;
  MatMul(f, w.weight, w.fc, w.out, w.in, in, ldi, rows, out, ldo, w.bias, pre);
}

// The hooks (if any) as a pass enters layer l of a stack: the weight stream
// readies its weights, the product observer learns where it is, the layer
// input hook may replace the stream x [rows, hidden] (x null: not told).
void BeginLayer(const Forward& f, LayerStack stack, uint32_t l, const LayerWeights& w, float* x,
                size_t rows) {
  if (f.hooks == nullptr) return;
  f.hooks->observed_stack = stack;
  f.hooks->observed_layer = l;
  if (f.hooks->weight_stream != nullptr) f.hooks->weight_stream->BeginLayer(w);
  if (x != nullptr && f.hooks->layer_input != nullptr) {
    f.hooks->layer_input(f.hooks->layer_input_ctx, stack, l, x, rows, f.arch->hidden_size());
  }
}

// ... and as it leaves it: the weight stream lets the weights go, the layer
// observer sees the residual stream x [rows, hidden] (x null: not told).
void EndLayer(const Forward& f, LayerStack stack, uint32_t l, const LayerWeights& w,
              const float* x, size_t rows) {
  if (f.hooks == nullptr) return;
  if (f.hooks->weight_stream != nullptr) f.hooks->weight_stream->EndLayer(w);
  if (x != nullptr && f.hooks->layer_observer != nullptr) {
    f.hooks->layer_observer(f.hooks->layer_observer_ctx, stack, l, x, rows, f.arch->hidden_size());
  }
}

// Tells the product observer, if any, about the input x [rows, cols] (stride ld).
void ObserveInput(const Forward& f, ProductInput which, const float* x, size_t rows, size_t cols,
                  size_t ld) {
  if (f.hooks == nullptr || f.hooks->product_observer == nullptr) return;
  f.hooks->product_observer(f.hooks->product_observer_ctx, f.hooks->observed_stack,
                            f.hooks->observed_layer, which, x, rows, cols, ld);
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
      f.kernels->f32_layernorm(r1 - r0, h, in + r0 * h, h, n.weight, n.bias, n.eps, out + r0 * h,
                               h);
    } else {
      f.kernels->f32_rmsnorm(r1 - r0, h, in + r0 * h, h, n.weight, n.eps, out + r0 * h, h);
    }
  });
}

}  // namespace fwd

namespace {

using namespace fwd;

// out[0..cols) += multiplier * row `row` of m (int8 rows dequantized first).
void AddMatrixRow(const Matrix& m, size_t cols, size_t row, float multiplier, float* out) {
  if (m.f32 != nullptr) {
    const float* src = m.f32 + row * cols;  // [cols]
    for (size_t i = 0; i < cols; ++i) out[i] += src[i] * multiplier;
    return;
  }
  const float scale = m.scales[row];
  if (m.packed != nullptr) {
    // Channel row % 16 of packed tile row / 16: 4 k at a time, one group row
    // (16 channels x 4 k) apart (kernels/qs8_packed_gemm.h).
    constexpr size_t kGroupRow = kQs8PackedNr * kQs8PackedKGroup;
    const int8_t* w = m.packed + row / kQs8PackedNr * qs8_packed_tile_bytes(cols) +
                      kQs8PackedCorrBytes + row % kQs8PackedNr * kQs8PackedKGroup;
    for (size_t i = 0; i < cols; ++i) {
      const int8_t v = w[i / kQs8PackedKGroup * kGroupRow + i % kQs8PackedKGroup];
      out[i] += (static_cast<float>(v) * scale) * multiplier;
    }
    return;
  }
  const int8_t* src = m.q8 + row * cols;  // [cols]
  for (size_t i = 0; i < cols; ++i) out[i] += (static_cast<float>(src[i]) * scale) * multiplier;
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
  float* sinusoid = f.buffer<FB::kDelta>();  // [seq, hidden]
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
      if (w.position_embedding.present()) {
        AddMatrixRow(w.position_embedding, h, a.position_offset() + p0 + s, 1.0f, xr);
      }
      if (sinusoidal) AddResidual(xr, sinusoid + s * h, h);
    }
  }
  if (w.embedding_norm.weight != nullptr) {
    Normalize(f, w.embedding_norm, x, static_cast<size_t>(batch) * seq, x);
  }
}

// One sub-block with its norm and residual around it: x [rows, hidden].
// `block` reads its input [rows, hidden] and writes delta. Pre-norm blocks
// with a `post` norm (sandwich_norms; post.weight null: none) also normalize
// the block's output before the residual add.
template <typename Block>
void Residual(const Forward& f, const NormWeights& norm, size_t rows, float* x, Block block,
              const NormWeights& post = NormWeights()) {
  const size_t h = f.arch->hidden_size();
  if (f.arch->norm_placement() == fb::NormPlacement::Pre) {
    // No norm (Architecture.first_attn_norm): the block reads the rows as they are.
    if (norm.weight == nullptr) {
      block(x);
    } else {
      Normalize(f, norm, x, rows, f.buffer<FB::kNormed>());
      block(f.buffer<FB::kNormed>());
    }
    if (post.weight != nullptr) Normalize(f, post, f.buffer<FB::kDelta>(), rows, f.buffer<FB::kDelta>());
    AddResidualRows(f, x, f.buffer<FB::kDelta>(), rows, h);
  } else {
    block(x);
    AddResidualRows(f, x, f.buffer<FB::kDelta>(), rows, h);
    Normalize(f, norm, x, rows, x);
  }
}

// The layers of one stack over x [batch * seq, hidden], then its final norm:
// each layer's token mixer (engine/mixer.h), cross-attention (encoder-decoder
// decoders) and channel mixer (the feed-forward, ...), each in its
// norm-and-residual frame (Residual).
void RunStack(const Forward& f, const StackWeights& stack, bool decoder, const CrossInput* cross,
              const uint32_t* pos0, const uint32_t* valid, uint32_t batch, uint32_t seq,
              float* x) {
  const size_t rows = static_cast<size_t>(batch) * seq;
  const bool enc_dec = f.arch->structure() == fb::Structure::EncoderDecoder;
  const LayerStack id = !enc_dec ? LayerStack::kSingle
                        : decoder ? LayerStack::kDecoder
                                  : LayerStack::kEncoder;
  const ChannelMixer& channel = ModelChannelMixer(*f.arch);
  for (uint32_t l = 0; l < stack.num_layers; ++l) {
    const LayerWeights& w = stack.layers[l];
    BeginLayer(f, id, l, w, x, rows);
    const AttentionCapture* capture =
        f.capture != nullptr && f.capture->stack == id && f.capture->layer == l ? f.capture
                                                                                 : nullptr;
    const bool capture_cross = capture != nullptr && capture->site == AttentionSite::kCross;
    const TokenMixer& mixer = LayerTokenMixer(*f.arch, id, l);
    MixerCall call;
    call.stack = id;
    call.layer = l;
    call.decoder = decoder;
    call.relative_bias = stack.relative_bias;
    call.pos0 = pos0;
    call.valid = valid;
    call.batch = batch;
    call.seq = seq;
    call.capture = capture_cross ? nullptr : capture;
    Residual(
        f, w.attn_norm, rows, x,
        [&](const float* in) { mixer.run(f, w, call, in, f.buffer<FB::kDelta>()); },
        w.post_attn_norm);
    if (cross != nullptr) {
      Residual(f, w.cross_attn_norm, rows, x, [&](const float* in) {
        CrossAttentionBlock(f, w, l, *cross, in, valid, batch, seq, f.buffer<FB::kDelta>(),
                            capture_cross ? capture : nullptr);
      });
    }
    call.capture = nullptr;
    Residual(
        f, w.ffn_norm, rows, x,
        [&](const float* in) { channel.run(f, w, call, in, f.buffer<FB::kDelta>()); },
        w.post_ffn_norm);
    EndLayer(f, id, l, w, x, rows);
  }
  if (f.hooks != nullptr && f.hooks->layer_input != nullptr) {
    f.hooks->layer_input(f.hooks->layer_input_ctx, id, stack.num_layers, x, rows, f.arch->hidden_size());
  }
  if (stack.final_norm.weight != nullptr) Normalize(f, stack.final_norm, x, rows, x);
}

// logits[rows, vocab] = x[rows, hidden] · headᵀ × logits_scale, soft-capped when
// final_logit_softcap is set (+ final_logits_bias).
void HeadInto(const Forward& f, const float* x, size_t rows, float* logits) {
  const fb::Architecture& a = *f.arch;
  const size_t h = a.hidden_size(), vocab = a.vocab_size();
  ProfileScope scope(f, OpKind::kHead);
  if (f.profile != nullptr) f.profile->head_ops += 2.0 * rows * vocab * h;
  WeightStream* stream = f.hooks != nullptr ? f.hooks->weight_stream : nullptr;
  if (f.hooks != nullptr) {
    f.hooks->observed_stack = a.structure() == fb::Structure::EncoderDecoder
                                  ? LayerStack::kDecoder
                                  : LayerStack::kSingle;
    f.hooks->observed_layer = 0;
  }
  ObserveInput(f, ProductInput::kHead, x, rows, h, h);
  if (stream != nullptr) stream->BeginHead();
  MatMul(f, f.weights->head, f.weights->head_fc, vocab, h, x, h, rows, logits, vocab);
  if (stream != nullptr) stream->EndHead();
  if (a.logits_scale() != 1.0f) {
    for (size_t i = 0; i < rows * vocab; ++i) logits[i] *= a.logits_scale();
  }
  if (a.final_logit_softcap() != 0.0f) {
    const float cap = a.final_logit_softcap();
    for (size_t i = 0; i < rows * vocab; ++i) logits[i] = SoftCap(logits[i], cap);
  }
  if (f.weights->final_logits_bias != nullptr) {
    f.kernels->f32_add_bias(rows, vocab, logits, vocab, f.weights->final_logits_bias);
  }
}

// logits [rows, vocab] for x [rows, hidden].
const float* Head(const Forward& f, const float* x, size_t rows) {
  HeadInto(f, x, rows, f.buffer<FB::kLogits>());
  return f.buffer<FB::kLogits>();
}

// Copies into last_x the rows of x [batch, seq, hidden] (sequence b's first
// at position pos0[b]; pos0 null: 0) that hold a sequence's last real token,
// position ends[b] - 1.
void KeepLastRows(const Forward& f, const float* x, const uint32_t* ends, const uint32_t* pos0,
                  uint32_t batch, uint32_t seq) {
  const size_t h = f.arch->hidden_size();
  for (uint32_t b = 0; b < batch; ++b) {
    const uint32_t last = ends[b] - 1, p0 = pos0 != nullptr ? pos0[b] : 0;
    if (last < p0 || last >= p0 + seq) continue;
    std::memcpy(f.buffer<FB::kLastX>() + b * h, x + (static_cast<size_t>(b) * seq + last - p0) * h,
                h * sizeof(float));
  }
}

// Greedy first-fit over lifetimes: each buffer of `arena` in table order goes
// to the lowest aligned offset where it overlaps (in bytes) no buffer placed
// before it whose lifetime overlaps its own. *extent: the arena's bytes. False
// if an offset would pass SIZE_MAX / 2.
bool PlaceBuffers(PlannedBuffer* buffers, size_t count, ForwardArena arena, size_t* extent) {
  *extent = 0;
  for (size_t i = 0; i < count; ++i) {
    PlannedBuffer& b = buffers[i];
    if (b.arena != arena || b.bytes == 0) continue;
    size_t offset = 0;
    for (bool moved = true; moved;) {  // offsets only grow: this ends
      moved = false;
      for (size_t j = 0; j < i; ++j) {
        const PlannedBuffer& o = buffers[j];
        if (o.arena != arena || o.bytes == 0) continue;
        const bool live_together = o.first <= b.last && b.first <= o.last;
        const bool overlap = o.offset < offset + b.bytes && offset < o.offset + o.bytes;
        if (live_together && overlap) {
          offset = (o.offset + o.bytes + b.alignment - 1) / b.alignment * b.alignment;
          moved = true;
        }
      }
      if (offset > SIZE_MAX / 2 || b.bytes > SIZE_MAX / 2 - offset) return false;
    }
    b.offset = offset;
    if (offset + b.bytes > *extent) *extent = offset + b.bytes;
  }
  return true;
}

}  // namespace

const char* OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kEmbed: return "embed";
    case OpKind::kNorm: return "norm";
    case OpKind::kLinear: return "linear";
    case OpKind::kAttention: return "attention";
    case OpKind::kLocalAttention: return "local_attention";
    case OpKind::kConvolution: return "convolution";
    case OpKind::kLinearAttention: return "linear_attention";
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
    if (model.tensor(i).input_bits == 16) mode.two_digit_inputs = true;
  }
  return mode;
}

namespace {

// The decoder layers' token- and channel-mixer states (engine/mixer.h): each
// layer's size per sequence, its slot among the layers that keep positions (the
// KV cache's layers) and the offsets of its fixed states: layer after layer,
// each layer's max_batch token-mixer states one after the other, then its
// max_batch channel-mixer states. out (null: not filled) holds one
// LayerState per decoder layer; *kv_layers and *fixed_bytes (per sequence) sum them.
void DecoderLayerStates(const fb::Architecture& a, const ForwardMode& mode, uint64_t max_batch,
                        LayerState* out, uint64_t* kv_layers, uint64_t* fixed_bytes) {
  *kv_layers = 0;
  *fixed_bytes = 0;
  const LayerStack stack = a.structure() == fb::Structure::EncoderDecoder ? LayerStack::kDecoder
                                                                           : LayerStack::kSingle;
  const size_t channel = ModelChannelMixer(a).state_bytes(a);
  for (uint32_t l = 0; l < DecoderLayers(a); ++l) {
    LayerState st;
    st.size = LayerTokenMixer(a, stack, l).state_size(a, mode);
    st.kv_slot = static_cast<uint32_t>(*kv_layers);
    st.fixed_offset = static_cast<size_t>(*fixed_bytes * max_batch);
    st.channel_fixed = channel;
    st.channel_offset = st.fixed_offset + static_cast<size_t>(st.size.fixed * max_batch);
    if (st.size.per_position != 0) ++*kv_layers;
    *fixed_bytes += st.size.fixed + st.channel_fixed;
    if (out != nullptr) out[l] = st;
  }
}

// The largest scratch row, product width and scratch per thread of the
// model's token mixers.
void MixerScratch(const fb::Architecture& a, uint64_t* row_floats, uint64_t* widest,
                  uint64_t* thread_floats) {
  *row_floats = 0;
  *widest = 0;
  *thread_floats = 0;
  LayerStackCount stacks[2];
  const int n = LayerStacksOf(RoleArchOf(a), stacks);
  for (int i = 0; i < n; ++i) {
    for (uint32_t l = 0; l < stacks[i].layers; ++l) {
      const TokenMixer& m = LayerTokenMixer(a, stacks[i].stack, l);
      const uint64_t r = m.row_floats(a), w = m.widest_product(a), t = m.thread_floats(a);
      *row_floats = r > *row_floats ? r : *row_floats;
      *widest = w > *widest ? w : *widest;
      *thread_floats = t > *thread_floats ? t : *thread_floats;
    }
  }
}

// What the buffers' sizes depend on: the model's shape, the limits and the
// attention backend, resolved once by PlanForward.
struct PlanShape {
  uint64_t rows = 0;        // of the per-layer buffers: max_batch x chunk
  uint64_t layer_rows = 0;  // rows, or 0 for layer-free models (no per-layer buffers)
  uint64_t full_rows = 0;   // of whole sequences: max_batch x max_seq
  uint64_t max_batch = 0;
  uint64_t threads = 1;
  uint64_t layer_structs = 0;  // LayerWeightsCount
  uint64_t h = 0, inter = 0, vocab = 0, qd = 0, kvd = 0, heads = 0, kv_heads = 0;
  uint64_t rotary_dim = 0;
  uint64_t self_rows = 0;   // KV cache rows of every decoder layer
  uint64_t cross_rows = 0;  // cross-attention rows of every decoder layer (enc-dec)
  uint64_t decoder_layers = 0;
  uint64_t fixed_state_bytes = 0;  // per sequence: the decoder layers' fixed mixer states
  uint64_t mixer_row_floats = 0;   // the token mixers' own scratch per row (TokenMixer)
  uint64_t mixer_widest = 0;       // the widest input or output of their products
  uint64_t mixer_thread_floats = 0;  // their scratch per thread
  uint64_t channel_row_floats = 0;  // the channel mixer's own scratch per row
  bool feed_forward = false;        // the channel mixer is the feed-forward (up, gate)
  uint64_t attention_bytes = 0;
  uint64_t widest_in = 0;   // int8 matrices: the widest product input
  uint64_t acc = 0;         // int8 matrices: int32 elements of acc
  bool layers = false, enc_dec = false, decoder_only = false, logits = false;
  bool last_logits_only = false, local_rope = false, sinusoidal = false, gated = false;
  bool int8_matrices = false, two_digit = false;
  const AttentionBackend* backend = nullptr;
};

// A buffer's bytes, as count x width (count 0: this model does not use it).
struct BufferExtent {
  uint64_t count;
  uint64_t width;
};

// The size of every row of the buffer table (engine/forward_buffers.h), in one place.
BufferExtent BufferSize(const PlanShape& s, ForwardBuffer buffer) {
  constexpr uint64_t f = sizeof(float), u32 = sizeof(uint32_t);
  const AttentionBackend& be = *s.backend;
  const uint64_t lr = s.layer_rows;
  const uint64_t query_rows = be.query_bytes != 0 ? lr : 0;
  const uint64_t kv_rows = be.staged ? lr : 0;  // encoder stacks' own KV rows
  const uint64_t scale_rows = be.row_scales ? kv_rows : 0;
  const uint64_t scale_bytes = be.row_scales ? f : 0;
  const uint64_t int8_rows = s.int8_matrices ? s.rows : 0;
  const uint64_t lo_rows = s.int8_matrices && s.two_digit ? s.rows : 0;
  switch (buffer) {
    case FB::kLayerWeights: return {s.layer_structs, sizeof(LayerWeights)};
    case FB::kModelWeights: return {1, sizeof(ModelWeights)};
    case FB::kLayerStates: return {s.decoder_layers, sizeof(LayerState)};
    case FB::kRopeInvFreq: return {s.rotary_dim / 2, f};
    case FB::kRopeLocalInvFreq: return {s.local_rope ? s.rotary_dim / 2 : 0, f};
    case FB::kAlibiSlopes: return {s.heads, f};
    case FB::kX: return {s.rows * s.h, f};
    case FB::kEncoderOut: return {s.enc_dec ? s.full_rows * s.h : 0, f};
    case FB::kLogits:
      return {s.logits ? (s.last_logits_only ? s.max_batch : s.full_rows) * s.vocab : 0, f};
    case FB::kLastX: return {s.logits && s.last_logits_only ? s.max_batch * s.h : 0, f};
    case FB::kChunkIds: return {s.decoder_only ? s.rows : 0, sizeof(int32_t)};
    case FB::kChunkPos0: return {s.decoder_only ? s.max_batch : 0, u32};
    case FB::kChunkReal: return {s.decoder_only ? s.max_batch : 0, u32};
    case FB::kStepValid: return {s.max_batch, u32};
    case FB::kNormed: return {lr * s.h, f};
    case FB::kDelta: return {(s.sinusoidal ? s.rows : lr) * s.h, f};  // + Embed's sinusoids
    case FB::kQ: return {lr * s.qd, f};
    case FB::kK: return {lr * s.kvd, f};
    case FB::kV: return {lr * s.kvd, f};
    case FB::kAttention: return {s.layers ? s.threads : 0, s.attention_bytes};
    case FB::kQ8: return {query_rows * s.qd, be.query_bytes};
    case FB::kQ8Scales: return {query_rows * s.heads, f};
    case FB::kK8: return {kv_rows * s.kvd, be.value_bytes};
    case FB::kK8Scales: return {scale_rows * s.kv_heads, f};
    case FB::kV8: return {kv_rows * s.kvd, be.value_bytes};
    case FB::kV8Scales: return {scale_rows * s.kv_heads, f};
    case FB::kUp: return {s.feed_forward ? lr * s.inter : 0, f};
    case FB::kGate: return {s.feed_forward && s.gated ? lr * s.inter : 0, f};
    case FB::kChannel: return {lr * s.channel_row_floats, f};
    case FB::kQin: return {int8_rows * s.widest_in, 1};
    case FB::kQinScales: return {int8_rows, f};
    case FB::kAcc: return {s.int8_matrices ? s.acc : 0, sizeof(int32_t)};
    case FB::kQinLo: return {lo_rows * s.widest_in, 1};
    case FB::kQinLoScales: return {lo_rows, f};
    case FB::kLoOut: return {lo_rows != 0 ? s.acc : 0, f};
    case FB::kResidual: return {lo_rows != 0 ? s.threads * s.widest_in : 0, f};
    case FB::kSelfK:
    case FB::kSelfV: return {s.self_rows * s.kvd, be.value_bytes};
    case FB::kSelfKScales:
    case FB::kSelfVScales: return {s.self_rows * s.kv_heads, scale_bytes};
    case FB::kCrossK:
    case FB::kCrossV: return {s.cross_rows * s.kvd, be.value_bytes};
    case FB::kCrossKScales:
    case FB::kCrossVScales: return {s.cross_rows * s.kv_heads, scale_bytes};
    case FB::kMixerState: return {s.max_batch * s.fixed_state_bytes, 1};
    case FB::kMixer: return {lr * s.mixer_row_floats, f};
    case FB::kMixerThreads: return {s.layers ? s.threads * s.mixer_thread_floats : 0, f};
    case FB::kCount: break;
  }
  return {0, 0};
}

// The rotary dimensions of a RoPE model: rope.rotary_dim, or head_dim when 0.
Status RotaryDim(const fb::Architecture& a, uint32_t* rotary_dim) {
  const uint32_t head_dim = a.attention()->head_dim();
  const uint32_t rotary = a.rope() != nullptr ? a.rope()->rotary_dim() : 0;
  *rotary_dim = rotary != 0 ? rotary : head_dim;
  if (*rotary_dim % 2 != 0 || *rotary_dim < 2 || *rotary_dim > head_dim) {
    return Status::Error(StatusCode::kInvalidModel, "rotary_dim %u must be even and in [2, %u]",
                         *rotary_dim, head_dim);
  }
  return Status::Ok();
}

// The shape the table's sizes are computed from; sets the plan's derived sizes.
PlanShape GetPlanShape(const fb::Architecture& a, const ForwardMode& mode,
                       const ForwardLimits& limits, ForwardPlan* plan) {
  const fb::Attention& att = *a.attention();
  PlanShape s;
  s.layers = HasLayers(a);
  s.enc_dec = a.structure() == fb::Structure::EncoderDecoder;
  s.decoder_only = a.structure() == fb::Structure::DecoderOnly;
  s.logits = a.structure() != fb::Structure::EncoderOnly;
  s.last_logits_only = limits.last_logits_only;
  s.local_rope = a.rope() != nullptr && a.rope()->local_theta() != 0.0f;
  s.sinusoidal = a.position() == fb::PositionKind::SinusoidalSplit ||
                 a.position() == fb::PositionKind::SinusoidalInterleaved;
  s.gated = a.gated_ffn();
  s.int8_matrices = mode.int8_matrices;
  s.two_digit = mode.two_digit_inputs;
  s.backend = &Backend(mode);
  s.max_batch = limits.max_batch;
  s.threads = limits.threads < 1 ? 1 : limits.threads;
  s.full_rows = static_cast<uint64_t>(limits.max_batch) * limits.max_seq;
  s.rows = static_cast<uint64_t>(limits.max_batch) * plan->chunk;
  s.layer_rows = s.layers ? s.rows : 0;
  s.layer_structs = LayerWeightsCount(a);
  s.h = a.hidden_size();
  s.inter = a.intermediate_size();
  s.vocab = a.vocab_size();
  s.qd = QDim(a);
  s.kvd = KvDim(a);
  s.heads = att.num_heads();
  s.kv_heads = att.num_kv_heads();
  s.rotary_dim = plan->rotary_dim;
  s.attention_bytes = plan->attention_bytes;
  const uint64_t decoder_layers = DecoderLayers(a);
  s.decoder_layers = decoder_layers;
  uint64_t kv_layers = 0;
  DecoderLayerStates(a, mode, limits.max_batch, nullptr, &kv_layers, &s.fixed_state_bytes);
  s.self_rows = kv_layers * limits.max_batch * plan->kv_positions;
  s.cross_rows = s.enc_dec ? decoder_layers * s.full_rows : 0;
  MixerScratch(a, &s.mixer_row_floats, &s.mixer_widest, &s.mixer_thread_floats);
  s.channel_row_floats = ModelChannelMixer(a).row_floats(a);
  s.feed_forward = a.channel_mixer() == fb::ChannelMixer::FeedForward;
  if (mode.int8_matrices) {
    // MatMul's int8 rows and int32 block: [kLinearWideRows, widest layer
    // output] (fewer rows when fewer are run), and at least [kLinearRows,
    // vocab] for the head. Layer-free: the head's input only.
    uint64_t widest_out = 0;
    s.widest_in = s.h;
    if (s.layers) {
      s.widest_in = s.h > s.inter ? s.h : s.inter;
      s.widest_in = s.qd > s.widest_in ? s.qd : s.widest_in;
      s.widest_in = s.mixer_widest > s.widest_in ? s.mixer_widest : s.widest_in;
      widest_out = s.widest_in;
    }
    const uint64_t wide_rows = s.rows < kLinearWideRows
                                   ? (s.rows < kLinearRows ? kLinearRows : s.rows)
                                   : kLinearWideRows;
    s.acc = wide_rows * widest_out;
    if (s.logits && kLinearRows * s.vocab > s.acc) s.acc = kLinearRows * s.vocab;
    plan->acc_elements = static_cast<size_t>(s.acc);
    plan->residual_stride = static_cast<size_t>(s.widest_in);
  }
  return s;
}

}  // namespace

Status PlanForward(const fb::Architecture& a, ForwardMode mode, const ForwardLimits& limits,
                   ArenaLayout* activations, ArenaLayout* scratch, ArenaLayout* kv_cache,
                   ForwardPlan* plan) {
  *plan = ForwardPlan();
  plan->mode = mode;
  plan->limits = limits;
  plan->kv_positions = limits.max_seq + limits.max_new_tokens;
  plan->attention_tile = limits.attention_tile;
  const bool decoder_only = a.structure() == fb::Structure::DecoderOnly;
  plan->chunk = decoder_only && limits.prefill_chunk != 0 && limits.prefill_chunk < limits.max_seq
                    ? limits.prefill_chunk
                    : limits.max_seq;
  if (a.position() == fb::PositionKind::Rope) {
    OCTET_RETURN_IF_ERROR(RotaryDim(a, &plan->rotary_dim));
  }
  AttentionParams params;
  params.head_dim = a.attention()->head_dim();
  params.tile = limits.attention_tile;
  OCTET_RETURN_IF_ERROR(Backend(mode).scratch_bytes(params, &plan->attention_bytes));
  const PlanShape shape = GetPlanShape(a, mode, limits, plan);

  // The table's sizes: count x width bytes, the product checked, so 32-bit
  // targets see an error instead of a wrapped size.
  const Status overflow(StatusCode::kOutOfMemory, "the memory plan overflows the address space");
  for (size_t i = 0; i < kNumForwardBuffers; ++i) {
    const BufferExtent e = BufferSize(shape, static_cast<ForwardBuffer>(i));
    uint64_t bytes = 0;
    if (!CheckedMul(e.count, e.width, &bytes) || bytes > SIZE_MAX / 2) return overflow;
    plan->buffers[i] = kForwardBufferRows[i];
    plan->buffers[i].bytes = static_cast<size_t>(bytes);
  }
  // Offsets from the table, arena by arena.
  ArenaLayout* layouts[] = {activations, scratch, kv_cache};
  for (ForwardArena arena :
       {ForwardArena::kActivations, ForwardArena::kScratch, ForwardArena::kKvCache}) {
    size_t extent = 0;
    if (!PlaceBuffers(plan->buffers, kNumForwardBuffers, arena, &extent)) return overflow;
    const size_t base = layouts[static_cast<size_t>(arena)]->Reserve(extent);
    for (PlannedBuffer& b : plan->buffers) {
      if (b.arena == arena && b.bytes != 0) b.offset += base;
    }
  }
  return Status::Ok();
}

namespace {

// Fills the RoPE frequency tables (the layers' and, with rope.local_theta,
// the sliding layers' own) and sets f's RoPE fields.
Status PrepareRope(const fb::Architecture& a, const ForwardPlan& plan, float* inv_freq,
                   float* local_inv_freq, Forward* f) {
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
    if (rope->scaling() == fb::RopeScaling::LongRope) {
      // The factors are the session's, fixed here: the long ones when its planned
      // positions (max_seq + max_new_tokens) pass original_max_positions, as
      // Hugging Face picks them for a forward pass over that many positions.
      const auto* shorts = rope->short_factors();
      const auto* longs = rope->long_factors();
      const bool use_long = longs != nullptr && longs->size() != 0 &&
                            plan.kv_positions > rope->original_max_positions();
      const auto* factors = use_long ? longs : shorts;
      if (factors == nullptr || factors->size() != plan.rotary_dim / 2 ||
          rope->original_max_positions() == 0) {
        return Status(StatusCode::kInvalidModel, "the LongRope factors are inconsistent");
      }
      rp.ext_factors = factors->data();
      f->rope_attention_factor = rope->attention_factor();
    }
  }
  if (const char* error = RopeFreqParamsError(rp)) {
    return Status::Error(StatusCode::kInvalidModel, "the RoPE parameters are inconsistent: %s",
                         error);
  }
  rope_inv_freq(rp, inv_freq);
  f->rope_inv_freq = inv_freq;
  if (rope != nullptr && rope->local_theta() != 0.0f) {
    RopeFreqParams local;
    local.rotary_dim = plan.rotary_dim;
    local.theta = rope->local_theta();  // the loader checked it is > 1
    rope_inv_freq(local, local_inv_freq);
    f->rope_local_inv_freq = local_inv_freq;
  }
  f->rotary_dim = plan.rotary_dim;
  return Status::Ok();
}

}  // namespace

Status PrepareForward(const Model& model, const KernelTable& kernels, ThreadPool* pool,
                      const ForwardPlan& plan, const Arena& activations, const Arena& scratch,
                      const Arena& kv_cache, F32FullyConnectedSet* f32_products,
                      WeightStream* stream, Forward* out) {
  const fb::Architecture& a = model.architecture();
  Forward f;
  f.arch = &a;
  f.kernels = &kernels;
  f.pool = pool;
  const AttentionBackend& backend = Backend(plan.mode);
  f.attention_backend = &backend;
  // Every planned row of the table as a pointer into its arena (null: no bytes).
  const Arena* arenas[] = {&activations, &scratch, &kv_cache};
  for (size_t i = 0; i < kNumForwardBuffers; ++i) {
    const PlannedBuffer& b = plan.buffers[i];
    if (b.bytes != 0) f.buffers[i] = arenas[static_cast<size_t>(b.arena)]->At<uint8_t>(b.offset);
  }
  LayerWeights* layers = f.buffer<FB::kLayerWeights>();
  ModelWeights* weights = f.buffer<FB::kModelWeights>();
  OCTET_RETURN_IF_ERROR(ResolveWeights(model, layers, weights));
  if (stream != nullptr) {
    OCTET_RETURN_IF_ERROR(
        stream->Init(model, pool != nullptr ? pool->threads() : 1, layers, weights));
  } else if (f32_products != nullptr) {
    OCTET_RETURN_IF_ERROR(PrepareF32Products(model, pool != nullptr ? pool->threads() : 1, layers,
                                             weights, f32_products));
  }
  f.weights = weights;
  uint64_t kv_layers = 0, fixed_bytes = 0;
  LayerState* states = f.buffer<FB::kLayerStates>();
  DecoderLayerStates(a, plan.mode, plan.limits.max_batch, states, &kv_layers, &fixed_bytes);
  f.layer_states = states;
  AttentionParams params = BaseParams(a, plan.attention_tile);
  if (const char* error = backend.params_error(params)) {
    return Status::Error(StatusCode::kInvalidModel, "attention: %s", error);
  }
  if (a.position() == fb::PositionKind::Rope) {
    OCTET_RETURN_IF_ERROR(PrepareRope(a, plan, f.buffer<FB::kRopeInvFreq>(),
                                      f.buffer<FB::kRopeLocalInvFreq>(), &f));
  }
  if (a.position() == fb::PositionKind::Alibi) {
    alibi_slopes(a.attention()->num_heads(), f.buffer<FB::kAlibiSlopes>());
    f.alibi_slopes = f.buffer<FB::kAlibiSlopes>();
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
  f.attention_bytes = plan.attention_bytes;
  f.acc_elements = plan.acc_elements;
  f.residual_stride = plan.residual_stride;
  // Encoder stacks' keys and values: their own rows (staged backends) or k, v.
  f.encoder_kv.k = backend.staged ? f.buffers[static_cast<size_t>(FB::kK8)]
                                  : f.buffers[static_cast<size_t>(FB::kK)];
  f.encoder_kv.v = backend.staged ? f.buffers[static_cast<size_t>(FB::kV8)]
                                  : f.buffers[static_cast<size_t>(FB::kV)];
  f.encoder_kv.k_scales = f.buffer<FB::kK8Scales>();
  f.encoder_kv.v_scales = f.buffer<FB::kV8Scales>();
  f.self_kv = {f.buffer<FB::kSelfK>(), f.buffer<FB::kSelfV>(), f.buffer<FB::kSelfKScales>(),
               f.buffer<FB::kSelfVScales>(), 0};
  f.cross_kv = {f.buffer<FB::kCrossK>(), f.buffer<FB::kCrossV>(), f.buffer<FB::kCrossKScales>(),
                f.buffer<FB::kCrossVScales>(), 0};
  *out = f;
  return Status::Ok();
}

const float* RunEncoder(const Forward& f, const int32_t* ids, const uint32_t* lengths,
                        uint32_t batch, uint32_t seq) {
  float* x = f.buffer<FB::kX>();  // [batch * seq, hidden]
  Embed(f, ids, lengths, nullptr, batch, seq, x);
  RunStack(f, f.weights->encoder, false, nullptr, nullptr, lengths, batch, seq, x);
  return x;
}

namespace {

// The decoder-only prompt loop of RunDecoderPrefill and RunDecoderExtend: ids
// [batch, seq] through the layers in chunks of f.chunk positions, attending to
// the keys of the earlier chunks in the cache. positions null: a prompt from
// position 0 whose first lengths[b] ids are real; else seq more ids per
// sequence, all real, after positions[b] cached ones. valid[b]: the keys
// sequence b sees (keys past it masked), its last one the last real token.
const float* RunDecoderChunks(const Forward& f, const int32_t* ids, const uint32_t* lengths,
                              const uint32_t* positions, const uint32_t* valid, uint32_t batch,
                              uint32_t seq) {
  const size_t h = f.arch->hidden_size(), vocab = f.arch->vocab_size();
  float* x = f.buffer<FB::kX>();                 // [batch * chunk, hidden]
  float* logits = f.buffer<FB::kLogits>();       // [batch * seq, vocab] (not last_logits_only)
  int32_t* chunk_ids = f.buffer<FB::kChunkIds>();  // [batch, n]
  uint32_t* pos0 = f.buffer<FB::kChunkPos0>();   // [batch]: the chunk's first position
  uint32_t* real = f.buffer<FB::kChunkReal>();   // [batch]: its real tokens
  for (uint32_t c0 = 0; c0 < seq; c0 += f.chunk) {
    const uint32_t n = seq - c0 < f.chunk ? seq - c0 : f.chunk;
    for (uint32_t b = 0; b < batch; ++b) {
      pos0[b] = (positions != nullptr ? positions[b] : 0) + c0;
      real[b] = positions != nullptr ? n
                : lengths[b] <= c0   ? 0
                                     : (lengths[b] - c0 < n ? lengths[b] - c0 : n);
      std::memcpy(chunk_ids + static_cast<size_t>(b) * n,
                  ids + static_cast<size_t>(b) * seq + c0, real[b] * sizeof(int32_t));
    }
    Embed(f, chunk_ids, real, pos0, batch, n, x);
    RunStack(f, f.weights->decoder, true, nullptr, pos0, valid, batch, n, x);
    if (f.last_logits_only) {
      KeepLastRows(f, x, valid, pos0, batch, n);
    } else if (n == seq && positions == nullptr) {  // one pass: one product over every row
      HeadInto(f, x, static_cast<size_t>(batch) * seq, logits);
    } else {
      for (uint32_t b = 0; b < batch; ++b) {
        HeadInto(f, x + static_cast<size_t>(b) * n * h, n,
                 logits + (static_cast<size_t>(b) * seq + c0) * vocab);
      }
    }
  }
  return f.last_logits_only ? Head(f, f.buffer<FB::kLastX>(), batch) : logits;
}

}  // namespace

const float* RunDecoderPrefill(const Forward& f, const int32_t* ids, const uint32_t* lengths,
                               uint32_t batch, uint32_t seq) {
  return RunDecoderChunks(f, ids, lengths, nullptr, lengths, batch, seq);
}

const float* RunDecoderExtend(const Forward& f, const int32_t* ids, const uint32_t* positions,
                              uint32_t batch, uint32_t k) {
  uint32_t* valid = f.buffer<FB::kStepValid>();  // [batch]: the cached keys and the k new ones
  for (uint32_t b = 0; b < batch; ++b) valid[b] = positions[b] + k;
  return RunDecoderChunks(f, ids, nullptr, positions, valid, batch, k);
}

const float* RunDecoderStep(const Forward& f, const int32_t* ids, const uint32_t* positions,
                            uint32_t batch) {
  float* x = f.buffer<FB::kX>();  // [batch, hidden]
  // Each sequence sees its cached keys and the new one: positions[b] + 1 keys, all real.
  uint32_t* valid = f.buffer<FB::kStepValid>();  // [batch]
  for (uint32_t b = 0; b < batch; ++b) valid[b] = positions[b] + 1;
  Embed(f, ids, nullptr, positions, batch, 1, x);
  RunStack(f, f.weights->decoder, true, nullptr, positions, valid, batch, 1, x);
  return Head(f, x, batch);
}

void EncodeSource(const Forward& f, const int32_t* enc_ids, const uint32_t* enc_lengths,
                  uint32_t enc_seq, uint32_t batch) {
  float* enc = f.buffer<FB::kEncoderOut>();  // [batch * enc_seq, hidden]
  Embed(f, enc_ids, enc_lengths, nullptr, batch, enc_seq, enc);
  RunStack(f, f.weights->encoder, false, nullptr, nullptr, enc_lengths, batch, enc_seq, enc);
  ProjectCrossKv(f, enc, enc_seq, batch);
}

const float* RunDecoderOnSource(const Forward& f, const uint32_t* enc_lengths, uint32_t enc_seq,
                                const int32_t* dec_ids, const uint32_t* dec_lengths,
                                uint32_t dec_seq, uint32_t batch) {
  float* x = f.buffer<FB::kX>();  // [batch * dec_seq, hidden]
  const CrossInput cross{enc_lengths, enc_seq};
  Embed(f, dec_ids, dec_lengths, nullptr, batch, dec_seq, x);
  RunStack(f, f.weights->decoder, true, &cross, nullptr, dec_lengths, batch, dec_seq, x);
  if (f.last_logits_only) {
    KeepLastRows(f, x, dec_lengths, nullptr, batch, dec_seq);
    return Head(f, f.buffer<FB::kLastX>(), batch);
  }
  return Head(f, x, static_cast<size_t>(batch) * dec_seq);
}

const float* RunDecoderOnSourceStep(const Forward& f, const uint32_t* enc_lengths,
                                    uint32_t enc_seq, const int32_t* ids,
                                    const uint32_t* positions, uint32_t batch) {
  float* x = f.buffer<FB::kX>();  // [batch, hidden]
  uint32_t* valid = f.buffer<FB::kStepValid>();  // [batch]: the cached keys and the new one, all real
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

