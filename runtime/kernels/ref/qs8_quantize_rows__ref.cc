#include "kernels/qs8_quantize_rows.h"

#include "core/quant.h"

namespace octet {

void qs8_quantize_rows__ref(size_t rows, size_t cols, const float* x, size_t ldx, int8_t* q,
                            size_t ldq, float* scales) {
  for (size_t r = 0; r < rows; ++r)
    scales[r] = QuantizeRowSymmetric(x + r * ldx, cols, q + r * ldq);
}

}  // namespace octet
