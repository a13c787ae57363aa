// qs8_gemm_4x4c16__neon: baseline Advanced SIMD variant of qs8_gemm (contract in
// kernels/qs8_gemm.h); armv7 NEON and aarch64 alike. The tile walk, edges and K
// tail are kernels/qs8_gemm_driver.h's (Qs8PaddedK), the 4 x 4 tile of 16 k per
// step kernels/neon/qs8_gemm_neon_tile.h's; this file gives its Dot16.
//
// Dot16: two vmull_s8 (8 int8 products each, to int16) folded into the int32x4
// accumulator with vpadalq_s16 (adds adjacent int16 pairs into the int32 lanes).
//
// Exactness: every int16 product is at most 128 * 128 = 2^14 in magnitude, so it
// is exact in int16, and vpadalq_s16 widens before adding. vmlal_s8 (products
// accumulated in int16) is not used: two products of -128 * -128 would already
// overflow int16. The accumulators hold partial sums of at most K * 2^14 <= 2^30.

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/neon/qs8_gemm_neon_tile.h"
#include "kernels/qs8_gemm.h"
#include "kernels/qs8_gemm_driver.h"

namespace octet {
namespace {

struct MullPadal {
  // acc += 16 k of a . b, widening the int16 products pairwise into the int32 lanes.
  OCTET_KERNEL_INLINE static int32x4_t Dot16(int32x4_t acc, int8x16_t a, int8x16_t b) {
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
#if defined(__aarch64__)
    return vpadalq_s16(acc, vmull_high_s8(a, b));  // smull2: no move of the high halves
#else
    return vpadalq_s16(acc, vmull_s8(vget_high_s8(a), vget_high_s8(b)));
#endif
  }
};

}  // namespace

void qs8_gemm_4x4c16__neon(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                           const int8_t* B, size_t ldb, int32_t* C, size_t ldc) {
  Qs8GemmTiles<Qs8PaddedK<NeonSteps4x4c16<MullPadal>>>(M, N, K, A, lda, B, ldb, C, ldc);
}

}  // namespace octet
