// The machine's limits for scripts/bench-peers.sh: int8 peak and memory read bandwidth.
// build: cc -O2 -pthread -o int8_peak int8_peak.c        run: ./int8_peak THREADS [ms_per_run=200]
//
// - int8 peak: vpdpbusd zmm (AVX512-VNNI; 64 u8 x s8 multiply-adds = 128 ops an instruction)
//   into 12 independent accumulators (enough to hide its latency), one pinned thread per core;
//   best and median of 9 runs, GOPS summed over the threads (each run limited by the slowest).
//   Without AVX512-VNNI the peak fields are null.
// - clock: a dependent chain of register-register adds (1 cycle each), run before each peak run.
// - memory read bandwidth: each thread sums its own 1 GiB buffer with 512-bit loads (larger than
//   any last-level cache), best of 6; and the same over 128 MiB in all (about W2's weights:
//   what a decode step streams when they stay in a large L3).
// Prints one JSON object. Adapted from the peers' microbenchmark, VNNI and bandwidth parts only.
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 9
#define MAX_THREADS 64

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// n iterations of 12 independent vpdpbusd zmm; returns instructions per iteration.
__attribute__((target("avx512f,avx512vnni"))) static int k_vnni(long n) {
#define OP(i) "vpdpbusd %%zmm13, %%zmm12, %%zmm" #i "\n\t"
  __asm__ volatile(
      "vpxord %%zmm12, %%zmm12, %%zmm12\n\tvpternlogd $0xff, %%zmm13, %%zmm13, %%zmm13\n\t"
      "1:\n\t" OP(0) OP(1) OP(2) OP(3) OP(4) OP(5) OP(6) OP(7) OP(8) OP(9) OP(10) OP(11)
      "dec %0\n\tjnz 1b\n\t"
      : "+r"(n)::"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
        "xmm10", "xmm11", "xmm12", "xmm13", "cc");
#undef OP
  return 12;
}

// n iterations of 16 dependent 1-cycle adds; returns cycles per iteration.
static int k_clock(long n) {
  long x = 0, one = 1;
#define A "add %2, %1\n\t"
  __asm__ volatile("1:\n\t" A A A A A A A A A A A A A A A A "dec %0\n\tjnz 1b\n\t"
                   : "+r"(n), "+r"(x) : "r"(one) : "cc");
#undef A
  return 16;
}

typedef int (*kern_t)(long);
struct job { kern_t k; long n; int cpu; pthread_barrier_t *bar; double t; };

static void pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void *worker(void *p) {
  struct job *j = p;
  pin(j->cpu);
  j->k(1000);  // wake the unit up
  pthread_barrier_wait(j->bar);
  double a = now();
  j->k(j->n);
  j->t = now() - a;
  return NULL;
}

// Units per second per thread, from the slowest thread.
static double run_once(kern_t k, long n, int threads) {
  pthread_t th[MAX_THREADS];
  struct job j[MAX_THREADS];
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, threads);
  for (int i = 0; i < threads; i++) {
    j[i] = (struct job){k, n, i, &bar, 0};
    pthread_create(&th[i], NULL, worker, &j[i]);
  }
  double worst = 0;
  for (int i = 0; i < threads; i++) {
    pthread_join(th[i], NULL);
    if (j[i].t > worst) worst = j[i].t;
  }
  pthread_barrier_destroy(&bar);
  return (double)n * k(1) / worst;
}

static long calibrate(kern_t k, double secs) {
  long n = 1000;
  for (;;) {
    double a = now();
    k(n);
    double t = now() - a;
    if (t > 0.02) return (long)(n * secs / t) + 1;
    n *= 4;
  }
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

struct mjob { int cpu; long bytes; pthread_barrier_t *bar; double gbps; long long sink; };

__attribute__((target("avx512f"))) static long long sum_buf(const __m512i *p, long n) {
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  for (long i = 0; i < n; i += 4) {
    a0 = _mm512_add_epi64(a0, _mm512_load_si512(p + i));
    a1 = _mm512_add_epi64(a1, _mm512_load_si512(p + i + 1));
    a2 = _mm512_add_epi64(a2, _mm512_load_si512(p + i + 2));
    a3 = _mm512_add_epi64(a3, _mm512_load_si512(p + i + 3));
  }
  return _mm512_reduce_add_epi64(_mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3)));
}

static void *mworker(void *p) {
  struct mjob *j = p;
  pin(j->cpu);
  __m512i *buf = aligned_alloc(64, j->bytes);
  if (buf == NULL) { j->gbps = 0; return NULL; }
  memset(buf, 1, j->bytes);  // first touch on this thread
  for (int r = 0; r < 6; r++) {
    pthread_barrier_wait(j->bar);
    double a = now();
    j->sink += sum_buf(buf, j->bytes / 64);
    double g = j->bytes / (now() - a) / 1e9;
    if (g > j->gbps) j->gbps = g;
  }
  free(buf);
  return NULL;
}

// Total GB/s over the threads (each thread's best run).
static double mem_bw(int threads, long bytes_per_thread) {
  pthread_t th[MAX_THREADS];
  struct mjob j[MAX_THREADS];
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, threads);
  for (int i = 0; i < threads; i++) {
    j[i] = (struct mjob){i, bytes_per_thread, &bar, 0, 0};
    pthread_create(&th[i], NULL, mworker, &j[i]);
  }
  double total = 0;
  for (int i = 0; i < threads; i++) {
    pthread_join(th[i], NULL);
    total += j[i].gbps;
  }
  pthread_barrier_destroy(&bar);
  return total;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  double secs = (argc > 2 ? atof(argv[2]) : 200) / 1000.0;
  if (threads < 1 || threads > MAX_THREADS) {
    fprintf(stderr, "threads: 1 to %d\n", MAX_THREADS);
    return 2;
  }
  __builtin_cpu_init();
  const int vnni = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512f");
  const int avx512 = __builtin_cpu_supports("avx512f");
  printf("{\"engine\": \"machine\", \"threads\": %d", threads);
  if (vnni) {
    long nclk = calibrate(k_clock, secs / 4), n = calibrate(k_vnni, secs);
    double gops[REPS], ghz[REPS];
    for (int r = 0; r < REPS; r++) {
      ghz[r] = run_once(k_clock, nclk, threads) / 1e9;
      gops[r] = run_once(k_vnni, n, threads) * 128 / 1e9 * threads;
    }
    qsort(gops, REPS, sizeof *gops, cmp);
    qsort(ghz, REPS, sizeof *ghz, cmp);
    printf(", \"vnni_zmm_gops_best\": %.1f, \"vnni_zmm_gops_median\": %.1f, \"clock_ghz\": %.3f",
           gops[REPS - 1], gops[REPS / 2], ghz[REPS / 2]);
  } else {
    printf(", \"vnni_zmm_gops_best\": null, \"vnni_zmm_gops_median\": null, \"clock_ghz\": null");
  }
  if (avx512) {
    printf(", \"mem_read_gbps\": %.1f, \"read_128mib_gbps\": %.1f", mem_bw(threads, 1L << 30),
           mem_bw(threads, (128L << 20) / threads));
  } else {
    printf(", \"mem_read_gbps\": null, \"read_128mib_gbps\": null");
  }
  printf("}\n");
  return 0;
}
