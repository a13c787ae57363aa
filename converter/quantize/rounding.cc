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
  std::vector<float> scales(rows);
  std::vector<double> e(cols), he(cols);
  for (size_t r = 0; r < rows; ++r) {
    const float* row = w + r * cols;
    float max_abs = 0;
    for (size_t c = 0; c < cols; ++c) max_abs = std::max(max_abs, std::fabs(row[c]));
    const float full = max_abs > 0 ? max_abs / 127.0f : 1.0f;
    scales[r] = full;
    if (!(max_abs > 0) || steps < 2) continue;
    double best = -1;
    for (int i = 0; i < steps; ++i) {  // from 1 down to min_clip: ties keep the larger
      const double f = 1.0 - (1.0 - min_clip) * i / (steps - 1);
      const float s = static_cast<float>(full * f);
      for (size_t c = 0; c < cols; ++c) {
        e[c] = static_cast<double>(row[c]) - static_cast<double>(RoundToInt8(row[c], s)) * s;
      }
      double err = 0;
      if (h == nullptr) {
        for (size_t c = 0; c < cols; ++c) err += e[c] * e[c];
      } else {
        for (size_t a = 0; a < cols; ++a) {
          if (e[a] == 0) continue;
          const double* ha = h + a * cols;
          double dot = 0;
          for (size_t b = 0; b < cols; ++b) dot += ha[b] * e[b];
          err += e[a] * dot;
        }
      }
      if (best < 0 || err < best) {
        best = err;
        scales[r] = s;
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
  const size_t n = x.n(), k = x.k;
  std::vector<float> in(k);
  std::vector<int8_t> qin(k);
  double total = 0;
  for (size_t i = 0; i < n; ++i) {
    const float* xi = x.rows.data() + i * k;
    for (size_t c = 0; c < k; ++c) in[c] = inv_smooth != nullptr ? xi[c] * inv_smooth[c] : xi[c];
    float xs = 1.0f;
    if (act_int8) xs = QuantizeRowSymmetric(in.data(), k, qin.data());
    for (size_t r = 0; r < rows; ++r) {
      const float* wr = w + r * k;
      const int8_t* qr = q.values.data() + r * k;
      double want = 0, got = 0;
      if (act_int8) {
        int64_t acc = 0;
        for (size_t c = 0; c < k; ++c) acc += static_cast<int32_t>(qin[c]) * qr[c];
        got = static_cast<double>(acc) * xs * q.scales[r];
      } else {
        for (size_t c = 0; c < k; ++c) got += static_cast<double>(in[c]) * qr[c];
        got *= q.scales[r];
      }
      for (size_t c = 0; c < k; ++c) want += static_cast<double>(xi[c]) * wr[c];
      total += (got - want) * (got - want);
    }
  }
  return total;
}

}  // namespace convert
}  // namespace octet
