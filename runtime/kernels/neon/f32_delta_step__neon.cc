// f32_delta_step__neon: DeltaStep of kernels/f32_delta_rule_vector.h on VecNeon
// (kernels/neon/f32_vector_neon.h).
#include "kernels/f32_delta_rule.h"
#include "kernels/f32_delta_rule_vector.h"
#include "kernels/neon/f32_vector_neon.h"

namespace octet {

void f32_delta_step__neon(size_t dk, size_t dv, const float* q, const float* k, const float* v,
                          float beta, float g, float* S, float* o) {
  DeltaStep<VecNeon>(dk, dv, q, k, v, beta, g, S, o);
}

}  // namespace octet
