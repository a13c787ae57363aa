#include "quantize/rounding.h"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/quant.h"

namespace octet {
namespace convert {
namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

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

}  // namespace

std::vector<double> InputHessian(const ProductInputs& x) {
  const size_t n = x.n(), k = x.k;
  Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> xs(
      x.rows.data(), static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(k));
  std::vector<double> h(k * k);
  Eigen::Map<RowMatrix> hm(h.data(), static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(k));
  const RowMatrix xd = xs.cast<double>();
  hm.noalias() = xd.transpose() * xd;
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

std::vector<float> ClipScales(const float* w, size_t rows, size_t cols, const double* h,
                              double min_clip, int steps) {
  const auto n = static_cast<Eigen::Index>(rows), k = static_cast<Eigen::Index>(cols);
  std::vector<float> full(rows), scales(rows);
  for (size_t r = 0; r < rows; ++r) {
    float max_abs = 0;
    for (size_t c = 0; c < cols; ++c) max_abs = std::max(max_abs, std::fabs(w[r * cols + c]));
    full[r] = max_abs > 0 ? max_abs / 127.0f : 1.0f;
    scales[r] = full[r];
  }
  if (steps < 2) return scales;
  std::vector<double> best(rows, -1.0);
  RowMatrix e(n, k), eh;
  Eigen::Map<const RowMatrix> hm(h, h != nullptr ? k : 0, h != nullptr ? k : 0);
  for (int i = 0; i < steps; ++i) {  // from 1 down to min_clip: ties keep the larger
    const double f = 1.0 - (1.0 - min_clip) * i / (steps - 1);
    std::vector<float> s(rows);
    for (size_t r = 0; r < rows; ++r) {
      s[r] = static_cast<float>(full[r] * f);
      for (size_t c = 0; c < cols; ++c) {
        const float v = w[r * cols + c];
        e(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) =
            static_cast<double>(v) - static_cast<double>(RoundToInt8(v, s[r])) * s[r];
      }
    }
    Eigen::VectorXd err;
    if (h == nullptr) {
      err = e.cwiseProduct(e).rowwise().sum();
    } else {
      eh.noalias() = e * hm;
      err = eh.cwiseProduct(e).rowwise().sum();
    }
    for (size_t r = 0; r < rows; ++r) {
      const double v = err(static_cast<Eigen::Index>(r));
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
                                    const std::vector<float>& scales, const double* h,
                                    double damp) {
  const auto k = static_cast<Eigen::Index>(cols);
  // Columns in decreasing H_ii: the most excited channels are rounded first,
  // while the most columns remain to absorb their error.
  std::vector<size_t> order(cols);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return h[a * cols + a] > h[b * cols + b]; });
  RowMatrix hp(k, k);
  double mean_diag = 0;
  for (size_t i = 0; i < cols; ++i) mean_diag += h[i * cols + i];
  mean_diag = cols > 0 ? mean_diag / static_cast<double>(cols) : 0;
  if (!(mean_diag > 0)) return RoundWithScales(w, rows, cols, scales);
  for (size_t a = 0; a < cols; ++a) {
    for (size_t b = 0; b < cols; ++b) hp(a, b) = h[order[a] * cols + order[b]];
  }
  for (size_t a = 0; a < cols; ++a) {
    if (hp(a, a) == 0) {  // never excited: independent of the others
      hp.row(a).setZero();
      hp.col(a).setZero();
      hp(a, a) = 1;
    }
    hp(a, a) += damp * mean_diag;
  }
  // U: the upper Cholesky factor of H⁻¹; row i past the diagonal says how the
  // error of column i moves to the columns after it.
  Eigen::LLT<RowMatrix> llt(hp);
  if (llt.info() != Eigen::Success) return RoundWithScales(w, rows, cols, scales);
  const RowMatrix hinv = llt.solve(RowMatrix::Identity(k, k));
  Eigen::LLT<RowMatrix> inv_llt(hinv);
  if (inv_llt.info() != Eigen::Success) return RoundWithScales(w, rows, cols, scales);
  const RowMatrix u = inv_llt.matrixU();

  QuantizedMatrix m;
  m.values.resize(rows * cols);
  m.scales = scales;
  std::vector<double> work(cols);
  for (size_t r = 0; r < rows; ++r) {
    const float s = scales[r];
    for (size_t a = 0; a < cols; ++a) work[a] = w[r * cols + order[a]];
    for (size_t a = 0; a < cols; ++a) {
      const int8_t q = RoundToInt8(static_cast<float>(work[a]), s);
      m.values[r * cols + order[a]] = q;
      const double err = (work[a] - static_cast<double>(q) * s) / u(a, a);
      const double* ua = u.data() + a * cols;
      for (size_t b = a + 1; b < cols; ++b) work[b] -= err * ua[b];
    }
  }
  FillErrors(w, rows, cols, &m);
  return m;
}

double ProductError(const ProductInputs& x, const float* w, size_t rows, const QuantizedMatrix& q,
                    const float* inv_smooth, bool act_int8) {
  // In double GEMMs: the int8 x int8 sums are exact in double (|sum| < 2^53),
  // as the runtime's int32 ones are; the scales then apply in double, as
  // close to the runtime's float dequantization as this measure needs.
  const size_t n = x.n(), k = x.k;
  const auto ni = static_cast<Eigen::Index>(n), ki = static_cast<Eigen::Index>(k),
             ri = static_cast<Eigen::Index>(rows);
  RowMatrix xin(ni, ki), xq(ni, ki);
  Eigen::VectorXd row_scale(ni);
  std::vector<float> in(k);
  std::vector<int8_t> qin(k);
  for (size_t i = 0; i < n; ++i) {
    const float* xi = x.rows.data() + i * k;
    for (size_t c = 0; c < k; ++c) {
      in[c] = inv_smooth != nullptr ? xi[c] * inv_smooth[c] : xi[c];
      xin(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(c)) = xi[c];
    }
    float xs = 1.0f;
    if (act_int8) {
      xs = QuantizeRowSymmetric(in.data(), k, qin.data());
      for (size_t c = 0; c < k; ++c) xq(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(c)) = qin[c];
    } else {
      for (size_t c = 0; c < k; ++c) xq(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(c)) = in[c];
    }
    row_scale(static_cast<Eigen::Index>(i)) = xs;
  }
  RowMatrix wd(ri, ki), wq(ri, ki);
  Eigen::VectorXd col_scale(ri);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < k; ++c) {
      wd(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = w[r * k + c];
      wq(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = q.values[r * k + c];
    }
    col_scale(static_cast<Eigen::Index>(r)) = q.scales[r];
  }
  RowMatrix got = xq * wq.transpose();
  got = row_scale.asDiagonal() * got * col_scale.asDiagonal();
  got.noalias() -= xin * wd.transpose();
  return got.squaredNorm();
}

}  // namespace convert
}  // namespace octet
