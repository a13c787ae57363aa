#include "text/unicode.h"

#include <algorithm>
#include <cstring>

#include "core/utf8.h"

namespace octet::text {
namespace {

#include "text/unicode_data.inc"

// A property record (generated; the bit layout is gen_unicode_data.py's).
constexpr uint32_t kCategoryMask = 0x1F;
constexpr int kGcbShift = 5;
constexpr uint32_t kGcbMask = 0xF;
constexpr uint32_t kWhiteSpaceBit = 1u << 9;
constexpr uint32_t kAlphabeticBit = 1u << 10;
constexpr uint32_t kExtPictBit = 1u << 11;
constexpr uint32_t kCanonDecompBit = 1u << 12;
constexpr uint32_t kCompatDecompBit = 1u << 13;
constexpr uint32_t kComposeSecondBit = 1u << 14;
constexpr uint32_t kLowerBit = 1u << 15;
constexpr uint32_t kFoldBit = 1u << 16;
constexpr uint32_t kBoundaryNfdBit = 1u << 17;
constexpr uint32_t kBoundaryNfkdBit = 1u << 18;
constexpr uint32_t kBoundaryNfcBit = 1u << 19;
constexpr uint32_t kBoundaryNfkcBit = 1u << 20;
constexpr uint32_t kNfcYesBit = 1u << 21;
constexpr uint32_t kNfkcYesBit = 1u << 22;
constexpr int kCccShift = 24;

inline uint32_t Props(uint32_t cp) {
  // Beyond U+10FFFF reads as U+10FFFF: a noncharacter, Cn, no properties.
  if (cp > kMaxCodePoint) cp = kMaxCodePoint;
  const uint32_t block = kPropStage1[cp >> kPropShift];
  return kPropRecords[kPropStage2[(block << kPropShift) + (cp & ((1u << kPropShift) - 1))]];
}

inline uint8_t Ccc(uint32_t cp) { return static_cast<uint8_t>(Props(cp) >> kCccShift); }

// Index of key in the sorted keys[0, n), or -1.
template <typename K, size_t N>
inline int Find(const K (&keys)[N], K key) {
  const K* it = std::lower_bound(keys, keys + N, key);
  return (it != keys + N && *it == key) ? static_cast<int>(it - keys) : -1;
}

// Hangul syllables are composed and decomposed arithmetically (UAX #15 / the
// Unicode Standard section 3.12), not from tables.
constexpr uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr uint32_t kLCount = 19, kVCount = 21, kTCount = 28;
constexpr uint32_t kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

inline bool IsHangulSyllable(uint32_t cp) { return cp - kSBase < kSCount; }

// The primary composite of (a, b), if any.
bool ComposePair(uint32_t a, uint32_t b, uint32_t* out) {
  if (a - kLBase < kLCount && b - kVBase < kVCount) {
    *out = kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
    return true;
  }
  if (IsHangulSyllable(a) && (a - kSBase) % kTCount == 0 && b - kTBase - 1 < kTCount - 1) {
    *out = a + (b - kTBase);
    return true;
  }
  if (!(Props(b) & kComposeSecondBit)) return false;
  const int k = Find(kComposeKeys, (static_cast<uint64_t>(a) << 21) | b);
  if (k < 0) return false;
  *out = kComposeVals[k];
  return true;
}

// Appends UTF-8 to a caller buffer; counts every byte, stores those that fit.
struct Sink {
  char* out;
  size_t cap;
  size_t size = 0;

  void Put(uint32_t cp) {
    char bytes[kMaxUtf8Bytes];
    const size_t k = Utf8Encode(cp, bytes);
    if (size + k <= cap) std::memcpy(out + size, bytes, k);
    size += k;
  }
  void PutBytes(const char* s, size_t k) {
    // k == 0 must not reach memcpy: out may be null when cap is 0.
    if (k != 0 && size + k <= cap) std::memcpy(out + size, s, k);
    size += k;
  }
};

// The fully decomposed code point stream of s[0, n) (NFD or NFKD before
// canonical ordering). A plain value: copying it saves a position to replay.
struct Decomposer {
  static constexpr uint32_t kSelf = ~0u;
  static constexpr uint32_t kHangul = ~0u - 1;

  const char* s;
  size_t n;
  size_t pos = 0;
  bool compat;
  uint32_t cur = 0;      // the input code point being expanded
  uint32_t off = kSelf;  // its expansion: kDecompData offset, kSelf or kHangul
  uint8_t len = 0, idx = 0;

  Decomposer(const char* text, size_t size, bool compatibility)
      : s(text), n(size), compat(compatibility) {}

  uint32_t At(uint8_t k) const {
    if (off == kSelf) return cur;
    if (off == kHangul) {
      const uint32_t si = cur - kSBase;
      if (k == 0) return kLBase + si / kNCount;
      if (k == 1) return kVBase + (si % kNCount) / kTCount;
      return kTBase + si % kTCount;
    }
    return kDecompData[off + k];
  }

  bool Next(uint32_t* cp) {
    if (idx < len) {
      *cp = At(idx++);
      return true;
    }
    if (pos >= n) return false;
    bool valid;
    cur = Utf8DecodeChecked(s, n, &pos, &valid);
    idx = 0;
    len = 1;
    off = kSelf;
    if (IsHangulSyllable(cur)) {
      off = kHangul;
      len = (cur - kSBase) % kTCount ? 3 : 2;
    } else if (cur >= 0x80 && (Props(cur) & (compat ? kCompatDecompBit : kCanonDecompBit))) {
      const int k = Find(kDecompKeys, cur);
      const uint32_t v = compat ? kCompatVals[k] : kCanonVals[k];
      off = v >> 5;
      len = static_cast<uint8_t>(v & 31);
    }
    *cp = At(idx++);
    return true;
  }
};

// The decomposed stream in canonical order: every maximal run of non-starters
// stably sorted by combining class. A run already in order (nearly always)
// streams through; any other is emitted one class at a time, lowest first,
// each pass replaying the run from a saved Decomposer. So a run of any length
// needs no buffer, at a cost of one pass per distinct class in the run.
struct Reorderer {
  Decomposer d;              // next element outside an unsorted run
  uint32_t sorted_left = 0;  // elements left of an in-order run
  // The unsorted run being emitted.
  Decomposer run_start, run_end, pass;
  uint32_t run_len = 0, run_done = 0, pass_seen = 0;
  int level = 0, next_level = 0;

  explicit Reorderer(const Decomposer& dec) : d(dec), run_start(dec), run_end(dec), pass(dec) {}

  bool Next(uint32_t* cp, uint8_t* ccc) {
    if (run_done < run_len) return NextOfRun(cp, ccc);
    if (sorted_left > 0) {
      --sorted_left;
      d.Next(cp);
      *ccc = Ccc(*cp);
      return true;
    }
    const Decomposer before = d;
    if (!d.Next(cp)) return false;
    *ccc = Ccc(*cp);
    if (*ccc == 0) return true;
    // A run of non-starters begins: measure it and see whether it is in order.
    Decomposer scan = d, end = d;
    uint32_t len = 1, x = 0;
    int prev = *ccc, lowest = *ccc;
    bool in_order = true;
    while (scan.Next(&x)) {
      const int xc = Ccc(x);
      if (xc == 0) break;
      in_order = in_order && xc >= prev;
      lowest = std::min(lowest, xc);
      prev = xc;
      ++len;
      end = scan;
    }
    if (in_order) {
      sorted_left = len - 1;
      return true;
    }
    run_start = pass = before;
    run_end = end;
    run_len = len;
    run_done = pass_seen = 0;
    level = lowest;
    next_level = 256;
    return NextOfRun(cp, ccc);
  }

  bool NextOfRun(uint32_t* cp, uint8_t* ccc) {
    for (;;) {
      if (pass_seen == run_len) {
        level = next_level;
        next_level = 256;
        pass = run_start;
        pass_seen = 0;
      }
      uint32_t x = 0;
      pass.Next(&x);
      ++pass_seen;
      const int xc = Ccc(x);
      if (xc == level) {
        if (++run_done == run_len) {
          d = run_end;
          run_len = run_done = 0;
        }
        *cp = x;
        *ccc = static_cast<uint8_t>(xc);
        return true;
      }
      if (xc > level && xc < next_level) next_level = xc;
    }
  }
};

// Canonical composition over the ordered stream, as unicode-normalization's
// Recompositions: a starter absorbs each following character that is not
// blocked from it and forms a primary composite with it. The starter can
// still change after marks that stay, so those marks wait: in a small buffer,
// or, when there are more of them, by replaying the segment after the final
// starter has been written.
void Compose(Reorderer r, Sink* sink) {
  constexpr size_t kBuffered = 32;
  uint32_t c;
  uint8_t cc;
  bool have = r.Next(&c, &cc);
  while (have && cc != 0) {  // non-starters before the first starter
    sink->Put(c);
    have = r.Next(&c, &cc);
  }
  while (have) {
    const uint32_t starter = c;
    const Reorderer segment = r;
    uint32_t composite = starter, kept[kBuffered];
    size_t kept_count = 0, consumed = 0;
    int last = -1;  // class of the last mark kept since the starter, -1 for none
    have = false;
    uint32_t x = 0;
    uint8_t xc = 0;
    while (r.Next(&x, &xc)) {
      uint32_t composed;
      const bool blocked = last >= 0 && last >= xc;
      if (!blocked && ComposePair(composite, x, &composed)) {
        composite = composed;
        ++consumed;
        continue;
      }
      if (xc == 0) {
        have = true;
        c = x;
        break;
      }
      last = xc;
      if (kept_count < kBuffered) kept[kept_count] = x;
      ++kept_count;
      ++consumed;
    }
    sink->Put(composite);
    if (kept_count <= kBuffered) {
      for (size_t k = 0; k < kept_count; ++k) sink->Put(kept[k]);
      continue;
    }
    // Replay: the same decisions from the same starter keep the same marks.
    Reorderer replay = segment;
    uint32_t again = starter;
    last = -1;
    for (size_t k = 0; k < consumed; ++k) {
      replay.Next(&x, &xc);
      uint32_t composed;
      if (!(last >= 0 && last >= xc) && ComposePair(again, x, &composed)) {
        again = composed;
      } else {
        last = xc;
        sink->Put(x);
      }
    }
  }
}

// Offset of the first byte >= 0x80 in s[i, n), or n.
size_t SkipAscii(const char* s, size_t n, size_t i) {
  while (i + 8 <= n) {
    uint64_t word;
    std::memcpy(&word, s + i, 8);
    if (word & 0x8080808080808080ull) break;
    i += 8;
  }
  while (i < n && static_cast<uint8_t>(s[i]) < 0x80) ++i;
  return i;
}

}  // namespace

Category CategoryOf(uint32_t cp) { return static_cast<Category>(Props(cp) & kCategoryMask); }

const char* CategoryName(Category c) {
  static const char kNames[kCategoryCount][3] = {
      "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe",
      "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn"};
  const auto i = static_cast<size_t>(c);
  return i < kCategoryCount ? kNames[i] : "??";
}

uint8_t CombiningClass(uint32_t cp) { return Ccc(cp); }

bool IsWhiteSpace(uint32_t cp) { return Props(cp) & kWhiteSpaceBit; }

bool IsAlphabetic(uint32_t cp) { return Props(cp) & kAlphabeticBit; }

bool IsNumeric(uint32_t cp) {
  const Category c = CategoryOf(cp);
  return c == Category::kNd || c == Category::kNl || c == Category::kNo;
}

bool IsAlphanumeric(uint32_t cp) { return IsAlphabetic(cp) || IsNumeric(cp); }

bool IsPunctuation(uint32_t cp) {
  const Category c = CategoryOf(cp);
  return c >= Category::kPc && c <= Category::kPo;
}

bool IsBertPunctuation(uint32_t cp) {
  if (cp < 0x80) {
    return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) || (cp >= 0x5B && cp <= 0x60) ||
           (cp >= 0x7B && cp <= 0x7E);
  }
  return IsPunctuation(cp);
}

bool IsBertWhitespace(uint32_t cp) {
  return cp == '\t' || cp == '\n' || cp == '\r' || IsWhiteSpace(cp);
}

bool IsBertControl(uint32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  const Category c = CategoryOf(cp);
  return c == Category::kCc || c == Category::kCf || c == Category::kCo;
}

bool IsBertChineseChar(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool IsOnigWord(uint32_t cp) {
  const uint32_t p = Props(cp);
  if (p & kAlphabeticBit) return true;
  const auto c = static_cast<Category>(p & kCategoryMask);
  return c == Category::kMn || c == Category::kMc || c == Category::kMe || c == Category::kNd ||
         c == Category::kPc;
}

bool IsOnigDigit(uint32_t cp) { return CategoryOf(cp) == Category::kNd; }

bool IsCombiningMark(uint32_t cp) {
  const Category c = CategoryOf(cp);
  return c == Category::kMn || c == Category::kMc || c == Category::kMe;
}

uint32_t SimpleCaseFold(uint32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  if (!(Props(cp) & kFoldBit)) return cp;
  const int k = Find(kFoldKeys, cp);
  return k < 0 ? cp : kFoldVals[k];
}

uint32_t SimpleFoldOrbitNext(uint32_t cp) {
  if (!(Props(cp) & kFoldBit)) return cp;
  const int k = Find(kOrbitKeys, cp);
  return k < 0 ? cp : kOrbitNext[k];
}

size_t ToLowercase(uint32_t cp, uint32_t out[2]) {
  if (cp < 0x80) {
    out[0] = (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
    return 1;
  }
  out[0] = cp;
  if (!(Props(cp) & kLowerBit)) return 1;
  if (cp == 0x130) {  // SpecialCasing: LATIN CAPITAL LETTER I WITH DOT ABOVE
    out[0] = 'i';
    out[1] = 0x307;
    return 2;
  }
  const int k = Find(kLowerKeys, cp);
  if (k >= 0) out[0] = kLowerVals[k];
  return 1;
}

size_t Normalize(NormForm form, const char* in, size_t n, char* out, size_t cap) {
  Sink sink{out, cap};
  const bool compose = form == NormForm::kNfc || form == NormForm::kNfkc;
  const bool compat = form == NormForm::kNfkc || form == NormForm::kNfkd;
  const uint32_t boundary_bit = form == NormForm::kNfc    ? kBoundaryNfcBit
                                : form == NormForm::kNfd  ? kBoundaryNfdBit
                                : form == NormForm::kNfkc ? kBoundaryNfkcBit
                                                          : kBoundaryNfkdBit;
  // Alone, the code point is already in the form (quick check Yes).
  const auto is_yes = [&](uint32_t cp, uint32_t props) {
    if (compose) return (props & (compat ? kNfkcYesBit : kNfcYesBit)) != 0;
    return !(props & (compat ? kCompatDecompBit : kCanonDecompBit)) && !IsHangulSyllable(cp);
  };
  // Boundary of the code point at byte j (a boundary sits before it; the
  // end of the text is one too). Invalid bytes read as U+FFFD, a boundary.
  const auto boundary_at = [&](size_t j) {
    if (j >= n) return true;
    if (static_cast<uint8_t>(in[j]) < 0x80) return true;
    bool valid;
    return (Props(Utf8DecodeChecked(in, n, &j, &valid)) & boundary_bit) != 0;
  };
  // Text splits at boundaries into pieces normalized independently. A piece
  // of one code point already in the form (ASCII, most letters, ideographs,
  // and for NFC/NFKC precomposed letters) is copied as is; any other goes
  // through the decompose / reorder / compose pipeline on its own.
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    while (j < n) {
      const auto b = static_cast<uint8_t>(in[j]);
      if (b < 0x80) {
        j = SkipAscii(in, n, j);
        if (j < n && !boundary_at(j)) {
          --j;  // a mark may attach to the last ASCII character: it joins the piece
          break;
        }
        continue;
      }
      size_t next = j;
      bool valid;
      const uint32_t cp = Utf8DecodeChecked(in, n, &next, &valid);
      // j is a boundary here, so with one after it the code point is a piece.
      if (!valid || !is_yes(cp, Props(cp)) || !boundary_at(next)) break;
      j = next;
    }
    sink.PutBytes(in + i, j - i);
    if (j >= n) break;
    // The piece: from j to the next boundary after it.
    size_t end = j;
    bool valid;
    Utf8DecodeChecked(in, n, &end, &valid);
    while (!boundary_at(end)) Utf8DecodeChecked(in, n, &end, &valid);
    Reorderer ordered(Decomposer(in + j, end - j, compat));
    if (compose) {
      Compose(ordered, &sink);
    } else {
      uint32_t cp = 0;
      uint8_t ccc = 0;
      while (ordered.Next(&cp, &ccc)) sink.Put(cp);
    }
    i = end;
  }
  return sink.size;
}

size_t Lowercase(const char* in, size_t n, char* out, size_t cap) {
  Sink sink{out, cap};
  size_t i = 0;
  while (i < n) {
    const size_t ascii_end = SkipAscii(in, n, i);
    if (sink.size + (ascii_end - i) <= cap) {
      for (size_t k = i; k < ascii_end; ++k) {
        const auto b = static_cast<uint8_t>(in[k]);
        out[sink.size++] = static_cast<char>(b >= 'A' && b <= 'Z' ? b + 32 : b);
      }
    } else {
      sink.size += ascii_end - i;
    }
    i = ascii_end;
    if (i == n) break;
    const size_t at = i;
    bool valid;
    const uint32_t cp = Utf8DecodeChecked(in, n, &i, &valid);
    uint32_t lower[2];
    const size_t count = ToLowercase(cp, lower);
    if (count == 1 && lower[0] == cp && valid) {
      sink.PutBytes(in + at, i - at);
      continue;
    }
    for (size_t k = 0; k < count; ++k) sink.Put(lower[k]);
  }
  return sink.size;
}

size_t StripAccents(const char* in, size_t n, char* out, size_t cap) {
  Sink sink{out, cap};
  size_t i = 0;
  while (i < n) {
    const size_t ascii_end = SkipAscii(in, n, i);
    sink.PutBytes(in + i, ascii_end - i);
    i = ascii_end;
    if (i == n) break;
    const size_t at = i;
    bool valid;
    const uint32_t cp = Utf8DecodeChecked(in, n, &i, &valid);
    if (IsCombiningMark(cp)) continue;
    if (valid) {
      sink.PutBytes(in + at, i - at);
    } else {
      sink.Put(cp);
    }
  }
  return sink.size;
}

GraphemeBreak GraphemeBreakOf(uint32_t cp) {
  return static_cast<GraphemeBreak>((Props(cp) >> kGcbShift) & kGcbMask);
}

bool IsExtendedPictographic(uint32_t cp) { return Props(cp) & kExtPictBit; }

size_t NextGraphemeEnd(const char* s, size_t n, size_t i) {
  using G = GraphemeBreak;
  if (i >= n) return n;
  // Printable ASCII or a control before ASCII: always a break (GB999, GB4),
  // except CR LF.
  const auto b0 = static_cast<uint8_t>(s[i]);
  if (b0 < 0x80 && (i + 1 == n || static_cast<uint8_t>(s[i + 1]) < 0x80) &&
      !(b0 == '\r' && i + 1 < n && s[i + 1] == '\n')) {
    return i + 1;
  }
  bool valid;
  uint32_t cp = Utf8DecodeChecked(s, n, &i, &valid);
  uint32_t props = Props(cp);
  G prev = static_cast<G>((props >> kGcbShift) & kGcbMask);
  // GB11 state: the text since the last Extended_Pictographic is Extend*
  // (in_pict), or that followed by one ZWJ (after_zwj).
  bool in_pict = props & kExtPictBit;
  bool after_zwj = false;
  int ri_run = prev == G::kRegionalIndicator ? 1 : 0;  // GB12/13 parity
  while (i < n) {
    size_t next = i;
    cp = Utf8DecodeChecked(s, n, &next, &valid);
    props = Props(cp);
    const G cur = static_cast<G>((props >> kGcbShift) & kGcbMask);
    const bool pict = props & kExtPictBit;
    bool join;
    if (prev == G::kCR && cur == G::kLF) {
      join = true;  // GB3
    } else if (prev == G::kCR || prev == G::kLF || prev == G::kControl || cur == G::kCR ||
               cur == G::kLF || cur == G::kControl) {
      join = false;  // GB4, GB5
    } else if (prev == G::kL) {
      join = cur == G::kL || cur == G::kV || cur == G::kLV || cur == G::kLVT || cur == G::kExtend ||
             cur == G::kZWJ || cur == G::kSpacingMark;  // GB6, GB9, GB9a
    } else if ((prev == G::kLV || prev == G::kV) && (cur == G::kV || cur == G::kT)) {
      join = true;  // GB7
    } else if ((prev == G::kLVT || prev == G::kT) && cur == G::kT) {
      join = true;  // GB8
    } else if (cur == G::kExtend || cur == G::kZWJ || cur == G::kSpacingMark) {
      join = true;  // GB9, GB9a
    } else if (prev == G::kPrepend) {
      join = true;  // GB9b
    } else if (after_zwj && pict) {
      join = true;  // GB11
    } else if (prev == G::kRegionalIndicator && cur == G::kRegionalIndicator) {
      join = ri_run % 2 == 1;  // GB12, GB13
    } else {
      join = false;  // GB999
    }
    if (!join) return i;
    after_zwj = in_pict && cur == G::kZWJ;
    in_pict = pict || (in_pict && cur == G::kExtend);
    ri_run = cur == G::kRegionalIndicator ? ri_run + 1 : 0;
    prev = cur;
    i = next;
  }
  return n;
}

}  // namespace octet::text
