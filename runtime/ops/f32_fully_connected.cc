// f32_fully_connected on XNNPACK (builds with OCTET_WITH_XNNPACK; the others
// compile f32_fully_connected_unavailable.cc instead).
#include "ops/f32_fully_connected.h"

#include <xnnpack.h>

#include <cmath>
#include <new>

namespace octet {
namespace {

struct XnnpackInit {
  xnn_status status;
  XnnpackInit() : status(xnn_initialize(/*allocator=*/nullptr)) {}
};

const char* XnnpackStatusName(xnn_status status) {
  switch (status) {
    case xnn_status_success: return "success";
    case xnn_status_uninitialized: return "uninitialized";
    case xnn_status_invalid_parameter: return "invalid parameter";
    case xnn_status_invalid_state: return "invalid state";
    case xnn_status_unsupported_parameter: return "unsupported parameter";
    case xnn_status_unsupported_hardware: return "unsupported hardware";
    case xnn_status_out_of_memory: return "out of memory";
  }
  return "unknown status";
}

}  // namespace

const char* F32FullyConnectedUnavailable() {
  // Initialized once per process (a function-local static: thread-safe), never
  // deinitialized: operators of any session may live until exit.
  static const XnnpackInit init;
  switch (init.status) {
    case xnn_status_success: return nullptr;
    case xnn_status_unsupported_hardware:
      return "XNNPACK does not support this CPU (xnn_initialize: unsupported hardware)";
    case xnn_status_out_of_memory: return "XNNPACK could not initialize (out of memory)";
    default: return "XNNPACK could not initialize";
  }
}

void F32FullyConnected::RunPiece(size_t piece, size_t rows, const float* in, float* out) const {
  xnn_operator_t op = static_cast<xnn_operator_t>(ops_[piece]);
  // Both calls fail only for states Add ruled out (an uninitialized library, a
  // deleted operator); rows >= 1.
  xnn_setup_fully_connected_nc_f32(op, rows, in, out + piece * piece_columns_,
                                   /*threadpool=*/nullptr);
  xnn_run_operator(op, /*threadpool=*/nullptr);
}

F32FullyConnectedSet::~F32FullyConnectedSet() {
  for (size_t m = 0; m < count_; ++m) {
    for (size_t p = 0; p < matrices_[m].pieces_; ++p) {
      if (matrices_[m].ops_[p] != nullptr) {
        xnn_delete_operator(static_cast<xnn_operator_t>(matrices_[m].ops_[p]));
      }
    }
    Free(matrices_[m].ops_);
  }
  delete[] matrices_;
}

Status F32FullyConnectedSet::Reserve(size_t matrices) {
  if (matrices_ != nullptr) {
    return Status(StatusCode::kInternal, "F32FullyConnectedSet::Reserve called twice");
  }
  matrices_ = new (std::nothrow) F32FullyConnected[matrices > 0 ? matrices : 1];
  if (matrices_ == nullptr) {
    return Status::Error(StatusCode::kOutOfMemory,
                         "fp32 products: out of memory for the table of %zu matrices", matrices);
  }
  capacity_ = matrices;
  return Status::Ok();
}

Result<const F32FullyConnected*> F32FullyConnectedSet::Add(size_t n, size_t k,
                                                           const float* weight,
                                                           const float* bias, size_t threads,
                                                           size_t in_stride, size_t out_stride,
                                                           F32PackedRows done) {
  if (const char* why = F32FullyConnectedUnavailable()) {
    return Status::Error(StatusCode::kUnsupported, "fp32 products: %s", why);
  }
  if (count_ >= capacity_) {
    return Status(StatusCode::kInternal, "F32FullyConnectedSet: more matrices than reserved");
  }
  if (n == 0 || k == 0 || weight == nullptr) {
    return Status(StatusCode::kInternal, "F32FullyConnectedSet: an empty matrix");
  }
  if (in_stride == 0) in_stride = k;
  if (out_stride == 0) out_stride = n;
  if (in_stride < k || out_stride < n) {
    return Status(StatusCode::kInternal, "F32FullyConnectedSet: a row stride below its width");
  }
  const size_t cols = F32FullyConnectedPieceColumns(n, k, threads);
  F32FullyConnected& fc = matrices_[count_];
  fc.n_ = n;
  fc.k_ = k;
  fc.piece_columns_ = cols;
  fc.in_stride_ = in_stride;
  fc.out_stride_ = out_stride;
  fc.pieces_ = (n + cols - 1) / cols;
  fc.ops_ = NewArray<void*>(fc.pieces_);
  if (fc.ops_ == nullptr) {
    const size_t pieces = fc.pieces_;
    fc.pieces_ = 0;
    return Status::Error(StatusCode::kOutOfMemory,
                         "fp32 products: out of memory for the %zu operators of a [%zu, %zu] "
                         "matrix", pieces, n, k);
  }
  for (size_t p = 0; p < fc.pieces_; ++p) fc.ops_[p] = nullptr;
  ++count_;  // from here the destructor deletes what was created
  for (size_t p = 0; p < fc.pieces_; ++p) {
    const size_t n0 = p * cols;
    const size_t width = n - n0 < cols ? n - n0 : cols;
    xnn_operator_t op = nullptr;
    const xnn_status status = xnn_create_fully_connected_nc_f32(
        /*input_channels=*/k, /*output_channels=*/width, /*input_stride=*/in_stride,
        /*output_stride=*/out_stride, weight + n0 * k, bias != nullptr ? bias + n0 : nullptr,
        /*output_min=*/-INFINITY, /*output_max=*/INFINITY, /*flags=*/0, &op);
    if (status != xnn_status_success) {
      return Status::Error(status == xnn_status_out_of_memory ? StatusCode::kOutOfMemory
                                                              : StatusCode::kInternal,
                           "XNNPACK could not create an f32 fully-connected operator "
                           "[%zu, %zu]: %s", width, k, XnnpackStatusName(status));
    }
    fc.ops_[p] = op;
    ++operators_;
    if (done.fn != nullptr) done.fn(done.ctx, weight + n0 * k, width * k * sizeof(float));
    packed_bytes_ += (width + 15) / 16 * 16 * (k + 1) * sizeof(float);
  }
  return static_cast<const F32FullyConnected*>(&fc);
}

}  // namespace octet
