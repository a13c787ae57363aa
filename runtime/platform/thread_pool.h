// ThreadPool: a fixed set of worker threads that runs parallel-for loops without
// allocating. A session creates one (workers = threads - 1; the calling thread is
// the last worker), and every parallel loop of its runs goes through it.
//
// Parallel(tasks, fn, ctx) calls fn(ctx, task, thread) once for every task in
// [0, tasks), spread over the calling thread and the workers, and returns when all
// have finished. Tasks are handed out in order from one atomic counter, so which
// thread runs a task varies from run to run: a caller gets results that do not
// depend on the thread count by making every task's output depend on the task
// index only (disjoint outputs; `thread`, in [0, threads()), only picks a
// per-thread scratch buffer, which the task must not read before writing).
//
// Waiting: workers spin for a short while after each loop (a decode step runs
// hundreds of short loops back to back; a kernel wake-up costs more than one of
// them), then sleep on a condition variable until the next Parallel. The caller
// takes tasks too and waits only for tasks that workers took: a worker the OS
// has not scheduled (a busy machine) costs no waiting.
//
// Nothing here allocates after Create, throws or aborts. Parallel may only be
// called from one thread at a time (the session's), and not from inside a task.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/alloc.h"
#include "core/result.h"

namespace octet {

typedef void (*ParallelTaskFn)(void* ctx, size_t task, size_t thread);

class ThreadPool {
 public:
  OCTET_ALLOCATED_THROUGH_ALLOCATE  // `delete pool` frees it

  // Starts threads - 1 workers (threads >= 1; 1 starts none). The pool and
  // its workers' state come from Allocate (kOutOfMemory naming what failed);
  // the threads' own stacks and start-up come from pthread_create, whose
  // refusal is kOutOfMemory (EAGAIN: no resources for another thread) or
  // kInternal, with the error.
  static Result<ThreadPool*> Create(uint32_t threads);
  ~ThreadPool();  // stops and joins the workers
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  size_t threads() const { return threads_; }

  // Runs fn(ctx, task, thread) for every task < tasks; see the top of this file.
  void Parallel(size_t tasks, ParallelTaskFn fn, void* ctx);

  // Calls f(task, thread) for every task < tasks (a lambda; no allocation: it
  // is passed by address).
  template <typename F>
  void For(size_t tasks, F& f) {
    if (tasks == 0) return;
    if (threads_ == 1 || tasks == 1) {
      for (size_t t = 0; t < tasks; ++t) f(t, size_t{0});
      return;
    }
    Parallel(
        tasks,
        [](void* ctx, size_t task, size_t thread) { (*static_cast<F*>(ctx))(task, thread); },
        const_cast<void*>(static_cast<const void*>(&f)));
  }

 private:
  struct Shared;
  explicit ThreadPool(uint32_t threads);
  static void* WorkerMain(void* arg);

  size_t threads_ = 1;
  Shared* shared_ = nullptr;
};

// Threads for `--threads 0`: the machine's fast cores. On big.LITTLE boards
// (sysfs cpu_capacity differs between cores) the cores with the highest
// capacity; elsewhere every CPU this process may run on. At least 1.
uint32_t DefaultThreadCount();

}  // namespace octet
