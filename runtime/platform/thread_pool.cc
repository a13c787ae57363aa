// ThreadPool on POSIX threads (Linux, Android). See thread_pool.h.
#include "platform/thread_pool.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "platform/clock.h"

namespace octet {
namespace {

// How long a worker spins for the next loop before it sleeps.
constexpr int64_t kSpinNs = 200 * 1000;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || (defined(__arm__) && __ARM_ARCH >= 7)
  __asm__ __volatile__("yield");
#endif
}

}  // namespace

// The current loop lives in one of two slots (by the parity of its
// generation), and `state` packs the generation with the next task index, so a
// worker that wakes late (after its loop ended and the next one began) cannot
// take a task of the new loop with the old loop's function: it claims a task
// only by a compare-and-swap that also checks the generation. The caller waits
// for the tasks to be done, never for a worker that has not woken yet.
struct ThreadPool::Shared {
  OCTET_ALLOCATED_THROUGH_ALLOCATE
  struct Slot {
    std::atomic<ParallelTaskFn> fn{nullptr};
    std::atomic<void*> ctx{nullptr};
    std::atomic<uint64_t> tasks{0};
  };
  Slot slots[2];
  std::atomic<uint64_t> state{0};       // generation << 32 | next task
  std::atomic<uint64_t> done{0};        // tasks finished in the current loop
  std::atomic<uint64_t> generation{0};  // of the current loop (low 32 bits in `state`)
  std::atomic<bool> stop{false};
  std::atomic<size_t> running{0};       // workers that have entered WorkerMain
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
  uint32_t sleeping = 0;  // workers waiting on `wake` (under `mutex`)
  pthread_t* workers = nullptr;  // [threads - 1]
  size_t started = 0;
  // Per worker: its index, for WorkerMain's argument.
  struct Start {
    Shared* shared;
    size_t thread;
  };
  Start* starts = nullptr;  // [threads - 1]

  // Runs tasks of loop `generation` until none is left (or a newer loop began).
  void RunTasks(uint64_t gen, size_t thread) {
    const Slot& slot = slots[gen & 1];
    const ParallelTaskFn fn = slot.fn.load(std::memory_order_relaxed);
    void* const ctx = slot.ctx.load(std::memory_order_relaxed);
    const uint64_t tasks = slot.tasks.load(std::memory_order_relaxed);
    const uint64_t tag = (gen & 0xffffffffu) << 32;
    uint64_t s = state.load(std::memory_order_acquire);
    for (;;) {
      if ((s & ~uint64_t{0xffffffffu}) != tag || (s & 0xffffffffu) >= tasks) return;
      if (!state.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
        continue;  // s holds the new value
      }
      fn(ctx, static_cast<size_t>(s & 0xffffffffu), thread);
      done.fetch_add(1, std::memory_order_release);
      s = state.load(std::memory_order_acquire);
    }
  }
};

ThreadPool::ThreadPool(uint32_t threads) : threads_(threads) {}

Result<ThreadPool*> ThreadPool::Create(uint32_t threads) {
  if (threads < 1) return Status(StatusCode::kInvalidArgument, "a thread pool needs >= 1 thread");
  ThreadPool* pool = new (std::nothrow) ThreadPool(threads);
  if (pool == nullptr) {
    return Status(StatusCode::kOutOfMemory, "thread pool: out of memory for the pool");
  }
  if (threads == 1) return pool;
  const size_t workers = threads - 1;
  Shared* s = new (std::nothrow) Shared;
  if (s == nullptr) {
    delete pool;
    return Status(StatusCode::kOutOfMemory, "thread pool: out of memory for its shared state");
  }
  pool->shared_ = s;  // from here `delete pool` frees s and what it holds
  s->workers = NewArray<pthread_t>(workers);
  s->starts = NewArray<Shared::Start>(workers);
  if (s->workers == nullptr || s->starts == nullptr) {
    delete pool;
    return Status::Error(StatusCode::kOutOfMemory,
                         "thread pool: out of memory for the state of %zu workers", workers);
  }
  for (size_t i = 0; i < workers; ++i) {
    s->starts[i] = Shared::Start{s, i + 1};
    const int error =
        pthread_create(&s->workers[i], nullptr, &ThreadPool::WorkerMain, &s->starts[i]);
    if (error != 0) {
      delete pool;  // joins the ones started
      return Status::Error(error == EAGAIN ? StatusCode::kOutOfMemory : StatusCode::kInternal,
                           "thread pool: could not start worker thread %zu of %zu: %s", i + 1,
                           workers, std::strerror(error));
    }
    s->started = i + 1;
  }
  // Whatever a new thread's start-up allocates (glibc, a sanitizer runtime)
  // happens now, at creation, not during the first run.
  while (s->running.load(std::memory_order_acquire) < workers) sched_yield();
  return pool;
}

ThreadPool::~ThreadPool() {
  Shared* s = shared_;
  if (s == nullptr) return;
  pthread_mutex_lock(&s->mutex);
  s->stop.store(true, std::memory_order_release);
  pthread_cond_broadcast(&s->wake);
  pthread_mutex_unlock(&s->mutex);
  for (size_t i = 0; i < s->started; ++i) pthread_join(s->workers[i], nullptr);
  pthread_mutex_destroy(&s->mutex);
  pthread_cond_destroy(&s->wake);
  Free(s->workers);
  Free(s->starts);
  delete s;
}

void* ThreadPool::WorkerMain(void* arg) {
  const Shared::Start start = *static_cast<Shared::Start*>(arg);
  Shared* s = start.shared;
  s->running.fetch_add(1, std::memory_order_release);
  uint64_t seen = 0;
  for (;;) {
    uint64_t generation = s->generation.load(std::memory_order_acquire);
    if (generation == seen) {
      // Spin a while (a clock read every 64 rounds), then sleep.
      const int64_t t0 = MonotonicNanos();
      for (uint32_t i = 1; generation == seen; ++i) {
        if (s->stop.load(std::memory_order_acquire)) return nullptr;
        CpuRelax();
        generation = s->generation.load(std::memory_order_acquire);
        if (generation == seen && (i & 63) == 0 && MonotonicNanos() - t0 > kSpinNs) {
          pthread_mutex_lock(&s->mutex);
          ++s->sleeping;
          while ((generation = s->generation.load(std::memory_order_acquire)) == seen &&
                 !s->stop.load(std::memory_order_acquire)) {
            pthread_cond_wait(&s->wake, &s->mutex);
          }
          --s->sleeping;
          pthread_mutex_unlock(&s->mutex);
        }
      }
    }
    if (s->stop.load(std::memory_order_acquire)) return nullptr;
    seen = generation;
    s->RunTasks(generation, start.thread);
  }
}

void ThreadPool::Parallel(size_t tasks, ParallelTaskFn fn, void* ctx) {
  Shared* s = shared_;
  if (s == nullptr || tasks <= 1) {
    for (size_t t = 0; t < tasks; ++t) fn(ctx, t, 0);
    return;
  }
  const uint64_t generation = s->generation.load(std::memory_order_relaxed) + 1;
  Shared::Slot& slot = s->slots[generation & 1];
  slot.fn.store(fn, std::memory_order_relaxed);
  slot.ctx.store(ctx, std::memory_order_relaxed);
  slot.tasks.store(tasks, std::memory_order_relaxed);
  s->done.store(0, std::memory_order_relaxed);
  s->state.store((generation & 0xffffffffu) << 32, std::memory_order_release);
  pthread_mutex_lock(&s->mutex);
  s->generation.store(generation, std::memory_order_release);
  if (s->sleeping > 0) pthread_cond_broadcast(&s->wake);
  pthread_mutex_unlock(&s->mutex);
  s->RunTasks(generation, 0);
  // Tasks that workers took may still run: wait for them (only for them).
  while (s->done.load(std::memory_order_acquire) != tasks) CpuRelax();
}

namespace {

// The integer in a small sysfs file, or -1.
long ReadSysfsLong(const char* path) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[32];
  const ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  char* end = nullptr;
  const long v = std::strtol(buf, &end, 10);
  return end == buf ? -1 : v;
}

}  // namespace

uint32_t DefaultThreadCount() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<uint32_t>(n) : 1u;
  }
  // The highest capacity among the allowed CPUs, and how many have it.
  long best = -1;
  uint32_t count = 0, allowed = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    ++allowed;
    char path[96];
    std::snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpu_capacity", cpu);
    const long capacity = ReadSysfsLong(path);
    if (capacity > best) {
      best = capacity;
      count = 1;
    } else if (capacity == best) {
      ++count;
    }
  }
  if (best < 0) return allowed > 0 ? allowed : 1u;  // no capacities: all cores alike
  return count > 0 ? count : 1u;
}

}  // namespace octet
