// f32_fully_connected: the matrix products of fp32 files (the layers' linear
// weights and the LM head) on XNNPACK's f32 fully-connected operator, from
// Debian's libxnnpack (its 2022 API: xnn_create_ / xnn_setup_ / xnn_run_operator).
//
//   out[rows, n] = in[rows, k] · Wᵀ + bias     W [n, k] row-major (our layout and
//                                              XNNPACK's), bias [n] or null
//   in: row stride in_stride (k by default); out: row stride out_stride (n
//   by default), both fixed when the operators are made (a token mixer whose
//   product reads or writes columns of a wider row says so:
//   engine/mixer.h TokenMixer::product_strides).
//
// Prepare (F32FullyConnectedSet::Add, at session creation): the n output
// columns (rows of W) are cut into pieces of F32FullyConnectedPieceColumns(n,
// k, threads) columns, and one XNNPACK operator is created per piece; XNNPACK
// copies the piece's rows of W and of the bias into its own packed tiles there.
// Run (F32FullyConnected::RunPiece): one piece's columns of every row,
// xnn_setup_fully_connected_nc_f32 (pointers and tiling; it allocates nothing)
// then xnn_run_operator on the calling thread (no pthreadpool). Nothing in Run
// allocates, logs or checks.
//
// Threads: the caller spreads the pieces over its own ThreadPool, one task per
// piece (engine/forward.cc, MatMul); XNNPACK gets no pthreadpool. Chosen over a
// pthreadpool of the session's thread count because:
//   - one set of workers: pthreadpool's spin after each operator, ours after
//     each loop, and a pass alternates products with norms and attention
//     hundreds of times; two pools spinning on the same cores take them from
//     each other (and on big.LITTLE boards pthreadpool would pick per-core
//     kernel variants: results would depend on the core that ran a tile);
//   - cache: a piece's packed weights (<= kF32FullyConnectedPieceBytes) stay in
//     L2 while every row streams through them. XNNPACK's own order (row tiles
//     outside, column tiles inside) reads the whole matrix from L3 or memory
//     once per tile of rows: on this 2-core AVX512 machine, 128 rows of a
//     32000 x 768 head run at ~20 GFLOPS as one operator and ~90 in pieces.
//
// Exactness: XNNPACK's f32 GEMM microkernels compute every output as one chain
// of fused multiply-adds over k in order, starting from the bias. Which piece
// or tile of rows holds a value, how many rows a call has (one row runs a
// 1-row kernel) and which thread runs it do not change it, so results are
// bit-identical for every thread count and every row count (chunked prefill,
// decode steps): tests/ops/f32_fully_connected_test.cc checks both on the
// build's CPU, tests/engine/threads_test.cc end to end. Against f32_gemm__ref
// (separate multiply and add, the bias added last) they differ by rounding
// only: the test bounds each value by the worst case of two fp32 dot products,
// 2 gamma_(k+1) (sum |in * w| + |bias|), and sees at most 5e-7 (sum |in * w| +
// |bias|). The fp32 goldens stay at 2e-7 to 6e-7 relative to PyTorch (the bar
// is 1e-5).
//
// Memory: the packed copies are as large as the fp32 matrices (plus the biases,
// columns padded to XNNPACK's 8- or 16-column tiles), per session: for W2 (Llama
// 768 x 12 layers, 32000-token untied head) 85 M + 24.6 M floats = 440 MB; a
// tied head packs the embedding a second time. Products no longer read the
// file's copies, so PrepareF32Products (engine/weights.cc) releases each
// matrix's pages of a file mapping once it is packed: with one session the
// resident set stays about the file's size, not 1.6x it. Sharing the packed weights between the
// sessions of one Model is future work: this XNNPACK has no weights cache, and
// an operator holds per-call state (xnn_setup), so two sessions cannot run one
// operator at once.
//
// Availability: builds without XNNPACK (OCTET_WITH_XNNPACK=OFF, e.g. Android),
// and CPUs where xnn_initialize fails, run f32_gemm__ref instead;
// F32FullyConnectedUnavailable() says why (`octet bench` prints it as a note).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "core/alloc.h"
#include "core/result.h"
#include "core/status.h"

namespace octet {

// A piece's packed weights fit this many bytes (L2 is 0.5-2 MiB per core on the
// targets; the rows' inputs share it).
constexpr size_t kF32FullyConnectedPieceBytes = 384 * 1024;

// Output columns per piece of an [n, k] matrix run on `threads` threads: a
// multiple of 16 (XNNPACK's widest f32 tile) whose weights fit
// kF32FullyConnectedPieceBytes, made smaller (down to 16) until the threads get
// at least two pieces each; at most n.
inline size_t F32FullyConnectedPieceColumns(size_t n, size_t k, size_t threads) {
  size_t cols = kF32FullyConnectedPieceBytes / (sizeof(float) * (k > 0 ? k : 1)) / 16 * 16;
  if (cols < 16) cols = 16;
  const size_t min_pieces = 2 * (threads > 1 ? threads : 0);
  if (min_pieces > 0 && n / min_pieces < cols) {
    const size_t even = (n / min_pieces) / 16 * 16;
    cols = even < 16 ? 16 : even;
  }
  return cols < n ? cols : (n > 0 ? n : 1);
}

// Null when this process runs the op: XNNPACK is in the build and
// xnn_initialize succeeded on this CPU (the first call initializes it, once per
// process; thread-safe). Otherwise why not, in one phrase.
const char* F32FullyConnectedUnavailable();

// One matrix's operators, one per column piece. Made by F32FullyConnectedSet;
// valid while the set lives.
class F32FullyConnected {
 public:
  OCTET_ALLOCATED_THROUGH_ALLOCATE  // the set's array of them
  size_t n() const { return n_; }
  size_t k() const { return k_; }
  size_t pieces() const { return pieces_; }
  size_t piece_columns() const { return piece_columns_; }
  size_t in_stride() const { return in_stride_; }
  size_t out_stride() const { return out_stride_; }

  // Columns [piece * piece_columns(), ...) of out[rows, n] (row stride
  // out_stride()) for in[rows, k] (row stride in_stride()); rows >= 1. A piece runs on one thread at a
  // time (its operator holds the call's pointers); different pieces may run at
  // once. No allocation.
  void RunPiece(size_t piece, size_t rows, const float* in, float* out) const;

 private:
  friend class F32FullyConnectedSet;
  void** ops_ = nullptr;  // [pieces] xnn_operator_t (NewArray)
  size_t n_ = 0;
  size_t k_ = 0;
  size_t pieces_ = 0;
  size_t piece_columns_ = 0;
  size_t in_stride_ = 0;
  size_t out_stride_ = 0;
};

// Told the rows [rows, rows + bytes) of a matrix once its pieces that hold them
// are packed: a file-mapped caller lets their pages go, so the matrix and its
// packed copy are never both resident (but a piece of it).
struct F32PackedRows {
  void (*fn)(const void* ctx, const float* rows, size_t bytes) = nullptr;
  const void* ctx = nullptr;
};

// Owns the operators of a session's matrices; deleting the set deletes them.
// Reserve and Add allocate (prepare time only); nothing else does. The set and
// its tables come from Allocate; the packed weights from XNNPACK's own
// allocator (its xnn_status_out_of_memory becomes kOutOfMemory).
class F32FullyConnectedSet {
 public:
  OCTET_ALLOCATED_THROUGH_ALLOCATE  // made with new (std::nothrow): sessions, weight stream
  F32FullyConnectedSet() = default;
  ~F32FullyConnectedSet();
  F32FullyConnectedSet(const F32FullyConnectedSet&) = delete;
  F32FullyConnectedSet& operator=(const F32FullyConnectedSet&) = delete;

  // Room for `matrices` matrices (Add beyond it fails).
  Status Reserve(size_t matrices);

  // Creates the operators of weight [n, k] (+ bias [n], or null) for `threads`
  // threads, for inputs at row stride in_stride and outputs at out_stride (0:
  // k and n; else at least k and n); weight and bias are copied (packed), not
  // kept. n, k >= 1.
  // kUnsupported when the op is unavailable, kOutOfMemory when XNNPACK cannot
  // allocate. The pointer is valid while the set lives.
  // done (optional): told each piece's rows of weight once they are packed
  // (F32PackedRows).
  Result<const F32FullyConnected*> Add(size_t n, size_t k, const float* weight, const float* bias,
                                       size_t threads, size_t in_stride = 0,
                                       size_t out_stride = 0, F32PackedRows done = F32PackedRows());

  size_t matrices() const { return count_; }
  size_t operators() const { return operators_; }
  // Bytes of XNNPACK's packed weights and biases, counting every piece's
  // columns rounded up to 16 (the tiles' padding; 8-column tiles pad less).
  size_t packed_bytes() const { return packed_bytes_; }

 private:
  F32FullyConnected* matrices_ = nullptr;  // [capacity_]
  size_t capacity_ = 0;
  size_t count_ = 0;
  size_t operators_ = 0;
  size_t packed_bytes_ = 0;
};

}  // namespace octet
