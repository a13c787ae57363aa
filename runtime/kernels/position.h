// Position encodings: rotary embeddings (RoPE), sinusoidal rows, ALiBi slopes and
// T5's relative-position buckets.
//
// Prepare time (kernels/position.cc): rope_inv_freq and alibi_slopes fill small
// tables the session keeps. Run time (kernels/ref/): f32_rope__ref rotates Q or K
// rows in place, f32_sinusoidal__ref writes encoding rows. T5RelativeBucket is
// inline here because the attention kernels call it per logit.
//
// Every formula below is the published one, evaluated in the same float32 order
// as the Hugging Face/PyTorch code that trained the models, so the fp32 path
// agrees with PyTorch to a float ulp or two (docs/design.md §4: ~1e-5 relative end to
// end). The transcendental functions come from kernels/scalar_math.h (double
// precision, then rounded: correctly rounded float results, the same on every
// platform; PyTorch's own float sin/cos/pow are within 1 ulp of those).
//
// Kernel headers include only compiler headers and kernels/*.h.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "kernels/scalar_math.h"

namespace octet {

// ---------------------------------------------------------------------------
// RoPE (rotary position embeddings), Hugging Face's rotate-half convention.
//
// For a row x of one head at position p and a pair index i < rotary_dim / 2,
// with half = rotary_dim / 2:
//   angle = float(p) * inv_freq[i]                              (one float product)
//   c = cos(angle), s = sin(angle)                               (rounded to float)
//   x'[i]        = x[i] * c - x[i + half] * s
//   x'[i + half] = x[i + half] * c + x[i] * s
// Dimensions rotary_dim..head_dim-1 are left untouched (partial rotary, e.g.
// partial_rotary_factor < 1). This is HF's apply_rotary_pos_emb with
// cos = cat(cos, cos), sin = cat(sin, sin) and rotate_half(x) = cat(-x2, x1).
// (The GPT-J/interleaved convention, pairs (2i, 2i + 1), is not this one.)

// Frequency scaling of rope_inv_freq (same values as the schema's RopeScaling).
enum class RopeScalingKind : uint8_t {
  kNone = 0,
  kLinear = 1,  // inv_freq / factor (equivalently positions / factor)
  kLlama3 = 2,  // Llama 3.1's wavelength-dependent scaling
  kLongRope = 3,  // Phi-3's su/longrope: per-frequency factors (ext_factors)
};

struct RopeFreqParams {
  size_t rotary_dim = 0;   // even, >= 2: dimensions rotated per head
  float theta = 10000.0f;  // base (rope_theta)
  RopeScalingKind scaling = RopeScalingKind::kNone;
  float factor = 1.0f;                  // kLinear, kLlama3 (> 0)
  float low_freq_factor = 1.0f;         // kLlama3
  float high_freq_factor = 4.0f;        // kLlama3 (!= low_freq_factor)
  uint32_t original_max_positions = 0;  // kLlama3: original_max_position_embeddings (> 0)
  const float* ext_factors = nullptr;   // kLongRope: [rotary_dim / 2], the short or long ones
};

// Fills inv_freq[rotary_dim / 2] at prepare time. All in float32, in HF's order
// (transformers' modeling_rope_utils; d = rotary_dim, i < d / 2):
//   e_i      = float(2 i) / float(d)
//   inv_i    = 1 / float(theta ^ e_i)                       kNone
//   inv_i    = (1 / float(theta ^ e_i)) / factor             kLinear
//   kLlama3 (Llama 3.1), from the kNone inv_i, with L = original_max_positions:
//     wavelen      = (1 / inv_i) * float(2 pi)
//     high_wavelen = float(L / high_freq_factor)    shorter wavelengths: kept
//     low_wavelen  = float(L / low_freq_factor)     longer wavelengths: divided by factor
//     wavelen < high_wavelen:  inv_i
//     wavelen > low_wavelen:   inv_i / factor
//     otherwise:               smooth = ((1 / wavelen) * L - low_freq_factor)
//                                       / float(high_freq_factor - low_freq_factor)
//                              ((1 - smooth) * inv_i) / factor + smooth * inv_i
//   (the interpolation between the two, linear in L / wavelen). "1 / x" is a float
//   reciprocal, as PyTorch evaluates `scalar / tensor`.
//   inv_i    = 1 / (ext_factors[i] * float(theta ^ e_i))    kLongRope (modeling_rope_utils'
//              longrope; the caller picks the short or the long factors)
// theta ^ e is rounded once from double; PyTorch's float pow is within 1 ulp of it.
void rope_inv_freq(const RopeFreqParams& params, float* inv_freq);

// Why rope_inv_freq cannot take these parameters (null: it can), naming the
// field: rotary_dim even and >= 2; theta finite and > 1; scaling known;
// factor, low_freq_factor and high_freq_factor finite and > 0 whatever the
// scaling; kLlama3: original_max_positions > 0 and high_freq_factor !=
// low_freq_factor; kLongRope: ext_factors set, each finite and > 0. The one
// check of these parameters: the loader runs it on the file's, the forward
// pass on the ones it fills its tables with.
const char* RopeFreqParamsError(const RopeFreqParams& params);

struct F32RopeParams {
  size_t len = 0;         // rows (tokens)
  size_t heads = 0;       // heads per row
  size_t head_dim = 0;    // values per head
  size_t rotary_dim = 0;  // even, 2 <= rotary_dim <= head_dim
  size_t pos0 = 0;        // position of row 0; row r is at pos0 + r (< 2^24: exact in float)
  const float* inv_freq = nullptr;  // [rotary_dim / 2] from rope_inv_freq
  float attention_factor = 1.0f;    // LongRope: c and s are float(cos) * it, float(sin) * it
};

// Rotates x in place: x is [len, heads, head_dim], row r at x + r * ldx (ldx >=
// heads * head_dim floats), head h of a row at h * head_dim. No scratch; cos and
// sin are computed once per (row, pair) and applied to every head.
typedef void (*F32RopeFn)(const F32RopeParams& params, float* x, size_t ldx);
void f32_rope__ref(const F32RopeParams& params, float* x, size_t ldx);

// Vector variants (kernels/f32_vector_kernels.h), listed in kernel_table.cc: cos and
// sin by ScalarSinCos's algorithm on vectors of doubles (armv7: ScalarSinCos
// itself), 64 pairs at a time, then the rotation of every head on float vectors.
// The same operations in the same order as the reference, all compiled without
// contraction: bit-identical results, except on AArch32, where NEON flushes
// subnormal products to zero (an absolute difference below 2^-125).
void f32_rope__avx2(const F32RopeParams& params, float* x, size_t ldx);
void f32_rope__avx512(const F32RopeParams& params, float* x, size_t ldx);
void f32_rope__neon(const F32RopeParams& params, float* x, size_t ldx);

// ---------------------------------------------------------------------------
// Sinusoidal encodings, written (not added) for positions pos0..pos0 + len - 1.
// Computed in double and rounded to float, as the numpy/torch code that defines
// them does (float64 tables cast to float32). For frequency index c:
//   angle(p, c) = p / 10000^(2c / dim)
// kInterleaved (Vaswani et al.): PE(p, 2c) = sin(angle(p, c)),
//                                PE(p, 2c + 1) = cos(angle(p, c))
// kSplit (Marian, HF MarianSinusoidalPositionalEmbedding): with
//   sentinel = ceil(dim / 2):     PE(p, c) = sin(angle(p, c))              c < sentinel
//                                 PE(p, sentinel + c) = cos(angle(p, c))   c < dim - sentinel
//   (HF builds angle from column j as p / 10000^(2 (j // 2) / dim) and takes the
//   even columns for sin and the odd ones for cos: both halves use frequency c.)
enum class SinusoidalKind : uint8_t {
  kInterleaved = 0,
  kSplit = 1,
};

struct F32SinusoidalParams {
  SinusoidalKind kind = SinusoidalKind::kInterleaved;
  size_t dim = 0;   // values per row (>= 1; odd allowed)
  size_t len = 0;   // rows
  size_t pos0 = 0;  // position of row 0
};

// out: [len, dim], row r at out + r * ldo (ldo >= dim).
typedef void (*F32SinusoidalFn)(const F32SinusoidalParams& params, float* out, size_t ldo);
void f32_sinusoidal__ref(const F32SinusoidalParams& params, float* out, size_t ldo);

// ---------------------------------------------------------------------------
// ALiBi (Press et al., "Train Short, Test Long"). Fills slopes[num_heads] at
// prepare time: for n a power of two, slope_k = 2^(-8k / n), k = 1..n (the
// geometric sequence starting at and multiplied by 2^(-8/n)). Otherwise, with m
// the largest power of two below n: the m slopes for m heads, then the first
// n - m of the odd-indexed slopes for 2m heads, 2^(-4k / m) for k = 1, 3, 5, ...
// (the paper's get_slopes and HF's build_alibi_tensor). Exact math rounded once
// to float (BLOOM's float32 pow differs by an ulp at most).
// The attention kernels add bias = -slope_h * |p - j| for a query at position p
// and a key at position j (kernels/attention_params.h).
void alibi_slopes(size_t num_heads, float* slopes);

// ---------------------------------------------------------------------------
// T5's relative-position bucket (HF T5Attention._relative_position_bucket), for
// relative_position = key_position - query_position:
//   bidirectional: num_buckets is halved; keys after the query (relative_position
//                  > 0) use the upper half; n = |relative_position|
//   causal:        n = max(-relative_position, 0) (keys after the query share
//                  bucket 0 with the query itself; the causal mask hides them)
//   max_exact = num_buckets / 2 (of the halved count when bidirectional)
//   n < max_exact:  bucket n
//   otherwise:      min(max_exact + trunc(log(n / max_exact) / log(max_distance /
//                   max_exact) * (num_buckets - max_exact)), num_buckets - 1)
//                   (log-spaced buckets up to max_distance, the last bucket beyond)
// The large branch is evaluated as PyTorch does: float(n) / float(max_exact) and its
// log in float32, log(max_distance / max_exact) in double then cast to float, the
// division and the product in float32, then truncation. (In real arithmetic the
// quotient is an exact integer at some n, e.g. n = 16 for 32 buckets and distance
// 128; evaluated this way it agrees with PyTorch there. It was compared bucket
// for bucket with torch 1.13 for num_buckets 4..256, max_distance up to 4096 and
// |relative_position| up to 3 max_distance, with no difference.) When
// max_distance <= max_exact, PyTorch's formula gives negative buckets; this
// returns the last bucket for every n >= max_exact.
// Needs num_buckets >= 2 (>= 4 when bidirectional).
// (Internal linkage, like kernels/scalar_math.h: kernel files export nothing else.)
namespace {
inline uint32_t T5RelativeBucket(int64_t relative_position, bool bidirectional,
                                 uint32_t num_buckets, uint32_t max_distance) {
  uint32_t bucket = 0;
  uint64_t n = 0;
  if (bidirectional) {
    num_buckets /= 2;
    if (relative_position > 0) bucket = num_buckets;
    n = relative_position < 0 ? 0 - static_cast<uint64_t>(relative_position)
                              : static_cast<uint64_t>(relative_position);
  } else {
    n = relative_position < 0 ? 0 - static_cast<uint64_t>(relative_position) : 0;
  }
  const uint32_t max_exact = num_buckets / 2;
  if (n < max_exact) return bucket + static_cast<uint32_t>(n);
  // From max_distance on, the quotient is >= num_buckets - max_exact (up to a
  // rounding of it, which truncates to one less): the last bucket either way.
  if (max_exact == 0 || n >= max_distance) return bucket + num_buckets - 1;
  const float ratio = static_cast<float>(static_cast<uint32_t>(n)) /  // n < max_distance
                      static_cast<float>(max_exact);
  const float log_ratio = static_cast<float>(ScalarLog(ratio));
  const float log_range = static_cast<float>(
      ScalarLog(static_cast<double>(max_distance) / static_cast<double>(max_exact)));
  const float scaled = log_ratio / log_range * static_cast<float>(num_buckets - max_exact);
  const uint32_t large = max_exact + static_cast<uint32_t>(scaled);
  return bucket + (large < num_buckets - 1 ? large : num_buckets - 1);
}
}  // namespace

}  // namespace octet
