// Every qs8_packed_check variant compiled into this build against
// qs8_packed_check__ref (kernels/qs8_packed_check.h): weights packed by
// qs8_pack_weights__ref pass, over a sweep of N and K (every K % 4, every
// N % 16, the K bound with all weights at -128 and at 127), and each kind of
// damage is found in the tile that holds it, by the reference and by every
// variant: a corr byte, a weight byte, a padding byte (k past K, channels past
// N), and padding made non-zero while its channel's sum (so corr) still matches.
// Which variants run: runnable_variants.h.
//
// The packed weights are sized exactly (qs8_pack_weights_size bytes at the end
// of their vector, one byte in so they are misaligned), so with ASan any read past
// them is an error.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "kernels/kernel_table.h"
#include "kernels/qs8_packed_check.h"
#include "kernels/qs8_packed_gemm.h"
#include "runnable_variants.h"

namespace octet {
namespace {

using Variant = KernelVariant<Qs8PackedCheckFn>;

std::vector<Variant> RunnableVariants() {
  size_t count = 0;
  const Variant* variants = Qs8PackedCheckVariants(&count);
  return test::RunnableVariants(variants, count);
}

size_t Tiles(size_t n) { return (n + kQs8PackedNr - 1) / kQs8PackedNr; }

// B [n, k] packed, one byte into the vector: data() + 1 is the packed buffer.
std::vector<int8_t> Packed(size_t n, size_t k, const std::vector<int8_t>& b) {
  std::vector<int8_t> packed(1 + qs8_pack_weights_size(n, k));
  qs8_pack_weights__ref(n, k, b.data(), k, packed.data() + 1);
  return packed;
}

std::vector<int8_t> RandomWeights(size_t n, size_t k, std::mt19937& rng) {
  std::vector<int8_t> b(n * k);
  for (int8_t& v : b) v = static_cast<int8_t>(static_cast<uint8_t>(rng() >> 8));
  return b;
}

// Every variant returns `expected` for the packed buffer (data() + 1).
void ExpectAll(const std::vector<Variant>& variants, size_t n, size_t k,
               const std::vector<int8_t>& packed, size_t expected) {
  for (const Variant& v : variants) {
    INFO(std::string(v.name) << " N=" << n << " K=" << k);
    CHECK(v.fn(n, k, packed.data() + 1) == expected);
  }
}

// Byte offset, within the packed buffer, of w[g][c][t] of tile j.
size_t WeightOffset(size_t k, size_t j, size_t g, size_t c, size_t t) {
  return j * qs8_packed_tile_bytes(k) + kQs8PackedCorrBytes +
         (g * kQs8PackedNr + c) * kQs8PackedKGroup + t;
}

TEST_CASE("qs8_packed_check: packed weights pass, every kind of damage is found in its tile") {
  const std::vector<Variant> variants = RunnableVariants();
  std::mt19937 rng(20261201);
  std::vector<size_t> ns, ks;
  for (size_t n = 1; n <= 50; ++n) ns.push_back(n);
  ns.push_back(200);
  for (size_t k = 1; k <= 13; ++k) ks.push_back(k);
  for (size_t k : {63, 64, 65, 767, 768, 3072}) ks.push_back(k);
  for (size_t n : ns) {
    for (size_t k : ks) {
      const std::vector<int8_t> base = Packed(n, k, RandomWeights(n, k, rng));
      const size_t tiles = Tiles(n);
      ExpectAll(variants, n, k, base, tiles);
      const size_t groups = (k + kQs8PackedKGroup - 1) / kQs8PackedKGroup;
      const size_t j = rng() % tiles;
      const size_t valid =
          n - j * kQs8PackedNr < kQs8PackedNr ? n - j * kQs8PackedNr : kQs8PackedNr;
      {  // a corr byte
        std::vector<int8_t> p = base;
        p[1 + j * qs8_packed_tile_bytes(k) + rng() % kQs8PackedCorrBytes] ^= 0x10;
        ExpectAll(variants, n, k, p, j);
      }
      {  // a weight byte of a valid channel and k
        std::vector<int8_t> p = base;
        const size_t kk = rng() % k;
        p[1 + WeightOffset(k, j, kk / 4, rng() % valid, kk % 4)] ^= 0x01;
        ExpectAll(variants, n, k, p, j);
      }
      if (k % kQs8PackedKGroup != 0) {  // k past K non-zero, its channel's corr consistent
        std::vector<int8_t> p = base;
        const size_t c = rng() % valid;
        p[1 + WeightOffset(k, j, groups - 1, c, kQs8PackedKGroup - 1)] = 1;
        int32_t sum = 0;
        for (size_t g = 0; g < groups; ++g) {
          for (size_t t = 0; t < kQs8PackedKGroup; ++t) sum += p[1 + WeightOffset(k, j, g, c, t)];
        }
        const int32_t corr = -128 * sum;
        std::memcpy(&p[1 + j * qs8_packed_tile_bytes(k) + c * sizeof(int32_t)], &corr, 4);
        ExpectAll(variants, n, k, p, j);
      }
      if (n % kQs8PackedNr != 0) {  // a channel past N, its corr consistent
        std::vector<int8_t> p = base;
        const size_t last = tiles - 1;
        const size_t c = n % kQs8PackedNr + rng() % (kQs8PackedNr - n % kQs8PackedNr);
        p[1 + WeightOffset(k, last, 0, c, 0)] = 1;
        const int32_t corr = -128;
        std::memcpy(&p[1 + last * qs8_packed_tile_bytes(k) + c * sizeof(int32_t)], &corr, 4);
        ExpectAll(variants, n, k, p, last);
      }
    }
  }
}

TEST_CASE("qs8_packed_check: the K bound with extreme weights") {
  const std::vector<Variant> variants = RunnableVariants();
  const size_t n = 17, k = kQs8GemmMaxK;
  for (int value : {-128, 127}) {
    const std::vector<int8_t> b(n * k, static_cast<int8_t>(value));
    std::vector<int8_t> p = Packed(n, k, b);
    ExpectAll(variants, n, k, p, Tiles(n));
    p[1 + WeightOffset(k, 1, k / 4 - 1, 0, 3)] = 0;  // tile 1's channel 0, the last k
    ExpectAll(variants, n, k, p, 1);
  }
}

}  // namespace
}  // namespace octet
