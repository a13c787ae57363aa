// The regex engine: a recursive-descent parser to a small AST, classes
// evaluated once over all code points into bitmaps, a compiler to a flat
// program, and a backtracking VM whose stack lives in the caller's scratch.
//
// Why each piece looks as it does:
// - Classes are decided at compile time for every code point (so nested
//   classes, &&, negation and (?i) closure cost nothing at match time): ASCII
//   in two words, the BMP as 256 shared 256-bit blocks, the rest as ranges.
// - A repetition of one character ([..]+, \s*, .{1,3}) is one instruction that
//   scans forward and leaves a single stack frame that gives characters back
//   one at a time, so \p{L}+ over a long word pushes nothing per character.
// - Each alternative of an alternation carries the set of bytes its match can
//   start with; a split whose preferred branch cannot start at the current
//   byte jumps to the other without pushing a frame.
// - Loops over groups whose body can match empty are refused at compile time
//   (no empty-iteration checks needed at run time), which also bounds the
//   stack: a path never visits one instruction twice at the same position.
#include "text/regex.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <utility>

#include "core/alloc.h"

#include "text/unicode.h"
#include "core/utf8.h"

namespace octet::text {

namespace {

constexpr uint32_t kInfinite = 0xFFFFFFFFu;
constexpr size_t kMaxProgram = 1u << 17;      // instructions (tokenizer patterns use ~100)
constexpr uint32_t kMaxRepeatCount = 100000;  // Oniguruma's ONIG_MAX_REPEAT_NUM
constexpr int kMaxNesting = 200;              // groups and classes, to bound recursion
// Per match attempt, as Oniguruma's default retry limit: a pathological
// pattern errs instead of hanging.
constexpr uint64_t kMaxBacktracks = 10000000;
constexpr size_t kMaxClasses = 4096;  // each costs a walk over the property runs

enum Op : uint8_t {
  kOpString,     // a: literals_ offset, b: length
  kOpClass,      // a: class
  kOpRepeat,     // a: class, b: min, c: max; mode: RepeatMode
  kOpSplit,      // a: preferred target, b: other target, c: guard sets (+1, 16 bits each)
  kOpJmp,        // a: target
  kOpAssert,     // mode: AssertKind; a: word class for \b \B
  kOpLook,       // mode: bit 0 negative, bit 1 behind; a: pc after kOpLookEnd; b: chars back
  kOpLookEnd,
  kOpAtomic,
  kOpAtomicEnd,
  kOpMatch,
};

enum RepeatMode : uint8_t { kGreedy = 0, kLazy = 1, kPossessive = 2 };

enum AssertKind : uint8_t {
  kBol,         // ^
  kEol,         // $
  kBeginText,   // \A
  kEndText,     // \z
  kEndTextNl,   // \Z
  kWordBound,   // \b
  kNotWordBound,  // \B
};

enum FrameKind : uint32_t { kFrameBranch, kFrameStar, kFrameLazy, kFrameLook, kFrameAtomic };

struct Frame {
  uint32_t pc;
  uint32_t kind;
  uint32_t pos;
  uint32_t aux;
};

inline bool ByteSetHas(const Regex::ByteSet& s, uint8_t b) {
  return (s.bits[b >> 6] >> (b & 63)) & 1;
}
inline void ByteSetAdd(Regex::ByteSet* s, uint8_t b) { s->bits[b >> 6] |= uint64_t{1} << (b & 63); }
inline void ByteSetUnion(Regex::ByteSet* s, const Regex::ByteSet& o) {
  for (int i = 0; i < 4; ++i) s->bits[i] |= o.bits[i];
}

using regex_fast::CharAt;

// Start of the character that ends at s[i] (i > floor): back over
// continuation bytes, never below floor.
inline size_t StepBack(const uint8_t* s, size_t i, size_t floor) {
  --i;
  size_t k = 0;
  while (i > floor && k < 3 && Utf8IsContinuation(s[i])) {
    --i;
    ++k;
  }
  return i;
}

// ---------------------------------------------------------------------------
// Class sets: what a [...] (or \s, \p{..}, '.', a (?i) letter) means, kept as
// a tree until it is evaluated over all code points.

struct ClassItem {
  enum Kind : uint8_t { kRange, kCategories, kWhite, kWord, kDigit, kNested };
  Kind kind = kRange;
  bool negate = false;
  uint32_t lo = 0, hi = 0;  // kRange
  uint32_t cats = 0;        // kCategories: bit per Category
  int nested = -1;          // kNested: index of another ClassSet
};

struct ClassSet {
  bool negate = false;
  bool fold = false;  // (?i): closed under simple case folding before negation
  // Intersection (&&) of parts, each a union of items.
  Vector<Vector<ClassItem>> parts;
};

// ---------------------------------------------------------------------------
// AST

enum class NodeKind : uint8_t { kEmpty, kLiteral, kClass, kConcat, kAlt, kRepeat, kAtomic, kLook, kAssert };

struct Node {
  NodeKind kind = NodeKind::kEmpty;
  uint32_t cp = 0;     // kLiteral
  bool fold = false;   // kLiteral under (?i)
  int set = -1;        // kClass: ClassSet index
  uint32_t first_kid = 0, kid_count = 0;  // the children: RegexCompiler::kids_[first_kid, +kid_count)
  uint32_t min = 0, max = 0;  // kRepeat
  RepeatMode mode = kGreedy;
  bool behind = false, negate = false;  // kLook
  AssertKind assert_kind = kBol;
  size_t offset = 0;  // in the pattern, for messages
};

struct PropertyName {
  const char* name;
  uint32_t mask;
};

constexpr uint32_t Bit(Category c) { return uint32_t{1} << static_cast<int>(c); }
constexpr uint32_t kMaskL = Bit(Category::kLu) | Bit(Category::kLl) | Bit(Category::kLt) |
                            Bit(Category::kLm) | Bit(Category::kLo);
constexpr uint32_t kMaskM = Bit(Category::kMn) | Bit(Category::kMc) | Bit(Category::kMe);
constexpr uint32_t kMaskN = Bit(Category::kNd) | Bit(Category::kNl) | Bit(Category::kNo);
constexpr uint32_t kMaskP = Bit(Category::kPc) | Bit(Category::kPd) | Bit(Category::kPs) |
                            Bit(Category::kPe) | Bit(Category::kPi) | Bit(Category::kPf) |
                            Bit(Category::kPo);
constexpr uint32_t kMaskS = Bit(Category::kSm) | Bit(Category::kSc) | Bit(Category::kSk) |
                            Bit(Category::kSo);
constexpr uint32_t kMaskZ = Bit(Category::kZs) | Bit(Category::kZl) | Bit(Category::kZp);
constexpr uint32_t kMaskC = Bit(Category::kCc) | Bit(Category::kCf) | Bit(Category::kCs) |
                            Bit(Category::kCo) | Bit(Category::kCn);

// Names as Oniguruma accepts them for General_Category (compared after
// dropping case, spaces, '-' and '_').
const PropertyName kCategoryNames[] = {
    {"l", kMaskL}, {"letter", kMaskL},
    {"lc", Bit(Category::kLu) | Bit(Category::kLl) | Bit(Category::kLt)},
    {"casedletter", Bit(Category::kLu) | Bit(Category::kLl) | Bit(Category::kLt)},
    {"lu", Bit(Category::kLu)}, {"uppercaseletter", Bit(Category::kLu)},
    {"ll", Bit(Category::kLl)}, {"lowercaseletter", Bit(Category::kLl)},
    {"lt", Bit(Category::kLt)}, {"titlecaseletter", Bit(Category::kLt)},
    {"lm", Bit(Category::kLm)}, {"modifierletter", Bit(Category::kLm)},
    {"lo", Bit(Category::kLo)}, {"otherletter", Bit(Category::kLo)},
    {"m", kMaskM}, {"mark", kMaskM}, {"combiningmark", kMaskM},
    {"mn", Bit(Category::kMn)}, {"nonspacingmark", Bit(Category::kMn)},
    {"mc", Bit(Category::kMc)}, {"spacingmark", Bit(Category::kMc)},
    {"me", Bit(Category::kMe)}, {"enclosingmark", Bit(Category::kMe)},
    {"n", kMaskN}, {"number", kMaskN},
    {"nd", Bit(Category::kNd)}, {"decimalnumber", Bit(Category::kNd)},
    {"nl", Bit(Category::kNl)}, {"letternumber", Bit(Category::kNl)},
    {"no", Bit(Category::kNo)}, {"othernumber", Bit(Category::kNo)},
    {"p", kMaskP}, {"punctuation", kMaskP}, {"punct", kMaskP},
    {"pc", Bit(Category::kPc)}, {"connectorpunctuation", Bit(Category::kPc)},
    {"pd", Bit(Category::kPd)}, {"dashpunctuation", Bit(Category::kPd)},
    {"ps", Bit(Category::kPs)}, {"openpunctuation", Bit(Category::kPs)},
    {"pe", Bit(Category::kPe)}, {"closepunctuation", Bit(Category::kPe)},
    {"pi", Bit(Category::kPi)}, {"initialpunctuation", Bit(Category::kPi)},
    {"pf", Bit(Category::kPf)}, {"finalpunctuation", Bit(Category::kPf)},
    {"po", Bit(Category::kPo)}, {"otherpunctuation", Bit(Category::kPo)},
    {"s", kMaskS}, {"symbol", kMaskS},
    {"sm", Bit(Category::kSm)}, {"mathsymbol", Bit(Category::kSm)},
    {"sc", Bit(Category::kSc)}, {"currencysymbol", Bit(Category::kSc)},
    {"sk", Bit(Category::kSk)}, {"modifiersymbol", Bit(Category::kSk)},
    {"so", Bit(Category::kSo)}, {"othersymbol", Bit(Category::kSo)},
    {"z", kMaskZ}, {"separator", kMaskZ},
    {"zs", Bit(Category::kZs)}, {"spaceseparator", Bit(Category::kZs)},
    {"zl", Bit(Category::kZl)}, {"lineseparator", Bit(Category::kZl)},
    {"zp", Bit(Category::kZp)}, {"paragraphseparator", Bit(Category::kZp)},
    {"c", kMaskC}, {"other", kMaskC},
    {"cc", Bit(Category::kCc)}, {"control", Bit(Category::kCc)},
    {"cf", Bit(Category::kCf)}, {"format", Bit(Category::kCf)},
    {"cs", Bit(Category::kCs)}, {"surrogate", Bit(Category::kCs)},
    {"co", Bit(Category::kCo)}, {"privateuse", Bit(Category::kCo)},
    {"cn", Bit(Category::kCn)}, {"unassigned", Bit(Category::kCn)},
    {"any", 0xFFFFFFFFu},
};

// CaseFolding.txt's full (status F) folds: under (?i) Oniguruma matches the
// character and the string against each other (U+00DF ~ "ss"). Only
// one-to-one folds are implemented, so a (?i) pattern where one of these could
// apply is refused. Generated from the UCD 15.0 CaseFolding.txt (Debian
// unicode-data) with a two-line script; sorted by code point.
struct MultiFold {
  uint32_t cp;
  uint32_t to[3];  // 0-terminated when shorter
};
const MultiFold kMultiFolds[] = {
    {0xDF, {0x73, 0x73, 0x0}}, {0x130, {0x69, 0x307, 0x0}}, {0x149, {0x2BC, 0x6E, 0x0}},
    {0x1F0, {0x6A, 0x30C, 0x0}}, {0x390, {0x3B9, 0x308, 0x301}}, {0x3B0, {0x3C5, 0x308, 0x301}},
    {0x587, {0x565, 0x582, 0x0}}, {0x1E96, {0x68, 0x331, 0x0}}, {0x1E97, {0x74, 0x308, 0x0}},
    {0x1E98, {0x77, 0x30A, 0x0}}, {0x1E99, {0x79, 0x30A, 0x0}}, {0x1E9A, {0x61, 0x2BE, 0x0}},
    {0x1E9E, {0x73, 0x73, 0x0}}, {0x1F50, {0x3C5, 0x313, 0x0}}, {0x1F52, {0x3C5, 0x313, 0x300}},
    {0x1F54, {0x3C5, 0x313, 0x301}}, {0x1F56, {0x3C5, 0x313, 0x342}},
    {0x1F80, {0x1F00, 0x3B9, 0x0}}, {0x1F81, {0x1F01, 0x3B9, 0x0}}, {0x1F82, {0x1F02, 0x3B9, 0x0}},
    {0x1F83, {0x1F03, 0x3B9, 0x0}}, {0x1F84, {0x1F04, 0x3B9, 0x0}}, {0x1F85, {0x1F05, 0x3B9, 0x0}},
    {0x1F86, {0x1F06, 0x3B9, 0x0}}, {0x1F87, {0x1F07, 0x3B9, 0x0}}, {0x1F88, {0x1F00, 0x3B9, 0x0}},
    {0x1F89, {0x1F01, 0x3B9, 0x0}}, {0x1F8A, {0x1F02, 0x3B9, 0x0}}, {0x1F8B, {0x1F03, 0x3B9, 0x0}},
    {0x1F8C, {0x1F04, 0x3B9, 0x0}}, {0x1F8D, {0x1F05, 0x3B9, 0x0}}, {0x1F8E, {0x1F06, 0x3B9, 0x0}},
    {0x1F8F, {0x1F07, 0x3B9, 0x0}}, {0x1F90, {0x1F20, 0x3B9, 0x0}}, {0x1F91, {0x1F21, 0x3B9, 0x0}},
    {0x1F92, {0x1F22, 0x3B9, 0x0}}, {0x1F93, {0x1F23, 0x3B9, 0x0}}, {0x1F94, {0x1F24, 0x3B9, 0x0}},
    {0x1F95, {0x1F25, 0x3B9, 0x0}}, {0x1F96, {0x1F26, 0x3B9, 0x0}}, {0x1F97, {0x1F27, 0x3B9, 0x0}},
    {0x1F98, {0x1F20, 0x3B9, 0x0}}, {0x1F99, {0x1F21, 0x3B9, 0x0}}, {0x1F9A, {0x1F22, 0x3B9, 0x0}},
    {0x1F9B, {0x1F23, 0x3B9, 0x0}}, {0x1F9C, {0x1F24, 0x3B9, 0x0}}, {0x1F9D, {0x1F25, 0x3B9, 0x0}},
    {0x1F9E, {0x1F26, 0x3B9, 0x0}}, {0x1F9F, {0x1F27, 0x3B9, 0x0}}, {0x1FA0, {0x1F60, 0x3B9, 0x0}},
    {0x1FA1, {0x1F61, 0x3B9, 0x0}}, {0x1FA2, {0x1F62, 0x3B9, 0x0}}, {0x1FA3, {0x1F63, 0x3B9, 0x0}},
    {0x1FA4, {0x1F64, 0x3B9, 0x0}}, {0x1FA5, {0x1F65, 0x3B9, 0x0}}, {0x1FA6, {0x1F66, 0x3B9, 0x0}},
    {0x1FA7, {0x1F67, 0x3B9, 0x0}}, {0x1FA8, {0x1F60, 0x3B9, 0x0}}, {0x1FA9, {0x1F61, 0x3B9, 0x0}},
    {0x1FAA, {0x1F62, 0x3B9, 0x0}}, {0x1FAB, {0x1F63, 0x3B9, 0x0}}, {0x1FAC, {0x1F64, 0x3B9, 0x0}},
    {0x1FAD, {0x1F65, 0x3B9, 0x0}}, {0x1FAE, {0x1F66, 0x3B9, 0x0}}, {0x1FAF, {0x1F67, 0x3B9, 0x0}},
    {0x1FB2, {0x1F70, 0x3B9, 0x0}}, {0x1FB3, {0x3B1, 0x3B9, 0x0}}, {0x1FB4, {0x3AC, 0x3B9, 0x0}},
    {0x1FB6, {0x3B1, 0x342, 0x0}}, {0x1FB7, {0x3B1, 0x342, 0x3B9}}, {0x1FBC, {0x3B1, 0x3B9, 0x0}},
    {0x1FC2, {0x1F74, 0x3B9, 0x0}}, {0x1FC3, {0x3B7, 0x3B9, 0x0}}, {0x1FC4, {0x3AE, 0x3B9, 0x0}},
    {0x1FC6, {0x3B7, 0x342, 0x0}}, {0x1FC7, {0x3B7, 0x342, 0x3B9}}, {0x1FCC, {0x3B7, 0x3B9, 0x0}},
    {0x1FD2, {0x3B9, 0x308, 0x300}}, {0x1FD3, {0x3B9, 0x308, 0x301}}, {0x1FD6, {0x3B9, 0x342, 0x0}},
    {0x1FD7, {0x3B9, 0x308, 0x342}}, {0x1FE2, {0x3C5, 0x308, 0x300}},
    {0x1FE3, {0x3C5, 0x308, 0x301}}, {0x1FE4, {0x3C1, 0x313, 0x0}}, {0x1FE6, {0x3C5, 0x342, 0x0}},
    {0x1FE7, {0x3C5, 0x308, 0x342}}, {0x1FF2, {0x1F7C, 0x3B9, 0x0}}, {0x1FF3, {0x3C9, 0x3B9, 0x0}},
    {0x1FF4, {0x3CE, 0x3B9, 0x0}}, {0x1FF6, {0x3C9, 0x342, 0x0}}, {0x1FF7, {0x3C9, 0x342, 0x3B9}},
    {0x1FFC, {0x3C9, 0x3B9, 0x0}}, {0xFB00, {0x66, 0x66, 0x0}}, {0xFB01, {0x66, 0x69, 0x0}},
    {0xFB02, {0x66, 0x6C, 0x0}}, {0xFB03, {0x66, 0x66, 0x69}}, {0xFB04, {0x66, 0x66, 0x6C}},
    {0xFB05, {0x73, 0x74, 0x0}}, {0xFB06, {0x73, 0x74, 0x0}}, {0xFB13, {0x574, 0x576, 0x0}},
    {0xFB14, {0x574, 0x565, 0x0}}, {0xFB15, {0x574, 0x56B, 0x0}}, {0xFB16, {0x57E, 0x576, 0x0}},
    {0xFB17, {0x574, 0x56D, 0x0}},
};

bool IsMultiFoldSource(uint32_t cp) {
  // The character or any of its (?i) equivalents.
  uint32_t o = cp;
  do {
    size_t lo = 0, hi = sizeof(kMultiFolds) / sizeof(kMultiFolds[0]);
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (kMultiFolds[mid].cp < o) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo < sizeof(kMultiFolds) / sizeof(kMultiFolds[0]) && kMultiFolds[lo].cp == o) return true;
    o = SimpleFoldOrbitNext(o);
  } while (o != cp);
  return false;
}

// True when the folded literal sequence contains a multi-character fold.
bool HasMultiFoldTarget(const Vector<uint32_t>& folded) {
  for (const MultiFold& m : kMultiFolds) {
    const size_t len = m.to[2] != 0 ? 3 : 2;
    for (size_t i = 0; i + len <= folded.size(); ++i) {
      bool same = true;
      for (size_t k = 0; k < len && same; ++k) same = folded[i + k] == m.to[k];
      if (same) return true;
    }
  }
  return false;
}

// Code point runs over which every class predicate is constant: one General_
// Category, White_Space, Word, and whether the character has other cases.
// Built once per process (about 1.1M lookups), so compiling a class costs a
// walk over a few thousand runs instead of every code point.
struct PropertyRun {
  uint32_t lo, hi;
  bool folds;  // has a case orbit: (?i) classes evaluate it per code point
};

// Fills `runs` with the property runs of all code points; false when out of
// memory.
bool BuildPropertyRuns(Vector<PropertyRun>* runs) {
  uint32_t prev_sig = 0xFFFFFFFFu;
  for (uint32_t cp = 0; cp <= kMaxCodePoint; ++cp) {
    const bool folds = SimpleFoldOrbitNext(cp) != cp;
    const uint32_t sig = static_cast<uint32_t>(CategoryOf(cp)) |
                         (IsWhiteSpace(cp) ? 1u << 8 : 0) | (IsOnigWord(cp) ? 1u << 9 : 0) |
                         (folds ? 1u << 10 : 0);
    if (sig == prev_sig) {
      runs->back().hi = cp;
    } else {
      if (!runs->Push(PropertyRun{cp, cp, folds})) return false;
      prev_sig = sig;
    }
  }
  return true;
}

// The process's property runs, built by the first call that needs them; null
// when they could not be allocated (a later call tries again). Threads that
// race here each build a table and all but the first discard theirs. The
// table lives until the process ends.
const Vector<PropertyRun>* PropertyRuns() {
  static std::atomic<Vector<PropertyRun>*> table{nullptr};
  Vector<PropertyRun>* existing = table.load(std::memory_order_acquire);
  if (existing != nullptr) return existing;
  Owned<Vector<PropertyRun>> built(New<Vector<PropertyRun>>());
  if (!built || !BuildPropertyRuns(built.get())) return nullptr;
  if (!table.compare_exchange_strong(existing, built.get(), std::memory_order_acq_rel)) {
    return existing;  // another thread's table won; ours is freed
  }
  return built.release();
}

// Indices of a table's entries, kept sorted by the entries they name: a map
// from an entry's value to its index that does not store the values twice
// (the compiler's caches of identical blocks and classes). Lookups are binary
// searches, inserts shift the tail (the tables hold at most a few thousand).
class SortedIndex {
 public:
  // The position of the entry equal to a value, or where it would go.
  // `compare(index)` is < 0, 0 or > 0 as table entry `index` orders before,
  // equal to or after the value; *found tells whether one is equal.
  template <typename Compare>
  size_t Find(const Compare& compare, bool* found) const {
    size_t lo = 0, hi = order_.size();
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      const int c = compare(order_[mid]);
      if (c == 0) {
        *found = true;
        return mid;
      }
      if (c < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    *found = false;
    return lo;
  }
  uint32_t At(size_t position) const { return order_[position]; }
  // Puts `index` at `position` (from Find); false when out of memory.
  [[nodiscard]] bool Insert(size_t position, uint32_t index) {
    if (!order_.Push(index)) return false;
    for (size_t i = order_.size() - 1; i > position; --i) order_[i] = order_[i - 1];
    order_[position] = index;
    return true;
  }

 private:
  Vector<uint32_t> order_;
};

int CompareWords(const uint64_t* a, const uint64_t* b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

}  // namespace

// ---------------------------------------------------------------------------
// Parser + compiler

class RegexCompiler {
 public:
  RegexCompiler(std::string_view pattern, Regex* out) : p_(pattern), out_(out) {}

  Status Run();

 private:
  // --- parsing ---
  Status ParseAlt(bool fold, int depth, int* node);
  Status ParseConcat(bool fold, int depth, int* node, bool* hit_inline_option);
  Status ParseAtom(bool fold, int depth, int* node, bool* consumed_option, bool* new_fold);
  Status ParseGroup(bool fold, int depth, int* node, bool* consumed_option, bool* new_fold);
  Status ParseQuantifier(int* node);
  Status ParseEscape(bool fold, int* node);
  Status ParseClass(bool fold, int depth, int* set);
  Status ParseClassEscape(ClassItem* item, bool* is_char, uint32_t* cp);
  Status ParseHex(size_t digits_max, bool braced, uint32_t* cp);
  Status ParseProperty(bool upper_p, ClassItem* item);
  Status DecodePatternChar(uint32_t* cp);

  Status NewNode(NodeKind kind, size_t offset, int* node) {
    Node added;
    added.kind = kind;
    added.offset = offset;
    if (!nodes_.Push(added)) return OutOfMemory("the parse tree");
    *node = static_cast<int>(nodes_.size()) - 1;
    return Status::Ok();
  }
  // Makes kids[0, count) the children of `node`.
  Status SetKids(int node, const int* kids, size_t count) {
    const size_t first = kids_.size();
    if (!kids_.Append(kids, count)) return OutOfMemory("the parse tree");
    nodes_[node].first_kid = static_cast<uint32_t>(first);
    nodes_[node].kid_count = static_cast<uint32_t>(count);
    return Status::Ok();
  }
  // A node of `kind` over one child.
  Status NewParent(NodeKind kind, size_t offset, int kid, int* node) {
    OCTET_RETURN_IF_ERROR(NewNode(kind, offset, node));
    return SetKids(*node, &kid, 1);
  }
  int Kid(const Node& node, size_t k) const { return kids_[node.first_kid + k]; }
  Status NewSet(int* set) {
    if (sets_.size() >= kMaxClasses) too_many_classes_ = true;
    if (!sets_.Push(ClassSet()) || !sets_.back().parts.Push(Vector<ClassItem>())) {
      return OutOfMemory("the class sets");
    }
    *set = static_cast<int>(sets_.size()) - 1;
    return Status::Ok();
  }
  // Adds `item` to the last && operand of `set`.
  Status AddItem(int set, const ClassItem& item) {
    if (!sets_[set].parts.back().Push(item)) return OutOfMemory("the class sets");
    return Status::Ok();
  }
  Status SingleItemSet(const ClassItem& item, bool negate, int* set) {
    OCTET_RETURN_IF_ERROR(NewSet(set));
    sets_[*set].negate = negate;
    return AddItem(*set, item);
  }

  Status Error(StatusCode code, size_t offset, const char* what) {
    return Status::Error(code, "regex: %s at offset %zu", what, offset);
  }
  Status Unsupported(size_t offset, const char* what) {
    return Status::Error(StatusCode::kUnsupported, "regex: unsupported %s at offset %zu", what,
                         offset);
  }
  static Status OutOfMemory(const char* what) {
    return Status::Error(StatusCode::kOutOfMemory, "regex: out of memory for %s", what);
  }

  bool AtEnd() const { return i_ >= p_.size(); }
  // Whether p_[at] starts a valid {m} {m,} {m,n} {,n} (else '{' is a literal).
  bool IsInterval(size_t at) const {
    if (at >= p_.size() || p_[at] != '{') return false;
    size_t j = at + 1;
    auto digits = [&]() {
      const size_t s = j;
      while (j < p_.size() && p_[j] >= '0' && p_[j] <= '9') ++j;
      return j > s;
    };
    const bool a = digits();
    if (j < p_.size() && p_[j] == ',') {
      ++j;
      const bool b = digits();
      return j < p_.size() && p_[j] == '}' && (a || b);
    }
    return a && j < p_.size() && p_[j] == '}';
  }
  char Peek(size_t k = 0) const { return i_ + k < p_.size() ? p_[i_ + k] : '\0'; }

  // --- analysis ---
  struct Info {
    Regex::ByteSet first{};
    bool nullable = false;
    uint32_t min_chars = 0;
    uint32_t max_chars = 0;  // kInfinite when unbounded
  };
  Status Analyze(int node, Info* info);
  Status AnalyzeKids(const Node& node, Info* info);
  Status SizeInfo();

  // --- classes ---
  bool EvalSet(int set, uint32_t cp) const;
  bool EvalSetPositive(int set, uint32_t cp) const;
  bool EvalItem(const ClassItem& item, uint32_t cp) const;
  Status BuildClass(int set, uint32_t* cls);  // -> index in out_->classes_
  Status ClassMembers(int set, Vector<uint32_t>* members) const;
  Status CheckFoldedClass(int set, size_t offset);
  Status CollectBounds(int set, bool* fold, Vector<uint32_t>* bounds) const;
  Status AddBlock(const Regex::Block& block, uint32_t* index);
  Status AddClass(const Regex::CharClass& cls, const Vector<uint32_t>& astral,
                  const Regex::ByteSet& lead, uint32_t* index);
  Status LiteralSet(uint32_t cp, bool fold, int* set);
  Status WordClass(uint32_t* cls);

  // --- emitting ---
  Status Emit(int node);
  Status EmitLiteral(int n, const Node& node);
  Status EmitClass(int set);
  Status CheckConcatFolds(const Node& node);
  Status EmitConcat(const Node& node);
  Status EmitConcatRun(const int* kids, size_t count, size_t* k);
  Status EmitAlt(const Node& node);
  Status EmitRepeat(const Node& node);
  Status EmitRepeatChar(const Node& node, const Node& body);
  Status EmitUnboundedLoop(int body, const Info& body_info, uint32_t guard, bool lazy);
  Status EmitBoundedLoop(const Node& node, uint32_t guard, bool lazy);
  Status EmitLook(const Node& node);
  Status EmitLookbehindAlternatives(const Node& node);
  Status EmitAssert(const Node& node);
  uint32_t Here() const { return static_cast<uint32_t>(out_->program_.size()); }
  Status Push(const Regex::Inst& inst) {
    if (out_->program_.size() >= kMaxProgram) {
      return Status::Error(StatusCode::kUnsupported, "regex: pattern too large (over %zu instructions)",
                           kMaxProgram);
    }
    if (!out_->program_.Push(inst)) return OutOfMemory("the program");
    return Status::Ok();
  }
  // Counts a backtracking frame the instruction about to be pushed may leave:
  // a fixed one, or one per loop iteration inside a loop (see ScratchBytes).
  Status NotePushSite() {
    if (loop_min_.empty()) {
      ++out_->stack_fixed_;
    } else if (!out_->loop_min_lengths_.Push(loop_min_.back())) {
      return OutOfMemory("the program");
    }
    return Status::Ok();
  }
  // The split guard for a branch that starts as `info` says: its lead bytes
  // (+1 encoded) or 0 for none.
  Status GuardOf(const Info& info, uint32_t* guard) {
    *guard = 0;
    if (info.nullable || out_->byte_sets_.size() >= 0xFFFF) return Status::Ok();  // 16-bit slots
    if (!out_->byte_sets_.Push(info.first)) return OutOfMemory("the program");
    *guard = static_cast<uint32_t>(out_->byte_sets_.size());  // +1 encoded
    return Status::Ok();
  }

  std::string_view p_;
  size_t i_ = 0;
  Regex* out_;
  Vector<Node> nodes_;
  Vector<int> kids_;  // the nodes' children, a run per node
  Vector<ClassSet> sets_;
  Vector<Info> info_;
  Vector<bool> info_done_;
  SortedIndex class_cache_;  // compiled classes, by their blocks and astral ranges
  SortedIndex block_cache_;  // out_->blocks_ (but block 0), by their bits
  Vector<Regex::ByteSet> class_first_;  // per compiled class: lead bytes of members
  Vector<int> set_class_;               // ClassSet -> compiled class, -1 until built
  Vector<uint32_t> loop_min_;           // min chars of the enclosing loop bodies
  int word_class_ = -1;
  bool too_many_classes_ = false;
};

Status RegexCompiler::DecodePatternChar(uint32_t* cp) {
  bool valid = true;
  size_t j = i_;
  *cp = Utf8DecodeChecked(p_.data(), p_.size(), &j, &valid);
  if (!valid) return Error(StatusCode::kInvalidArgument, i_, "invalid UTF-8 in the pattern");
  i_ = j;
  return Status::Ok();
}

Status RegexCompiler::Run() {
  out_->program_.Clear();
  out_->classes_.Clear();
  out_->blocks_.Clear();
  out_->ranges_.Clear();
  out_->byte_sets_.Clear();
  out_->literals_.Clear();
  out_->stack_fixed_ = 0;
  out_->loop_min_lengths_.Clear();
  out_->anchored_start_ = false;
  out_->first_set_ = -1;
  if (!out_->blocks_.Push(Regex::Block{{0, 0, 0, 0}})) {  // block 0: empty
    return OutOfMemory("the character classes");
  }

  int root = -1;
  OCTET_RETURN_IF_ERROR(ParseAlt(false, 0, &root));
  if (!AtEnd()) return Error(StatusCode::kInvalidArgument, i_, "unmatched ')'");
  if (too_many_classes_) return Unsupported(0, "pattern with more than 4096 character classes");

  OCTET_RETURN_IF_ERROR(SizeInfo());
  if (!set_class_.Assign(sets_.size(), -1)) return OutOfMemory("the character classes");
  Info root_info;
  OCTET_RETURN_IF_ERROR(Analyze(root, &root_info));

  OCTET_RETURN_IF_ERROR(Emit(root));
  OCTET_RETURN_IF_ERROR(Push(Regex::Inst{kOpMatch, 0, 0, 0, 0, 0}));
  if (!root_info.nullable) {
    if (!out_->byte_sets_.Push(root_info.first)) return OutOfMemory("the program");
    out_->first_set_ = static_cast<int32_t>(out_->byte_sets_.size()) - 1;
  }
  // A pattern that begins with \A can only match at 0.
  int n = root;
  while (nodes_[n].kind == NodeKind::kConcat && nodes_[n].kid_count > 0) n = Kid(nodes_[n], 0);
  out_->anchored_start_ = nodes_[n].kind == NodeKind::kAssert && nodes_[n].assert_kind == kBeginText;
  return Status::Ok();
}

// alternation := concat ('|' concat)*
Status RegexCompiler::ParseAlt(bool fold, int depth, int* node) {
  if (depth > kMaxNesting) return Unsupported(i_, "nesting deeper than 200 groups");
  const size_t start = i_;
  Vector<int> alts;
  for (;;) {
    int c = -1;
    bool inline_option = false;
    OCTET_RETURN_IF_ERROR(ParseConcat(fold, depth, &c, &inline_option));
    if (!alts.Push(c)) return OutOfMemory("the parse tree");
    // (?i) at the start of a group: the rest of the group, every remaining
    // alternative included, was parsed with the new flag. (Mid-sequence
    // options are refused in ParseConcat: Oniguruma and Perl disagree there.)
    if (inline_option) break;
    if (Peek() == '|') {
      ++i_;
      continue;
    }
    break;
  }
  if (alts.size() == 1) {
    *node = alts[0];
    return Status::Ok();
  }
  OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kAlt, start, node));
  return SetKids(*node, alts.data(), alts.size());
}

Status RegexCompiler::ParseConcat(bool fold, int depth, int* node, bool* hit_inline_option) {
  const size_t start = i_;
  Vector<int> items;
  while (!AtEnd() && Peek() != '|' && Peek() != ')') {
    int atom = -1;
    bool option = false;
    bool new_fold = fold;
    const size_t atom_start = i_;
    OCTET_RETURN_IF_ERROR(ParseAtom(fold, depth, &atom, &option, &new_fold));
    if (option) {
      if (!items.empty()) {
        return Unsupported(atom_start, "inline option after the start of a group (use (?i:...))");
      }
      // The rest of the enclosing group, all alternatives, under the new flag.
      int rest = -1;
      OCTET_RETURN_IF_ERROR(ParseAlt(new_fold, depth + 1, &rest));
      *node = rest;
      *hit_inline_option = true;
      return Status::Ok();
    }
    OCTET_RETURN_IF_ERROR(ParseQuantifier(&atom));
    if (!items.Push(atom)) return OutOfMemory("the parse tree");
  }
  if (items.empty()) return NewNode(NodeKind::kEmpty, start, node);
  if (items.size() == 1) {
    *node = items[0];
    return Status::Ok();
  }
  OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kConcat, start, node));
  return SetKids(*node, items.data(), items.size());
}

Status RegexCompiler::ParseQuantifier(int* node) {
  bool quantified = false;
  while (!AtEnd()) {
    const size_t q = i_;
    const char c = Peek();
    uint32_t min = 0, max = 0;
    bool interval = false;
    if (c == '*') {
      min = 0, max = kInfinite;
      ++i_;
    } else if (c == '+') {
      min = 1, max = kInfinite;
      ++i_;
    } else if (c == '?') {
      min = 0, max = 1;
      ++i_;
    } else if (c == '{') {
      // {m} {m,} {m,n} {,n}; anything else is a literal '{' (Oniguruma and
      // Perl agree).
      size_t j = i_ + 1;
      auto read_num = [&](uint32_t* v) {
        const size_t s = j;
        uint64_t acc = 0;
        while (j < p_.size() && p_[j] >= '0' && p_[j] <= '9') {
          acc = acc * 10 + static_cast<uint64_t>(p_[j] - '0');
          if (acc > kMaxRepeatCount + 1) acc = kMaxRepeatCount + 1;
          ++j;
        }
        *v = static_cast<uint32_t>(acc);
        return j > s;
      };
      uint32_t a = 0, b = 0;
      const bool has_a = read_num(&a);
      bool ok = false;
      if (j < p_.size() && p_[j] == '}' && has_a) {
        min = max = a;
        ok = true;
      } else if (j < p_.size() && p_[j] == ',') {
        ++j;
        const bool has_b = read_num(&b);
        if (j < p_.size() && p_[j] == '}' && (has_a || has_b)) {
          min = has_a ? a : 0;
          max = has_b ? b : kInfinite;
          ok = true;
        }
      }
      if (!ok) break;  // literal '{', parsed as the next atom
      if (min > kMaxRepeatCount || (max != kInfinite && max > kMaxRepeatCount)) {
        return Unsupported(q, "repeat count over 100000");
      }
      if (max != kInfinite && min > max) {
        return Error(StatusCode::kInvalidArgument, q, "repeat range {m,n} with m > n");
      }
      i_ = j + 1;
      interval = true;
    } else {
      break;
    }
    if (quantified) return Unsupported(q, "quantifier after a quantifier");
    quantified = true;
    RepeatMode mode = kGreedy;
    if (Peek() == '?') {
      if (interval && min == max) {
        // Oniguruma reads a{n}? as (?:a{n})? (FIXED_INTERVAL_IS_GREEDY_ONLY),
        // Perl as a lazy a{n}.
        return Unsupported(i_, "'?' after an exact {n} (ambiguous)");
      }
      mode = kLazy;
      ++i_;
    } else if (Peek() == '+') {
      if (interval) {
        // Oniguruma reads a{n,m}+ as (?:a{n,m})+, Perl as possessive.
        return Unsupported(i_, "'+' after {n,m} (ambiguous)");
      }
      mode = kPossessive;
      ++i_;
    }
    const NodeKind k = nodes_[*node].kind;
    if (k == NodeKind::kAssert || k == NodeKind::kLook || k == NodeKind::kEmpty) {
      return Unsupported(q, "quantifier on an assertion or empty group");
    }
    int r = -1;
    OCTET_RETURN_IF_ERROR(NewParent(NodeKind::kRepeat, q, *node, &r));
    nodes_[r].min = min;
    nodes_[r].max = max;
    nodes_[r].mode = mode;
    *node = r;
    if (Peek() == '*' || Peek() == '+' || Peek() == '?' || IsInterval(i_)) {
      // Oniguruma nests them ((?:a{2}){3}); refused rather than guessed.
      return Unsupported(i_, "quantifier after a quantifier");
    }
    break;
  }
  return Status::Ok();
}

// ( ... ) in all its kinds: plain, capturing and named groups (captures are
// not reported, so all three are plain groups), (?: ), lookaround, (?> ) and
// the (?i) (?-i) options, alone or over a group.
Status RegexCompiler::ParseGroup(bool fold, int depth, int* node, bool* consumed_option,
                                 bool* new_fold) {
  const size_t start = i_;
  ++i_;  // '('
  bool look = false, behind = false, negate = false, atomic = false;
  bool group_fold = fold;
  if (Peek() == '?') {
    ++i_;
    const char k = Peek();
    if (k == ':') {
      ++i_;
    } else if (k == '=' || k == '!') {
      look = true;
      negate = k == '!';
      ++i_;
    } else if (k == '<' && (Peek(1) == '=' || Peek(1) == '!')) {
      look = behind = true;
      negate = Peek(1) == '!';
      i_ += 2;
    } else if (k == '<' || k == '\'') {
      // Named group: a plain group for us.
      const char close = k == '<' ? '>' : '\'';
      ++i_;
      const size_t name_start = i_;
      while (!AtEnd() && Peek() != close) {
        const char ch = Peek();
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_')) {
          return Error(StatusCode::kInvalidArgument, i_, "bad group name");
        }
        ++i_;
      }
      if (AtEnd() || i_ == name_start) return Error(StatusCode::kInvalidArgument, start, "bad group name");
      ++i_;
    } else if (k == '>') {
      atomic = true;
      ++i_;
    } else if (k == 'i' || k == '-') {
      // (?i) (?-i) (?i:...) (?-i:...)
      bool on = true;
      if (Peek() == '-') {
        on = false;
        ++i_;
      }
      if (Peek() != 'i') return Unsupported(start, "group option (only i and -i are supported)");
      ++i_;
      group_fold = on;
      if (Peek() == ')') {
        ++i_;
        *consumed_option = true;
        *new_fold = group_fold;
        return Status::Ok();
      }
      if (Peek() != ':') return Unsupported(start, "group option (only i and -i are supported)");
      ++i_;
    } else {
      return Unsupported(start, "group kind '(?'");
    }
  }
  int inner = -1;
  OCTET_RETURN_IF_ERROR(ParseAlt(group_fold, depth + 1, &inner));
  if (Peek() != ')') return Error(StatusCode::kInvalidArgument, start, "unclosed '('");
  ++i_;
  if (look) {
    OCTET_RETURN_IF_ERROR(NewParent(NodeKind::kLook, start, inner, node));
    nodes_[*node].behind = behind;
    nodes_[*node].negate = negate;
  } else if (atomic) {
    OCTET_RETURN_IF_ERROR(NewParent(NodeKind::kAtomic, start, inner, node));
  } else {
    *node = inner;
  }
  return Status::Ok();
}

Status RegexCompiler::ParseAtom(bool fold, int depth, int* node, bool* consumed_option,
                                bool* new_fold) {
  const size_t start = i_;
  const char c = Peek();
  switch (c) {
    case '(':
      return ParseGroup(fold, depth, node, consumed_option, new_fold);
    case ')':
      return Error(StatusCode::kInvalidArgument, start, "unmatched ')'");
    case '*':
    case '+':
    case '?':
      return Error(StatusCode::kInvalidArgument, start, "quantifier with nothing to repeat");
    case '[': {
      int set = -1;
      OCTET_RETURN_IF_ERROR(ParseClass(fold, depth + 1, &set));
      OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kClass, start, node));
      nodes_[*node].set = set;
      return Status::Ok();
    }
    case '.': {
      ++i_;
      ClassItem nl;
      nl.lo = nl.hi = '\n';
      int set = -1;
      OCTET_RETURN_IF_ERROR(SingleItemSet(nl, true, &set));
      OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kClass, start, node));
      nodes_[*node].set = set;
      return Status::Ok();
    }
    case '^':
    case '$': {
      ++i_;
      OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kAssert, start, node));
      nodes_[*node].assert_kind = c == '^' ? kBol : kEol;
      return Status::Ok();
    }
    case '\\':
      return ParseEscape(fold, node);
    default: {
      uint32_t cp = 0;
      OCTET_RETURN_IF_ERROR(DecodePatternChar(&cp));
      OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kLiteral, start, node));
      nodes_[*node].cp = cp;
      nodes_[*node].fold = fold;
      return Status::Ok();
    }
  }
}

Status RegexCompiler::ParseHex(size_t digits_max, bool braced, uint32_t* cp) {
  const size_t start = i_;
  uint32_t v = 0;
  size_t digits = 0;
  while (!AtEnd() && digits < digits_max) {
    const char h = Peek();
    uint32_t d;
    if (h >= '0' && h <= '9') {
      d = static_cast<uint32_t>(h - '0');
    } else if (h >= 'a' && h <= 'f') {
      d = static_cast<uint32_t>(h - 'a' + 10);
    } else if (h >= 'A' && h <= 'F') {
      d = static_cast<uint32_t>(h - 'A' + 10);
    } else {
      break;
    }
    v = v * 16 + d;
    ++digits;
    ++i_;
    if (v > 0x10FFFF) return Error(StatusCode::kInvalidArgument, start, "code point above U+10FFFF");
  }
  if (digits == 0) return Error(StatusCode::kInvalidArgument, start, "hex escape without digits");
  if (braced) {
    if (Peek() != '}') return Error(StatusCode::kInvalidArgument, start, "unclosed \\x{");
    ++i_;
  }
  if (v >= 0xD800 && v <= 0xDFFF) return Error(StatusCode::kInvalidArgument, start, "surrogate code point");
  *cp = v;
  return Status::Ok();
}

Status RegexCompiler::ParseProperty(bool upper_p, ClassItem* item) {
  const size_t start = i_ - 2;
  if (Peek() != '{') return Unsupported(start, "\\p without braces");
  ++i_;
  bool negate = upper_p;
  if (Peek() == '^') {
    negate = !negate;
    ++i_;
  }
  // The name lowercased without ' ', '_' and '-'; longer than any known name
  // when it does not fit.
  char name[32];
  size_t length = 0;
  while (!AtEnd() && Peek() != '}') {
    const char ch = Peek();
    if (ch != ' ' && ch != '_' && ch != '-' && length < sizeof(name)) {
      name[length++] = ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch - 'A' + 'a') : ch;
    }
    ++i_;
  }
  if (AtEnd()) return Error(StatusCode::kInvalidArgument, start, "unclosed \\p{");
  ++i_;
  for (const PropertyName& cn : kCategoryNames) {
    if (length < sizeof(name) && std::string_view(name, length) == cn.name) {
      item->kind = ClassItem::kCategories;
      item->cats = cn.mask;
      item->negate = negate;
      return Status::Ok();
    }
  }
  return Unsupported(start, "Unicode property (only General_Category values are supported)");
}

// Escapes valid both inside and outside classes. Sets *is_char with *cp for a
// character, else fills *item (a class escape).
Status RegexCompiler::ParseClassEscape(ClassItem* item, bool* is_char, uint32_t* cp) {
  const size_t start = i_;
  ++i_;  // backslash
  if (AtEnd()) return Error(StatusCode::kInvalidArgument, start, "trailing backslash");
  const char e = Peek();
  ++i_;
  *is_char = true;
  switch (e) {
    case 't': *cp = '\t'; return Status::Ok();
    case 'n': *cp = '\n'; return Status::Ok();
    case 'r': *cp = '\r'; return Status::Ok();
    case 'f': *cp = '\f'; return Status::Ok();
    case 'v': *cp = '\v'; return Status::Ok();
    case 'a': *cp = 0x07; return Status::Ok();
    case 'e': *cp = 0x1B; return Status::Ok();
    case 'x':
      if (Peek() == '{') {
        ++i_;
        return ParseHex(8, true, cp);
      } else {
        const size_t at = i_;
        OCTET_RETURN_IF_ERROR(ParseHex(2, false, cp));
        // In Oniguruma with UTF-8, \xHH is a raw byte, not U+00HH.
        if (*cp >= 0x80) return Unsupported(at - 2, "byte escape \\x80..\\xFF");
        return Status::Ok();
      }
    case 'u': {
      const size_t at = i_;
      OCTET_RETURN_IF_ERROR(ParseHex(4, false, cp));
      if (i_ - at != 4) return Error(StatusCode::kInvalidArgument, start, "\\u needs 4 hex digits");
      return Status::Ok();
    }
    case 's': case 'S':
      *is_char = false;
      item->kind = ClassItem::kWhite;
      item->negate = e == 'S';
      return Status::Ok();
    case 'd': case 'D':
      *is_char = false;
      item->kind = ClassItem::kDigit;
      item->negate = e == 'D';
      return Status::Ok();
    case 'w': case 'W':
      *is_char = false;
      item->kind = ClassItem::kWord;
      item->negate = e == 'W';
      return Status::Ok();
    case 'p': case 'P':
      *is_char = false;
      return ParseProperty(e == 'P', item);
    default:
      break;
  }
  const unsigned char u = static_cast<unsigned char>(e);
  if (u >= 0x80 || !((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '0' && e <= '9'))) {
    // An escaped punctuation or other character stands for itself.
    i_ = start + 1;
    return DecodePatternChar(cp);
  }
  char buf[40];
  std::snprintf(buf, sizeof(buf), "escape '\\%c'", e);
  return Unsupported(start, buf);
}

Status RegexCompiler::ParseEscape(bool fold, int* node) {
  const size_t start = i_;
  const char e = Peek(1);
  AssertKind ak;
  bool is_assert = true;
  switch (e) {
    case 'A': ak = kBeginText; break;
    case 'z': ak = kEndText; break;
    case 'Z': ak = kEndTextNl; break;
    case 'b': ak = kWordBound; break;
    case 'B': ak = kNotWordBound; break;
    default: is_assert = false; ak = kBol; break;
  }
  if (is_assert) {
    i_ += 2;
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kAssert, start, node));
    nodes_[*node].assert_kind = ak;
    return Status::Ok();
  }
  ClassItem item;
  bool is_char = false;
  uint32_t cp = 0;
  OCTET_RETURN_IF_ERROR(ParseClassEscape(&item, &is_char, &cp));
  if (is_char) {
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kLiteral, start, node));
    nodes_[*node].cp = cp;
    nodes_[*node].fold = fold;
  } else {
    int set = -1;
    OCTET_RETURN_IF_ERROR(SingleItemSet(item, false, &set));
    sets_[set].fold = fold;
    OCTET_RETURN_IF_ERROR(NewNode(NodeKind::kClass, start, node));
    nodes_[*node].set = set;
  }
  return Status::Ok();
}

// [...]: items, ranges, nested classes, && intersections (CCLASS_SET_OP).
Status RegexCompiler::ParseClass(bool fold, int depth, int* set_out) {
  if (depth > kMaxNesting) return Unsupported(i_, "classes nested deeper than 200");
  const size_t start = i_;
  ++i_;  // '['
  int set = -1;
  OCTET_RETURN_IF_ERROR(NewSet(&set));
  sets_[set].fold = fold;
  if (Peek() == '^') {
    sets_[set].negate = true;
    ++i_;
  }
  if (Peek() == ':' ) {
    // [:alpha:] POSIX brackets are not supported; a class starting with ':'
    // that is not one is fine.
    const size_t close = p_.find(":]", i_ + 1);
    if (close != std::string_view::npos) {
      bool word = true;
      for (size_t j = i_ + 1; j < close; ++j) {
        const char ch = p_[j];
        if (!((ch >= 'a' && ch <= 'z') || ch == '^')) word = false;
      }
      if (word) return Unsupported(start, "POSIX bracket [:name:]");
    }
  }
  bool first = true;
  for (;;) {
    if (AtEnd()) return Error(StatusCode::kInvalidArgument, start, "unclosed '['");
    const size_t item_start = i_;
    const char c = Peek();
    if (c == ']' && !first) {
      ++i_;
      break;
    }
    if (c == ']' && first) {
      // Oniguruma reads a leading ']' as a literal (with a warning).
      return Unsupported(item_start, "']' first in a class (escape it)");
    }
    first = false;
    if (c == '&' && Peek(1) == '&') {
      i_ += 2;
      if (!sets_[set].parts.Push(Vector<ClassItem>())) return OutOfMemory("the class sets");
      continue;
    }
    if (c == '[') {
      if (Peek(1) == ':') {
        const size_t close = p_.find(":]", i_ + 2);
        if (close != std::string_view::npos) return Unsupported(item_start, "POSIX bracket [:name:]");
      }
      int nested = -1;
      OCTET_RETURN_IF_ERROR(ParseClass(fold, depth + 1, &nested));
      ClassItem item;
      item.kind = ClassItem::kNested;
      item.nested = nested;
      OCTET_RETURN_IF_ERROR(AddItem(set, item));
      continue;
    }
    // One character or class escape, maybe the start of a range.
    uint32_t lo = 0;
    if (c == '\\') {
      if (Peek(1) == 'b') return Unsupported(item_start, "\\b inside a class");
      ClassItem item;
      bool is_char = false;
      OCTET_RETURN_IF_ERROR(ParseClassEscape(&item, &is_char, &lo));
      if (!is_char) {
        if (Peek() == '-' && Peek(1) != ']') {
          return Unsupported(i_, "range starting at a class escape");
        }
        OCTET_RETURN_IF_ERROR(AddItem(set, item));
        continue;
      }
    } else {
      OCTET_RETURN_IF_ERROR(DecodePatternChar(&lo));
    }
    uint32_t hi = lo;
    if (Peek() == '-' && Peek(1) != ']' && Peek(1) != '\0') {
      const size_t dash = i_;
      ++i_;
      if (Peek() == '[' || (Peek() == '&' && Peek(1) == '&')) {
        return Unsupported(dash, "'-' before a nested class or &&");
      }
      if (Peek() == '\\') {
        ClassItem item;
        bool is_char = false;
        OCTET_RETURN_IF_ERROR(ParseClassEscape(&item, &is_char, &hi));
        if (!is_char) return Unsupported(dash, "range ending at a class escape");
      } else {
        OCTET_RETURN_IF_ERROR(DecodePatternChar(&hi));
      }
      if (hi < lo) return Error(StatusCode::kInvalidArgument, item_start, "class range out of order");
    }
    ClassItem item;
    item.kind = ClassItem::kRange;
    item.lo = lo;
    item.hi = hi;
    OCTET_RETURN_IF_ERROR(AddItem(set, item));
  }
  for (const auto& part : sets_[set].parts) {
    if (part.empty()) return Error(StatusCode::kInvalidArgument, start, "empty class or && operand");
  }
  *set_out = set;
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Classes

bool RegexCompiler::EvalItem(const ClassItem& item, uint32_t cp) const {
  bool r = false;
  switch (item.kind) {
    case ClassItem::kRange: r = cp >= item.lo && cp <= item.hi; break;
    case ClassItem::kCategories: r = (item.cats >> static_cast<int>(CategoryOf(cp))) & 1; break;
    case ClassItem::kWhite: r = IsWhiteSpace(cp); break;
    case ClassItem::kWord: r = IsOnigWord(cp); break;
    case ClassItem::kDigit: r = IsOnigDigit(cp); break;
    case ClassItem::kNested: r = EvalSet(item.nested, cp); break;
  }
  return r != item.negate;
}

bool RegexCompiler::EvalSetPositive(int set, uint32_t cp) const {
  for (const auto& part : sets_[set].parts) {
    bool any = false;
    for (const ClassItem& item : part) {
      if (EvalItem(item, cp)) {
        any = true;
        break;
      }
    }
    if (!any) return false;
  }
  return true;
}

bool RegexCompiler::EvalSet(int set, uint32_t cp) const {
  bool r = EvalSetPositive(set, cp);
  if (!r && sets_[set].fold) {
    // (?i): a member if any character of its case orbit is one (closure
    // before negation, as Oniguruma does for [^...]).
    for (uint32_t o = SimpleFoldOrbitNext(cp); o != cp && !r; o = SimpleFoldOrbitNext(o)) {
      r = EvalSetPositive(set, o);
    }
  }
  return r != sets_[set].negate;
}

// The block's index in out_->blocks_, shared between identical blocks (0: the
// empty block).
Status RegexCompiler::AddBlock(const Regex::Block& block, uint32_t* index) {
  *index = 0;
  if ((block.bits[0] | block.bits[1] | block.bits[2] | block.bits[3]) == 0) return Status::Ok();
  const Vector<Regex::Block>& blocks = out_->blocks_;
  bool found = false;
  const size_t at = block_cache_.Find(
      [&](uint32_t i) { return CompareWords(blocks[i].bits, block.bits, 4); }, &found);
  if (found) {
    *index = block_cache_.At(at);
    return Status::Ok();
  }
  const uint32_t added = static_cast<uint32_t>(blocks.size());
  if (!out_->blocks_.Push(block) || !block_cache_.Insert(at, added)) {
    return OutOfMemory("the character classes");
  }
  *index = added;
  return Status::Ok();
}

// The bounds of the ranges in `set` and the sets nested in it: where
// membership can change inside a property run. *fold when any is (?i).
Status RegexCompiler::CollectBounds(int set, bool* fold, Vector<uint32_t>* bounds) const {
  if (sets_[set].fold) *fold = true;
  for (const Vector<ClassItem>& part : sets_[set].parts) {
    for (const ClassItem& item : part) {
      if (item.kind == ClassItem::kRange) {
        if (!bounds->Push(item.lo) || (item.hi < kMaxCodePoint && !bounds->Push(item.hi + 1))) {
          return OutOfMemory("a character class");
        }
      } else if (item.kind == ClassItem::kNested) {
        OCTET_RETURN_IF_ERROR(CollectBounds(item.nested, fold, bounds));
      }
    }
  }
  return Status::Ok();
}

// The members of `set` as sorted, disjoint [lo, hi] pairs: evaluated once per
// property run piece between range bounds (per code point where (?i) folds).
Status RegexCompiler::ClassMembers(int set, Vector<uint32_t>* members) const {
  const Vector<PropertyRun>* runs = PropertyRuns();
  if (runs == nullptr) return OutOfMemory("the Unicode property runs");
  bool fold = false;
  Vector<uint32_t> bounds;
  OCTET_RETURN_IF_ERROR(CollectBounds(set, &fold, &bounds));
  std::sort(bounds.begin(), bounds.end());
  auto add = [members](uint32_t lo, uint32_t hi) {
    if (!members->empty() && members->back() + 1 == lo) {
      members->back() = hi;
      return true;
    }
    return members->Push(lo) && members->Push(hi);
  };
  size_t b = 0;
  for (const PropertyRun& run : *runs) {
    uint32_t lo = run.lo;
    while (lo <= run.hi) {
      while (b < bounds.size() && bounds[b] <= lo) ++b;
      const uint32_t hi = b < bounds.size() && bounds[b] - 1 < run.hi ? bounds[b] - 1 : run.hi;
      bool grew = true;
      if (fold && run.folds) {
        for (uint32_t cp = lo; cp <= hi && grew; ++cp) {
          if (EvalSet(set, cp)) grew = add(cp, cp);
        }
      } else if (EvalSet(set, lo)) {
        grew = add(lo, hi);
      }
      if (!grew) return OutOfMemory("a character class");
      if (hi == kMaxCodePoint) break;
      lo = hi + 1;
    }
  }
  return Status::Ok();
}

// The compiled class equal to `cls` with ranges `astral`, or a new one with
// lead bytes `lead`: its index in out_->classes_ (and class_first_).
Status RegexCompiler::AddClass(const Regex::CharClass& cls, const Vector<uint32_t>& astral,
                               const Regex::ByteSet& lead, uint32_t* index) {
  const Vector<Regex::CharClass>& classes = out_->classes_;
  const Vector<uint32_t>& ranges = out_->ranges_;
  auto compare = [&](uint32_t i) {
    const Regex::CharClass& c = classes[i];
    const int blocks = std::memcmp(c.bmp_block, cls.bmp_block, sizeof(cls.bmp_block));
    if (blocks != 0) return blocks;
    const size_t have = size_t{c.astral_count} * 2;
    if (have != astral.size()) return have < astral.size() ? -1 : 1;
    for (size_t k = 0; k < have; ++k) {
      const uint32_t x = ranges[c.astral_begin + k], y = astral[k];
      if (x != y) return x < y ? -1 : 1;
    }
    return 0;
  };
  bool found = false;
  const size_t at = class_cache_.Find(compare, &found);
  if (found) {
    *index = class_cache_.At(at);
    return Status::Ok();
  }
  Regex::CharClass added = cls;
  added.astral_begin = static_cast<uint32_t>(ranges.size());
  added.astral_count = static_cast<uint32_t>(astral.size() / 2);
  *index = static_cast<uint32_t>(classes.size());
  if (!out_->ranges_.Append(astral.data(), astral.size()) || !out_->classes_.Push(added) ||
      !class_first_.Push(lead) || !class_cache_.Insert(at, *index)) {
    return OutOfMemory("the character classes");
  }
  return Status::Ok();
}

// Evaluates a set over every code point into a compiled class (shared between
// identical sets) and records the lead bytes its members can start with.
Status RegexCompiler::BuildClass(int set, uint32_t* index) {
  if (set_class_[set] >= 0) {
    *index = static_cast<uint32_t>(set_class_[set]);
    return Status::Ok();
  }
  Vector<uint32_t> members;
  OCTET_RETURN_IF_ERROR(ClassMembers(set, &members));

  Regex::CharClass cls;
  Regex::ByteSet lead{};
  Vector<Regex::Block> bmp;
  Vector<uint32_t> astral;
  if (!bmp.Resize(256, Regex::Block{{0, 0, 0, 0}})) return OutOfMemory("a character class");
  for (size_t r = 0; r < members.size(); r += 2) {
    const uint32_t lo = members[r], hi = members[r + 1];
    // BMP bits a 64-bit word at a time (surrogates are never decoded from
    // UTF-8; leaving them in changes nothing).
    for (uint32_t cp = lo; cp <= hi && cp < 0x10000;) {
      const uint32_t word_end = std::min<uint32_t>({hi, 0xFFFF, cp | 63});
      const uint32_t count = word_end - cp + 1;
      const uint64_t bits = (count == 64 ? ~uint64_t{0} : ((uint64_t{1} << count) - 1)) << (cp & 63);
      bmp[cp >> 8].bits[(cp >> 6) & 3] |= bits;
      cp = word_end + 1;
    }
    if (hi >= 0x10000 && (!astral.Push(std::max<uint32_t>(lo, 0x10000)) || !astral.Push(hi))) {
      return OutOfMemory("a character class");
    }
    // Lead bytes: one per 64 code points in the 2-byte range, per 4096 in the
    // 3-byte range, per 2^18 in the 4-byte range.
    for (uint32_t cp = lo; cp <= hi;) {
      char enc[4];
      if (cp >= 0xD800 && cp <= 0xDFFF) {
        cp = 0xE000;
        continue;
      }
      Utf8Encode(cp, enc);
      ByteSetAdd(&lead, static_cast<uint8_t>(enc[0]));
      const uint32_t step = cp < 0x80 ? 1 : cp < 0x800 ? 64 : cp < 0x10000 ? 4096 : 1u << 18;
      const uint32_t next = (cp / step + 1) * step;
      if (next <= cp) break;
      cp = next;
    }
  }
  cls.ascii[0] = bmp[0].bits[0];
  cls.ascii[1] = bmp[0].bits[1];
  for (uint32_t block = 0; block < 256; ++block) {
    uint32_t b = 0;
    OCTET_RETURN_IF_ERROR(AddBlock(bmp[block], &b));
    cls.bmp_block[block] = static_cast<uint16_t>(b);
  }
  OCTET_RETURN_IF_ERROR(AddClass(cls, astral, lead, index));
  set_class_[set] = static_cast<int>(*index);
  return Status::Ok();
}

// A (?i) class holding a character with a multi-character fold would match
// that string too in Oniguruma: refused. (Negated classes do not expand.)
Status RegexCompiler::CheckFoldedClass(int set, size_t offset) {
  if (!sets_[set].fold || sets_[set].negate) return Status::Ok();
  uint32_t cls = 0;
  OCTET_RETURN_IF_ERROR(BuildClass(set, &cls));
  for (const MultiFold& m : kMultiFolds) {
    if (out_->ClassHas(cls, m.cp)) {
      return Unsupported(offset, "(?i) class with a character that has a multi-character case fold");
    }
  }
  return Status::Ok();
}

// A literal as a one-character class (for repetitions and (?i) letters).
Status RegexCompiler::LiteralSet(uint32_t cp, bool fold, int* set) {
  ClassItem item;
  item.lo = item.hi = cp;
  OCTET_RETURN_IF_ERROR(SingleItemSet(item, false, set));
  sets_[*set].fold = fold;
  if (!set_class_.Push(-1)) return OutOfMemory("the character classes");
  return Status::Ok();
}

// The \w class for \b and \B, built once.
Status RegexCompiler::WordClass(uint32_t* cls) {
  if (word_class_ < 0) {
    ClassItem item;
    item.kind = ClassItem::kWord;
    int set = -1;
    OCTET_RETURN_IF_ERROR(SingleItemSet(item, false, &set));
    if (!set_class_.Push(-1)) return OutOfMemory("the character classes");
    uint32_t built = 0;
    OCTET_RETURN_IF_ERROR(BuildClass(set, &built));
    word_class_ = static_cast<int>(built);
  }
  *cls = static_cast<uint32_t>(word_class_);
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Analysis: first bytes, nullability, length in characters.

// Room for the analysis of every node made so far.
Status RegexCompiler::SizeInfo() {
  if (!info_.Resize(nodes_.size()) || !info_done_.Resize(nodes_.size(), false)) {
    return OutOfMemory("the pattern's analysis");
  }
  return Status::Ok();
}

// A concatenation's or alternation's info from its children's.
Status RegexCompiler::AnalyzeKids(const Node& node, Info* info) {
  const bool concat = node.kind == NodeKind::kConcat;
  info->nullable = concat;
  for (size_t k = 0; k < node.kid_count; ++k) {
    Info ki;
    OCTET_RETURN_IF_ERROR(Analyze(Kid(node, k), &ki));
    if (concat) {
      if (info->nullable) ByteSetUnion(&info->first, ki.first);
      info->nullable = info->nullable && ki.nullable;
      info->min_chars += ki.min_chars;
      if (info->max_chars != kInfinite) {
        info->max_chars = ki.max_chars == kInfinite ? kInfinite : info->max_chars + ki.max_chars;
      }
    } else {
      ByteSetUnion(&info->first, ki.first);
      info->nullable = info->nullable || ki.nullable;
      info->min_chars = k == 0 ? ki.min_chars : std::min(info->min_chars, ki.min_chars);
      info->max_chars = k == 0 ? ki.max_chars : std::max(info->max_chars, ki.max_chars);
    }
  }
  return Status::Ok();
}

Status RegexCompiler::Analyze(int n, Info* out) {
  if (n >= static_cast<int>(info_done_.size())) OCTET_RETURN_IF_ERROR(SizeInfo());
  if (info_done_[n]) {
    *out = info_[n];
    return Status::Ok();
  }
  Info info;
  const Node node = nodes_[n];
  switch (node.kind) {
    case NodeKind::kEmpty:
    case NodeKind::kAssert:
    case NodeKind::kLook:
      info.nullable = true;
      if (node.kind == NodeKind::kLook) {
        Info body;
        OCTET_RETURN_IF_ERROR(Analyze(Kid(node, 0), &body));
      }
      break;
    case NodeKind::kLiteral: {
      info.min_chars = info.max_chars = 1;
      uint32_t cp = node.cp;
      do {
        char enc[4];
        Utf8Encode(cp, enc);
        ByteSetAdd(&info.first, static_cast<uint8_t>(enc[0]));
        cp = node.fold ? SimpleFoldOrbitNext(cp) : node.cp;
      } while (cp != node.cp);
      break;
    }
    case NodeKind::kClass: {
      uint32_t cls = 0;
      OCTET_RETURN_IF_ERROR(BuildClass(node.set, &cls));
      info.first = class_first_[cls];
      info.min_chars = info.max_chars = 1;
      break;
    }
    case NodeKind::kConcat:
    case NodeKind::kAlt:
      OCTET_RETURN_IF_ERROR(AnalyzeKids(node, &info));
      break;
    case NodeKind::kRepeat: {
      Info ki;
      OCTET_RETURN_IF_ERROR(Analyze(Kid(node, 0), &ki));
      info.first = ki.first;
      info.nullable = node.min == 0 || ki.nullable;
      const uint64_t mn = uint64_t{ki.min_chars} * node.min;
      info.min_chars = mn > kInfinite - 1 ? kInfinite - 1 : static_cast<uint32_t>(mn);
      if (node.max == kInfinite || ki.max_chars == kInfinite) {
        info.max_chars = ki.max_chars == 0 ? 0 : kInfinite;
      } else {
        const uint64_t mx = uint64_t{ki.max_chars} * node.max;
        info.max_chars = mx >= kInfinite ? kInfinite : static_cast<uint32_t>(mx);
      }
      break;
    }
    case NodeKind::kAtomic:
      OCTET_RETURN_IF_ERROR(Analyze(Kid(node, 0), &info));
      break;
  }
  info_[n] = info;
  info_done_[n] = true;
  *out = info;
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Emitting

// A run of case-sensitive literals kids[*k, ...) becomes one string compare;
// *k moves past it.
Status RegexCompiler::EmitConcatRun(const int* kids, size_t count, size_t* k) {
  const uint32_t offset = static_cast<uint32_t>(out_->literals_.size());
  size_t j = *k;
  while (j < count && nodes_[kids[j]].kind == NodeKind::kLiteral && !nodes_[kids[j]].fold) {
    char enc[4];
    const size_t len = Utf8Encode(nodes_[kids[j]].cp, enc);
    if (!out_->literals_.Append(enc, len)) return OutOfMemory("the program");
    ++j;
  }
  *k = j;
  return Push(Regex::Inst{kOpString, 0, 0, offset,
                          static_cast<uint32_t>(out_->literals_.size()) - offset, 0});
}

// One instruction matching a character of `set`.
Status RegexCompiler::EmitClass(int set) {
  uint32_t cls = 0;
  OCTET_RETURN_IF_ERROR(BuildClass(set, &cls));
  return Push(Regex::Inst{kOpClass, 0, 0, cls, 0, 0});
}

// A literal on its own: a string compare, or under (?i) a class of its case
// orbit.
Status RegexCompiler::EmitLiteral(int n, const Node& node) {
  if (node.fold && IsMultiFoldSource(node.cp)) {
    return Unsupported(node.offset, "(?i) character with a multi-character case fold");
  }
  if (node.fold && SimpleFoldOrbitNext(node.cp) != node.cp) {
    int set = -1;
    OCTET_RETURN_IF_ERROR(LiteralSet(node.cp, true, &set));
    return EmitClass(set);
  }
  nodes_[n].fold = false;
  size_t k = 0;
  return EmitConcatRun(&n, 1, &k);
}

// (?i) literals that a multi-character fold could match are refused: a run
// of them whose folds spell a fold's target ("ss"), or one that has such a
// fold itself.
Status RegexCompiler::CheckConcatFolds(const Node& node) {
  Vector<uint32_t> folded;
  for (size_t k = 0; k < node.kid_count; ++k) {
    const Node& kid = nodes_[Kid(node, k)];
    if (kid.kind != NodeKind::kLiteral || !kid.fold) {
      if (HasMultiFoldTarget(folded)) {
        return Unsupported(node.offset, "(?i) literal with a multi-character case fold (e.g. \"ss\")");
      }
      folded.Clear();
      continue;
    }
    if (IsMultiFoldSource(kid.cp)) {
      return Unsupported(kid.offset, "(?i) character with a multi-character case fold");
    }
    if (!folded.Push(SimpleCaseFold(kid.cp))) return OutOfMemory("the pattern's analysis");
  }
  if (HasMultiFoldTarget(folded)) {
    return Unsupported(node.offset, "(?i) literal with a multi-character case fold (e.g. \"ss\")");
  }
  return Status::Ok();
}

// The children in order; runs of literals that compare exactly (case-
// sensitive, or (?i) without other cases) become one string compare.
Status RegexCompiler::EmitConcat(const Node& node) {
  OCTET_RETURN_IF_ERROR(CheckConcatFolds(node));
  auto exact_literal = [this](int kid) {
    const Node& n = nodes_[kid];
    return n.kind == NodeKind::kLiteral && (!n.fold || SimpleFoldOrbitNext(n.cp) == n.cp);
  };
  size_t k = 0;
  while (k < node.kid_count) {
    if (exact_literal(Kid(node, k))) {
      for (size_t j = k; j < node.kid_count && exact_literal(Kid(node, j)); ++j) {
        nodes_[Kid(node, j)].fold = false;
      }
      OCTET_RETURN_IF_ERROR(EmitConcatRun(kids_.data() + node.first_kid, node.kid_count, &k));
      continue;
    }
    OCTET_RETURN_IF_ERROR(Emit(Kid(node, k)));
    ++k;
  }
  return Status::Ok();
}

// a|b|c: a split before each alternative but the last, guarded by what the
// alternative and what the remaining ones can start with, and a jump from
// each alternative's end past the last.
Status RegexCompiler::EmitAlt(const Node& node) {
  const size_t count = node.kid_count;
  if (count == 0) return Status::Ok();
  Vector<uint32_t> jumps;
  Vector<Info> rest;  // rest[k]: alternatives k.. together
  if (!rest.Resize(count)) return OutOfMemory("the pattern's analysis");
  rest[count - 1] = info_[Kid(node, count - 1)];
  for (size_t k = count - 1; k-- > 0;) {
    rest[k] = info_[Kid(node, k)];
    ByteSetUnion(&rest[k].first, rest[k + 1].first);
    rest[k].nullable = rest[k].nullable || rest[k + 1].nullable;
  }
  for (size_t k = 0; k + 1 < count; ++k) {
    const uint32_t split = Here();
    uint32_t gx = 0, gy = 0;
    OCTET_RETURN_IF_ERROR(GuardOf(info_[Kid(node, k)], &gx));
    OCTET_RETURN_IF_ERROR(GuardOf(rest[k + 1], &gy));
    OCTET_RETURN_IF_ERROR(NotePushSite());
    OCTET_RETURN_IF_ERROR(Push(Regex::Inst{kOpSplit, 0, 0, split + 1, 0, gx | (gy << 16)}));
    OCTET_RETURN_IF_ERROR(Emit(Kid(node, k)));
    if (!jumps.Push(Here())) return OutOfMemory("the program");
    OCTET_RETURN_IF_ERROR(Push(Regex::Inst{kOpJmp, 0, 0, 0, 0, 0}));
    out_->program_[split].b = Here();
  }
  OCTET_RETURN_IF_ERROR(Emit(Kid(node, count - 1)));
  for (uint32_t j : jumps) out_->program_[j].a = Here();
  return Status::Ok();
}

// A repetition of one character or class: one kOpRepeat that scans and
// leaves at most one frame.
Status RegexCompiler::EmitRepeatChar(const Node& node, const Node& body) {
  if (body.kind == NodeKind::kLiteral && body.fold && IsMultiFoldSource(body.cp)) {
    return Unsupported(body.offset, "(?i) character with a multi-character case fold");
  }
  int set = body.set;
  if (body.kind == NodeKind::kClass) {
    OCTET_RETURN_IF_ERROR(CheckFoldedClass(body.set, body.offset));
  } else {
    OCTET_RETURN_IF_ERROR(LiteralSet(body.cp, body.fold, &set));
  }
  uint32_t cls = 0;
  OCTET_RETURN_IF_ERROR(BuildClass(set, &cls));
  if (node.min == node.max && node.mode != kPossessive) {
    // Exact count: nothing to give back.
    return Push(Regex::Inst{kOpRepeat, kPossessive, 0, cls, node.min, node.max});
  }
  if (node.mode != kPossessive) OCTET_RETURN_IF_ERROR(NotePushSite());
  return Push(Regex::Inst{kOpRepeat, node.mode, 0, cls, node.min, node.max});
}

// (body)* after the required copies: split, body, jump back to the split.
Status RegexCompiler::EmitUnboundedLoop(int body, const Info& body_info, uint32_t guard,
                                        bool lazy) {
  if (!loop_min_.Push(std::max<uint32_t>(body_info.min_chars, 1))) {
    return OutOfMemory("the pattern's analysis");
  }
  const uint32_t loop = Here();
  OCTET_RETURN_IF_ERROR(NotePushSite());
  OCTET_RETURN_IF_ERROR(Push(Regex::Inst{kOpSplit, 0, 0, 0, 0, 0}));
  OCTET_RETURN_IF_ERROR(Emit(body));
  OCTET_RETURN_IF_ERROR(Push(Regex::Inst{kOpJmp, 0, 0, loop, 0, 0}));
  loop_min_.PopBack();
  Regex::Inst& s = out_->program_[loop];
  if (lazy) {
    s.a = Here();
    s.b = loop + 1;
    s.c = guard << 16;
  } else {
    s.a = loop + 1;
    s.b = Here();
    s.c = guard;
  }
  return Status::Ok();
}

// (body){min,max} after the required copies: max - min optional copies,
// each behind a split to the end.
Status RegexCompiler::EmitBoundedLoop(const Node& node, uint32_t guard, bool lazy) {
  Vector<uint32_t> splits;
  for (uint32_t k = node.min; k < node.max; ++k) {
    if (!splits.Push(Here())) return OutOfMemory("the program");
    OCTET_RETURN_IF_ERROR(NotePushSite());
    OCTET_RETURN_IF_ERROR(Push(Regex::Inst{kOpSplit, 0, 0, 0, 0, 0}));
    OCTET_RETURN_IF_ERROR(Emit(Kid(node, 0)));
  }
  const uint32_t exit = Here();
  for (uint32_t s : splits) {
    Regex::Inst& in = out_->program_[s];
    if (lazy) {
      in.a = exit;
      in.b = s + 1;
      in.c = guard << 16;
    } else {
      in.a = s + 1;
      in.b = exit;
      in.c = guard;
    }
  }
  return Status::Ok();
}

// x* x+ x? x{m,n} in their greedy, lazy and possessive forms: one instruction
// for a single character, else the body's copies and loops (possessive ones
// inside an atomic group).
Status RegexCompiler::EmitRepeat(const Node& node) {
  const int body = Kid(node, 0);
  const Node b = nodes_[body];
  if (node.max == 0) return Status::Ok();
  if (b.kind == NodeKind::kClass || b.kind == NodeKind::kLiteral) return EmitRepeatChar(node, b);
  const Info bi = info_[body];
  if (bi.nullable && node.max > 1) {
    return Unsupported(node.offset, "repetition of a group that can match empty");
  }
  if (node.mode == kPossessive) {
    OCTET_RETURN_IF_ERROR(NotePushSite());
    OCTET_RETURN_IF_ERROR(Push(Regex::Inst{kOpAtomic, 0, 0, 0, 0, 0}));
  }
  for (uint32_t k = 0; k < node.min; ++k) OCTET_RETURN_IF_ERROR(Emit(body));
  const bool lazy = node.mode == kLazy;
  uint32_t guard = 0;
  OCTET_RETURN_IF_ERROR(GuardOf(bi, &guard));
  if (node.max == kInfinite) {
    OCTET_RETURN_IF_ERROR(EmitUnboundedLoop(body, bi, guard, lazy));
  } else {
    OCTET_RETURN_IF_ERROR(EmitBoundedLoop(node, guard, lazy));
  }
  if (node.mode == kPossessive) {
    OCTET_RETURN_IF_ERROR(Push(Regex::Inst{kOpAtomicEnd, 0, 0, 0, 0, 0}));
  }
  return Status::Ok();
}

// A lookbehind over alternatives of different fixed lengths: one lookbehind
// each, any of them for (?<=), all of them for (?<!).
Status RegexCompiler::EmitLookbehindAlternatives(const Node& node) {
  const Node body = nodes_[Kid(node, 0)];
  if (body.kind != NodeKind::kAlt) return Unsupported(node.offset, "lookbehind of variable length");
  Vector<int> looks;
  for (size_t k = 0; k < body.kid_count; ++k) {
    const int alt = Kid(body, k);
    if (info_[alt].min_chars != info_[alt].max_chars) {
      return Unsupported(node.offset, "lookbehind of variable length");
    }
    int l = -1;
    OCTET_RETURN_IF_ERROR(NewParent(NodeKind::kLook, node.offset, alt, &l));
    nodes_[l].behind = true;
    nodes_[l].negate = node.negate;
    if (!looks.Push(l)) return OutOfMemory("the parse tree");
  }
  int comb = -1;
  OCTET_RETURN_IF_ERROR(NewNode(node.negate ? NodeKind::kConcat : NodeKind::kAlt, node.offset, &comb));
  OCTET_RETURN_IF_ERROR(SetKids(comb, looks.data(), looks.size()));
  OCTET_RETURN_IF_ERROR(SizeInfo());
  Info info;
  OCTET_RETURN_IF_ERROR(Analyze(comb, &info));
  return Emit(comb);
}

// (?= ) (?! ) (?<= ) (?<! ): a barrier frame, the body, and kOpLookEnd; a
// lookbehind first steps back its body's length in characters.
Status RegexCompiler::EmitLook(const Node& node) {
  const int body = Kid(node, 0);
  if (node.behind && info_[body].min_chars != info_[body].max_chars) {
    return EmitLookbehindAlternatives(node);
  }
  const uint32_t look = Here();
  OCTET_RETURN_IF_ERROR(NotePushSite());
  const uint8_t mode = static_cast<uint8_t>((node.negate ? 1 : 0) | (node.behind ? 2 : 0));
  OCTET_RETURN_IF_ERROR(
      Push(Regex::Inst{kOpLook, mode, 0, 0, node.behind ? info_[body].min_chars : 0, 0}));
  OCTET_RETURN_IF_ERROR(Emit(body));
  OCTET_RETURN_IF_ERROR(Push(Regex::Inst{kOpLookEnd, 0, 0, 0, 0, 0}));
  out_->program_[look].a = Here();
  return Status::Ok();
}

// ^ $ \A \z \Z \b \B (the word boundaries with the \w class).
Status RegexCompiler::EmitAssert(const Node& node) {
  uint32_t word = 0;
  if (node.assert_kind == kWordBound || node.assert_kind == kNotWordBound) {
    OCTET_RETURN_IF_ERROR(WordClass(&word));
  }
  return Push(Regex::Inst{kOpAssert, node.assert_kind, 0, word, 0, 0});
}

// Appends the program for node n (nodes_ may grow meanwhile: each step works
// on a copy of the node and reads children by index).
Status RegexCompiler::Emit(int n) {
  const Node node = nodes_[n];
  switch (node.kind) {
    case NodeKind::kEmpty:
      return Status::Ok();
    case NodeKind::kLiteral:
      return EmitLiteral(n, node);
    case NodeKind::kClass:
      OCTET_RETURN_IF_ERROR(CheckFoldedClass(node.set, node.offset));
      return EmitClass(node.set);
    case NodeKind::kConcat:
      return EmitConcat(node);
    case NodeKind::kAlt:
      return EmitAlt(node);
    case NodeKind::kRepeat:
      return EmitRepeat(node);
    case NodeKind::kAtomic:
      OCTET_RETURN_IF_ERROR(NotePushSite());
      OCTET_RETURN_IF_ERROR(Push(Regex::Inst{kOpAtomic, 0, 0, 0, 0, 0}));
      OCTET_RETURN_IF_ERROR(Emit(Kid(node, 0)));
      return Push(Regex::Inst{kOpAtomicEnd, 0, 0, 0, 0, 0});
    case NodeKind::kLook:
      return EmitLook(node);
    case NodeKind::kAssert:
      return EmitAssert(node);
  }
  return Status(StatusCode::kInternal, "regex: unknown node");
}

// ---------------------------------------------------------------------------
// Regex

Status Regex::CompileGeneralOnly(std::string_view pattern) {
  fast_ = regex_fast::Kind::kNone;
  RegexCompiler compiler(pattern, this);
  Status s = compiler.Run();
  if (!s.ok()) program_.Clear();
  return s;
}

Status Regex::Compile(std::string_view pattern) {
  OCTET_RETURN_IF_ERROR(CompileGeneralOnly(pattern));
  fast_ = regex_fast::Recognize(pattern);
  if (fast_ != regex_fast::Kind::kNone && !kinds_.Build()) {
    program_.Clear();
    return Status(StatusCode::kOutOfMemory, "regex: out of memory for the character kinds");
  }
  return Status::Ok();
}

size_t Regex::ScratchBytes(size_t text_bytes) const {
  size_t frames = stack_fixed_ + 1;
  for (uint32_t min_len : loop_min_lengths_) frames += text_bytes / min_len + 1;
  return frames * sizeof(Frame) + alignof(Frame);
}

inline bool Regex::ClassHas(uint32_t cls, uint32_t cp) const {
  const CharClass& c = classes_[cls];
  if (cp < 0x80) return (c.ascii[cp >> 6] >> (cp & 63)) & 1;
  if (cp < 0x10000) {
    const Block& b = blocks_[c.bmp_block[cp >> 8]];
    return (b.bits[(cp >> 6) & 3] >> (cp & 63)) & 1;
  }
  const uint32_t* r = ranges_.data() + c.astral_begin;
  size_t lo = 0, hi = c.astral_count;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (cp < r[2 * mid]) {
      hi = mid;
    } else if (cp > r[2 * mid + 1]) {
      lo = mid + 1;
    } else {
      return true;
    }
  }
  return false;
}

Status Regex::OutcomeStatus(Outcome o) {
  switch (o) {
    case Outcome::kStackFull:
      return Status(StatusCode::kOutOfMemory, "regex: backtracking stack outgrew the scratch");
    case Outcome::kBudget:
      return Status(StatusCode::kUnsupported, "regex: backtracking limit exceeded");
    default:
      return Status(StatusCode::kInternal, "regex: corrupt program");
  }
}

namespace {

// Aligns caller scratch for frames; returns the frame capacity (0: too small).
size_t AlignScratch(void* scratch, size_t bytes, void** stack) {
  if (scratch == nullptr) return 0;
  const auto addr = reinterpret_cast<uintptr_t>(scratch);
  const size_t adjust = (alignof(Frame) - addr % alignof(Frame)) % alignof(Frame);
  if (bytes < adjust + sizeof(Frame)) return 0;
  *stack = static_cast<char*>(scratch) + adjust;
  return (bytes - adjust) / sizeof(Frame);
}

}  // namespace

Result<bool> Regex::Find(const char* text, size_t n, size_t from, size_t* begin, size_t* end,
                         void* scratch, size_t scratch_bytes) const {
  if (program_.empty()) return Status(StatusCode::kInvalidArgument, "regex: not compiled");
  if (n >= 0xFFFFFFFFu) return Status(StatusCode::kInvalidArgument, "regex: text of 4 GiB or more");
  if (from > n) return Status(StatusCode::kInvalidArgument, "regex: start past the end of the text");
  void* stack = nullptr;
  const size_t cap = AlignScratch(scratch, scratch_bytes, &stack);
  if (cap == 0) return Status(StatusCode::kOutOfMemory, "regex: scratch too small");
  const Outcome o = FindImpl(text, n, from, begin, end, stack, cap);
  if (o == Outcome::kMatch) return true;
  if (o == Outcome::kNoMatch) return false;
  return OutcomeStatus(o);
}

Regex::Outcome Regex::FindImpl(const char* text, size_t n, size_t from, size_t* begin,
                               size_t* end, void* stack, size_t cap) const {
  const auto* s = reinterpret_cast<const uint8_t*>(text);
  if (fast_ != regex_fast::Kind::kNone) {
    // These patterns match at every position of non-empty text.
    if (from >= n) return Outcome::kNoMatch;
    *begin = from;
    *end = fast_ == regex_fast::Kind::kGpt2 ? regex_fast::MatchGpt2(kinds_, s, n, from)
                                            : regex_fast::MatchLlama3(
                                                  kinds_, s, n, from,
                                                  fast_ == regex_fast::Kind::kLlama3 ? 3 : 1);
    return Outcome::kMatch;
  }
  const ByteSet* first = first_set_ >= 0 ? &byte_sets_[first_set_] : nullptr;
  size_t pos = from;
  for (;;) {
    if (anchored_start_ && pos != 0) return Outcome::kNoMatch;
    if (first != nullptr) {
      // Only bytes that can start a match; lead bytes of valid UTF-8 are
      // character starts.
      while (pos < n && !ByteSetHas(*first, s[pos])) ++pos;
      if (pos >= n) return Outcome::kNoMatch;
    }
    size_t e = 0;
    const Outcome o = MatchAt(text, n, pos, &e, stack, cap);
    if (o == Outcome::kMatch) {
      *begin = pos;
      *end = e;
      return o;
    }
    if (o != Outcome::kNoMatch) return o;
    if (pos >= n) return Outcome::kNoMatch;
    size_t len = 1;
    CharAt(s, n, pos, &len);
    pos += len;
  }
}

// One match attempt: the position in the text and in the program, and the
// backtracking stack in the caller's scratch. MatchAt dispatches; each
// instruction and each kind of frame is a step here (all inlined into
// MatchAt).
class Regex::Matcher {
 public:
  // What a step leaves: go on at pc/pos, backtrack, or stop with stop_.
  enum Step : uint8_t { kGo, kFail, kStop };

  Matcher(const Regex& re, const char* text, size_t n, size_t start, void* stack, size_t cap)
      : re_(re),
        s_(reinterpret_cast<const uint8_t*>(text)),
        n_(n),
        stack_(static_cast<Frame*>(stack)),
        cap_(cap),
        pos_(start) {}

  uint32_t pc() const { return pc_; }
  size_t pos() const { return pos_; }
  Outcome stop() const { return stop_; }
  void Jump(uint32_t target) { pc_ = target; }

  // kOpString: the literal bytes.
  Step String(const Inst& in) {
    if (n_ - pos_ < in.b || std::memcmp(s_ + pos_, re_.literals_.data() + in.a, in.b) != 0) {
      return kFail;
    }
    pos_ += in.b;
    ++pc_;
    return kGo;
  }

  // kOpClass: one character of the class.
  Step Class(const Inst& in) {
    if (pos_ >= n_) return kFail;
    size_t len = 1;
    const uint32_t cp = CharAt(s_, n_, pos_, &len);
    if (!re_.ClassHas(in.a, cp)) return kFail;
    pos_ += len;
    ++pc_;
    return kGo;
  }

  // kOpRepeat: as many characters of the class as the mode wants (max when
  // greedy, min when lazy), then one frame to give back (greedy) or take more
  // (lazy) on backtracking; possessive leaves none.
  Step Repeat(const Inst& in) {
    const uint32_t min = in.b, max = in.c;
    const uint32_t want = in.mode == kLazy ? min : max;
    uint32_t count = 0;
    size_t p = pos_;
    size_t min_pos = pos_;
    while (count < want && p < n_) {
      size_t len = 1;
      const uint32_t cp = s_[p] < 0x80 ? s_[p] : CharAt(s_, n_, p, &len);
      if (!re_.ClassHas(in.a, cp)) break;
      p += len;
      ++count;
      if (count == min) min_pos = p;
    }
    if (count < min) return kFail;
    if (in.mode == kGreedy) {
      if (p > min_pos && !Push(pc_, kFrameStar, p, static_cast<uint32_t>(min_pos))) return kStop;
    } else if (in.mode == kLazy) {
      if (max > min && !Push(pc_, kFrameLazy, p, count)) return kStop;
    }
    pos_ = p;
    ++pc_;
    return kGo;
  }

  // kOpSplit: the preferred branch with a frame for the other, or straight
  // to one branch when the other's guard rules out the next byte.
  Step Split(const Inst& in) {
    const uint32_t gx = in.c & 0xFFFF, gy = in.c >> 16;
    if (gx != 0 && !NextByteIn(gx - 1)) {
      pc_ = in.b;
      return kGo;
    }
    if (gy != 0 && !NextByteIn(gy - 1)) {
      pc_ = in.a;
      return kGo;
    }
    if (!Push(in.b, kFrameBranch, pos_, 0)) return kStop;
    pc_ = in.a;
    return kGo;
  }

  // kOpAssert: ^ $ \A \z \Z \b \B at the current position.
  Step Assert(const Inst& in) {
    bool ok = false;
    switch (in.mode) {
      case kBol: ok = pos_ == 0 || s_[pos_ - 1] == '\n'; break;
      case kEol: ok = pos_ == n_ || s_[pos_] == '\n'; break;
      case kBeginText: ok = pos_ == 0; break;
      case kEndText: ok = pos_ == n_; break;
      case kEndTextNl: ok = pos_ == n_ || (pos_ + 1 == n_ && s_[pos_] == '\n'); break;
      default: ok = AtWordBoundary(in.a) == (in.mode == kWordBound); break;
    }
    if (!ok) return kFail;
    ++pc_;
    return kGo;
  }

  // kOpLook: a barrier frame, then the body from here (lookahead) or from
  // in.b characters back (lookbehind; without that much text, (?<!) holds
  // and (?<=) fails).
  Step Look(const Inst& in) {
    size_t p = pos_;
    if (in.mode & 2) {
      for (uint32_t k = 0; k < in.b; ++k) {
        if (p == 0) {
          if (in.mode & 1) {
            pc_ = in.a;  // (?<!...) holds: not enough text behind
            return kGo;
          }
          return kFail;
        }
        p = StepBack(s_, p, 0);
      }
    }
    if (!Push(pc_, kFrameLook, pos_, 0)) return kStop;
    pos_ = p;
    ++pc_;
    return kGo;
  }

  // kOpLookEnd: the lookaround's body matched: drop its frames and the
  // barrier; a positive one goes on where it started, a negative one fails.
  Step LookEnd() {
    size_t b = 0;
    if (!FindBarrier(&b)) return Stop(Outcome::kInternal);
    const Frame barrier = stack_[b];
    sp_ = b;
    const Inst& look = re_.program_[barrier.pc];
    if (look.mode & 1) return kFail;  // (?!...) / (?<!...) matched: fail
    pos_ = barrier.pos;
    pc_ = look.a;
    return kGo;
  }

  // kOpAtomic: a barrier frame.
  Step Atomic() {
    if (!Push(pc_, kFrameAtomic, pos_, 0)) return kStop;
    ++pc_;
    return kGo;
  }

  // kOpAtomicEnd: the group matched: drop its frames and the barrier, so
  // nothing inside is retried.
  Step AtomicEnd() {
    size_t b = 0;
    if (!FindBarrier(&b)) return Stop(Outcome::kInternal);
    sp_ = b;
    ++pc_;
    return kGo;
  }

  // After a failure: resumes at the newest frame that offers another way
  // (kGo), or stops with no match or over the backtracking budget.
  Step Backtrack() {
    for (;;) {
      if (sp_ == 0) return Stop(Outcome::kNoMatch);
      if (++backtracks_ > kMaxBacktracks) return Stop(Outcome::kBudget);
      Frame& f = stack_[sp_ - 1];
      switch (f.kind) {
        case kFrameBranch:
          pc_ = f.pc;
          pos_ = f.pos;
          --sp_;
          return kGo;
        case kFrameStar:
          GiveBack(f);
          return kGo;
        case kFrameLazy:
          if (TakeOneMore(f)) return kGo;
          break;
        case kFrameLook:
          if (LookBodyFailed(f)) return kGo;
          break;
        default:  // kFrameAtomic
          --sp_;
          break;
      }
    }
  }

 private:
  bool Push(uint32_t pc, uint32_t kind, size_t pos, uint32_t aux) {
    if (sp_ == cap_) {
      stop_ = Outcome::kStackFull;
      return false;
    }
    stack_[sp_++] = Frame{pc, kind, static_cast<uint32_t>(pos), aux};
    return true;
  }
  Step Stop(Outcome o) {
    stop_ = o;
    return kStop;
  }
  // Whether the byte at pos_ is in byte set `set`.
  bool NextByteIn(uint32_t set) const {
    return pos_ < n_ && ByteSetHas(re_.byte_sets_[set], s_[pos_]);
  }
  // \b at pos_: a \w character (class `word`) on one side only.
  bool AtWordBoundary(uint32_t word) const {
    bool before = false, after = false;
    if (pos_ > 0) {
      const size_t b = StepBack(s_, pos_, 0);
      size_t len = 1;
      before = re_.ClassHas(word, CharAt(s_, n_, b, &len));
    }
    if (pos_ < n_) {
      size_t len = 1;
      after = re_.ClassHas(word, CharAt(s_, n_, pos_, &len));
    }
    return before != after;
  }
  // The newest lookaround or atomic barrier frame: false when there is none
  // (a corrupt program).
  bool FindBarrier(size_t* at) const {
    size_t b = sp_;
    while (b > 0 && stack_[b - 1].kind != kFrameLook && stack_[b - 1].kind != kFrameAtomic) --b;
    if (b == 0) return false;
    *at = b - 1;
    return true;
  }
  // A greedy repetition gives back one character (the frame goes when it is
  // down to its minimum).
  void GiveBack(Frame& f) {
    const size_t p = StepBack(s_, f.pos, f.aux);
    if (p <= f.aux) {
      --sp_;
    } else {
      f.pos = static_cast<uint32_t>(p);
    }
    pos_ = p;
    pc_ = f.pc + 1;
  }
  // A lazy repetition takes one more character; false (and the frame goes)
  // when it cannot.
  bool TakeOneMore(Frame& f) {
    const Inst& rep = re_.program_[f.pc];
    if (f.pos >= n_) {
      --sp_;
      return false;
    }
    size_t len = 1;
    const uint32_t cp = CharAt(s_, n_, f.pos, &len);
    if (!re_.ClassHas(rep.a, cp)) {
      --sp_;
      return false;
    }
    pos_ = f.pos + len;
    pc_ = f.pc + 1;
    if (++f.aux >= rep.c) {
      --sp_;
    } else {
      f.pos = static_cast<uint32_t>(pos_);
    }
    return true;
  }
  // A lookaround's body failed: the frame goes; true when that makes a
  // negative lookaround hold (go on after it where it started).
  bool LookBodyFailed(const Frame& f) {
    const Inst& look = re_.program_[f.pc];
    const uint32_t saved = f.pos;
    --sp_;
    if (!(look.mode & 1)) return false;
    pos_ = saved;
    pc_ = look.a;
    return true;
  }

  const Regex& re_;
  const uint8_t* s_;
  size_t n_;
  Frame* stack_;
  size_t cap_;
  size_t sp_ = 0;
  uint32_t pc_ = 0;
  size_t pos_;
  uint64_t backtracks_ = 0;
  Outcome stop_ = Outcome::kNoMatch;
};

// The VM's dispatch loop: runs the program from `start` until kOpMatch (the
// match ends at *match_end) or until a step stops it. Flattened: the steps and
// everything they call (class lookups, UTF-8 decoding) are inlined into one
// function, so the Matcher's state stays in registers as in a hand-written
// loop.
__attribute__((flatten)) Regex::Outcome Regex::MatchAt(const char* text, size_t n, size_t start, size_t* match_end,
                              void* stack_mem, size_t cap) const {
  Matcher m(*this, text, n, start, stack_mem, cap);
  const Inst* prog = program_.data();
  for (;;) {
    const Inst& in = prog[m.pc()];
    Matcher::Step step;
    switch (in.op) {
      case kOpString: step = m.String(in); break;
      case kOpClass: step = m.Class(in); break;
      case kOpRepeat: step = m.Repeat(in); break;
      case kOpSplit: step = m.Split(in); break;
      case kOpJmp:
        m.Jump(in.a);
        continue;
      case kOpAssert: step = m.Assert(in); break;
      case kOpLook: step = m.Look(in); break;
      case kOpLookEnd: step = m.LookEnd(); break;
      case kOpAtomic: step = m.Atomic(); break;
      case kOpAtomicEnd: step = m.AtomicEnd(); break;
      case kOpMatch:
        *match_end = m.pos();
        return Outcome::kMatch;
      default:
        return Outcome::kInternal;
    }
    if (step == Matcher::kFail) step = m.Backtrack();
    if (step == Matcher::kStop) return m.stop();
  }
}

RegexMatchIterator::RegexMatchIterator(const Regex& regex, const char* text, size_t n,
                                       void* scratch, size_t scratch_bytes)
    : regex_(regex), text_(text), n_(n) {
  stack_cap_ = AlignScratch(scratch, scratch_bytes, &stack_);
}

Regex::Outcome RegexMatchIterator::Step(size_t* begin, size_t* end) {
  for (;;) {
    if (last_end_ > n_) return Regex::Outcome::kNoMatch;
    size_t b = 0, e = 0;
    const Regex::Outcome o = regex_.FindImpl(text_, n_, last_end_, &b, &e, stack_, stack_cap_);
    if (o == Regex::Outcome::kNoMatch) last_end_ = n_ + 1;
    if (o != Regex::Outcome::kMatch) return o;
    last_end_ = e;
    if (b == e) {
      size_t len = 1;
      if (e < n_) CharAt(reinterpret_cast<const uint8_t*>(text_), n_, e, &len);
      last_end_ += len;
      if (skip_next_empty_) {
        skip_next_empty_ = false;
        continue;
      }
    } else {
      skip_next_empty_ = true;
    }
    *begin = b;
    *end = e;
    return o;
  }
}

Result<bool> RegexMatchIterator::Next(size_t* begin, size_t* end) {
  if (regex_.program_.empty()) return Status(StatusCode::kInvalidArgument, "regex: not compiled");
  if (n_ >= 0xFFFFFFFFu) return Status(StatusCode::kInvalidArgument, "regex: text of 4 GiB or more");
  if (stack_cap_ == 0) return Status(StatusCode::kOutOfMemory, "regex: scratch too small");
  const Regex::Outcome o = Step(begin, end);
  if (o == Regex::Outcome::kMatch) return true;
  if (o == Regex::Outcome::kNoMatch) return false;
  return Regex::OutcomeStatus(o);
}

Result<size_t> RegexMatchIterator::NextBatch(size_t* spans, size_t max) {
  if (regex_.program_.empty()) return Status(StatusCode::kInvalidArgument, "regex: not compiled");
  if (n_ >= 0xFFFFFFFFu) return Status(StatusCode::kInvalidArgument, "regex: text of 4 GiB or more");
  if (stack_cap_ == 0) return Status(StatusCode::kOutOfMemory, "regex: scratch too small");
  size_t count = 0;
  while (count < max) {
    const Regex::Outcome o = Step(&spans[2 * count], &spans[2 * count + 1]);
    if (o == Regex::Outcome::kNoMatch) break;
    if (o != Regex::Outcome::kMatch) return Regex::OutcomeStatus(o);
    ++count;
  }
  return count;
}

}  // namespace octet::text
