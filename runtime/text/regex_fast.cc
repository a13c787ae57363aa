// Each matcher walks the alternatives of its pattern in order, as the
// backtracking engine would, but decides each with one forward scan: the
// classes involved (\p{L}, \p{N}, \s, other) partition the characters, so no
// alternative needs to give characters back except the whitespace ones,
// whose outcome follows from the run's length and its last \r or \n.
#include "text/regex_fast.h"

#include "text/unicode.h"
#include "core/utf8.h"

namespace octet::text::regex_fast {

namespace {

constexpr const char kGpt2[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
constexpr const char kLlama3[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char kQwen2[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+"
    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

inline uint8_t KindAt(const CharKinds& kinds, const uint8_t* s, size_t n, size_t i, size_t* len) {
  if (s[i] < 0x80) {
    *len = 1;
    return kinds.OfAscii(s[i]);
  }
  return kinds.Of(CharAt(s, n, i, len));
}

// End of the run of characters of `kind` from i.
inline size_t RunEnd(const CharKinds& kinds, const uint8_t* s, size_t n, size_t i, uint8_t kind) {
  while (i < n) {
    if (s[i] < 0x80) {
      if (kinds.OfAscii(s[i]) != kind) break;
      ++i;
      continue;
    }
    size_t len = 1;
    if (kinds.Of(CharAt(s, n, i, &len)) != kind) break;
    i += len;
  }
  return i;
}

// The same, at most `max` characters.
inline size_t RunEndMax(const CharKinds& kinds, const uint8_t* s, size_t n, size_t i,
                        uint8_t kind, size_t max) {
  for (size_t count = 0; i < n && count < max; ++count) {
    size_t len = 1;
    if (KindAt(kinds, s, n, i, &len) != kind) break;
    i += len;
  }
  return i;
}

// (?i) folding of one of the contraction letters: ASCII case, and U+017F
// (long s) folds to 's'. (U+212A folds to 'k', which no contraction has.)
inline uint32_t FoldContraction(uint32_t cp) {
  if (cp >= 'A' && cp <= 'Z') return cp + 32;
  if (cp == 0x17F) return 's';
  return cp;
}

}  // namespace

Kind Recognize(std::string_view pattern) {
  if (pattern == kGpt2) return Kind::kGpt2;
  if (pattern == kLlama3) return Kind::kLlama3;
  if (pattern == kQwen2) return Kind::kQwen2;
  return Kind::kNone;
}

bool CharKinds::Build() {
  for (uint32_t cp = 0; cp < 0x80; ++cp) ascii_[cp] = Slow(cp);
  if (!bmp_.Assign(0x10000 / 4, 0)) return false;
  for (uint32_t cp = 0; cp < 0x10000; ++cp) {
    bmp_[cp >> 2] |= static_cast<uint8_t>(Slow(cp) << ((cp & 3) * 2));
  }
  return true;
}

uint8_t CharKinds::Slow(uint32_t cp) {
  if (IsWhiteSpace(cp)) return kSpace;
  switch (CategoryOf(cp)) {
    case Category::kLu: case Category::kLl: case Category::kLt: case Category::kLm:
    case Category::kLo:
      return kLetter;
    case Category::kNd: case Category::kNl: case Category::kNo:
      return kNumber;
    default:
      return kOther;
  }
}

size_t MatchGpt2(const CharKinds& kinds, const uint8_t* s, size_t n, size_t p) {
  // 's|'t|'re|'ve|'m|'ll|'d
  if (s[p] == '\'' && p + 1 < n) {
    const uint8_t c1 = s[p + 1];
    if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') return p + 2;
    if (p + 2 < n) {
      const uint8_t c2 = s[p + 2];
      if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) {
        return p + 3;
      }
    }
  }
  // ' ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+': an optional space, then a run of
  // one kind.
  if (s[p] == ' ' && p + 1 < n) {
    size_t len = 1;
    const uint8_t k1 = KindAt(kinds, s, n, p + 1, &len);
    if (k1 != CharKinds::kSpace) return RunEnd(kinds, s, n, p + 1 + len, k1);
  }
  size_t len = 1;
  const uint8_t k0 = KindAt(kinds, s, n, p, &len);
  if (k0 != CharKinds::kSpace) return RunEnd(kinds, s, n, p + len, k0);
  // \s+(?!\S)|\s+: the whole run at the end of the text or when it is one
  // character; else all but its last character.
  size_t last = p, q = p + len, count = 1;
  while (q < n) {
    size_t l = 1;
    if (KindAt(kinds, s, n, q, &l) != CharKinds::kSpace) break;
    last = q;
    q += l;
    ++count;
  }
  if (q == n || count == 1) return q;
  return last;
}

size_t MatchLlama3(const CharKinds& kinds, const uint8_t* s, size_t n, size_t p,
                   uint32_t max_digits) {
  // (?i:'s|'t|'re|'ve|'m|'ll|'d)
  if (s[p] == '\'' && p + 1 < n) {
    size_t l1 = 1;
    const uint32_t f1 = FoldContraction(CharAt(s, n, p + 1, &l1));
    if (f1 == 's' || f1 == 't' || f1 == 'm' || f1 == 'd') return p + 1 + l1;
    if ((f1 == 'r' || f1 == 'v' || f1 == 'l') && p + 1 + l1 < n) {
      size_t l2 = 1;
      const uint32_t f2 = FoldContraction(CharAt(s, n, p + 1 + l1, &l2));
      if ((f1 != 'l' && f2 == 'e') || (f1 == 'l' && f2 == 'l')) return p + 1 + l1 + l2;
    }
  }
  size_t l0 = 1;
  const uint8_t k0 = KindAt(kinds, s, n, p, &l0);
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (k0 == CharKinds::kLetter) return RunEnd(kinds, s, n, p + l0, CharKinds::kLetter);
  if (k0 != CharKinds::kNumber && s[p] != '\r' && s[p] != '\n' && p + l0 < n) {
    size_t l1 = 1;
    if (KindAt(kinds, s, n, p + l0, &l1) == CharKinds::kLetter) {
      return RunEnd(kinds, s, n, p + l0 + l1, CharKinds::kLetter);
    }
  }
  // \p{N}{1,3} (or \p{N})
  if (k0 == CharKinds::kNumber) {
    return RunEndMax(kinds, s, n, p + l0, CharKinds::kNumber, max_digits - 1);
  }
  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  size_t start = p;
  if (s[p] == ' ' && p + 1 < n) {
    size_t l1 = 1;
    if (KindAt(kinds, s, n, p + 1, &l1) == CharKinds::kOther) start = p + 1;
  }
  if (start != p || k0 == CharKinds::kOther) {
    size_t q = RunEnd(kinds, s, n, start, CharKinds::kOther);
    while (q < n && (s[q] == '\r' || s[q] == '\n')) ++q;
    return q;
  }
  // Whitespace from here on. \s*[\r\n]+: up to and including the run's last
  // \r or \n.
  size_t last = p, q = p + l0, count = 1;
  size_t last_newline = (s[p] == '\r' || s[p] == '\n') ? p : n;
  while (q < n) {
    size_t l = 1;
    if (KindAt(kinds, s, n, q, &l) != CharKinds::kSpace) break;
    if (s[q] == '\r' || s[q] == '\n') last_newline = q;
    last = q;
    q += l;
    ++count;
  }
  if (last_newline != n) return last_newline + 1;
  // \s+(?!\S)|\s+
  if (q == n || count == 1) return q;
  return last;
}

}  // namespace octet::text::regex_fast
