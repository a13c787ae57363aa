// f32_fully_connected in builds without XNNPACK (OCTET_WITH_XNNPACK=OFF): the
// op is unavailable and fp32 products run f32_gemm__ref. Add fails; nothing
// here is ever run.
#include "ops/f32_fully_connected.h"

#include <new>

namespace octet {

const char* F32FullyConnectedUnavailable() {
  return "this build has no XNNPACK (OCTET_WITH_XNNPACK=OFF)";
}

void F32FullyConnected::RunPiece(size_t, size_t, const float*, float*) const {}

F32FullyConnectedSet::~F32FullyConnectedSet() { delete[] matrices_; }

Status F32FullyConnectedSet::Reserve(size_t matrices) {
  capacity_ = matrices;
  return Status::Ok();
}

Result<const F32FullyConnected*> F32FullyConnectedSet::Add(size_t, size_t, const float*,
                                                           const float*, size_t, size_t,
                                                           size_t, F32PackedRows) {
  return Status::Error(StatusCode::kUnsupported, "fp32 products: %s",
                       F32FullyConnectedUnavailable());
}

}  // namespace octet
