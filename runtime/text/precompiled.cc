#include "text/precompiled.h"

#include "text/unicode.h"
#include "core/utf8.h"

namespace octet {
namespace text {
namespace {

constexpr size_t kHeaderBytes = 4;
// tokenizers looks a whole grapheme up only when it is shorter than this.
constexpr size_t kMaxGraphemeLookup = 6;

uint32_t LoadLe32(const uint8_t* p) {
  // Byte by byte: the blob sits at any alignment inside the model file.
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// The blob's two parts, found without trusting the header beyond the size.
struct Charsmap {
  const uint8_t* units = nullptr;  // [unit_count] little-endian u32
  size_t unit_count = 0;
  const char* normalized = nullptr;  // [normalized_size] replacement strings
  size_t normalized_size = 0;
};

bool Split(const uint8_t* map, size_t size, Charsmap* cm) {
  if (map == nullptr || size < kHeaderBytes) return false;
  // tokenizers reads trie_bytes / 4 units; a remainder belongs to the strings.
  const size_t unit_count = LoadLe32(map) / 4;
  if (unit_count == 0 || unit_count > (size - kHeaderBytes) / 4) return false;
  cm->units = map + kHeaderBytes;
  cm->unit_count = unit_count;
  cm->normalized = reinterpret_cast<const char*>(map + kHeaderBytes + unit_count * 4);
  cm->normalized_size = size - kHeaderBytes - unit_count * 4;
  return true;
}

// Darts unit fields, as sentencepiece's darts.h (and spm_precompiled) read them.
bool HasLeaf(uint32_t unit) { return (unit >> 8) & 1; }
uint32_t Value(uint32_t unit) { return unit & 0x7FFFFFFFu; }
uint32_t Label(uint32_t unit) { return unit & 0x800000FFu; }
size_t Offset(uint32_t unit) { return size_t{unit >> 10} << ((unit & (1u << 9)) >> 6); }

// The replacement for the shortest trie key that is a prefix of key[0, n), or
// false when there is none (or the blob points somewhere it must not).
bool Lookup(const Charsmap& cm, const char* key, size_t n, const char** repl, size_t* repl_size) {
  size_t node = Offset(LoadLe32(cm.units));
  for (size_t i = 0; i < n; ++i) {
    const uint8_t c = static_cast<uint8_t>(key[i]);
    if (c == 0) return false;
    node ^= c;
    if (node >= cm.unit_count) return false;
    const uint32_t unit = LoadLe32(cm.units + node * 4);
    if (Label(unit) != c) return false;
    node ^= Offset(unit);
    if (!HasLeaf(unit)) continue;
    if (node >= cm.unit_count) return false;
    const size_t at = Value(LoadLe32(cm.units + node * 4));
    if (at > cm.normalized_size) return false;
    // A value inside a character would make tokenizers panic on a bad slice.
    if (at < cm.normalized_size && Utf8IsContinuation(cm.normalized[at])) {
      return false;
    }
    size_t end = at;
    while (end < cm.normalized_size && cm.normalized[end] != '\0') ++end;
    *repl = cm.normalized + at;
    *repl_size = end - at;
    return true;
  }
  return false;
}

// The replacement for the longest trie key that is a prefix of key[0, n):
// its length, or 0 when there is none (or the blob points somewhere it must not).
size_t LongestKey(const Charsmap& cm, const char* key, size_t n, const char** repl,
                  size_t* repl_size) {
  size_t node = Offset(LoadLe32(cm.units));
  size_t best = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t c = static_cast<uint8_t>(key[i]);
    if (c == 0) break;
    node ^= c;
    if (node >= cm.unit_count) break;
    const uint32_t unit = LoadLe32(cm.units + node * 4);
    if (Label(unit) != c) break;
    node ^= Offset(unit);
    if (!HasLeaf(unit)) continue;
    if (node >= cm.unit_count) break;
    const size_t at = Value(LoadLe32(cm.units + node * 4));
    if (at > cm.normalized_size) break;
    if (at < cm.normalized_size && Utf8IsContinuation(cm.normalized[at])) break;
    size_t end = at;
    while (end < cm.normalized_size && cm.normalized[end] != '\0') ++end;
    *repl = cm.normalized + at;
    *repl_size = end - at;
    best = i + 1;
  }
  return best;
}

// The length of the UTF-8 sequence that starts with `lead`, never past `left`.
size_t CharLength(uint8_t lead, size_t left) {
  size_t len = 1;
  if (lead >= 0xF0) {
    len = 4;
  } else if (lead >= 0xE0) {
    len = 3;
  } else if (lead >= 0xC0) {
    len = 2;
  }
  return len < left ? len : left;
}

class Sink {
 public:
  Sink(char* out, size_t cap) : out_(out), cap_(cap) {}
  void Append(const char* s, size_t n) {
    for (size_t i = 0; i < n; ++i, ++size_) {
      if (size_ < cap_) out_[size_] = s[i];
    }
  }
  size_t size() const { return size_; }

 private:
  char* out_;
  size_t cap_;
  size_t size_ = 0;
};

}  // namespace

Status CheckCharsmap(const uint8_t* map, size_t size) {
  Charsmap cm;
  if (!Split(map, size, &cm)) {
    return Status::Error(StatusCode::kInvalidModel,
                         "precompiled charsmap: %zu bytes do not hold its trie", size);
  }
  const size_t valid = Utf8ValidPrefix(cm.normalized, cm.normalized_size);
  if (valid != cm.normalized_size) {
    return Status::Error(StatusCode::kInvalidModel,
                         "precompiled charsmap: replacement strings are not UTF-8 (byte %zu)",
                         valid);
  }
  return Status::Ok();
}

size_t CharsmapMaxGrowth(const uint8_t* map, size_t size) {
  Charsmap cm;
  size_t longest = 1;
  if (!Split(map, size, &cm)) return longest;
  size_t run = 0;
  for (size_t i = 0; i < cm.normalized_size; ++i) {
    run = cm.normalized[i] == '\0' ? 0 : run + 1;
    if (run > longest) longest = run;
  }
  return longest;
}

size_t ApplyCharsmap(const uint8_t* map, size_t map_size, const char* in, size_t n, char* out,
                     size_t cap) {
  Sink sink(out, cap);
  Charsmap cm;
  if (!Split(map, map_size, &cm)) {
    sink.Append(in, n);
    return sink.size();
  }
  const char* repl = nullptr;
  size_t repl_size = 0;
  size_t pos = 0;
  while (pos < n) {
    size_t end = NextGraphemeEnd(in, n, pos);
    if (end <= pos || end > n) end = pos + CharLength(static_cast<uint8_t>(in[pos]), n - pos);
    if (end - pos < kMaxGraphemeLookup && Lookup(cm, in + pos, end - pos, &repl, &repl_size)) {
      sink.Append(repl, repl_size);
      pos = end;
      continue;
    }
    while (pos < end) {
      const size_t len = CharLength(static_cast<uint8_t>(in[pos]), end - pos);
      if (Lookup(cm, in + pos, len, &repl, &repl_size)) {
        sink.Append(repl, repl_size);
      } else {
        sink.Append(in + pos, len);
      }
      pos += len;
    }
  }
  return sink.size();
}

size_t CharsmapLongestPrefix(const uint8_t* map, size_t map_size, const char* in, size_t n,
                             const char** repl, size_t* repl_size) {
  Charsmap cm;
  if (!Split(map, map_size, &cm)) return 0;
  return LongestKey(cm, in, n, repl, repl_size);
}

}  // namespace text
}  // namespace octet
