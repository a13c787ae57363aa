// The vector body of f32_attention (contract in kernels/f32_attention.h), written
// once for every ISA on the vector operations of kernels/f32_vector_math.h ("The
// vector interface"); kernels/x86/f32_attention__avx512.cc, __avx2.cc and
// kernels/neon/f32_attention__neon.cc instantiate it with their tile sizes.
//
// Per head, the queries go in blocks of up to R = kVecs * kLanes rows, each row
// one lane. A block:
//   1. copies its rows of q, transposed, into qt [head_dim, R] (lanes past the
//      block's rows are 0), and sets each row's running max (-inf), sum (0) and
//      accumulator acc [R, head_dim] (0);
//   2. walks the key tiles [t0, t0 + tile), t0 a multiple of tile, that meet the
//      union of its rows' key ranges (AttentionKeyRange), keys outside the union
//      left out. For each tile:
//      a. the logits st [keys, R] = scale * (k_j . q_r), the dot products fused
//         multiply-adds in increasing d, kKeys keys at a time: a key's value is
//         broadcast and multiplies a vector of R query rows of qt (Q K^T as an
//         outer-product GEMM); then the bias (AttentionBias), and -inf for every
//         (row, key) the row does not see (range, key mask, padding lanes);
//      b. per lane, the online softmax of the reference: the tile's max m_t; where
//         m_t > m, c = exp(m - m_t) and m = m_t, else c = 1; sum = sum c + e_j in
//         increasing j, e_j = exp(s_j - m) replacing st (0 for hidden keys);
//      c. acc = acc c + sum_j e_j v_j, kPvRows rows by kPvVecs vectors of
//         head_dim at a time (P V as a GEMM: e_j broadcast, v_j loaded), keys in
//         increasing j; keys the key mask hides are skipped, so are never read;
//   3. stores out = acc / sum, or zeros for a row that saw no key.
// Every lane's arithmetic depends only on its own query, the keys and the tile
// size, never on the block it sits in or which lane it has: a row gives bit-
// identical results in a prefill of any length, a chunk, or alone (decoding),
// as the reference promises. (Tiles are aligned to multiples of `tile` for that
// reason; keys hidden from a lane add exactly 0 to its sums.)
//
// Scratch (kF32AttentionMaxRows >= R): qt [head_dim, R], st [tile, R], acc [R, head_dim].
//
// Linkage: internal and always inlined (kernels/qs8_gemm_driver.h, "Linkage").
// Only compiler headers and kernels/*.h.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "kernels/attention_params.h"
#include "kernels/f32_attention.h"
#include "kernels/f32_vector_math.h"
#include "kernels/kernel_inline.h"

namespace octet {
namespace {  // internal linkage per including file

// st[c * R + lane] = scale * (k_c . qt[:, lane]) for kKeys keys c (row c at k +
// c * ldk) and kVecs vectors of lanes; qt [head_dim, R].
template <class V, size_t R, size_t kKeys, size_t kVecs>
OCTET_KERNEL_INLINE void AttentionScores(size_t head_dim, const float* qt, const float* k,
                                         size_t ldk, float scale, float* st) {
  typedef typename V::F F;
  constexpr size_t L = V::kLanes;
  F acc[kKeys][kVecs];
  for (size_t c = 0; c < kKeys; ++c) {
    for (size_t u = 0; u < kVecs; ++u) acc[c][u] = V::Zero();
  }
  for (size_t d = 0; d < head_dim; ++d) {
    F qv[kVecs];
    for (size_t u = 0; u < kVecs; ++u) qv[u] = V::Load(qt + d * R + u * L);
    for (size_t c = 0; c < kKeys; ++c) {
      const F kb = V::Set(k[c * ldk + d]);
      for (size_t u = 0; u < kVecs; ++u) acc[c][u] = V::MulAdd(kb, qv[u], acc[c][u]);
    }
  }
  const F s = V::Set(scale);
  for (size_t c = 0; c < kKeys; ++c) {
    for (size_t u = 0; u < kVecs; ++u) V::Store(st + c * R + u * L, V::Mul(acc[c][u], s));
  }
}

// Logits of keys [a, a + n) (row j at k + j * ldk) into st [n, R], kVecs vectors of lanes.
template <class V, size_t R, size_t kKeys, size_t kVecs>
OCTET_KERNEL_INLINE void AttentionScoresTile(size_t head_dim, const float* qt, const float* k,
                                             size_t ldk, size_t n, float scale, float* st) {
  size_t t = 0;
  for (; t + kKeys <= n; t += kKeys) {
    AttentionScores<V, R, kKeys, kVecs>(head_dim, qt, k + t * ldk, ldk, scale, st + t * R);
  }
  for (; t < n; ++t)
    AttentionScores<V, R, 1, kVecs>(head_dim, qt, k + t * ldk, ldk, scale, st + t * R);
}

// acc rows [kRows, head_dim] (stride head_dim), columns [d, d + kNV * L) or, when
// tail != 0, the last vector only `tail` wide: acc = acc c_r + sum_t st[t, r] v_t,
// over the n keys t of the tile (row t at v + t * ldv, from column d), skipping
// those with key_mask[t] == 0 (key_mask null: none).
template <class V, size_t R, size_t kRows, size_t kNV>
OCTET_KERNEL_INLINE void AttentionPv(size_t head_dim, size_t d, size_t tail, const float* corr,
                                     const float* st, const float* v, size_t ldv,
                                     const uint8_t* key_mask, size_t n, float* acc) {
  typedef typename V::F F;
  constexpr size_t L = V::kLanes;
  F a[kRows][kNV];
  for (size_t r = 0; r < kRows; ++r) {
    const F c = V::Set(corr[r]);
    for (size_t u = 0; u < kNV; ++u) {
      const float* src = acc + r * head_dim + d + u * L;
      a[r][u] = V::Mul(tail != 0 && u + 1 == kNV ? V::LoadN(src, tail) : V::Load(src), c);
    }
  }
  for (size_t t = 0; t < n; ++t) {
    if (key_mask != nullptr && key_mask[t] == 0) continue;
    const float* vt = v + t * ldv + d;
    F vv[kNV];
    for (size_t u = 0; u < kNV; ++u) {
      vv[u] = tail != 0 && u + 1 == kNV ? V::LoadN(vt + u * L, tail) : V::Load(vt + u * L);
    }
    for (size_t r = 0; r < kRows; ++r) {
      const F w = V::Set(st[t * R + r]);
      for (size_t u = 0; u < kNV; ++u) a[r][u] = V::MulAdd(w, vv[u], a[r][u]);
    }
  }
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t u = 0; u < kNV; ++u) {
      float* dst = acc + r * head_dim + d + u * L;
      if (tail != 0 && u + 1 == kNV) {
        V::StoreN(dst, a[r][u], tail);
      } else {
        V::Store(dst, a[r][u]);
      }
    }
  }
}

// Rows [r0, r0 + kRows) of the block through AttentionPv over every column.
template <class V, size_t R, size_t kRows, size_t kPvVecs>
OCTET_KERNEL_INLINE void AttentionPvRows(size_t head_dim, size_t r0, const float* corr,
                                         const float* st, const float* v, size_t ldv,
                                         const uint8_t* key_mask, size_t n, float* acc) {
  constexpr size_t L = V::kLanes;
  size_t d = 0;
  for (; d + kPvVecs * L <= head_dim; d += kPvVecs * L) {
    AttentionPv<V, R, kRows, kPvVecs>(head_dim, d, 0, corr + r0, st + r0, v, ldv, key_mask, n,
                                      acc + r0 * head_dim);
  }
  for (; d < head_dim; d += L) {
    const size_t tail = head_dim - d < L ? head_dim - d : 0;
    AttentionPv<V, R, kRows, 1>(head_dim, d, tail, corr + r0, st + r0, v, ldv, key_mask, n,
                                acc + r0 * head_dim);
  }
}

template <class V, size_t kVecs, size_t kKeys, size_t kPvRows, size_t kPvVecs>
OCTET_KERNEL_INLINE void AttentionRows(const AttentionParams& p, const float* q, size_t ldq,
                                       const float* k, size_t ldk, const float* v, size_t ldv,
                                       float* out, size_t ldo, float* scratch) {
  typedef typename V::F F;
  constexpr size_t L = V::kLanes;
  constexpr size_t R = kVecs * L;  // query rows per block, one per lane
  static_assert(kVecs == 1 || kVecs == 2, "blocks of one or two vectors of rows");
  static_assert(R <= kF32AttentionMaxRows, "the scratch holds kF32AttentionMaxRows rows");
  constexpr float kMasked = -__builtin_inff();
  const size_t head_dim = p.head_dim;
  const size_t group = AttentionGroup(p);  // query heads per kv head
  const size_t tile = AttentionTile(p);
  const bool bias = p.alibi_slopes != nullptr || p.t5_bias != nullptr;
  size_t h_begin = 0, h_end = 0;
  AttentionHeads(p, &h_begin, &h_end);
  float* qt = scratch;                    // [head_dim, R] the block's queries, transposed
  float* st = qt + head_dim * R;          // [tile, R] logits, then weights, of one key tile
  float* acc = st + tile * R;             // [R, head_dim] unnormalized outputs
  float row_max[R], row_sum[R], corr[R];  // [R] each
  size_t lo[R], hi[R];                    // [R] each row's key range; empty for padding lanes
  // kv head h / group, counted without a division (AArch32 has none).
  size_t kv_head = 0, in_group = 0;
  for (size_t h = 0; h < h_begin; ++h) {
    if (++in_group == group) {
      in_group = 0;
      ++kv_head;
    }
  }
  for (size_t h = h_begin; h < h_end; ++h) {
    const size_t kv_offset = kv_head * head_dim;
    if (++in_group == group) {
      in_group = 0;
      ++kv_head;
    }
    for (size_t i0 = 0; i0 < p.q_len; i0 += R) {
      const size_t rows = p.q_len - i0 < R ? p.q_len - i0 : R;
      const size_t vecs = rows > L ? 2 : 1;
      size_t union_lo = static_cast<size_t>(-1), union_hi = 0;
      for (size_t r = 0; r < vecs * L; ++r) {
        lo[r] = hi[r] = 0;
        if (r < rows) {
          AttentionKeyRange(p, i0 + r, &lo[r], &hi[r]);
          if (lo[r] < hi[r]) {
            union_lo = lo[r] < union_lo ? lo[r] : union_lo;
            union_hi = hi[r] > union_hi ? hi[r] : union_hi;
          }
          const float* qr = q + (i0 + r) * ldq + h * head_dim;  // [head_dim]
          for (size_t d = 0; d < head_dim; ++d) qt[d * R + r] = qr[d];
        } else {
          for (size_t d = 0; d < head_dim; ++d) qt[d * R + r] = 0.0f;
        }
        row_max[r] = kMasked;
        row_sum[r] = 0.0f;
      }
      for (size_t i = 0; i < rows * head_dim; ++i) acc[i] = 0.0f;
      // The first tile boundary at or below union_lo, without a division.
      size_t t0 = 0;
      while (union_lo < union_hi && t0 + tile <= union_lo) t0 += tile;
      for (; union_lo < union_hi && t0 < union_hi; t0 += tile) {
        const size_t a = t0 > union_lo ? t0 : union_lo;
        const size_t b = t0 + tile < union_hi ? t0 + tile : union_hi;
        const size_t n = b - a;
        // a. Logits, bias, masks.
        const float* ka = k + a * ldk + kv_offset;
        if (vecs == 2) {
          AttentionScoresTile<V, R, kKeys, kVecs>(head_dim, qt, ka, ldk, n, p.scale, st);
        } else {
          AttentionScoresTile<V, R, kKeys, 1>(head_dim, qt, ka, ldk, n, p.scale, st);
        }
        if (p.softcap > 0.0f) {  // before the bias and the masks, as the reference
          for (size_t e = 0; e < n * R; ++e) st[e] = SoftCap(st[e], p.softcap);
        }
        for (size_t r = 0; r < vecs * L; ++r) {
          if (!bias && lo[r] <= a && b <= hi[r]) continue;  // sees the whole tile
          for (size_t t = 0; t < n; ++t) {
            const size_t j = a + t;
            if (j < lo[r] || j >= hi[r]) {
              st[t * R + r] = kMasked;
            } else if (bias) {
              st[t * R + r] += AttentionBias(p, h, p.q_pos0 + i0 + r, j);
            }
          }
        }
        const uint8_t* mask = p.key_mask != nullptr ? p.key_mask + a : nullptr;  // [n]
        if (mask != nullptr) {
          for (size_t t = 0; t < n; ++t) {
            if (mask[t] != 0) continue;
            for (size_t u = 0; u < vecs; ++u) V::Store(st + t * R + u * L, V::Set(kMasked));
          }
        }
        // b. The online softmax, per lane.
        for (size_t u = 0; u < vecs; ++u) {
          float* s = st + u * L;
          F tile_max = V::Set(kMasked);
          for (size_t t = 0; t < n; ++t) tile_max = V::Max(V::Load(s + t * R), tile_max);
          const F m = V::Load(row_max + u * L);
          const auto grows = V::Lt(m, tile_max);
          const F c = V::Select(grows, Exp<V>(V::Sub(m, tile_max)), V::Set(1.0f));
          const F new_max = V::Select(grows, tile_max, m);
          // -inf (no key seen yet) -> the lowest float, so exp(-inf - it) = 0, not NaN.
          const F shift = V::Max(new_max, V::Set(-3.40282347e38f));
          F sum = V::Mul(V::Load(row_sum + u * L), c);
          for (size_t t = 0; t < n; ++t) {
            const F e = Exp<V>(V::Sub(V::Load(s + t * R), shift));
            V::Store(s + t * R, e);
            sum = V::Add(sum, e);
          }
          V::Store(row_max + u * L, new_max);
          V::Store(row_sum + u * L, sum);
          V::Store(corr + u * L, c);
        }
        // c. acc = acc c + P V.
        const float* va = v + a * ldv + kv_offset;
        size_t r = 0;
        for (; r + kPvRows <= rows; r += kPvRows) {
          AttentionPvRows<V, R, kPvRows, kPvVecs>(head_dim, r, corr, st, va, ldv, mask, n, acc);
        }
        for (; r < rows; ++r) {
          AttentionPvRows<V, R, 1, kPvVecs>(head_dim, r, corr, st, va, ldv, mask, n, acc);
        }
      }
      // 3. out = acc / sum.
      for (size_t r = 0; r < rows; ++r) {
        float* o = out + (i0 + r) * ldo + h * head_dim;  // [head_dim]
        const float* ar = acc + r * head_dim;            // [head_dim]
        const bool seen = row_sum[r] > 0.0f;
        const F sum = V::Set(seen ? row_sum[r] : 1.0f);
        size_t d = 0;
        for (; d + L <= head_dim; d += L) {
          V::Store(o + d, seen ? V::Div(V::Load(ar + d), sum) : V::Zero());
        }
        if (d < head_dim) {
          const size_t rem = head_dim - d;
          V::StoreN(o + d, seen ? V::Div(V::LoadN(ar + d, rem), sum) : V::Zero(), rem);
        }
      }
    }
  }
}

}  // namespace
}  // namespace octet
