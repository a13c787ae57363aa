#include "engine/pooling.h"

#include <cstring>

namespace octet {

Status PoolHidden(const OutputView& hidden, const uint32_t* lengths, Pooling kind, float* out) {
  if (hidden.data == nullptr || lengths == nullptr || out == nullptr) {
    return Status(StatusCode::kInvalidArgument,
                  "pooling needs the hidden states, the lengths "
                  "and an output buffer");
  }
  const size_t dim = hidden.dim;
  for (uint32_t b = 0; b < hidden.batch; ++b) {
    if (lengths[b] < 1 || lengths[b] > hidden.seq) {
      return Status::Error(StatusCode::kInvalidArgument,
                           "length %u of sequence %u is outside "
                           "[1, %u]",
                           lengths[b], b, hidden.seq);
    }
    const float* first = hidden.data + static_cast<size_t>(b) * hidden.seq * dim;  // [seq, dim]
    float* o = out + b * dim;                                                      // [dim]
    std::memcpy(o, first, dim * sizeof(float));
    if (kind == Pooling::kCls) continue;
    for (uint32_t s = 1; s < lengths[b]; ++s) {
      const float* row = first + s * dim;
      for (size_t i = 0; i < dim; ++i) o[i] += row[i];
    }
    const float count = static_cast<float>(lengths[b]);
    for (size_t i = 0; i < dim; ++i) o[i] /= count;
  }
  return Status::Ok();
}

}  // namespace octet
