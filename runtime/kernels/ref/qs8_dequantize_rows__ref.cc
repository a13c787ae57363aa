#include "kernels/qs8_dequantize_rows.h"

#include "core/quant.h"

namespace octet {

// Compiled with -ffp-contract=off: the bias sum is not fused with the product.
void qs8_dequantize_rows__ref(size_t rows, size_t cols, const int32_t* acc, size_t lda,
                              const float* row_scales, const float* col_scales, const float* bias,
                              float* out, size_t ldo) {
  for (size_t r = 0; r < rows; ++r) {
    const int32_t* a = acc + r * lda;  // [cols]
    float* o = out + r * ldo;          // [cols]
    for (size_t c = 0; c < cols; ++c) {
      const float y = DequantizeAcc(a[c], row_scales[r], col_scales[c]);
      o[c] = bias != nullptr ? y + bias[c] : y;
    }
  }
}

}  // namespace octet
