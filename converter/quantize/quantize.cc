#include "quantize/quantize.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/quant.h"
#include "import/error.h"
#include "quantize/linalg.h"

namespace octet {
namespace convert {

const RoleInfo& RoleOf(const std::string& name) {
  RoleTensor role;
  if (!FindRole(name.c_str(), &role)) Fail("internal: ", name, " has no tensor role");
  return GetRole(role.role);
}

bool QuantizedAsInt8(const std::string& name) {
  return RoleOf(name).storage != RoleStorage::kF32;
}

bool WideInputByDefault(const std::string& name) {
  const RoleInfo& role = RoleOf(name);
  return role.role == Role::kConvIn || role.role == Role::kConvOut || role.role == Role::kLinOut;
}

bool PackedForGemm(const std::string& name) {
  return RoleOf(name).storage == RoleStorage::kProduct;
}

double SqnrDb(double signal, double noise) {
  if (signal == 0.0) return 0.0;
  if (noise == 0.0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal / noise);
}

QuantizedMatrix QuantizeRows(const float* w, uint64_t rows, uint64_t cols, bool block32) {
  QuantizedMatrix m;
  m.values.resize(rows * cols);
  m.scales.resize(rows);
  // Per row, then summed in row order: the same sums on any thread count.
  std::vector<double> signal(rows), noise(rows), noise_block(rows);
  constexpr uint64_t kBlock = 32, kRowsPerTask = 64;
  ParallelFor((rows + kRowsPerTask - 1) / kRowsPerTask, [&](size_t t) {
    int8_t block_q[kBlock];
    const uint64_t r1 = std::min<uint64_t>(rows, (t + 1) * kRowsPerTask);
    for (uint64_t r = t * kRowsPerTask; r < r1; ++r) {
      const float* row = w + r * cols;
      int8_t* q = m.values.data() + r * cols;
      const float scale = QuantizeRowSymmetric(row, cols, q);
      m.scales[r] = scale;
      double sig = 0, err = 0;
      for (uint64_t c = 0; c < cols; ++c) {
        const double x = row[c], e = x - static_cast<double>(q[c]) * scale;
        sig += x * x;
        err += e * e;
      }
      signal[r] = sig;
      noise[r] = err;
      if (!block32) continue;
      double err_block = 0;
      for (uint64_t c0 = 0; c0 < cols; c0 += kBlock) {
        const uint64_t n = cols - c0 < kBlock ? cols - c0 : kBlock;
        const float s = QuantizeRowSymmetric(row + c0, n, block_q);
        for (uint64_t c = 0; c < n; ++c) {
          const double e = static_cast<double>(row[c0 + c]) - static_cast<double>(block_q[c]) * s;
          err_block += e * e;
        }
      }
      noise_block[r] = err_block;
    }
  });
  double sig = 0, err = 0, err_block = 0;
  for (uint64_t r = 0; r < rows; ++r) {
    sig += signal[r];
    err += noise[r];
    err_block += noise_block[r];
  }
  m.sqnr_db = SqnrDb(sig, err);
  m.sqnr_block32_db = block32 ? SqnrDb(sig, err_block) : m.sqnr_db;
  return m;
}

}  // namespace convert
}  // namespace octet
