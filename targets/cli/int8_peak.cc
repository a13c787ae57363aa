#include "cli/int8_peak.h"

#include <memory>
#include <new>

#include "engine/session.h"
#include "kernels/int8_peak.h"
#include "platform/clock.h"
#include "platform/cpu.h"
#include "platform/thread_pool.h"

namespace octet {
namespace cli {
namespace {

struct PeakRound {
  Int8PeakFn probe = nullptr;
  uint64_t iterations = 0;
  uint64_t ops[kMaxSessionThreads] = {};
};

}  // namespace

bool MeasureInt8Peak(uint32_t threads, Int8Peak* peak, std::string* error) {
  *peak = Int8Peak();
  if (threads > kMaxSessionThreads) {
    *error = std::to_string(threads) + " threads; at most " + std::to_string(kMaxSessionThreads);
    return false;
  }
  if (threads == 0) {
    const uint32_t n = DefaultThreadCount();
    threads = n < kMaxSessionThreads ? n : kMaxSessionThreads;
  }
  const char* name = nullptr;
  const Int8PeakFn fn = SelectInt8Peak(&name);
  if (fn == nullptr) return true;
  Result<ThreadPool*> created = ThreadPool::Create(threads);
  if (!created.ok()) {
    *error = created.status().message();
    return false;
  }
  const std::unique_ptr<ThreadPool> pool(created.value());
  std::unique_ptr<PeakRound> round(new (std::nothrow) PeakRound);
  if (round == nullptr) {
    *error = "no memory";
    return false;
  }
  round->probe = fn;
  round->iterations = uint64_t{1} << 21;  // ~5 ms a round
  fn(uint64_t{1} << 16);                  // wakes the units up
  // The best of several short rounds, every thread probing at once: a shared
  // machine takes cycles from some.
  constexpr int kRounds = 7;
  double best = 0;
  for (int r = 0; r < kRounds; ++r) {
    const int64_t start = MonotonicNanos();
    pool->Parallel(
        threads,
        [](void* ctx, size_t task, size_t) {
          PeakRound* pr = static_cast<PeakRound*>(ctx);
          pr->ops[task] = pr->probe(pr->iterations);
        },
        round.get());
    const double seconds = static_cast<double>(MonotonicNanos() - start) / 1e9;
    double total = 0;
    for (uint32_t t = 0; t < threads; ++t) total += static_cast<double>(round->ops[t]);
    const double rate = seconds > 0 ? total / seconds / 1e9 : 0;
    if (rate > best) best = rate;
  }
  peak->gops = best;
  peak->probe = name;
  return true;
}

}  // namespace cli
}  // namespace octet
