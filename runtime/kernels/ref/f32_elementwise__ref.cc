// Compiler builtins instead of <math.h>: kernel files include only compiler
// headers (they compile for Android triples freestanding); the calls resolve to libm.
#include "kernels/f32_elementwise.h"

namespace octet {
namespace {

float Activate(F32Activation act, float x) {
  switch (act) {
    case F32Activation::kGeluErf:
      return 0.5f * x * (1.0f + __builtin_erff(x * 0.70710678118654752f));
    case F32Activation::kGeluTanh: {
      const float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);  // sqrt(2/pi)
      return 0.5f * x * (1.0f + __builtin_tanhf(inner));
    }
    case F32Activation::kRelu:
      return x > 0.0f ? x : 0.0f;
    case F32Activation::kSilu:
      return x / (1.0f + __builtin_expf(-x));
  }
  return x;
}

}  // namespace

void f32_layernorm__ref(size_t rows, size_t n, const float* x, size_t x_stride,
                        const float* weight, const float* bias, float eps, float* y,
                        size_t y_stride) {
  for (size_t r = 0; r < rows; ++r) {
    const float* in = x + r * x_stride;  // [n]
    float* out = y + r * y_stride;       // [n]
    double mean = 0.0;
    for (size_t i = 0; i < n; ++i) mean += in[i];
    mean /= static_cast<double>(n);
    double var = 0.0;
    for (size_t i = 0; i < n; ++i) var += (in[i] - mean) * (in[i] - mean);
    var /= static_cast<double>(n);
    const float inv = static_cast<float>(1.0 / __builtin_sqrt(var + eps));
    const float m = static_cast<float>(mean);
    for (size_t i = 0; i < n; ++i) {
      const float normed = (in[i] - m) * inv;
      out[i] = normed * weight[i] + (bias != nullptr ? bias[i] : 0.0f);
    }
  }
}

void f32_rmsnorm__ref(size_t rows, size_t n, const float* x, size_t x_stride, const float* weight,
                      float eps, float* y, size_t y_stride) {
  for (size_t r = 0; r < rows; ++r) {
    const float* in = x + r * x_stride;  // [n]
    float* out = y + r * y_stride;       // [n]
    double sum_sq = 0.0;
    for (size_t i = 0; i < n; ++i) sum_sq += static_cast<double>(in[i]) * in[i];
    const float inv = static_cast<float>(1.0 / __builtin_sqrt(sum_sq / static_cast<double>(n) + eps));
    for (size_t i = 0; i < n; ++i) out[i] = weight[i] * (in[i] * inv);
  }
}

void f32_activation__ref(F32Activation act, size_t n, float* x) {
  for (size_t i = 0; i < n; ++i) x[i] = Activate(act, x[i]);
}

void f32_gated_activation__ref(F32Activation act, size_t rows, size_t n, float* x,
                               size_t x_stride, const float* up, size_t up_stride) {
  for (size_t r = 0; r < rows; ++r) {
    float* g = x + r * x_stride;         // [n]
    const float* u = up + r * up_stride;  // [n]
    for (size_t i = 0; i < n; ++i) g[i] = Activate(act, g[i]) * u[i];
  }
}

void f32_add_bias__ref(size_t rows, size_t n, float* x, size_t x_stride, const float* bias) {
  for (size_t r = 0; r < rows; ++r) {
    float* row = x + r * x_stride;  // [n]
    for (size_t i = 0; i < n; ++i) row[i] += bias[i];
  }
}

void f32_add__ref(size_t n, float* y, const float* x) {
  for (size_t i = 0; i < n; ++i) y[i] += x[i];
}

}  // namespace octet
