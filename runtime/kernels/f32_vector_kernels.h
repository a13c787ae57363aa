// The bodies of the vector float kernels, written once over an ISA's vector
// operations V (kernels/f32_vector_math.h, "The vector interface"); each
// kernels/<isa>/<family>__<isa>.cc file instantiates one of them with its V.
// Contracts and error bounds: kernels/f32_elementwise.h (norms, activations,
// adds), kernels/qs8_softmax_tile.h, kernels/position.h (RoPE).
//
// Every loop runs whole vectors, then the last n % kLanes values with LoadN /
// StoreN, which touch nothing past n: rows may end anywhere and sit at any
// stride. In-place calls (y = x) are fine: each vector is loaded before the
// same elements are stored.
//
// Linkage: internal and always inlined (kernels/qs8_gemm_driver.h, "Linkage").
// Only compiler headers and kernels/*.h.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "kernels/f32_elementwise.h"
#include "kernels/f32_vector_math.h"
#include "kernels/kernel_inline.h"
#include "kernels/position.h"
#include "kernels/qs8_softmax_tile.h"

namespace octet {
namespace {  // internal linkage per including file

// ---------------------------------------------------------------------------
// Norms. Sums in float within blocks of 8 vectors (two accumulators of 4: each
// lane adds up to 8 values, then a reduction over 2 kLanes lanes), in double
// across blocks: relative error <= (8 + 1 + log2 kLanes) 2^-24 of the sum of
// the magnitudes, about 10x float rounding however long the row.

// sum_i x[i].
template <class V>
OCTET_KERNEL_INLINE double SumOf(const float* x, size_t n) {
  typedef typename V::F F;
  constexpr size_t L = V::kLanes, kBlock = 8 * L;
  double total = 0.0;
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    F a0 = V::Load(x + i), a1 = V::Load(x + i + L);
    for (size_t k = 2 * L; k < kBlock; k += 2 * L) {
      a0 = V::Add(a0, V::Load(x + i + k));
      a1 = V::Add(a1, V::Load(x + i + k + L));
    }
    total += static_cast<double>(V::ReduceAdd(V::Add(a0, a1)));
  }
  F a = V::Zero();  // the last n % kBlock: at most 8 values per lane
  for (; i + L <= n; i += L) a = V::Add(a, V::Load(x + i));
  if (i < n) a = V::Add(a, V::LoadN(x + i, n - i));
  return total + static_cast<double>(V::ReduceAdd(a));
}

// sum_i (x[i] - center)^2, each square fused into its sum where V has FMA.
template <class V>
OCTET_KERNEL_INLINE double SumOfSquares(const float* x, size_t n, float center) {
  typedef typename V::F F;
  constexpr size_t L = V::kLanes, kBlock = 8 * L;
  const F c = V::Set(center);
  double total = 0.0;
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    const F d0 = V::Sub(V::Load(x + i), c), d1 = V::Sub(V::Load(x + i + L), c);
    F a0 = V::Mul(d0, d0), a1 = V::Mul(d1, d1);
    for (size_t k = 2 * L; k < kBlock; k += 2 * L) {
      const F e0 = V::Sub(V::Load(x + i + k), c), e1 = V::Sub(V::Load(x + i + k + L), c);
      a0 = V::MulAdd(e0, e0, a0);
      a1 = V::MulAdd(e1, e1, a1);
    }
    total += static_cast<double>(V::ReduceAdd(V::Add(a0, a1)));
  }
  F a = V::Zero();
  for (; i + L <= n; i += L) {
    const F d = V::Sub(V::Load(x + i), c);
    a = V::MulAdd(d, d, a);
  }
  if (i < n) {
    const F d = V::Select(V::FirstN(n - i), V::Sub(V::LoadN(x + i, n - i), c), V::Zero());
    a = V::MulAdd(d, d, a);
  }
  return total + static_cast<double>(V::ReduceAdd(a));
}

// Whether the float sums serve a row with sum of squares `ssq` and var + eps = v
// (f32_elementwise.h): both finite and v >= 2^-60. Otherwise the row goes to the
// reference.
OCTET_KERNEL_INLINE bool NormStatsUsable(double ssq, double v) {
  return ssq <= __DBL_MAX__ && v >= 0x1p-60 && v <= __DBL_MAX__;
}

template <class V>
OCTET_KERNEL_INLINE void LayerNormRows(size_t rows, size_t n, const float* x, size_t x_stride,
                                       const float* weight, const float* bias, float eps, float* y,
                                       size_t y_stride) {
  typedef typename V::F F;
  constexpr size_t L = V::kLanes;
  if (n == 0) return;
  const double count = static_cast<double>(n);
  for (size_t r = 0; r < rows; ++r) {
    const float* in = x + r * x_stride;  // [n]
    float* out = y + r * y_stride;       // [n]
    const float mean = static_cast<float>(SumOf<V>(in, n) / count);
    const double ssq = SumOfSquares<V>(in, n, mean);
    const double v = ssq / count + static_cast<double>(eps);
    if (!NormStatsUsable(ssq, v)) {
      f32_layernorm__ref(1, n, in, x_stride, weight, bias, eps, out, y_stride);
      continue;
    }
    const F m = V::Set(mean);
    const F inv = V::Set(static_cast<float>(RsqrtDouble(v)));
    size_t i = 0;
    if (bias != nullptr) {
      for (; i + L <= n; i += L) {
        const F normed = V::Mul(V::Sub(V::Load(in + i), m), inv);
        V::Store(out + i, V::MulAdd(normed, V::Load(weight + i), V::Load(bias + i)));
      }
      if (i < n) {
        const size_t rem = n - i;
        const F normed = V::Mul(V::Sub(V::LoadN(in + i, rem), m), inv);
        V::StoreN(out + i, V::MulAdd(normed, V::LoadN(weight + i, rem), V::LoadN(bias + i, rem)),
                  rem);
      }
    } else {
      for (; i + L <= n; i += L) {
        const F normed = V::Mul(V::Sub(V::Load(in + i), m), inv);
        V::Store(out + i, V::Mul(normed, V::Load(weight + i)));
      }
      if (i < n) {
        const size_t rem = n - i;
        const F normed = V::Mul(V::Sub(V::LoadN(in + i, rem), m), inv);
        V::StoreN(out + i, V::Mul(normed, V::LoadN(weight + i, rem)), rem);
      }
    }
  }
}

template <class V>
OCTET_KERNEL_INLINE void RmsNormRows(size_t rows, size_t n, const float* x, size_t x_stride,
                                     const float* weight, float eps, float* y, size_t y_stride) {
  typedef typename V::F F;
  constexpr size_t L = V::kLanes;
  if (n == 0) return;
  const double count = static_cast<double>(n);
  for (size_t r = 0; r < rows; ++r) {
    const float* in = x + r * x_stride;  // [n]
    float* out = y + r * y_stride;       // [n]
    const double ssq = SumOfSquares<V>(in, n, 0.0f);
    const double v = ssq / count + static_cast<double>(eps);
    if (!NormStatsUsable(ssq, v)) {
      f32_rmsnorm__ref(1, n, in, x_stride, weight, eps, out, y_stride);
      continue;
    }
    const F inv = V::Set(static_cast<float>(RsqrtDouble(v)));
    size_t i = 0;
    for (; i + L <= n; i += L) {
      V::Store(out + i, V::Mul(V::Load(weight + i), V::Mul(V::Load(in + i), inv)));
    }
    if (i < n) {
      const size_t rem = n - i;
      V::StoreN(out + i, V::Mul(V::LoadN(weight + i, rem), V::Mul(V::LoadN(in + i, rem), inv)),
                rem);
    }
  }
}

// ---------------------------------------------------------------------------
// Activations: one struct per function, so the loops are compiled once per act.
struct GeluErfOp {
  template <class V>
  static OCTET_KERNEL_INLINE typename V::F Apply(typename V::F x) {
    return GeluErf<V>(x);
  }
};
struct GeluTanhOp {
  template <class V>
  static OCTET_KERNEL_INLINE typename V::F Apply(typename V::F x) {
    return GeluTanh<V>(x);
  }
};
struct ReluOp {
  template <class V>
  static OCTET_KERNEL_INLINE typename V::F Apply(typename V::F x) {
    return Relu<V>(x);
  }
};
struct SiluOp {
  template <class V>
  static OCTET_KERNEL_INLINE typename V::F Apply(typename V::F x) {
    return Silu<V>(x);
  }
};

// x[i] = Op(x[i]) for i < n.
template <class V, class Op>
OCTET_KERNEL_INLINE void MapInPlace(size_t n, float* x) {
  constexpr size_t L = V::kLanes;
  size_t i = 0;
  for (; i + L <= n; i += L) V::Store(x + i, Op::template Apply<V>(V::Load(x + i)));
  if (i < n) V::StoreN(x + i, Op::template Apply<V>(V::LoadN(x + i, n - i)), n - i);
}

// x[r, i] = Op(x[r, i]) * up[r, i].
template <class V, class Op>
OCTET_KERNEL_INLINE void GatedRows(size_t rows, size_t n, float* x, size_t x_stride,
                                   const float* up, size_t up_stride) {
  constexpr size_t L = V::kLanes;
  for (size_t r = 0; r < rows; ++r) {
    float* g = x + r * x_stride;          // [n]
    const float* u = up + r * up_stride;  // [n]
    size_t i = 0;
    for (; i + L <= n; i += L) {
      V::Store(g + i, V::Mul(Op::template Apply<V>(V::Load(g + i)), V::Load(u + i)));
    }
    if (i < n) {
      const size_t rem = n - i;
      V::StoreN(g + i, V::Mul(Op::template Apply<V>(V::LoadN(g + i, rem)), V::LoadN(u + i, rem)),
                rem);
    }
  }
}

template <class V>
OCTET_KERNEL_INLINE void ActivationRun(F32Activation act, size_t n, float* x) {
  switch (act) {
    case F32Activation::kGeluErf:
      return MapInPlace<V, GeluErfOp>(n, x);
    case F32Activation::kGeluTanh:
      return MapInPlace<V, GeluTanhOp>(n, x);
    case F32Activation::kRelu:
      return MapInPlace<V, ReluOp>(n, x);
    case F32Activation::kSilu:
      return MapInPlace<V, SiluOp>(n, x);
  }
}

template <class V>
OCTET_KERNEL_INLINE void GatedActivationRows(F32Activation act, size_t rows, size_t n, float* x,
                                             size_t x_stride, const float* up, size_t up_stride) {
  switch (act) {
    case F32Activation::kGeluErf:
      return GatedRows<V, GeluErfOp>(rows, n, x, x_stride, up, up_stride);
    case F32Activation::kGeluTanh:
      return GatedRows<V, GeluTanhOp>(rows, n, x, x_stride, up, up_stride);
    case F32Activation::kRelu:
      return GatedRows<V, ReluOp>(rows, n, x, x_stride, up, up_stride);
    case F32Activation::kSilu:
      return GatedRows<V, SiluOp>(rows, n, x, x_stride, up, up_stride);
  }
}

// ---------------------------------------------------------------------------
// Sums.

// y[i] += x[i] for i < n.
template <class V>
OCTET_KERNEL_INLINE void AddRun(size_t n, float* y, const float* x) {
  constexpr size_t L = V::kLanes;
  size_t i = 0;
  for (; i + L <= n; i += L) V::Store(y + i, V::Add(V::Load(y + i), V::Load(x + i)));
  if (i < n) V::StoreN(y + i, V::Add(V::LoadN(y + i, n - i), V::LoadN(x + i, n - i)), n - i);
}

template <class V>
OCTET_KERNEL_INLINE void AddBiasRows(size_t rows, size_t n, float* x, size_t x_stride,
                                     const float* bias) {
  for (size_t r = 0; r < rows; ++r) AddRun<V>(n, x + r * x_stride, bias);
}

// ---------------------------------------------------------------------------
// qs8_softmax_tile (contract in kernels/qs8_softmax_tile.h): three passes over
// the visible range [lo, hi), with work holding s_t, then w_t.
//   1. s_t (hidden keys and tail lanes -inf), the tile's max;
//   2. e_t = exp(s_t - max) (hidden: exp(-inf) = 0), their sum in lanes, w_t, w_max;
//   3. p[t] = round_half_even(min(max(w_t * 255 / w_max, 0), 255)); Max(x, 0)
//      maps NaN to 0, as the reference's comparisons do.
// Keys outside [lo, hi) get p = 0 without being read.
template <class V>
OCTET_KERNEL_INLINE float SoftmaxTile(const Qs8SoftmaxTileParams& a, float* running_max,
                                      float* running_sum, float* correction, float* work,
                                      uint8_t* p) {
  typedef typename V::F F;
  constexpr size_t L = V::kLanes;
  constexpr float kMasked = -__builtin_inff();
  const size_t lo = a.lo, hi = a.hi < a.n ? a.hi : a.n;
  for (size_t t = 0; t < lo && t < a.n; ++t) p[t] = 0;
  for (size_t t = hi > lo ? hi : lo; t < a.n; ++t) p[t] = 0;
  if (lo >= hi) return 0.0f;

  // Pass 1: s_t and the max.
  const F q_scale = V::Set(a.q_scale);
  const F masked = V::Set(kMasked);
  F max = masked;
  size_t t = lo;
  for (; t + L <= hi; t += L) {
    F s = V::Mul(V::LoadI32(a.qk + t), V::Mul(q_scale, V::Load(a.k_scales + t)));
    if (a.bias != nullptr) s = V::Add(s, V::Load(a.bias + t));
    if (a.key_mask != nullptr) s = V::Select(V::LoadNonZeroBytes(a.key_mask + t), s, masked);
    V::Store(work + t, s);
    max = V::Max(s, max);  // s first: a NaN logit is ignored, as by the reference
  }
  if (t < hi) {
    const size_t rem = hi - t;
    F s = V::Mul(V::LoadI32N(a.qk + t, rem), V::Mul(q_scale, V::LoadN(a.k_scales + t, rem)));
    if (a.bias != nullptr) s = V::Add(s, V::LoadN(a.bias + t, rem));
    typename V::M visible = V::FirstN(rem);
    if (a.key_mask != nullptr) visible = V::And(visible, V::LoadNonZeroBytesN(a.key_mask + t, rem));
    s = V::Select(visible, s, masked);
    V::StoreN(work + t, s, rem);
    max = V::Max(s, max);
  }
  const float tile_max = V::ReduceMax(max);
  if (!(tile_max > kMasked)) {  // no visible key with a logit above -inf
    for (size_t k = lo; k < hi; ++k) p[k] = 0;
    return 0.0f;
  }
  if (tile_max > *running_max) {
    // exp(-inf) = 0 on the row's first visible tile, when the sum is 0.
    const float c = V::First(Exp<V>(V::Set(*running_max - tile_max)));
    *correction = c;
    *running_sum *= c;
    *running_max = tile_max;
  }

  // Pass 2: e_t, their sum, w_t and w_max. Tail lanes hold -inf: e = 0.
  const F m = V::Set(*running_max);
  F sum = V::Zero(), w_max = V::Zero();
  for (t = lo; t + L <= hi; t += L) {
    const F e = Exp<V>(V::Sub(V::Load(work + t), m));
    sum = V::Add(sum, e);
    const F w = V::Mul(e, V::Load(a.v_scales + t));
    V::Store(work + t, w);
    w_max = V::Max(w, w_max);
  }
  if (t < hi) {
    const size_t rem = hi - t;
    const F e = Exp<V>(V::Sub(V::Select(V::FirstN(rem), V::LoadN(work + t, rem), masked), m));
    sum = V::Add(sum, e);
    const F w = V::Mul(e, V::LoadN(a.v_scales + t, rem));
    V::StoreN(work + t, w, rem);
    w_max = V::Max(w, w_max);
  }
  *running_sum += V::ReduceAdd(sum);
  const float w_top = V::ReduceMax(w_max);

  // Pass 3: P.
  const F inv = V::Set(w_top > 0.0f ? 255.0f / w_top : 0.0f);
  const F top = V::Set(255.0f);
  for (t = lo; t + L <= hi; t += L) {
    const F x = V::Min(V::Max(V::Mul(V::Load(work + t), inv), V::Zero()), top);
    V::StoreU8(p + t, V::CvtNearest(x));
  }
  if (t < hi) {
    const size_t rem = hi - t;
    const F x = V::Min(V::Max(V::Mul(V::LoadN(work + t, rem), inv), V::Zero()), top);
    V::StoreU8N(p + t, V::CvtNearest(x), rem);
  }
  return w_top / 255.0f;
}

// ---------------------------------------------------------------------------
// RoPE (contract in kernels/position.h): per row, up to 64 pairs at a time,
// angle = position * inv_freq[i] in float (the reference's product), its cos
// and sin (SinCos), then every head's pairs rotated with them, each product and
// sum rounded on its own as in the reference (the files are compiled without
// contraction).
template <class V>
OCTET_KERNEL_INLINE void RopeRows(const F32RopeParams& p, float* x, size_t ldx) {
  typedef typename V::F F;
  constexpr size_t L = V::kLanes;
  constexpr size_t kChunk = 64;  // a multiple of every kLanes and kDLanes
  const size_t half = p.rotary_dim / 2;
  float angle[kChunk], sin_a[kChunk], cos_a[kChunk];
  for (size_t r = 0; r < p.len; ++r) {
    float* row = x + r * ldx;  // [heads, head_dim]
    const F position = V::Set(static_cast<float>(p.pos0 + r));
    for (size_t i0 = 0; i0 < half; i0 += kChunk) {
      const size_t m = half - i0 < kChunk ? half - i0 : kChunk;
      const size_t padded = (m + 15) & ~static_cast<size_t>(15);
      size_t i = 0;
      for (; i + L <= m; i += L)
        V::Store(angle + i, V::Mul(position, V::Load(p.inv_freq + i0 + i)));
      if (i < m)
        V::StoreN(angle + i, V::Mul(position, V::LoadN(p.inv_freq + i0 + i, m - i)), m - i);
      for (i = m; i < padded; ++i) angle[i] = 0.0f;
      SinCos<V>(angle, padded, sin_a, cos_a);
      for (i = 0; i < m; ++i) {  // (x 1 is exact: bit-identical without LongRope)
        sin_a[i] *= p.attention_factor;
        cos_a[i] *= p.attention_factor;
      }
      for (size_t h = 0; h < p.heads; ++h) {
        float* x1 = row + h * p.head_dim + i0;  // [m]: x[i]
        float* x2 = x1 + half;                  // [m]: x[i + half]
        for (i = 0; i + L <= m; i += L) {
          const F a = V::Load(x1 + i), b = V::Load(x2 + i);
          const F c = V::Load(cos_a + i), s = V::Load(sin_a + i);
          V::Store(x1 + i, V::Sub(V::Mul(a, c), V::Mul(b, s)));  // x1 c - x2 s
          V::Store(x2 + i, V::Add(V::Mul(b, c), V::Mul(a, s)));  // x2 c + x1 s
        }
        if (i < m) {
          const size_t rem = m - i;
          const F a = V::LoadN(x1 + i, rem), b = V::LoadN(x2 + i, rem);
          const F c = V::Load(cos_a + i), s = V::Load(sin_a + i);
          V::StoreN(x1 + i, V::Sub(V::Mul(a, c), V::Mul(b, s)), rem);
          V::StoreN(x2 + i, V::Add(V::Mul(b, c), V::Mul(a, s)), rem);
        }
      }
    }
  }
}

}  // namespace
}  // namespace octet
