// qs8_dequantize_rows__avx2: AVX2 variant of qs8_dequantize_rows (contract in
// kernels/qs8_dequantize_rows.h). 8 columns per step: vcvtdq2ps (rounds in the
// MXCSR mode, like the scalar conversion), vmulps row_scale * col_scales, vmulps,
// then vaddps of the bias; the last cols % 8 with vmaskmov loads and stores,
// which neither read nor write the masked-off lanes.
//
// Exactness: each operation rounds once, in the reference's order. The file is
// compiled with -ffp-contract=off (runtime/kernels/CMakeLists.txt): GCC's
// intrinsics are plain vector arithmetic, and with -mfma it would otherwise fuse
// the product and the bias sum into one vfmadd.

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel_inline.h"
#include "kernels/qs8_dequantize_rows.h"

namespace octet {
namespace {

// Loads for 8 columns at p: all of them, or with kMasked the lanes of `mask`.
template <bool kMasked>
OCTET_KERNEL_INLINE __m256 LoadPs(const float* p, __m256i mask) {
  return kMasked ? _mm256_maskload_ps(p, mask) : _mm256_loadu_ps(p);
}

template <bool kMasked>
OCTET_KERNEL_INLINE __m256 LoadAcc(const int32_t* p, __m256i mask) {
  return _mm256_cvtepi32_ps(kMasked ? _mm256_maskload_epi32(p, mask)
                                    : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// out[0..8) (with kMasked the lanes of `mask`) of one row, from column c.
template <bool kMasked>
OCTET_KERNEL_INLINE void Dequantize8(const int32_t* acc, __m256 row_scale, const float* col_scales,
                                     const float* bias, float* out, __m256i mask) {
  const __m256 scale = _mm256_mul_ps(row_scale, LoadPs<kMasked>(col_scales, mask));
  __m256 y = _mm256_mul_ps(LoadAcc<kMasked>(acc, mask), scale);
  if (bias != nullptr) y = _mm256_add_ps(y, LoadPs<kMasked>(bias, mask));
  if (kMasked) {
    _mm256_maskstore_ps(out, mask, y);
  } else {
    _mm256_storeu_ps(out, y);
  }
}

}  // namespace

void qs8_dequantize_rows__avx2(size_t rows, size_t cols, const int32_t* acc, size_t lda,
                               const float* row_scales, const float* col_scales, const float* bias,
                               float* out, size_t ldo) {
  const size_t rem = cols % 8;
  // Lanes < rem set: vmaskmov's mask is each lane's top bit.
  const __m256i tail_mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(rem)),
                                               _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  for (size_t r = 0; r < rows; ++r) {
    const int32_t* a = acc + r * lda;  // [cols]
    float* o = out + r * ldo;          // [cols]
    const __m256 row_scale = _mm256_set1_ps(row_scales[r]);
    size_t c = 0;
    for (; c + 8 <= cols; c += 8) {
      Dequantize8<false>(a + c, row_scale, col_scales + c, bias != nullptr ? bias + c : nullptr,
                         o + c, tail_mask);
    }
    if (rem != 0) {
      Dequantize8<true>(a + c, row_scale, col_scales + c, bias != nullptr ? bias + c : nullptr,
                        o + c, tail_mask);
    }
  }
}

}  // namespace octet
