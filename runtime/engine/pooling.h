// Sentence embeddings from an encoder's last hidden state (`octet run
// --pooling`): one vector per sequence, as sentence-transformers' Pooling
// module computes them.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "engine/session.h"

namespace octet {

enum class Pooling : uint8_t {
  kCls,   // the first token's hidden state ([CLS] for BERT)
  kMean,  // the mean over the real tokens 0 .. lengths[b] - 1 (padding masked)
};

// out [hidden.batch, hidden.dim] from hidden [batch, seq, dim] (Session::output()
// of an encoder-only Run) and the lengths of that run. Mean: the rows are summed
// in float in position order, then divided by the count (sentence-transformers:
// sum(h * mask) / mask.sum()). No allocation; out is the caller's. A length
// outside [1, seq] or a null pointer is kInvalidArgument.
Status PoolHidden(const OutputView& hidden, const uint32_t* lengths, Pooling kind, float* out);

}  // namespace octet
