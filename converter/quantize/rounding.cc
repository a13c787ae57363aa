#include "quantize/rounding.h"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/quant.h"
#include "quantize/linalg.h"

namespace octet {
namespace convert {
namespace {


int8_t RoundToInt8(float v, float scale) {
  float t = v / scale;
  t = t > 127.0f ? 127.0f : (t < -127.0f ? -127.0f : t);
  return static_cast<int8_t>(RoundHalfEven(t));
}

void FillErrors(const float* w, size_t rows, size_t cols, QuantizedMatrix* m) {
  double signal = 0, noise = 0;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) {
      const double x = w[r * cols + c];
      const double e = x - static_cast<double>(m->values[r * cols + c]) * m->scales[r];
      signal += x * x;
      noise += e * e;
    }
  }
  m->sqnr_db = SqnrDb(signal, noise);
  m->sqnr_block32_db = m->sqnr_db;  // not measured for these
}


// work[i, b] -= err[i] * u[b] for b in [from, cols), rows i < n of a tile
// (row stride cols): GPTQ's update, the whole of its time. Compiled for the
// widest vectors the CPU has (GCC's function multiversioning) where it can.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void SpreadError(float* work, size_t cols, size_t n, const float* err, const float* u,
                 size_t from) {
  for (size_t i = 0; i < n; ++i) {
    float* wi = work + i * cols;
    const float e = err[i];
    for (size_t b = from; b < cols; ++b) wi[b] -= e * u[b];
  }
}

using RowMatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Copies the block [r0, r0 + rows) x [c0, c0 + cols) of a [*, n] into a dense [rows, cols].
std::vector<float> Block(const float* a, size_t n, size_t r0, size_t c0, size_t rows, size_t cols,
                         bool transpose = false) {
  std::vector<float> out(rows * cols);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) {
      const float v = a[(r0 + r) * n + c0 + c];
      if (transpose) {
        out[c * rows + r] = v;
      } else {
        out[r * cols + c] = v;
      }
    }
  }
  return out;
}

// Inverts the lower-triangular block [o, o + size)² of l [*, ld] in place:
// [L11 0; L21 L22]⁻¹ = [X11 0; -X22 L21 X11  X22], by halves, the products in
// fp32 (linalg.h), blocks of up to 128 in double.
void InvertLowerBlock(float* l, size_t ld, size_t o, size_t size) {
  constexpr size_t kSmall = 128;
  if (size <= kSmall) {
    RowMatrixD d(size, size);
    for (size_t r = 0; r < size; ++r) {
      for (size_t c = 0; c < size; ++c) d(r, c) = c <= r ? l[(o + r) * ld + o + c] : 0.0;
    }
    const auto n = static_cast<Eigen::Index>(size);
    const RowMatrixD inv = d.triangularView<Eigen::Lower>().solve(RowMatrixD::Identity(n, n));
    for (size_t r = 0; r < size; ++r) {
      for (size_t c = 0; c < size; ++c) {
        l[(o + r) * ld + o + c] = c <= r ? static_cast<float>(inv(r, c)) : 0.0f;
      }
    }
    return;
  }
  const size_t h = size / 2, m = size - h;
  InvertLowerBlock(l, ld, o, h);
  InvertLowerBlock(l, ld, o + h, m);
  const std::vector<float> l21 = Block(l, ld, o + h, o, m, h);     // [m, h]
  const std::vector<float> x11t = Block(l, ld, o, o, h, h, true);  // X11ᵀ
  std::vector<float> t(m * h);
  MatMulNT(m, h, h, l21.data(), x11t.data(), t.data());  // L21 X11
  std::vector<float> tt(h * m);
  for (size_t r = 0; r < m; ++r) {
    for (size_t c = 0; c < h; ++c) tt[c * m + r] = t[r * h + c];
  }
  const std::vector<float> x22 = Block(l, ld, o + h, o + h, m, m);
  MatMulNT(m, h, m, x22.data(), tt.data(), t.data());  // X22 (L21 X11)
  for (size_t r = 0; r < m; ++r) {
    for (size_t c = 0; c < h; ++c) l[(o + h + r) * ld + o + c] = -t[r * h + c];
  }
}

}  // namespace

bool CholeskyLower(float* a, size_t n) {
  // Blocked, right-looking: each diagonal block factored in double, its panel
  // solved against it, the trailing lower triangle updated by fp32 products
  // (linalg.h) a strip of rows at a time.
  constexpr size_t kBlock = 128, kStrip = 512;
  for (size_t j = 0; j < n; j += kBlock) {
    const size_t b = std::min(kBlock, n - j), m = n - j - b;
    RowMatrixD d(b, b);
    for (size_t r = 0; r < b; ++r) {
      for (size_t c = 0; c < b; ++c) d(r, c) = a[(j + r) * n + j + c];
    }
    Eigen::LLT<RowMatrixD> llt(d);
    if (llt.info() != Eigen::Success) return false;
    const RowMatrixD l11 = llt.matrixL();
    for (size_t r = 0; r < b; ++r) {
      for (size_t c = 0; c < b; ++c) a[(j + r) * n + j + c] = c <= r ? static_cast<float>(l11(r, c)) : 0.0f;
    }
    if (m == 0) break;
    // L21 = A21 L11⁻ᵀ
    RowMatrixD a21(m, b);
    for (size_t r = 0; r < m; ++r) {
      for (size_t c = 0; c < b; ++c) a21(r, c) = a[(j + b + r) * n + j + c];
    }
    const RowMatrixD l21 = l11.triangularView<Eigen::Lower>().solve(a21.transpose()).transpose();
    std::vector<float> panel(m * b);
    for (size_t r = 0; r < m; ++r) {
      for (size_t c = 0; c < b; ++c) {
        panel[r * b + c] = static_cast<float>(l21(r, c));
        a[(j + b + r) * n + j + c] = panel[r * b + c];
      }
    }
    // A22 -= L21 L21ᵀ, rows [s, s + rows) against columns [0, s + rows): the lower triangle.
    std::vector<float> prod;
    for (size_t s = 0; s < m; s += kStrip) {
      const size_t rows = std::min(kStrip, m - s), width = s + rows;
      prod.resize(rows * width);
      MatMulNT(rows, width, b, panel.data() + s * b, panel.data(), prod.data());
      for (size_t r = 0; r < rows; ++r) {
        float* out = a + (j + b + s + r) * n + j + b;
        for (size_t c = 0; c <= s + r; ++c) out[c] -= prod[r * width + c];
      }
    }
  }
  for (size_t r = 0; r < n; ++r) {
    for (size_t c = r + 1; c < n; ++c) a[r * n + c] = 0.0f;
  }
  return true;
}

void InvertLower(float* l, size_t n) { InvertLowerBlock(l, n, 0, n); }

std::vector<float> InputHessian(const ProductInputs& x) {
  const size_t n = x.n(), k = x.k;
  std::vector<float> xt(k * n);  // Xᵀ [k, n]: H = Xᵀ (Xᵀ)ᵀ
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < k; ++j) xt[j * n + i] = x.rows[i * k + j];
  }
  std::vector<float> h(k * k);
  MatMulNT(k, k, n, xt.data(), xt.data(), h.data());
  return h;
}

std::vector<float> ColumnAbsMax(const float* w, size_t rows, size_t cols) {
  std::vector<float> m(cols, 0.0f);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) m[c] = std::max(m[c], std::fabs(w[r * cols + c]));
  }
  return m;
}

std::vector<float> SmoothingFactors(const std::vector<float>& x_abs_max,
                                    const std::vector<float>& w_abs_max, double alpha) {
  std::vector<float> s(x_abs_max.size(), 1.0f);
  for (size_t j = 0; j < s.size(); ++j) {
    const double ax = x_abs_max[j], aw = w_abs_max[j];
    if (!(ax > 0) || !(aw > 0)) continue;
    const double v = std::pow(ax, alpha) / std::pow(aw, 1.0 - alpha);
    s[j] = static_cast<float>(std::min(1e5, std::max(1e-5, v)));
  }
  return s;
}

std::vector<float> ClipScales(const float* w, size_t rows, size_t cols, const float* h,
                              const ProductInputs* x, double min_clip, int steps) {
  std::vector<float> full(rows), scales(rows);
  for (size_t r = 0; r < rows; ++r) {
    float max_abs = 0;
    for (size_t c = 0; c < cols; ++c) max_abs = std::max(max_abs, std::fabs(w[r * cols + c]));
    full[r] = max_abs > 0 ? max_abs / 127.0f : 1.0f;
    scales[r] = full[r];
  }
  if (steps < 2) return scales;
  // eᵀ H e per row as ‖X e‖² (the sample's n rows) or e·(H e), whichever is
  // the smaller product; eᵀ e without either.
  const bool on_sample = x != nullptr && x->k == cols && x->n() > 0;
  const size_t width = on_sample ? x->n() : h != nullptr ? cols : 0;
  std::vector<double> best(rows, -1.0);
  std::vector<float> e(rows * cols), prod(rows * width);
  std::vector<float> s(rows);
  for (int i = 0; i < steps; ++i) {  // from 1 down to min_clip: ties keep the larger
    const double f = 1.0 - (1.0 - min_clip) * i / (steps - 1);
    for (size_t r = 0; r < rows; ++r) {
      s[r] = static_cast<float>(full[r] * f);
      for (size_t c = 0; c < cols; ++c) {
        const float v = w[r * cols + c];
        e[r * cols + c] = v - static_cast<float>(RoundToInt8(v, s[r])) * s[r];
      }
    }
    if (on_sample) {
      MatMulNT(rows, width, cols, e.data(), x->rows.data(), prod.data());
    } else if (h != nullptr) {
      MatMulNT(rows, width, cols, e.data(), h, prod.data());  // H symmetric: e Hᵀ = e H
    }
    for (size_t r = 0; r < rows; ++r) {
      double v = 0;
      if (on_sample) {
        for (size_t j = 0; j < width; ++j) v += static_cast<double>(prod[r * width + j]) * prod[r * width + j];
      } else if (h != nullptr) {
        for (size_t j = 0; j < width; ++j) v += static_cast<double>(prod[r * width + j]) * e[r * cols + j];
      } else {
        for (size_t j = 0; j < cols; ++j) v += static_cast<double>(e[r * cols + j]) * e[r * cols + j];
      }
      if (best[r] < 0 || v < best[r]) {
        best[r] = v;
        scales[r] = s[r];
      }
    }
  }
  return scales;
}

QuantizedMatrix RoundWithScales(const float* w, size_t rows, size_t cols,
                                const std::vector<float>& scales) {
  QuantizedMatrix m;
  m.values.resize(rows * cols);
  m.scales = scales;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) {
      m.values[r * cols + c] = RoundToInt8(w[r * cols + c], scales[r]);
    }
  }
  FillErrors(w, rows, cols, &m);
  return m;
}

QuantizedMatrix CompensatedRounding(const float* w, size_t rows, size_t cols,
                                    const std::vector<float>& scales, const float* h,
                                    double damp) {
  // Columns in decreasing H_ii: the most excited channels are rounded first,
  // while the most columns remain to absorb their error.
  std::vector<size_t> order(cols);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return h[a * cols + a] > h[b * cols + b]; });
  double mean_diag = 0;
  for (size_t i = 0; i < cols; ++i) mean_diag += h[i * cols + i];
  mean_diag = cols > 0 ? mean_diag / static_cast<double>(cols) : 0;
  if (!(mean_diag > 0)) return RoundWithScales(w, rows, cols, scales);
  // U, the upper Cholesky factor of H⁻¹ (H⁻¹ = Uᵀ U) in that order, as
  // P L⁻¹ P with L the lower factor of P H P (P reverses the order): one
  // factorization and one triangular inverse. Row a of U past the diagonal
  // says how the error of column a moves to the columns after it.
  std::vector<float> u(cols * cols);
  for (size_t a = 0; a < cols; ++a) {
    const size_t ra = cols - 1 - a;  // reversed
    for (size_t b = 0; b < cols; ++b) u[ra * cols + (cols - 1 - b)] = h[order[a] * cols + order[b]];
  }
  for (size_t a = 0; a < cols; ++a) {
    float* row = u.data() + a * cols;
    if (row[a] == 0) {  // never excited: independent of the others
      for (size_t b = 0; b < cols; ++b) {
        row[b] = 0;
        u[b * cols + a] = 0;
      }
      row[a] = 1;
    }
    row[a] += static_cast<float>(damp * mean_diag);
  }
  if (!CholeskyLower(u.data(), cols)) return RoundWithScales(w, rows, cols, scales);
  InvertLower(u.data(), cols);
  std::vector<float> upper(cols * cols);  // P L⁻¹ P
  for (size_t a = 0; a < cols; ++a) {
    for (size_t b = 0; b < cols; ++b) {
      upper[a * cols + b] = u[(cols - 1 - a) * cols + (cols - 1 - b)];
    }
  }
  u.clear();
  u.shrink_to_fit();

  QuantizedMatrix m;
  m.values.resize(rows * cols);
  m.scales = scales;
  // Rows are independent given U: tiles of rows on the converter's threads.
  constexpr size_t kTile = 8;
  ParallelFor((rows + kTile - 1) / kTile, [&](size_t t) {
    const size_t r0 = t * kTile, n = std::min(kTile, rows - r0);
    std::vector<float> work(kTile * cols);
    for (size_t i = 0; i < n; ++i) {
      for (size_t a = 0; a < cols; ++a) work[i * cols + a] = w[(r0 + i) * cols + order[a]];
    }
    float err[kTile];
    for (size_t a = 0; a < cols; ++a) {
      const float* ua = upper.data() + a * cols;
      for (size_t i = 0; i < n; ++i) {
        const float s = scales[r0 + i];
        const int8_t q = RoundToInt8(work[i * cols + a], s);
        m.values[(r0 + i) * cols + order[a]] = q;
        err[i] = (work[i * cols + a] - static_cast<float>(q) * s) / ua[a];
      }
      SpreadError(work.data(), cols, n, err, ua, a + 1);
    }
  });
  FillErrors(w, rows, cols, &m);
  return m;
}

double ProductError(const ProductInputs& x, const float* w, size_t rows, const QuantizedMatrix& q,
                    const float* inv_smooth, bool act_int8) {
  // Both products in fp32 (linalg.h); the int8 one as the runtime computes
  // it: the quantized input times the int8 weights, then both scales. The
  // matrix's rows go a block at a time (an LM head's outputs are wide).
  const size_t n = x.n(), k = x.k;
  if (n == 0 || rows == 0) return 0;
  std::vector<float> xq(n * k), row_scale(n, 1.0f);
  std::vector<float> in(k);
  std::vector<int8_t> qin(k);
  for (size_t i = 0; i < n; ++i) {
    const float* xi = x.rows.data() + i * k;
    for (size_t c = 0; c < k; ++c) in[c] = inv_smooth != nullptr ? xi[c] * inv_smooth[c] : xi[c];
    if (act_int8) {
      row_scale[i] = QuantizeRowSymmetric(in.data(), k, qin.data());
      for (size_t c = 0; c < k; ++c) xq[i * k + c] = qin[c];
    } else {
      std::copy(in.begin(), in.end(), xq.begin() + static_cast<std::ptrdiff_t>(i * k));
    }
  }
  constexpr size_t kRowBlock = 4096;
  const size_t block = std::min(rows, kRowBlock);
  std::vector<float> wq(block * k), got(n * block), want(n * block);
  double sum = 0;
  for (size_t r0 = 0; r0 < rows; r0 += block) {
    const size_t m = std::min(block, rows - r0);
    for (size_t i = 0; i < m * k; ++i) wq[i] = q.values[r0 * k + i];
    MatMulNT(n, m, k, xq.data(), wq.data(), got.data());
    MatMulNT(n, m, k, x.rows.data(), w + r0 * k, want.data());
    for (size_t i = 0; i < n; ++i) {
      for (size_t r = 0; r < m; ++r) {
        const double d = static_cast<double>(got[i * m + r]) * row_scale[i] * q.scales[r0 + r] -
                         want[i * m + r];
        sum += d * d;
      }
    }
  }
  return sum;
}

}  // namespace convert
}  // namespace octet
