// ThreadPool on POSIX threads (Linux, Android). See thread_pool.h.
#include "platform/thread_pool.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
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

struct ThreadPool::Shared {
  // The current loop, written by Parallel before it bumps `generation`.
  size_t tasks = 0;
  ParallelTaskFn fn = nullptr;
  void* ctx = nullptr;
  std::atomic<size_t> next_task{0};
  std::atomic<size_t> workers_busy{0};  // workers not yet done with this generation
  std::atomic<uint64_t> generation{0};
  std::atomic<bool> stop{false};
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
  uint32_t sleeping = 0;  // workers waiting on `wake` (under `mutex`)
  pthread_t* workers = nullptr;  // [threads - 1]
  size_t started = 0;
  ThreadPool* pool = nullptr;
  // Per worker: its index, for WorkerMain's argument.
  struct Start {
    Shared* shared;
    size_t thread;
  };
  Start* starts = nullptr;  // [threads - 1]
};

ThreadPool::ThreadPool(uint32_t threads) : threads_(threads) {}

Result<ThreadPool*> ThreadPool::Create(uint32_t threads) {
  if (threads < 1) return Status(StatusCode::kInvalidArgument, "a thread pool needs >= 1 thread");
  ThreadPool* pool = new (std::nothrow) ThreadPool(threads);
  if (pool == nullptr) return Status(StatusCode::kOutOfMemory, "no memory for the thread pool");
  if (threads == 1) return pool;
  Shared* s = new (std::nothrow) Shared;
  const size_t workers = threads - 1;
  if (s != nullptr) {
    s->workers = new (std::nothrow) pthread_t[workers];
    s->starts = new (std::nothrow) Shared::Start[workers];
  }
  if (s == nullptr || s->workers == nullptr || s->starts == nullptr) {
    if (s != nullptr) {
      delete[] s->workers;
      delete[] s->starts;
    }
    delete s;
    delete pool;
    return Status(StatusCode::kOutOfMemory, "no memory for the thread pool");
  }
  s->pool = pool;
  pool->shared_ = s;
  for (size_t i = 0; i < workers; ++i) {
    s->starts[i] = Shared::Start{s, i + 1};
    if (pthread_create(&s->workers[i], nullptr, &ThreadPool::WorkerMain, &s->starts[i]) != 0) {
      delete pool;  // joins the ones started
      return Status::Error(StatusCode::kInternal, "could not start worker thread %zu of %u",
                           i + 1, threads - 1);
    }
    s->started = i + 1;
  }
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
  delete[] s->workers;
  delete[] s->starts;
  delete s;
}

void ThreadPool::RunTasks(size_t thread) {
  Shared* s = shared_;
  for (;;) {
    const size_t task = s->next_task.fetch_add(1, std::memory_order_relaxed);
    if (task >= s->tasks) return;
    s->fn(s->ctx, task, thread);
  }
}

void* ThreadPool::WorkerMain(void* arg) {
  const Shared::Start start = *static_cast<Shared::Start*>(arg);
  Shared* s = start.shared;
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
    s->pool->RunTasks(start.thread);
    s->workers_busy.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::Parallel(size_t tasks, ParallelTaskFn fn, void* ctx) {
  Shared* s = shared_;
  if (s == nullptr || tasks <= 1) {
    for (size_t t = 0; t < tasks; ++t) fn(ctx, t, 0);
    return;
  }
  s->tasks = tasks;
  s->fn = fn;
  s->ctx = ctx;
  s->next_task.store(0, std::memory_order_relaxed);
  s->workers_busy.store(threads_ - 1, std::memory_order_relaxed);
  pthread_mutex_lock(&s->mutex);
  s->generation.fetch_add(1, std::memory_order_release);
  if (s->sleeping > 0) pthread_cond_broadcast(&s->wake);
  pthread_mutex_unlock(&s->mutex);
  RunTasks(0);
  // Every worker has left RunTasks before the loop's fields are reused.
  while (s->workers_busy.load(std::memory_order_acquire) != 0) CpuRelax();
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
