#include "quantize/quantize.h"

#include <cmath>
#include <limits>

#include "core/quant.h"
#include "import/error.h"

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

bool PackedForGemm(const std::string& name) {
  return RoleOf(name).storage == RoleStorage::kProduct;
}

double SqnrDb(double signal, double noise) {
  if (signal == 0.0) return 0.0;
  if (noise == 0.0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal / noise);
}

QuantizedMatrix QuantizeRows(const float* w, uint64_t rows, uint64_t cols) {
  QuantizedMatrix m;
  m.values.resize(rows * cols);
  m.scales.resize(rows);
  double signal = 0, noise = 0, noise_block = 0;
  constexpr uint64_t kBlock = 32;
  std::vector<int8_t> block_q(kBlock);
  for (uint64_t r = 0; r < rows; ++r) {
    const float* row = w + r * cols;
    int8_t* q = m.values.data() + r * cols;
    const float scale = QuantizeRowSymmetric(row, cols, q);
    m.scales[r] = scale;
    for (uint64_t c = 0; c < cols; ++c) {
      const double x = row[c], e = x - static_cast<double>(q[c]) * scale;
      signal += x * x;
      noise += e * e;
    }
    for (uint64_t c0 = 0; c0 < cols; c0 += kBlock) {
      const uint64_t n = cols - c0 < kBlock ? cols - c0 : kBlock;
      const float s = QuantizeRowSymmetric(row + c0, n, block_q.data());
      for (uint64_t c = 0; c < n; ++c) {
        const double e = static_cast<double>(row[c0 + c]) - static_cast<double>(block_q[c]) * s;
        noise_block += e * e;
      }
    }
  }
  m.sqnr_db = SqnrDb(signal, noise);
  m.sqnr_block32_db = SqnrDb(signal, noise_block);
  return m;
}

}  // namespace convert
}  // namespace octet
