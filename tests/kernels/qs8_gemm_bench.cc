// qs8_gemm_bench: times the int8 GEMM variants compiled for this machine, the
// plain ones (qs8_gemm, weights in place) and the packed ones (qs8_packed_gemm),
// on one thread. Built with the tests, not run by ctest (timings, not checks).
//
//   qs8_gemm_bench [reps=30]
//
// Prefill: M = 128 rows on the BERT-base shapes N x K = 768 x 768, 3072 x 768,
// 768 x 3072; GOPS (2 M N K per call), best and median of `reps` calls, and % of
// the vpdpbusd zmm peak (x86 with AVX512-VNNI: 12 independent vpdpbusd chains,
// 128 ops each): "%peak" = best GOPS / best of 20 peak runs; "%pk pairs" = the
// median over calls of GOPS / the peak measured right before the call (see Time).
// Decode: M = 1, 2, 4 over (a) one 2048 x 768 matrix (1.5 MB, above the L2 cache,
// in L3) and (b) 48 matrices of 3072 x 768 (113 MB, ~ a 12-layer 768-wide Llama's
// weights per token) called in turn; GB/s of weights streamed (packed bytes, or
// N K for the plain kernels).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel_table.h"
#include "kernels/qs8_gemm.h"
#include "kernels/qs8_packed_gemm.h"
#include "platform/cpu.h"

namespace octet {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

#if defined(__x86_64__)
// GOPS of 12 independent vpdpbusd zmm chains over ~1 ms.
__attribute__((target("avx512f,avx512vnni"))) double VnniPeakGops() {
  const long iterations = 250000;
  const double t0 = Now();
  long n = iterations;
  __asm__ volatile(
      "vpxord %%zmm12, %%zmm12, %%zmm12\n\t"
      "vpternlogd $0xff, %%zmm13, %%zmm13, %%zmm13\n\t"
      "1:\n\t"
      "vpdpbusd %%zmm13, %%zmm12, %%zmm0\n\tvpdpbusd %%zmm13, %%zmm12, %%zmm1\n\t"
      "vpdpbusd %%zmm13, %%zmm12, %%zmm2\n\tvpdpbusd %%zmm13, %%zmm12, %%zmm3\n\t"
      "vpdpbusd %%zmm13, %%zmm12, %%zmm4\n\tvpdpbusd %%zmm13, %%zmm12, %%zmm5\n\t"
      "vpdpbusd %%zmm13, %%zmm12, %%zmm6\n\tvpdpbusd %%zmm13, %%zmm12, %%zmm7\n\t"
      "vpdpbusd %%zmm13, %%zmm12, %%zmm8\n\tvpdpbusd %%zmm13, %%zmm12, %%zmm9\n\t"
      "vpdpbusd %%zmm13, %%zmm12, %%zmm10\n\tvpdpbusd %%zmm13, %%zmm12, %%zmm11\n\t"
      "dec %0\n\tjnz 1b\n\t"
      : "+r"(n)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "cc");
  return iterations * 12.0 * 128.0 / (Now() - t0) / 1e9;
}
#endif

// The vpdpbusd zmm peak in GOPS now (0 without AVX512-VNNI).
double PeakGops() {
#if defined(__x86_64__)
  if ((GetCpuInfo().features & kCpuX86Avx512Vnni) != 0) return VnniPeakGops();
#endif
  return 0;
}

std::vector<int8_t> Random(size_t n, std::mt19937& rng) {
  std::vector<int8_t> v(n);
  for (int8_t& x : v) x = static_cast<int8_t>(rng() % 255 - 127);
  return v;
}

// 64-byte aligned bytes (the packed weights' preferred alignment).
struct Aligned {
  explicit Aligned(size_t n) : bytes(n + 64) {}
  int8_t* data() {
    return bytes.data() + (64 - reinterpret_cast<uintptr_t>(bytes.data()) % 64) % 64;
  }
  std::vector<int8_t> bytes;
};

struct Timing {
  double best, median;  // seconds per call
  double ratio;         // median of (ops / call time) / PeakGops() measured right before
};

// `reps` calls, each right after a ~1 ms peak measurement when ops > 0: the VM's
// clock drifts and other processes share the cores, so each call is also compared
// with the peak of its moment (the median of those ratios is reported; their best
// is not, as a preempted peak measurement inflates it).
Timing Time(int reps, double ops, const std::function<void()>& call) {
  call();  // warm up
  std::vector<double> t(reps), ratio(reps);
  for (int r = 0; r < reps; ++r) {
    const double peak = ops > 0 ? PeakGops() : 0;
    const double t0 = Now();
    call();
    t[r] = Now() - t0;
    ratio[r] = peak > 0 ? ops / t[r] / 1e9 / peak : 0;
  }
  std::sort(t.begin(), t.end());
  std::sort(ratio.begin(), ratio.end());
  return {t[0], t[t.size() / 2], ratio[ratio.size() / 2]};
}

struct Kernel {
  std::string name;
  Qs8GemmFn plain;         // or
  Qs8PackedGemmFn packed;  // one of the two
};

// Every optimized variant this CPU runs (the references are far too slow here).
std::vector<Kernel> Kernels() {
  const uint32_t features = GetCpuInfo().features;
  std::vector<Kernel> kernels;
  size_t count = 0;
  const KernelVariant<Qs8GemmFn>* plain = Qs8GemmVariants(&count);
  for (size_t i = 0; i + 1 < count; ++i) {
    if ((plain[i].required_features & ~features) == 0) {
      kernels.push_back({plain[i].name, plain[i].fn, nullptr});
    }
  }
  const KernelVariant<Qs8PackedGemmFn>* packed = Qs8PackedGemmVariants(&count);
  for (size_t i = 0; i + 1 < count; ++i) {
    if ((packed[i].required_features & ~features) == 0) {
      kernels.push_back({packed[i].name, nullptr, packed[i].fn});
    }
  }
  return kernels;
}

void Prefill(const std::vector<Kernel>& kernels, int reps) {
  std::printf("prefill, M = 128, one thread\n");
  std::printf("%-38s %5s %5s %7s %7s %7s %9s\n", "kernel", "N", "K", "GOPS", "median", "%peak",
              "%pk pairs");
  std::mt19937 rng(1);
  const size_t shapes[][2] = {{768, 768}, {3072, 768}, {768, 3072}};
  const size_t M = 128;
  for (const auto& shape : shapes) {
    const size_t N = shape[0], K = shape[1];
    const std::vector<int8_t> A = Random(M * K, rng);  // [M, K]
    const std::vector<int8_t> B = Random(N * K, rng);  // [N, K]
    Aligned packed(qs8_pack_weights_size(N, K));
    qs8_pack_weights__ref(N, K, B.data(), K, packed.data());
    std::vector<int32_t> expected(M * N), C(M * N);  // [M, N]
    qs8_gemm__ref(M, N, K, A.data(), K, B.data(), K, expected.data(), N);
    const double ops = 2.0 * M * N * K;
    double peak = 0;
    for (int r = 0; r < 20; ++r) peak = std::max(peak, PeakGops());
    for (const Kernel& k : kernels) {
      std::function<void()> call = [&] {
        if (k.plain) {
          k.plain(M, N, K, A.data(), K, B.data(), K, C.data(), N);
        } else {
          k.packed(M, N, K, A.data(), K, packed.data(), C.data(), N);
        }
      };
      const Timing t = Time(reps, ops, call);
      const bool ok = C == expected;
      std::printf("%-38s %5zu %5zu %7.1f %7.1f %6.1f%% %8.1f%%%s\n", k.name.c_str(), N, K,
                  ops / t.best / 1e9, ops / t.median / 1e9,
                  peak > 0 ? 100 * ops / t.best / 1e9 / peak : 0.0, 100 * t.ratio,
                  ok ? "" : "  WRONG RESULT");
    }
    std::printf("%-38s %5zu %5zu %7.1f (best of 20 runs)\n", "vpdpbusd zmm peak", N, K, peak);
  }
}

void Decode(const std::vector<Kernel>& kernels, int reps) {
  std::printf("\ndecode, one thread: GB/s of weights\n");
  std::printf("%-38s %2s %18s %18s\n", "kernel", "M", "2048x768 (1.5 MB)", "48x3072x768 (113 MB)");
  std::mt19937 rng(2);
  const size_t kSmallN = 2048, kBigN = 3072, K = 768, kMatrices = 48;
  const std::vector<int8_t> A = Random(4 * K, rng);            // [4, K]
  const std::vector<int8_t> small = Random(kSmallN * K, rng);  // [2048, K]
  Aligned small_packed(qs8_pack_weights_size(kSmallN, K));
  qs8_pack_weights__ref(kSmallN, K, small.data(), K, small_packed.data());
  // The big set: kMatrices distinct [3072, K] matrices, plain and packed.
  const size_t packed_bytes = qs8_pack_weights_size(kBigN, K);
  std::vector<int8_t> big = Random(kMatrices * kBigN * K, rng);  // [48, 3072, K]
  Aligned big_packed(kMatrices * packed_bytes);
  for (size_t i = 0; i < kMatrices; ++i) {
    qs8_pack_weights__ref(kBigN, K, big.data() + i * kBigN * K, K,
                          big_packed.data() + i * packed_bytes);
  }
  std::vector<int32_t> C(4 * kBigN);  // [M, N]
  for (const Kernel& k : kernels) {
    for (size_t M : {1, 2, 4}) {
      const Timing small_t = Time(reps * 20, 0, [&] {
        if (k.plain) {
          k.plain(M, kSmallN, K, A.data(), K, small.data(), K, C.data(), kSmallN);
        } else {
          k.packed(M, kSmallN, K, A.data(), K, small_packed.data(), C.data(), kSmallN);
        }
      });
      const Timing big_t = Time(std::max(3, reps / 5), 0, [&] {
        for (size_t i = 0; i < kMatrices; ++i) {
          if (k.plain) {
            k.plain(M, kBigN, K, A.data(), K, big.data() + i * kBigN * K, K, C.data(), kBigN);
          } else {
            k.packed(M, kBigN, K, A.data(), K, big_packed.data() + i * packed_bytes, C.data(),
                     kBigN);
          }
        }
      });
      const double small_bytes = k.plain ? kSmallN * K : qs8_pack_weights_size(kSmallN, K);
      const double big_bytes = kMatrices * (k.plain ? kBigN * K : packed_bytes);
      std::printf("%-38s %2zu %18.1f %18.1f\n", k.name.c_str(), M, small_bytes / small_t.best / 1e9,
                  big_bytes / big_t.best / 1e9);
    }
  }
}

}  // namespace
}  // namespace octet

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 30;
  const std::vector<octet::Kernel> kernels = octet::Kernels();
  octet::Prefill(kernels, reps);
  octet::Decode(kernels, reps);
  return 0;
}
