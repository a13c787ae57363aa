// The compiled tokenizer's lookup tables (TokModel.index, TokModel.merges; the
// layouts are written in runtime/format/octet_model.fbs). One definition of the
// hashes and the probing, used by the converter to build the tables and by the
// runtime to read them in place, so the two cannot disagree.
//
// The probes trust the table's shape (slot count a power of two, the array
// long enough): CheckTokTables (tokenizer_check.h) verifies it at load. A
// probe stops after S slots, so even a full table cannot loop forever.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace octet {
namespace text {

inline uint64_t TokLoad64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// A multiply-xorshift hash over 8-byte words, assembled little-endian so that
// a file built on one machine probes the same on every other.
inline uint32_t TokHash(const uint8_t* p, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xFF51AFD7ED558CCDull);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w = 0;
    for (int k = 7; k >= 0; --k) w = (w << 8) | p[i + k];
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 29;
  }
  if (i < n) {
    uint64_t w = 0;
    for (size_t k = n; k > i; --k) w = (w << 8) | p[k - 1];
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 29;
  }
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 32;
  return static_cast<uint32_t>(h);
}

inline uint32_t TokPairHash(uint32_t left, uint32_t right) {
  uint64_t h = (static_cast<uint64_t>(left) << 32 | right) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 31;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 29;
  return static_cast<uint32_t>(h);
}

// The slot count for `n` keys: a power of two with the table at most half full.
inline uint32_t TokSlotsFor(size_t n) {
  uint32_t s = 16;
  while (s < 2 * n) s <<= 1;
  return s;
}

constexpr uint32_t kTokEmptyPair = 0xFFFFFFFFu;

// What a BPE merge of (left, right) gives.
struct TokMerge {
  uint32_t rank;
  uint32_t merged;
};

// merges = {S, S slots of {left, right, rank, merged}}. False when the pair has no merge.
inline bool TokFindMerge(const uint32_t* merges, uint32_t left, uint32_t right, TokMerge* out) {
  const uint32_t slots = merges[0];
  const uint32_t* table = merges + 1;
  uint32_t i = TokPairHash(left, right) & (slots - 1);
  for (uint32_t probes = 0; probes < slots; ++probes) {
    const uint32_t* slot = table + 4 * static_cast<size_t>(i);
    if (slot[0] == kTokEmptyPair) return false;
    if (slot[0] == left && slot[1] == right) {
      out->rank = slot[2];
      out->merged = slot[3];
      return true;
    }
    i = (i + 1) & (slots - 1);
  }
  return false;
}

}  // namespace text
}  // namespace octet
