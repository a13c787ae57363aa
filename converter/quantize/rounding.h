// The converter's techniques for accurate 8-bit linear layers, each
// a pure function of a layer's weights and its calibration inputs, so each can
// be tested on a constructed case and measured on its own:
//
//   - Smoothing (SmoothQuant, Xiao et al. 2023): y = x·Wᵀ = (x / s)·(W diag(s))ᵀ
//     for per-input-channel factors s. Dividing x by s narrows the outlier
//     channels that make a row's int8 scale coarse; the weights take them. The
//     division is folded into whatever writes x (a norm's weight, the previous
//     layer's rows), so the runtime pays nothing.
//   - Clipping: a row's scale below max|w| / 127 saturates its largest weights
//     but rounds the rest finer; chosen per row where it lowers the output
//     error eᵀ H e (H = XᵀX of the calibration inputs).
//   - Compensated rounding (GPTQ, Frantar et al. 2023; OBQ before it): the
//     columns of a row are rounded one at a time (largest H_ii first) and each
//     rounding error is spread over the columns not yet rounded, through the
//     inverse Hessian's Cholesky factor, so that ‖(W - Q) Xᵀ‖ is minimized
//     rather than ‖W - Q‖. Still int8 with one scale per output channel: the
//     kernels and the file format do not change.
//
// The runtime's arithmetic decides every error measured here: activations
// quantized per row (core/quant.h QuantizeRowSymmetric), int8 x int8 -> int32,
// dequantized with the row and channel scales.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "quantize/quantize.h"

namespace octet {
namespace convert {

// Calibration inputs of a product: rows [n, k] (a sample of them, see
// calibrate.h) and each channel's max |x| over every calibration row.
struct ProductInputs {
  size_t k = 0;
  std::vector<float> rows;     // [n, k]
  std::vector<float> abs_max;  // [k]
  size_t n() const { return k == 0 ? 0 : rows.size() / k; }
};

// H = XᵀX [k, k] (row-major, fp32: quantize/linalg.h) over the sample's rows.
std::vector<float> InputHessian(const ProductInputs& x);

// The lower Cholesky factor L of the symmetric positive-definite a [n, n]
// (row-major) in place (a = L Lᵀ; the upper part zeroed); false when a is not
// positive definite. Blocked: the products in fp32 on the converter's threads.
bool CholeskyLower(float* a, size_t n);

// The inverse of the lower-triangular l [n, n] in place.
void InvertLower(float* l, size_t n);

// s_j = max|x_j|^alpha / max|w_j|^(1 - alpha) over the products that read x
// (w_abs_max: each input channel's max |w| over all of them), clamped to
// [1e-5, 1e5]; 1 where a channel is all zero on either side. alpha 0: s = 1/max|w|
// (not 1): callers compare against no smoothing separately.
std::vector<float> SmoothingFactors(const std::vector<float>& x_abs_max,
                                    const std::vector<float>& w_abs_max, double alpha);

// Each input channel's max |w| over the rows of w [rows, cols].
std::vector<float> ColumnAbsMax(const float* w, size_t rows, size_t cols);

// One scale per row: max|row| / 127 (core/quant.h) times a factor in
// [min_clip, 1] chosen from `steps` candidates to minimize the row's eᵀ H e:
// with x (a sample of the inputs, x->k == cols) as ‖X e‖², else with h
// ([cols, cols] row-major), else eᵀ e. Ties keep the larger scale.
std::vector<float> ClipScales(const float* w, size_t rows, size_t cols, const float* h,
                              const ProductInputs* x, double min_clip, int steps);

// The runtime's round to nearest with the given scales (ties to even,
// saturated at ±127).
QuantizedMatrix RoundWithScales(const float* w, size_t rows, size_t cols,
                                const std::vector<float>& scales);

// GPTQ with the given scales: columns in decreasing H_ii order, damping
// `damp` x mean(H_ii) added to the diagonal (channels the calibration never
// excites get H_ii = 1 and no compensation). h: [cols, cols] row-major.
// Falls back to RoundWithScales when the damped H is not positive definite
// (which damping excludes but rounding might not).
QuantizedMatrix CompensatedRounding(const float* w, size_t rows, size_t cols,
                                    const std::vector<float>& scales, const float* h,
                                    double damp = 0.01);

// ‖Qrow(x / s)·(Q diag(...))ᵀ - x·Wᵀ‖² summed over the sample rows, the
// runtime's int8 product against the fp32 one: w [rows, cols] the original
// weights, q the quantized (smoothed) weights, inv_smooth [cols] the factors
// 1/s the input is multiplied by before it is quantized (null: none).
// act_int8 false: the input stays fp32 (the weights' error alone).
double ProductError(const ProductInputs& x, const float* w, size_t rows, const QuantizedMatrix& q,
                    const float* inv_smooth, bool act_int8 = true);

}  // namespace convert
}  // namespace octet
