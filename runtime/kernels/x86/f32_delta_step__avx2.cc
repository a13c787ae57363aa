// f32_delta_step__avx2: DeltaStep of kernels/f32_delta_rule_vector.h on VecAvx2
// (kernels/x86/f32_vector_avx2.h).
#include "kernels/f32_delta_rule.h"
#include "kernels/f32_delta_rule_vector.h"
#include "kernels/x86/f32_vector_avx2.h"

namespace octet {

void f32_delta_step__avx2(size_t dk, size_t dv, const float* q, const float* k, const float* v,
                          float beta, float g, float* S, float* o) {
  DeltaStep<VecAvx2>(dk, dv, q, k, v, beta, g, S, o);
}

}  // namespace octet
