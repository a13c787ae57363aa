// qs8_attention: int8 attention for one sequence, all heads, tiled with an
// online softmax. Both matrix products run in int8 through the dispatch
// table's integer kernels (Q·Kᵀ: kernels/qs8_gemm.h, P·V: kernels/qu8s8_pv.h);
// the float work between them (scales, masks, biases, the softmax update, P) runs
// per query row and key tile in the table's qs8_softmax_tile kernel
// (kernels/qs8_softmax_tile.h), the rest (rescaling and summing the accumulator)
// in this file's C++. What is computed, which keys are visible and the biases:
// kernels/attention_params.h, exactly as for f32_attention.
//
// Exactness: results are bit-identical for a given kernel table, whatever the
// integer variants (they meet integer, tolerance-0 contracts) and the thread
// count, but not across tables. The reference softmax (qs8_softmax_tile__ref)
// takes exp in double (kernels/scalar_math.h) and sums in key order; the vector
// variants take exp in float (<= 2 ulp) and sum in lanes. Against the reference,
// with the same integer kernels, l and each w_j agree within ~2^-20 relative,
// and a P[j] flips by one level where w_j * 255 / w_max lies within ~2^-20 of a
// half-integer, moving the output by (w_max / 255) |v[j,g]| / l, one quantization
// step of P. Flips are rare: tests/ops/qs8_attention_test.cc sees none, and
// outputs within 2.3e-7 max|v| of the reference softmax's (half of them differ
// in their last bits); it allows 0.005 max|v|, one step's worst case. Accuracy
// against fp32 attention is the same for every table (the tests' bar, docs/design.md's
// cosine >= 0.998).
//
// Operands (symmetric int8, core/quant.h; one scale per token and head):
//   q  [q_len, num_heads, head_dim] int8, row i at q + i * ldq;  q_scales [q_len, num_heads]
//   k  [kv_len, num_kv_heads, head_dim] int8, row j at k + j * ldk;  k_scales [kv_len,
//   num_kv_heads] v  [kv_len, num_kv_heads, head_dim] int8, row j at v + j * ldv;  v_scales
//   [kv_len, num_kv_heads] out [q_len, num_heads, head_dim] f32, row i at out + i * ldo
// K, V and their scales are the int8 KV cache's layout (position-major), read in
// place; GQA's query heads read their kv head without a copy.
//
// The arithmetic, per query row i (position p), head h, kv head g:
//   keys in tiles of `tile` positions aligned to multiples of `tile` (so a row
//   sees the same tiles whether it is computed in a prefill or alone in a decode
//   step, and the results are bit-identical);
//   S[j]   = sum_d q[i,h,d] k[j,g,d]                        int8 x int8 -> int32
//   s_j    = S[j] * (q_scale[i,h] * scale * k_scale[j,g]) + bias(h, p, j)     (f32)
//   online softmax over the visible keys (f32, exp from the softmax kernel):
//     m = running max; when a tile raises it, the sum and accumulator are
//     multiplied by exp(m_old - m_new); e_j = exp(s_j - m); l += e_j
//   the per-token V scale folds into the weights, so V's int8 values enter the
//   reduction unscaled:  w_j = e_j * v_scale[j,g],  and per (row, head, tile)
//     P[j]  = rint(min(w_j * (255 / w_max), 255))           uint8, 0 for masked keys
//     acc  += (sum_j P[j] v[j,g,d]) * (w_max / 255)          uint8 x int8 -> int32
//   out = acc / l (zeros when no key is visible).
// Softmax, scales and biases stay in fp32: they are a few operations per key
// against head_dim multiply-adds per key in each product.
//
// Scratch: qs8_attention_scratch_bytes(params), caller-owned, 64-byte aligned,
// independent of q_len and kv_len (no [q_len x kv_len] buffer).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "kernels/attention_params.h"
#include "kernels/qs8_gemm.h"
#include "kernels/qs8_softmax_tile.h"
#include "kernels/qu8s8_pv.h"

namespace octet {

// The kernels the op calls (from the KernelTable, or variants under test).
struct Qs8AttentionKernels {
  Qs8GemmFn qk;              // C = A · Bᵀ: logits of a block of query rows against a key tile
  Qu8s8PvFn pv;              // C = P · V
  Qs8SoftmaxTileFn softmax;  // one row's softmax update and P for a key tile
};

// Query rows computed together against each key tile (the M of both products):
// 16 so the integer kernels run on tall blocks (each row's result does not
// depend on which rows share its block, so this changes speed, not results).
constexpr size_t kQs8AttentionRows = 16;

// Largest head_dim and tile the op accepts (the kernels' K limits, with room).
constexpr size_t kQs8AttentionMaxHeadDim = 4096;
constexpr size_t kQs8AttentionMaxTile = 4096;

size_t qs8_attention_scratch_bytes(const AttentionParams& params);

// Why params cannot run through qs8_attention, or nullptr (on top of
// AttentionParamsError). For prepare.
const char* Qs8AttentionParamsError(const AttentionParams& params);

void qs8_attention(const Qs8AttentionKernels& kernels, const AttentionParams& params,
                   const int8_t* q, size_t ldq, const float* q_scales, const int8_t* k, size_t ldk,
                   const float* k_scales, const int8_t* v, size_t ldv, const float* v_scales,
                   float* out, size_t ldo, void* scratch);

// The attention probabilities of one head, for inspection (`octet run
// --attention-map`, engine/forward.h AttentionCapture), not for the forward
// pass: probs [q_len, kv_len], row i at probs + i * ldp (ldp >= kv_len), gets
// the softmax that qs8_attention computes before P's 8-bit quantization:
//   s_j = float(S[j]) * ((q_scales[i, head] * scale) * k_scales[j, g]) + bias(head, p, j)
// (S the int32 Q·Kᵀ, the same float operations in the same order as the
// softmax kernel), p_j = exp(s_j - m) / sum_j' exp(s_j' - m) over the visible
// keys, m their maximum (the kernel's final running maximum), exp from
// kernels/scalar_math.h rounded to float, the sum in key order (the kernel's
// online sum differs from it by rounding only). 0 for masked keys, an all-zero
// row for a query that sees no key. Operands as qs8_attention's; the caller's
// buffer is the only memory used.
//
// Why before the quantization: P's levels are relative to each tile's largest
// w_j = e_j v_scale[j], so they mix V's per-token scales into the weights and
// differ from tile to tile; the fp32 p_j are the probabilities the kernel's
// output approximates (within one step of P per tile) and sum to 1.
void qs8_attention_probs(const AttentionParams& params, size_t head, const int8_t* q,
                         size_t ldq, const float* q_scales, const int8_t* k, size_t ldk,
                         const float* k_scales, float* probs, size_t ldp);

}  // namespace octet
