// The tuner's linear algebra in single precision, on every core: matrix
// products on the runtime's fp32 products (XNNPACK's f32 GEMM, the same code
// fp32 files run on; f32_gemm__ref where XNNPACK is unavailable), split over
// one converter-wide thread pool (DefaultThreadCount threads).
//
// Single precision is what GPTQ-style tools use; the tuner's errors are
// ratios of sums of squares of products whose relative rounding (~1e-6) is far
// below the int8 errors they compare (~1e-2 .. 1e-4), and every choice made on
// them is checked by running the runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace octet {
namespace convert {

// out[m, n] = a[m, k] · b[n, k]ᵀ, row-major, in fp32.
void MatMulNT(size_t m, size_t n, size_t k, const float* a, const float* b, float* out);

// Calls fn(task) for every task < tasks on the converter's threads (each task
// must write its own outputs only). Exceptions are not allowed to leave fn.
void ParallelFor(size_t tasks, const std::function<void(size_t task)>& fn);

// The converter's thread count.
size_t ConverterThreads();

}  // namespace convert
}  // namespace octet
