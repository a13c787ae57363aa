#include "quantize/linalg.h"

#include <algorithm>
#include <memory>
#include <mutex>

#include "import/error.h"
#include "kernels/f32_gemm.h"
#include "ops/f32_fully_connected.h"
#include "platform/thread_pool.h"

namespace octet {
namespace convert {
namespace {

// The pool, made on first use and kept for the process.
ThreadPool& Pool() {
  static std::once_flag once;
  static ThreadPool* pool = nullptr;
  std::call_once(once, [] {
    Result<ThreadPool*> created = ThreadPool::Create(DefaultThreadCount());
    if (!created.ok()) Fail("cannot start the converter's threads: ", created.status().message());
    pool = created.value();
  });
  return *pool;
}

}  // namespace

size_t ConverterThreads() { return Pool().threads(); }

void ParallelFor(size_t tasks, const std::function<void(size_t task)>& fn) {
  auto body = [&fn](size_t task, size_t) { fn(task); };
  Pool().For(tasks, body);
}

void MatMulNT(size_t m, size_t n, size_t k, const float* a, const float* b, float* out) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill(out, out + m * n, 0.0f);
    return;
  }
  ThreadPool& pool = Pool();
  F32FullyConnectedSet set;
  const Status reserved = set.Reserve(1);
  Result<const F32FullyConnected*> fc =
      reserved.ok() ? set.Add(n, k, b, nullptr, pool.threads())
                    : Result<const F32FullyConnected*>(reserved);
  if (fc.ok()) {
    const F32FullyConnected& f = *fc.value();
    auto piece = [&](size_t p, size_t) { f.RunPiece(p, m, a, out); };
    pool.For(f.pieces(), piece);
    return;
  }
  if (fc.status().code() == StatusCode::kOutOfMemory) Fail("out of memory in the tuner's products");
  // No XNNPACK: the reference product, rows of a spread over the threads.
  constexpr size_t kRows = 16;
  auto rows = [&](size_t t, size_t) {
    const size_t r0 = t * kRows, r1 = std::min(m, r0 + kRows);
    f32_gemm__ref(r1 - r0, n, k, a + r0 * k, k, b, k, out + r0 * n, n);
  };
  pool.For((m + kRows - 1) / kRows, rows);
}

}  // namespace convert
}  // namespace octet
