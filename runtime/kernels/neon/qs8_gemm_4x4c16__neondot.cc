// qs8_gemm_4x4c16__neondot: Advanced SIMD + dot product (armv8.2 dotprod) variant
// of qs8_gemm (contract in kernels/qs8_gemm.h); aarch64 and AArch32. The tile
// walk, edges and K tail are kernels/qs8_gemm_driver.h's (Qs8PaddedK), the 4 x 4
// tile of 16 k per step kernels/neon/qs8_gemm_neon_tile.h's; this file gives its
// Dot16.
//
// Dot16: one vdotq_s32 (sdot): each int32 lane adds the products of 4
// consecutive k.
//
// Exactness: sdot multiplies int8 by int8 and adds the 4 products (at most
// 4 * 2^14 in magnitude) to the int32 lane without saturating; the accumulators
// hold partial sums of at most K * 2^14 <= 2^30.

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/neon/qs8_gemm_neon_tile.h"
#include "kernels/qs8_gemm.h"
#include "kernels/qs8_gemm_driver.h"

namespace octet {
namespace {

struct Sdot {
  // acc += 16 k of a . b, 4 consecutive products per int32 lane.
  OCTET_KERNEL_INLINE static int32x4_t Dot16(int32x4_t acc, int8x16_t a, int8x16_t b) {
    return vdotq_s32(acc, a, b);
  }
};

}  // namespace

void qs8_gemm_4x4c16__neondot(size_t M, size_t N, size_t K, const int8_t* A, size_t lda,
                              const int8_t* B, size_t ldb, int32_t* C, size_t ldc) {
  Qs8GemmTiles<Qs8PaddedK<NeonSteps4x4c16<Sdot>>>(M, N, K, A, lda, B, ldb, C, ldc);
}

}  // namespace octet
