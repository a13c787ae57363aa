// f32_vector_bench: time per element of every compiled variant of the float
// kernels this CPU runs, at BERT-base shapes (seq 128, hidden 768, FFN 3072)
// and a Llama-like RoPE, and ops/qs8_attention at seq 128, 12 heads, head_dim 64
// with each softmax variant (the reference's scalar double exp is the op as it
// was before the vector kernels), and every f32_attention variant at W1's shape
// (seq 128, bidirectional), a causal prefill of 512 and a decode step over 256
// keys (12 heads x 64). Built with the tests, not run by ctest:
//
//   build/<preset>/bin/f32_vector_bench [repetitions (default 20)]
//
// Each figure is the best of the repetitions (warm caches, one thread).

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "kernels/kernel_table.h"
#include "ops/qs8_attention.h"
#include "platform/cpu.h"

namespace octet {
namespace {

int g_reps = 20;

// The best time of g_reps runs of fn, in seconds; `reset` runs before each,
// untimed.
template <typename Reset, typename Fn>
double Best(Reset reset, Fn fn) {
  double best = 1e30;
  for (int rep = 0; rep < g_reps; ++rep) {
    reset();
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s < best) best = s;
  }
  return best;
}

template <typename Fn>
std::vector<KernelVariant<Fn>> Runnable(const KernelVariant<Fn>* (*list)(size_t*)) {
  const uint32_t features = GetCpuInfo().features;
  size_t count = 0;
  const KernelVariant<Fn>* variants = list(&count);
  std::vector<KernelVariant<Fn>> runnable;
  for (size_t i = 0; i < count; ++i) {
    if ((variants[i].required_features & features) == variants[i].required_features) {
      runnable.push_back(variants[i]);
    }
  }
  return runnable;
}

std::vector<float> Normal(size_t n, float mean, float sd, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(mean, sd);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

void Activations() {
  const size_t rows = 128, cols = 3072, n = rows * cols;
  const std::vector<float> x0 = Normal(n, 0.0f, 2.0f, 1);
  std::vector<float> x(n), up = Normal(n, 0.0f, 1.0f, 2);
  const struct {
    F32Activation act;
    const char* name;
  } acts[] = {{F32Activation::kGeluErf, "GELU (erf)"},
              {F32Activation::kGeluTanh, "GELU (tanh)"},
              {F32Activation::kSilu, "SiLU"}};
  for (const auto& a : acts) {
    for (const auto& v : Runnable(F32ActivationVariants)) {
      const double s = Best([&] { x = x0; }, [&] { v.fn(a.act, n, x.data()); });
      std::printf("%-12s %zux%zu  %-28s %7.3f ns/element\n", a.name, rows, cols, v.name,
                  s * 1e9 / n);
    }
  }
  for (const auto& v : Runnable(F32GatedActivationVariants)) {
    const double s =
        Best([&] { x = x0; },
             [&] { v.fn(F32Activation::kSilu, rows, cols, x.data(), cols, up.data(), cols); });
    std::printf("%-12s %zux%zu  %-28s %7.3f ns/element\n", "SiLU gated", rows, cols, v.name,
                s * 1e9 / n);
  }
}

void Norms() {
  const size_t rows = 128, cols = 768, n = rows * cols;
  const std::vector<float> x = Normal(n, 0.5f, 2.0f, 3);
  const std::vector<float> w = Normal(cols, 1.0f, 0.1f, 4), b = Normal(cols, 0.0f, 0.1f, 5);
  std::vector<float> y(n);
  for (const auto& v : Runnable(F32LayerNormVariants)) {
    const double s =
        Best([] {},
             [&] { v.fn(rows, cols, x.data(), cols, w.data(), b.data(), 1e-12f, y.data(), cols); });
    std::printf("%-12s %zux%zu   %-28s %7.3f ns/element\n", "LayerNorm", rows, cols, v.name,
                s * 1e9 / n);
  }
  for (const auto& v : Runnable(F32RmsNormVariants)) {
    const double s =
        Best([] {}, [&] { v.fn(rows, cols, x.data(), cols, w.data(), 1e-6f, y.data(), cols); });
    std::printf("%-12s %zux%zu   %-28s %7.3f ns/element\n", "RMSNorm", rows, cols, v.name,
                s * 1e9 / n);
  }
}

void Rope() {
  // Llama-2-7B-like: 32 heads of 128, 128 tokens from position 1000.
  const size_t len = 128, heads = 32, head_dim = 128, n = len * heads * head_dim;
  RopeFreqParams fp;
  fp.rotary_dim = head_dim;
  std::vector<float> inv_freq(head_dim / 2);
  rope_inv_freq(fp, inv_freq.data());
  F32RopeParams p;
  p.len = len;
  p.heads = heads;
  p.head_dim = head_dim;
  p.rotary_dim = head_dim;
  p.pos0 = 1000;
  p.inv_freq = inv_freq.data();
  const std::vector<float> x0 = Normal(n, 0.0f, 1.0f, 6);
  std::vector<float> x(n);
  for (const auto& v : Runnable(F32RopeVariants)) {
    const double s = Best([&] { x = x0; }, [&] { v.fn(p, x.data(), heads * head_dim); });
    std::printf("%-12s %zux%zux%zu %-28s %7.3f ns/element\n", "RoPE", len, heads, head_dim, v.name,
                s * 1e9 / n);
  }
}

void Attention() {
  const size_t seq = 128, heads = 12, head_dim = 64, qd = heads * head_dim;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> dist(-127, 127);
  std::vector<int8_t> q(seq * qd), k(seq * qd), v(seq * qd);
  for (auto* buffer : {&q, &k, &v}) {
    for (int8_t& e : *buffer) e = static_cast<int8_t>(dist(rng));
  }
  // Scales giving logits of a few units, as in a trained model.
  const std::vector<float> q_scales(seq * heads, 0.02f), k_scales(seq * heads, 0.02f);
  const std::vector<float> v_scales(seq * heads, 0.01f);
  AttentionParams p;
  p.num_heads = heads;
  p.num_kv_heads = heads;
  p.head_dim = head_dim;
  p.q_len = seq;
  p.kv_len = seq;
  p.scale = 0.125f;
  std::vector<uint8_t> scratch(qs8_attention_scratch_bytes(p) + 64);
  void* aligned = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
  std::vector<float> out(seq * qd);
  const KernelTable& table = GetKernelTable();
  for (const auto& softmax : Runnable(Qs8SoftmaxTileVariants)) {
    const Qs8AttentionKernels kernels{table.qs8_gemm, table.qu8s8_pv, softmax.fn};
    const double s = Best([] {},
                          [&] {
                            qs8_attention(kernels, p, q.data(), qd, q_scales.data(), k.data(), qd,
                                          k_scales.data(), v.data(), qd, v_scales.data(),
                                          out.data(), qd, aligned);
                          });
    std::printf("qs8_attention seq %zu, %zu heads x %zu (%s, %s, %s): %.3f ms, %.2f ns/logit\n",
                seq, heads, head_dim, table.qs8_gemm_name, table.qu8s8_pv_name, softmax.name,
                s * 1e3, s * 1e9 / (seq * seq * heads));
  }
}

void F32Attention() {
  struct Shape {
    const char* what;
    size_t q_len, kv_len;
    bool causal;
  };
  const Shape kShapes[] = {{"W1 bidirectional", 128, 128, false},
                           {"causal prefill", 512, 512, true},
                           {"decode step", 1, 256, true}};
  const size_t heads = 12, head_dim = 64, qd = heads * head_dim;
  for (const Shape& shape : kShapes) {
    AttentionParams p;
    p.num_heads = heads;
    p.num_kv_heads = heads;
    p.head_dim = head_dim;
    p.q_len = shape.q_len;
    p.kv_len = shape.kv_len;
    p.q_pos0 = shape.kv_len - shape.q_len;
    p.causal = shape.causal;
    p.scale = 0.125f;
    const std::vector<float> q = Normal(p.q_len * qd, 0.0f, 1.0f, 1);   // [q_len, heads, head_dim]
    const std::vector<float> k = Normal(p.kv_len * qd, 0.0f, 1.0f, 2);  // [kv_len, heads, head_dim]
    const std::vector<float> v = Normal(p.kv_len * qd, 0.0f, 1.0f, 3);  // [kv_len, heads, head_dim]
    std::vector<float> out(p.q_len * qd);
    std::vector<float> scratch(f32_attention_scratch_floats(p));
    // Multiply-adds of Q K^T and P V over the visible (row, key) pairs.
    double pairs = 0.0;
    for (size_t i = 0; i < p.q_len; ++i) {
      size_t lo = 0, hi = 0;
      AttentionKeyRange(p, i, &lo, &hi);
      pairs += static_cast<double>(hi - lo);
    }
    const double flops = 4.0 * pairs * heads * head_dim;
    for (const auto& variant : Runnable(F32AttentionVariants)) {
      const double s = Best([] {},
                            [&] {
                              variant.fn(p, q.data(), qd, k.data(), qd, v.data(), qd, out.data(),
                                         qd, scratch.data());
                            });
      std::printf("f32_attention %s, q %zu x kv %zu, %zu heads x %zu (%s): %.3f ms, %.1f GFLOP/s\n",
                  shape.what, p.q_len, p.kv_len, heads, head_dim, variant.name, s * 1e3,
                  flops / s * 1e-9);
    }
  }
}

}  // namespace
}  // namespace octet

int main(int argc, char** argv) {
  if (argc > 1) octet::g_reps = std::atoi(argv[1]) > 0 ? std::atoi(argv[1]) : 20;
  octet::Activations();
  octet::Norms();
  octet::Rope();
  octet::Attention();
  octet::F32Attention();
  return 0;
}
