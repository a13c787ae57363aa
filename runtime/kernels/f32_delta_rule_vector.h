// The bodies of the vector variants of kernels/f32_delta_rule.h, written once
// over an ISA's vector operations V (kernels/f32_vector_math.h, "The vector
// interface"); kernels/<isa>/f32_delta_step__<isa>.cc and
// f32_delta_chunk__<isa>.cc instantiate them with its V and MR, the rows of a
// matrix-product tile (as many as its registers hold: MR x 2 accumulators, two
// B vectors and a broadcast).
//
// The chunk's products run as blocked matrix products C (+)= alpha A B over
// row-major operands (MatMul below), tiles of MR rows x 2 vectors; columns
// past a multiple of kLanes use LoadN / StoreN, so rows may end anywhere.
// Scratch (a.scratch, F32DeltaChunkScratchFloats floats): G [64] doubles,
// then K^T [dk, 64], W [64, dk], U [64, dv], M and A [64, 64] and a row of
// 65 floats (within the reference's scratch for any dk, dv >= 1).
//
// Linkage: internal and always inlined (kernels/qs8_gemm_driver.h, "Linkage").
// Only compiler headers and kernels/*.h.
#pragma once

#include <stddef.h>

#include "kernels/f32_delta_rule.h"
#include "kernels/f32_vector_math.h"
#include "kernels/kernel_inline.h"

namespace octet {
namespace {  // internal linkage per including file

// C[MR rows, n <= 2 kLanes columns] (+)= alpha A[MR, k] B[k, n].
template <class V, size_t MR>
OCTET_KERNEL_INLINE void MatTile(size_t k, size_t n, const float* A, size_t lda, const float* B,
                                 size_t ldb, float* C, size_t ldc, float alpha, bool accumulate) {
  typedef typename V::F F;
  constexpr size_t L = V::kLanes;
  F c0[MR], c1[MR];
  for (size_t r = 0; r < MR; ++r) c0[r] = c1[r] = V::Zero();
  if (n == 2 * L) {
    for (size_t p = 0; p < k; ++p) {
      const F b0 = V::Load(B + p * ldb), b1 = V::Load(B + p * ldb + L);
      for (size_t r = 0; r < MR; ++r) {
        const F ar = V::Set(A[r * lda + p]);
        c0[r] = V::MulAdd(ar, b0, c0[r]);
        c1[r] = V::MulAdd(ar, b1, c1[r]);
      }
    }
  } else {
    const size_t n0 = n < L ? n : L, n1 = n - n0;
    for (size_t p = 0; p < k; ++p) {
      const F b0 = n0 == L ? V::Load(B + p * ldb) : V::LoadN(B + p * ldb, n0);
      const F b1 = n1 == 0 ? V::Zero() : V::LoadN(B + p * ldb + L, n1);
      for (size_t r = 0; r < MR; ++r) {
        const F ar = V::Set(A[r * lda + p]);
        c0[r] = V::MulAdd(ar, b0, c0[r]);
        c1[r] = V::MulAdd(ar, b1, c1[r]);
      }
    }
  }
  const F al = V::Set(alpha);
  const size_t n0 = n < L ? n : L, n1 = n - n0;
  for (size_t r = 0; r < MR; ++r) {
    float* cr = C + r * ldc;
    F x0 = V::Mul(c0[r], al), x1 = V::Mul(c1[r], al);
    if (n0 == L) {
      if (accumulate) x0 = V::Add(V::Load(cr), x0);
      V::Store(cr, x0);
    } else {
      if (accumulate) x0 = V::Add(V::LoadN(cr, n0), x0);
      V::StoreN(cr, x0, n0);
    }
    if (n1 == L) {
      if (accumulate) x1 = V::Add(V::Load(cr + L), x1);
      V::Store(cr + L, x1);
    } else if (n1 > 0) {
      if (accumulate) x1 = V::Add(V::LoadN(cr + L, n1), x1);
      V::StoreN(cr + L, x1, n1);
    }
  }
}

// The tile for mr <= MR rows: MatTile with mr as a constant.
template <class V, size_t MR>
OCTET_KERNEL_INLINE void MatTileRows(size_t mr, size_t k, size_t n, const float* A, size_t lda,
                                     const float* B, size_t ldb, float* C, size_t ldc, float alpha,
                                     bool accumulate) {
  if (mr == MR) {
    MatTile<V, MR>(k, n, A, lda, B, ldb, C, ldc, alpha, accumulate);
  } else if constexpr (MR > 1) {
    MatTileRows<V, MR - 1>(mr, k, n, A, lda, B, ldb, C, ldc, alpha, accumulate);
  }
}

enum class Shape { kFull, kLowerK, kLowerN };

// C[m, n] (+)= alpha A[m, k] B[k, n]. kLowerK: A is lower triangular (zero
// above the diagonal), so a tile of rows i0.. reads k only to i0 + MR.
// kLowerN: only C's lower triangle with its diagonal tiles is wanted (columns
// past a tile's last row are computed as far as the tile's rows reach).
template <class V, size_t MR>
OCTET_KERNEL_INLINE void MatMul(Shape shape, size_t m, size_t n, size_t k, const float* A,
                                size_t lda, const float* B, size_t ldb, float* C, size_t ldc,
                                float alpha, bool accumulate) {
  constexpr size_t NR = 2 * V::kLanes;
  for (size_t i0 = 0; i0 < m; i0 += MR) {
    const size_t mr = m - i0 < MR ? m - i0 : MR;
    const size_t kk = shape == Shape::kLowerK && i0 + mr < k ? i0 + mr : k;
    const size_t nn = shape == Shape::kLowerN && i0 + mr < n ? i0 + mr : n;
    for (size_t j0 = 0; j0 < nn; j0 += NR) {
      const size_t nr = nn - j0 < NR ? nn - j0 : NR;
      MatTileRows<V, MR>(mr, kk, nr, A + i0 * lda, lda, B + j0, ldb, C + i0 * ldc + j0, ldc,
                         alpha, accumulate);
    }
  }
}

// y[0, n) = x[0, n) * s (may alias).
template <class V>
OCTET_KERNEL_INLINE void ScaleRow(size_t n, const float* x, float s, float* y) {
  constexpr size_t L = V::kLanes;
  const typename V::F sv = V::Set(s);
  size_t i = 0;
  for (; i + L <= n; i += L) V::Store(y + i, V::Mul(V::Load(x + i), sv));
  if (i < n) V::StoreN(y + i, V::Mul(V::LoadN(x + i, n - i), sv), n - i);
}

// x[0, n) = exp(x[0, n)).
template <class V>
OCTET_KERNEL_INLINE void ExpRow(size_t n, float* x) {
  constexpr size_t L = V::kLanes;
  size_t i = 0;
  for (; i + L <= n; i += L) V::Store(x + i, Exp<V>(V::Load(x + i)));
  if (i < n) V::StoreN(x + i, Exp<V>(V::LoadN(x + i, n - i)), n - i);
}

// y[0, n) -= sum_{j < count} c[j] x_j[0, n), x_j = x + j ldx: columns in
// blocks of 4 vectors held in registers across the j loop.
template <class V>
OCTET_KERNEL_INLINE void SubtractCombination(size_t n, size_t count, const float* c,
                                             const float* x, size_t ldx, float* y) {
  typedef typename V::F F;
  constexpr size_t L = V::kLanes, kBlock = 4 * L;
  size_t e = 0;
  for (; e + kBlock <= n; e += kBlock) {
    F y0 = V::Load(y + e), y1 = V::Load(y + e + L), y2 = V::Load(y + e + 2 * L),
      y3 = V::Load(y + e + 3 * L);
    for (size_t j = 0; j < count; ++j) {
      const F cj = V::Set(c[j]);
      const float* xj = x + j * ldx + e;
      y0 = V::NegMulAdd(cj, V::Load(xj), y0);
      y1 = V::NegMulAdd(cj, V::Load(xj + L), y1);
      y2 = V::NegMulAdd(cj, V::Load(xj + 2 * L), y2);
      y3 = V::NegMulAdd(cj, V::Load(xj + 3 * L), y3);
    }
    V::Store(y + e, y0);
    V::Store(y + e + L, y1);
    V::Store(y + e + 2 * L, y2);
    V::Store(y + e + 3 * L, y3);
  }
  for (; e < n; e += L) {
    const size_t w = n - e < L ? n - e : L;
    F ye = w == L ? V::Load(y + e) : V::LoadN(y + e, w);
    for (size_t j = 0; j < count; ++j) {
      const float* xj = x + j * ldx + e;
      ye = V::NegMulAdd(V::Set(c[j]), w == L ? V::Load(xj) : V::LoadN(xj, w), ye);
    }
    if (w == L) V::Store(y + e, ye); else V::StoreN(y + e, ye, w);
  }
}

// DeltaStep on the columns [e, e + (NV - 1) kLanes + tail) (tail in 1..kLanes):
// NV vectors a row, the accumulators in registers across the rows.
template <class V, size_t NV>
OCTET_KERNEL_INLINE void DeltaStepColumns(size_t dk, size_t dv, size_t e, size_t tail,
                                          const float* q, const float* k, const float* v,
                                          typename V::F beta, typename V::F decay, float* S,
                                          float* o) {
  typedef typename V::F F;
  constexpr size_t L = V::kLanes;
  const auto load = [&](const float* p, size_t t) {
    return t + 1 < NV || tail == L ? V::Load(p + t * L) : V::LoadN(p + t * L, tail);
  };
  const auto store = [&](float* p, size_t t, F x) {
    if (t + 1 < NV || tail == L) V::Store(p + t * L, x); else V::StoreN(p + t * L, x, tail);
  };
  F acc[NV], d[NV];
  for (size_t t = 0; t < NV; ++t) acc[t] = V::Zero();
  for (size_t i = 0; i < dk; ++i) {
    float* si = S + i * dv + e;
    const F ki = V::Set(k[i]);
    for (size_t t = 0; t < NV; ++t) {
      const F s = V::Mul(load(si, t), decay);
      store(si, t, s);
      acc[t] = V::MulAdd(ki, s, acc[t]);
    }
  }
  for (size_t t = 0; t < NV; ++t) {
    d[t] = V::Mul(beta, V::Sub(load(v + e, t), acc[t]));
    acc[t] = V::Zero();
  }
  for (size_t i = 0; i < dk; ++i) {
    float* si = S + i * dv + e;
    const F ki = V::Set(k[i]), qi = V::Set(q[i]);
    for (size_t t = 0; t < NV; ++t) {
      const F s = V::MulAdd(ki, d[t], load(si, t));
      store(si, t, s);
      acc[t] = V::MulAdd(qi, s, acc[t]);
    }
  }
  for (size_t t = 0; t < NV; ++t) store(o + e, t, acc[t]);
}

template <class V>
OCTET_KERNEL_INLINE void DeltaStep(size_t dk, size_t dv, const float* q, const float* k,
                                   const float* v, float beta, float g, float* S, float* o) {
  constexpr size_t L = V::kLanes, kBlock = 4 * L;
  // The decay as the reference rounds it (libm's exp in double).
  const typename V::F decay = V::Set(static_cast<float>(__builtin_exp(static_cast<double>(g))));
  const typename V::F bv = V::Set(beta);
  // Columns are independent: each block of up to 4 vectors runs the whole step.
  size_t e = 0;
  for (; e + kBlock <= dv; e += kBlock) {
    DeltaStepColumns<V, 4>(dk, dv, e, L, q, k, v, bv, decay, S, o);
  }
  if (e < dv) {
    const size_t w = dv - e, nv = (w + L - 1) / L, tail = w - (nv - 1) * L;
    switch (nv) {
      case 1: return DeltaStepColumns<V, 1>(dk, dv, e, tail, q, k, v, bv, decay, S, o);
      case 2: return DeltaStepColumns<V, 2>(dk, dv, e, tail, q, k, v, bv, decay, S, o);
      case 3: return DeltaStepColumns<V, 3>(dk, dv, e, tail, q, k, v, bv, decay, S, o);
      default: return DeltaStepColumns<V, 4>(dk, dv, e, tail, q, k, v, bv, decay, S, o);
    }
  }
}

template <class V, size_t MR>
OCTET_KERNEL_INLINE void DeltaChunk(const F32DeltaChunkArgs& a) {
  constexpr size_t C = kDeltaChunk;
  const size_t m = a.m, dk = a.dk, dv = a.dv, ld = a.ld;
  float* const S = a.S;
  double* G = reinterpret_cast<double*>(a.scratch);  // [C]
  float* KT = a.scratch + 2 * C;                     // [dk, C]
  float* W = KT + dk * C;                            // [C, dk]
  float* U = W + C * dk;                             // [C, dv]: beta v, U, u
  float* M = U + C * dv;                             // [C, C]
  float* A = M + C * C;                              // [C, C]
  float* row = A + C * C;                            // [C + 1]
  double acc = 0.0;
  for (size_t i = 0; i < m; ++i) {
    acc += a.g[i * ld];
    G[i] = acc;
    row[i] = static_cast<float>(acc);
  }
  ExpRow<V>(m, row);  // exp(G_i)
  for (size_t i = 0; i < m; ++i) {
    const float* ki = a.k + i * ld;
    const float bi = a.beta[i * ld];
    for (size_t d = 0; d < dk; ++d) KT[d * C + i] = ki[d];
    ScaleRow<V>(dk, ki, bi * row[i], W + i * dk);
    ScaleRow<V>(dv, a.v + i * ld, bi, U + i * dv);
  }
  // M = beta_i k_i.k_j D_ij below the diagonal (the rest unread), A = q_i.k_j
  // D_ij on and below it, zeros above (A's tiles on the diagonal read them).
  MatMul<V, MR>(Shape::kLowerN, m, m, dk, a.k, ld, KT, C, M, C, 1.0f, false);
  MatMul<V, MR>(Shape::kLowerN, m, m, dk, a.q, ld, KT, C, A, C, 1.0f, false);
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j <= i; ++j) row[j] = static_cast<float>(G[i] - G[j]);
    ExpRow<V>(i + 1, row);
    const float bi = a.beta[i * ld];
    float* mi = M + i * C;
    float* ai = A + i * C;
    for (size_t j = 0; j < i; ++j) mi[j] *= bi * row[j];
    for (size_t j = 0; j <= i; ++j) ai[j] *= row[j];
    for (size_t j = i + 1; j < m; ++j) ai[j] = 0.0f;
    // Forward substitution: row i of U and W less M_ij times the rows before.
    SubtractCombination<V>(dv, i, mi, U, dv, U + i * dv);
    SubtractCombination<V>(dk, i, mi, W, dk, W + i * dk);
  }
  // u = U - W S; o = exp(G) q S + A u.
  MatMul<V, MR>(Shape::kFull, m, dv, dk, W, dk, S, dv, U, dv, -1.0f, true);
  MatMul<V, MR>(Shape::kFull, m, dv, dk, a.q, ld, S, dv, a.o, ld, 1.0f, false);
  for (size_t i = 0; i < m; ++i) row[i] = static_cast<float>(G[i]);
  ExpRow<V>(m, row);
  for (size_t i = 0; i < m; ++i) ScaleRow<V>(dv, a.o + i * ld, row[i], a.o + i * ld);
  MatMul<V, MR>(Shape::kLowerK, m, dv, m, A, C, U, dv, a.o, ld, 1.0f, true);
  // S = exp(G_last) S + (exp(G_last - G) k)^T u.
  const double last = G[m - 1];
  for (size_t j = 0; j < m; ++j) row[j] = static_cast<float>(last - G[j]);
  row[m] = static_cast<float>(last);
  ExpRow<V>(m + 1, row);
  for (size_t d = 0; d < dk; ++d) {
    float* kd = KT + d * C;
    for (size_t j = 0; j < m; ++j) kd[j] *= row[j];
    ScaleRow<V>(dv, S + d * dv, row[m], S + d * dv);
  }
  MatMul<V, MR>(Shape::kFull, dk, dv, m, KT, C, U, dv, S, dv, 1.0f, true);
}

}  // namespace
}  // namespace octet
