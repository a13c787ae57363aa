// runtime/text: UTF-8, Unicode properties, normalization, case and grapheme
// clusters. Reference data: tests/text/data/, made by
// runtime/text/gen_unicode_data.py from the UCD 15.0.0 files (and Python's
// unicodedata for the category hashes).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "text/unicode.h"
#include "core/utf8.h"

namespace octet::text {
namespace {

#include "data/unicode_check.inc"

std::string DataPath(const char* name) { return std::string(OCTET_TEXT_TEST_DATA "/") + name; }

std::string Encode(const std::vector<uint32_t>& cps) {
  std::string s;
  char b[kMaxUtf8Bytes];
  for (uint32_t cp : cps) s.append(b, Utf8Encode(cp, b));
  return s;
}

std::vector<uint32_t> Decode(const std::string& s) {
  std::vector<uint32_t> cps;
  size_t i = 0;
  while (i < s.size()) cps.push_back(Utf8Decode(s.data(), &i));
  return cps;
}

std::vector<uint32_t> ParseHex(const std::string& field) {
  std::vector<uint32_t> cps;
  std::istringstream in(field);
  std::string tok;
  while (in >> tok) cps.push_back(static_cast<uint32_t>(std::stoul(tok, nullptr, 16)));
  return cps;
}

// Runs a caller-buffer transform twice: once to size, once to fill. Checks
// that the size query writes nothing and that the output stays inside cap.
template <typename F>
std::string Run(F transform, const std::string& in) {
  const size_t need = transform(in.data(), in.size(), nullptr, 0);
  std::string out(need + 8, '\x5A');
  REQUIRE(transform(in.data(), in.size(), &out[0], need) == need);
  for (size_t k = need; k < out.size(); ++k) REQUIRE(out[k] == '\x5A');
  out.resize(need);
  return out;
}

std::string Norm(NormForm form, const std::string& in) {
  return Run(
      [form](const char* s, size_t n, char* o, size_t c) { return Normalize(form, s, n, o, c); },
      in);
}

// --- UTF-8 -------------------------------------------------------------------

// Straight from the definition: decode by the bit patterns, then reject
// overlongs, surrogates and values above U+10FFFF.
size_t ReferenceValidPrefix(const uint8_t* p, size_t n) {
  size_t i = 0;
  while (i < n) {
    const uint8_t b = p[i];
    size_t len;
    uint32_t cp;
    if (b < 0x80) {
      len = 1;
      cp = b;
    } else if ((b & 0xE0) == 0xC0) {
      len = 2;
      cp = b & 0x1F;
    } else if ((b & 0xF0) == 0xE0) {
      len = 3;
      cp = b & 0x0F;
    } else if ((b & 0xF8) == 0xF0) {
      len = 4;
      cp = b & 0x07;
    } else
      return i;
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    const uint32_t min_for_len[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_for_len[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return i;
    i += len;
  }
  return n;
}

TEST_CASE("Utf8ValidPrefix: each kind of bad sequence and its offset") {
  struct Case {
    const char* bytes;
    size_t len;
    size_t expect;
  };
  const Case cases[] = {
      {"", 0, 0},
      {"plain ascii", 11, 11},
      {"\x80", 1, 0},                  // stray continuation
      {"a\xC0\x80", 3, 1},             // overlong NUL
      {"\xC1\xBF", 2, 0},              // overlong 2-byte
      {"\xC2\x80", 2, 2},              // U+0080
      {"\xE0\x9F\xBF", 3, 0},          // overlong 3-byte
      {"\xE0\xA0\x80", 3, 3},          // U+0800
      {"\xED\x9F\xBF", 3, 3},          // U+D7FF
      {"\xED\xA0\x80", 3, 0},          // surrogate U+D800
      {"x\xED\xBF\xBF", 4, 1},         // surrogate U+DFFF
      {"\xF0\x8F\xBF\xBF", 4, 0},      // overlong 4-byte
      {"\xF0\x90\x80\x80", 4, 4},      // U+10000
      {"\xF4\x8F\xBF\xBF", 4, 4},      // U+10FFFF
      {"\xF4\x90\x80\x80", 4, 0},      // U+110000
      {"\xF5\x80\x80\x80", 4, 0},      // lead byte F5
      {"ok\xFF", 3, 2},                // never valid
      {"\xE2\x82", 2, 0},              // truncated at the end
      {"ab\xF0\x9F\x98", 5, 2},        // truncated 4-byte
      {"\xE2\x28\xA1", 3, 0},          // bad continuation
      {"\xE2\x82\xAC\xE2\x82", 5, 3},  // good euro, then truncated
      {"0123456789abcdef\xC3\xA9"
       "0123456789abcdef\x80",
       35, 34},  // after the 8-byte path
  };
  for (const Case& c : cases) {
    CAPTURE(c.expect);
    CHECK(Utf8ValidPrefix(c.bytes, c.len) == c.expect);
    CHECK(ReferenceValidPrefix(reinterpret_cast<const uint8_t*>(c.bytes), c.len) == c.expect);
  }
}

TEST_CASE("Utf8ValidPrefix matches the reference on every 1-3 byte string and random text") {
  uint8_t buf[16];
  for (uint32_t v = 0; v < (1u << 24); ++v) {
    buf[0] = static_cast<uint8_t>(v >> 16);
    buf[1] = static_cast<uint8_t>(v >> 8);
    buf[2] = static_cast<uint8_t>(v);
    for (size_t len = 1; len <= 3; ++len) {
      if (len < 3 && (v & ((1u << (8 * (3 - len))) - 1)) != 0) continue;
      const size_t got = Utf8ValidPrefix(reinterpret_cast<const char*>(buf), len);
      if (got != ReferenceValidPrefix(buf, len)) {
        FAIL("mismatch at bytes " << v << " len " << len);
      }
    }
  }
  std::mt19937 rng(7);
  const uint8_t pool[] = {'a',  0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC2,
                          0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xC0, 0xFF};
  for (int t = 0; t < 200000; ++t) {
    const size_t len = rng() % 16;
    for (size_t k = 0; k < len; ++k) buf[k] = pool[rng() % sizeof(pool)];
    REQUIRE(Utf8ValidPrefix(reinterpret_cast<const char*>(buf), len) ==
            ReferenceValidPrefix(buf, len));
  }
}

TEST_CASE("Utf8Encode / Utf8Decode / Utf8DecodeChecked round-trip every scalar value") {
  char b[kMaxUtf8Bytes];
  for (uint32_t cp = 0; cp <= kMaxCodePoint; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    const size_t len = Utf8Encode(cp, b);
    REQUIRE(len == Utf8EncodedLength(cp));
    REQUIRE(Utf8SequenceLength(static_cast<uint8_t>(b[0])) == len);
    REQUIRE(Utf8ValidPrefix(b, len) == len);
    size_t i = 0;
    REQUIRE(Utf8Decode(b, &i) == cp);
    REQUIRE(i == len);
    i = 0;
    bool valid = false;
    REQUIRE(Utf8DecodeChecked(b, len, &i, &valid) == cp);
    REQUIRE((valid && i == len));
  }
  const char bad[] = "\xED\xA0\x80";
  size_t i = 0;
  bool valid = true;
  CHECK(Utf8DecodeChecked(bad, 3, &i, &valid) == kReplacementChar);
  CHECK((!valid && i == 1));
}

// --- Properties ----------------------------------------------------------------

uint64_t Fnv1a64(uint64_t h, uint32_t cp) {
  for (int k = 0; k < 4; ++k) {
    h ^= (cp >> (8 * k)) & 0xFF;
    h *= 0x100000001B3ull;
  }
  return h;
}

TEST_CASE("CategoryOf agrees with Python's unicodedata on every code point") {
  uint64_t hash[kCategoryCount];
  uint32_t count[kCategoryCount] = {};
  std::fill(hash, hash + kCategoryCount, 0xCBF29CE484222325ull);
  size_t skip = 0;
  const size_t nskip = sizeof(kCategorySkipped) / sizeof(kCategorySkipped[0]);
  for (uint32_t cp = 0; cp <= kMaxCodePoint; ++cp) {
    while (skip < nskip && kCategorySkipped[skip][1] < cp) ++skip;
    if (skip < nskip && cp >= kCategorySkipped[skip][0]) continue;
    const auto c = static_cast<size_t>(CategoryOf(cp));
    REQUIRE(c < static_cast<size_t>(kCategoryCount));
    hash[c] = Fnv1a64(hash[c], cp);
    ++count[c];
  }
  for (int c = 0; c < kCategoryCount; ++c) {
    CAPTURE(kCategoryChecks[c].name);
    CHECK(std::strcmp(CategoryName(static_cast<Category>(c)), kCategoryChecks[c].name) == 0);
    CHECK(count[c] == kCategoryChecks[c].count);
    CHECK(hash[c] == kCategoryChecks[c].hash);
  }
  CHECK(CategoryOf(0x110000) == Category::kCn);
  CHECK(CategoryOf(0xFFFFFFFF) == Category::kCn);
  CHECK(CategoryOf(0x1F6DC) == Category::kSo);  // new in 15.0 (skipped above)
}

TEST_CASE("IsWhiteSpace is exactly the White_Space property") {
  const uint32_t ws[] = {0x9,    0xA,    0xB,    0xC,    0xD,    0x20,   0x85,   0xA0,   0x1680,
                         0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008,
                         0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000};
  size_t found = 0;
  for (uint32_t cp = 0; cp <= kMaxCodePoint; ++cp) {
    const bool expect = std::find(std::begin(ws), std::end(ws), cp) != std::end(ws);
    REQUIRE(IsWhiteSpace(cp) == expect);
    found += expect;
    REQUIRE(IsBertWhitespace(cp) == expect);  // \t \n \r are White_Space already
  }
  CHECK(found == 25);
  CHECK_FALSE(IsWhiteSpace(0x200B));  // ZERO WIDTH SPACE is Cf, not White_Space
}

TEST_CASE("HF predicates: spot checks of each definition") {
  // Rust char::is_alphabetic: Alphabetic, which includes Nl and Other_Alphabetic marks.
  CHECK(IsAlphabetic('a'));
  CHECK(IsAlphabetic(0xE9));
  CHECK(IsAlphabetic(0x2160));  // ROMAN NUMERAL ONE (Nl)
  CHECK(IsAlphabetic(0x0345));  // COMBINING GREEK YPOGEGRAMMENI (Mn, Other_Alphabetic)
  CHECK_FALSE(IsAlphabetic('1'));
  CHECK_FALSE(IsAlphabetic(0x0301));
  // Rust char::is_numeric: Nd | Nl | No.
  CHECK(IsNumeric('7'));
  CHECK(IsNumeric(0xB2));    // SUPERSCRIPT TWO (No)
  CHECK(IsNumeric(0x2163));  // ROMAN NUMERAL FOUR (Nl)
  CHECK(IsNumeric(0x0663));  // ARABIC-INDIC DIGIT THREE (Nd)
  CHECK_FALSE(IsNumeric('x'));
  CHECK(IsAlphanumeric(0xBD));
  CHECK_FALSE(IsAlphanumeric('_'));
  // Bert punctuation: ASCII punctuation (symbols included) or P*.
  for (uint32_t cp = 0; cp < 0x80; ++cp) {
    const bool ascii_punct = cp > 0x20 && cp < 0x7F && !std::isalnum(static_cast<int>(cp));
    REQUIRE(IsBertPunctuation(cp) == ascii_punct);
  }
  CHECK(IsBertPunctuation(0xBF));          // INVERTED QUESTION MARK (Po)
  CHECK(IsBertPunctuation(0x2014));        // EM DASH (Pd)
  CHECK(IsBertPunctuation(0x300C));        // LEFT CORNER BRACKET (Ps)
  CHECK_FALSE(IsBertPunctuation(0x20AC));  // EURO SIGN (Sc)
  CHECK_FALSE(IsPunctuation('$'));
  CHECK(IsPunctuation('_'));
  // Bert control: Cc | Cf | Co, minus \t \n \r; not Cn, not Cs.
  CHECK_FALSE(IsBertControl('\t'));
  CHECK_FALSE(IsBertControl('\n'));
  CHECK_FALSE(IsBertControl('\r'));
  CHECK(IsBertControl(0x0));
  CHECK(IsBertControl(0x7F));
  CHECK(IsBertControl(0x200B));        // ZERO WIDTH SPACE (Cf)
  CHECK(IsBertControl(0xFEFF));        // BOM (Cf)
  CHECK(IsBertControl(0xE000));        // private use (Co)
  CHECK_FALSE(IsBertControl(0x0378));  // unassigned (Cn)
  CHECK_FALSE(IsBertControl(0xD800));  // surrogate (Cs)
  CHECK_FALSE(IsBertControl('a'));
  // Bert Chinese characters: HF's ranges, with its 0x2B920 start.
  CHECK(IsBertChineseChar(0x4E00));
  CHECK(IsBertChineseChar(0x9FFF));
  CHECK(IsBertChineseChar(0x3400));
  CHECK(IsBertChineseChar(0x2B81F));
  CHECK_FALSE(IsBertChineseChar(0x2B820));
  CHECK_FALSE(IsBertChineseChar(0x2B91F));
  CHECK(IsBertChineseChar(0x2B920));
  CHECK(IsBertChineseChar(0xF900));
  CHECK(IsBertChineseChar(0x2FA1F));
  CHECK_FALSE(IsBertChineseChar(0x3042));  // HIRAGANA LETTER A
  // Oniguruma \w: Alphabetic | M | Nd | Pc; \d: Nd.
  CHECK(IsOnigWord('a'));
  CHECK(IsOnigWord('_'));
  CHECK(IsOnigWord('9'));
  CHECK(IsOnigWord(0x0663));
  CHECK(IsOnigWord(0x0301));
  CHECK(IsOnigWord(0x203F));  // UNDERTIE (Pc)
  CHECK(IsOnigWord(0x4E00));
  CHECK_FALSE(IsOnigWord(' '));
  CHECK_FALSE(IsOnigWord('-'));
  CHECK_FALSE(IsOnigWord(0xB2));
  CHECK(IsOnigDigit(0x0663));
  CHECK_FALSE(IsOnigDigit(0xB2));
  CHECK_FALSE(IsOnigDigit(0x2163));
  // StripAccents: General_Category M*.
  CHECK(IsCombiningMark(0x0301));
  CHECK(IsCombiningMark(0x0903));  // DEVANAGARI SIGN VISARGA (Mc)
  CHECK(IsCombiningMark(0x20DD));  // COMBINING ENCLOSING CIRCLE (Me)
  CHECK_FALSE(IsCombiningMark('a'));
  CHECK_FALSE(IsCombiningMark(0x02B0));  // MODIFIER LETTER SMALL H (Lm)
  // Predicates against their category definitions over all code points.
  for (uint32_t cp = 0; cp <= kMaxCodePoint; ++cp) {
    const Category c = CategoryOf(cp);
    const bool mark = c == Category::kMn || c == Category::kMc || c == Category::kMe;
    REQUIRE(IsCombiningMark(cp) == mark);
    REQUIRE(IsNumeric(cp) == (c == Category::kNd || c == Category::kNl || c == Category::kNo));
    REQUIRE(IsOnigWord(cp) ==
            (IsAlphabetic(cp) || mark || c == Category::kNd || c == Category::kPc));
    if (c == Category::kLu || c == Category::kLl || c == Category::kLt || c == Category::kLm ||
        c == Category::kLo || c == Category::kNl) {
      REQUIRE(IsAlphabetic(cp));  // Alphabetic includes every L* and Nl
    }
  }
}

TEST_CASE("CombiningClass spot checks") {
  CHECK(CombiningClass('a') == 0);
  CHECK(CombiningClass(0x0301) == 230);
  CHECK(CombiningClass(0x0316) == 220);
  CHECK(CombiningClass(0x0345) == 240);
  CHECK(CombiningClass(0x05B0) == 10);
  CHECK(CombiningClass(0x1D16D) == 226);
}

// --- Case ----------------------------------------------------------------------

TEST_CASE("SimpleCaseFold and its orbits (what (?i) matches)") {
  CHECK(SimpleCaseFold('S') == 's');
  CHECK(SimpleCaseFold('s') == 's');
  CHECK(SimpleCaseFold(0x17F) == 's');    // LATIN SMALL LETTER LONG S
  CHECK(SimpleCaseFold(0x212A) == 'k');   // KELVIN SIGN
  CHECK(SimpleCaseFold(0x1E9E) == 0xDF);  // CAPITAL SHARP S (status S)
  CHECK(SimpleCaseFold(0x3A3) == 0x3C3);
  CHECK(SimpleCaseFold(0x3C2) == 0x3C3);  // final sigma folds to sigma
  CHECK(SimpleCaseFold('1') == '1');
  CHECK(SimpleFoldOrbitNext('K') == 'k');
  CHECK(SimpleFoldOrbitNext('k') == 0x212A);
  CHECK(SimpleFoldOrbitNext(0x212A) == 'K');
  CHECK(SimpleFoldOrbitNext('S') == 's');
  CHECK(SimpleFoldOrbitNext('s') == 0x17F);
  CHECK(SimpleFoldOrbitNext(0x17F) == 'S');
  CHECK(SimpleFoldOrbitNext('1') == '1');
  // Every orbit is a cycle of code points with one fold.
  for (uint32_t cp = 0; cp <= kMaxCodePoint; ++cp) {
    const uint32_t fold = SimpleCaseFold(cp);
    uint32_t x = cp;
    int steps = 0;
    do {
      x = SimpleFoldOrbitNext(x);
      REQUIRE(SimpleCaseFold(x) == fold);
      ++steps;
    } while (x != cp && steps < 8);
    REQUIRE(x == cp);
    REQUIRE(SimpleCaseFold(fold) == fold);
  }
}

TEST_CASE("ToLowercase and Lowercase follow Rust char::to_lowercase per code point") {
  uint32_t out[2];
  CHECK(ToLowercase('A', out) == 1);
  CHECK(out[0] == 'a');
  CHECK(ToLowercase(0x130, out) == 2);
  CHECK((out[0] == 'i' && out[1] == 0x307));
  CHECK(ToLowercase(0x3A3, out) == 1);
  CHECK(out[0] == 0x3C3);
  CHECK(ToLowercase(0x2126, out) == 1);  // OHM SIGN
  CHECK(out[0] == 0x3C9);
  CHECK(ToLowercase(0x1E9E, out) == 1);
  CHECK(out[0] == 0xDF);
  CHECK(ToLowercase(0x1C5, out) == 1);  // Dž (titlecase)
  CHECK(out[0] == 0x1C6);
  CHECK(ToLowercase(0x10400, out) == 1);  // DESERET CAPITAL LONG I
  CHECK(out[0] == 0x10428);
  const auto lower = [](const char* s, size_t n, char* o, size_t c) {
    return Lowercase(s, n, o, c);
  };
  // No Final_Sigma rule: HF maps char by char.
  CHECK(Run(lower, "\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3") == "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x83");
  CHECK(Run(lower, "HeLLo W\xC3\x96RLD \xC4\xB0") == "hello w\xC3\xB6rld i\xCC\x87");
  CHECK(Run(lower, "ok\xFF") == "ok\xEF\xBF\xBD");
  // The growth bound holds for every code point.
  char in[kMaxUtf8Bytes], buf[16];
  for (uint32_t cp = 0; cp <= kMaxCodePoint; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    const size_t n = Utf8Encode(cp, in);
    const size_t got = Lowercase(in, n, buf, sizeof(buf));
    REQUIRE(got <= kMaxLowercaseGrowth * n);
    REQUIRE(2 * got <= 3 * n);
  }
}

TEST_CASE("StripAccents drops combining marks and nothing else") {
  const auto strip = [](const char* s, size_t n, char* o, size_t c) {
    return StripAccents(s, n, o, c);
  };
  CHECK(Run(strip, "e\xCC\x81") == "e");
  CHECK(Run(strip, "\xC3\xA9") == "\xC3\xA9");  // precomposed: no decomposition here
  CHECK(Run(strip, Norm(NormForm::kNfd, "H\xC3\xA9ll\xC3\xB2 h\xC3\xB4w")) == "Hello how");
  CHECK(Run(strip, "\xE0\xA4\x95\xE0\xA4\x83!") == "\xE0\xA4\x95!");  // Mc dropped too
  CHECK(Run(strip,
            "a\x80"
            "b") ==
        "a\xEF\xBF\xBD"
        "b");
}

// --- Normalization --------------------------------------------------------------

struct NormLine {
  std::vector<uint32_t> c[5];
};

struct NormData {
  std::vector<NormLine> lines;
  std::vector<std::pair<uint32_t, uint32_t>> part1;  // every code point of Part 1
};

const NormData& LoadNormalizationTest() {
  static NormData data = [] {
    NormData d;
    std::ifstream f(DataPath("NormalizationTest.txt"));
    REQUIRE(f.good());
    std::string line;
    while (std::getline(f, line)) {
      if (line.empty() || line[0] == '#') continue;
      if (line.rfind("@Part1Set", 0) == 0) {
        std::istringstream in(line.substr(9));
        std::string r;
        while (in >> r) {
          const size_t dots = r.find("..");
          d.part1.emplace_back(std::stoul(r.substr(0, dots), nullptr, 16),
                               std::stoul(r.substr(dots + 2), nullptr, 16));
        }
        continue;
      }
      if (line[0] == '@') continue;
      NormLine n;
      size_t start = 0;
      for (int k = 0; k < 5; ++k) {
        const size_t semi = line.find(';', start);
        n.c[k] = ParseHex(line.substr(start, semi - start));
        start = semi + 1;
      }
      d.lines.push_back(n);
    }
    return d;
  }();
  return data;
}

TEST_CASE("Normalize passes the UCD NormalizationTest.txt subset") {
  const NormData& data = LoadNormalizationTest();
  REQUIRE(data.lines.size() > 4000);
  for (const NormLine& l : data.lines) {
    std::string c[5];
    for (int k = 0; k < 5; ++k) c[k] = Encode(l.c[k]);
    CAPTURE(c[0]);
    for (int k = 0; k < 3; ++k) {
      REQUIRE(Norm(NormForm::kNfc, c[k]) == c[1]);
      REQUIRE(Norm(NormForm::kNfd, c[k]) == c[2]);
    }
    for (int k = 3; k < 5; ++k) {
      REQUIRE(Norm(NormForm::kNfc, c[k]) == c[3]);
      REQUIRE(Norm(NormForm::kNfd, c[k]) == c[4]);
    }
    for (int k = 0; k < 5; ++k) {
      REQUIRE(Norm(NormForm::kNfkc, c[k]) == c[3]);
      REQUIRE(Norm(NormForm::kNfkd, c[k]) == c[4]);
    }
  }
}

TEST_CASE("Normalize leaves every code point outside Part 1 unchanged; growth bound holds") {
  const NormData& data = LoadNormalizationTest();
  REQUIRE(data.part1.size() > 100);
  size_t r = 0, changed = 0;
  char in[kMaxUtf8Bytes], out[64];
  const NormForm forms[] = {NormForm::kNfc, NormForm::kNfd, NormForm::kNfkc, NormForm::kNfkd};
  for (uint32_t cp = 0; cp <= kMaxCodePoint; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    while (r < data.part1.size() && data.part1[r].second < cp) ++r;
    const bool listed = r < data.part1.size() && cp >= data.part1[r].first;
    const size_t n = Utf8Encode(cp, in);
    for (NormForm form : forms) {
      const size_t got = Normalize(form, in, n, out, sizeof(out));
      REQUIRE(got <= kMaxNormalizeGrowth * n);
      if (!listed) {
        REQUIRE(got == n);
        REQUIRE(std::memcmp(in, out, n) == 0);
      } else if (got != n || std::memcmp(in, out, n) != 0) {
        ++changed;
      }
    }
  }
  CHECK(changed > 10000);
  // U+FDFA reaches the bound exactly.
  CHECK(Norm(NormForm::kNfkd, "\xEF\xB7\xBA").size() == 3 * kMaxNormalizeGrowth);
}

// The reference pipeline, with std containers: per-character decomposition,
// stable sort of each non-starter run, then the textbook composition loop
// with pairs checked one at a time.
std::vector<uint32_t> ReferenceNormalize(NormForm form, const std::vector<uint32_t>& in) {
  const bool compat = form == NormForm::kNfkc || form == NormForm::kNfkd;
  std::vector<uint32_t> d;
  for (uint32_t cp : in) {
    for (uint32_t x : Decode(Norm(compat ? NormForm::kNfkd : NormForm::kNfd, Encode({cp})))) {
      d.push_back(x);
    }
  }
  for (size_t i = 0; i < d.size();) {
    if (CombiningClass(d[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < d.size() && CombiningClass(d[j]) != 0) ++j;
    std::stable_sort(d.begin() + static_cast<long>(i), d.begin() + static_cast<long>(j),
                     [](uint32_t a, uint32_t b) { return CombiningClass(a) < CombiningClass(b); });
    i = j;
  }
  if (form == NormForm::kNfd || form == NormForm::kNfkd) return d;
  // (a, b) has a primary composite c when NFC of the two alone is one code
  // point whose NFD is NFD(a) then NFD(b) as they stand (no reordering).
  const auto compose = [](uint32_t a, uint32_t b, uint32_t* c) {
    const std::vector<uint32_t> r = Decode(Norm(NormForm::kNfc, Encode({a, b})));
    if (r.size() != 1) return false;
    if (Norm(NormForm::kNfd, Encode(r)) !=
        Norm(NormForm::kNfd, Encode({a})) + Norm(NormForm::kNfd, Encode({b}))) {
      return false;
    }
    *c = r[0];
    return true;
  };
  std::vector<uint32_t> out;
  size_t starter = SIZE_MAX;
  for (uint32_t cp : d) {
    const int cc = CombiningClass(cp);
    if (starter != SIZE_MAX) {
      const int last = out.size() - 1 == starter ? -1 : CombiningClass(out.back());
      uint32_t c;
      if ((last < 0 || last < cc) && compose(out[starter], cp, &c)) {
        out[starter] = c;
        continue;
      }
    }
    if (cc == 0) starter = out.size();
    out.push_back(cp);
  }
  return out;
}

TEST_CASE("Normalize: long and unordered runs of combining marks match the reference") {
  const NormForm forms[] = {NormForm::kNfc, NormForm::kNfd, NormForm::kNfkc, NormForm::kNfkd};
  std::vector<std::vector<uint32_t>> inputs;
  for (int n : {1, 2, 5, 31, 32, 33, 100, 1000}) {
    std::vector<uint32_t> a = {'a'};
    for (int k = 0; k < n; ++k) {
      a.push_back(0x0301);  // ccc 230
      a.push_back(0x0316);  // ccc 220: every pair is out of order
    }
    a.push_back('b');
    inputs.push_back(a);
    // Marks that stay after the starter composed: e + many U+0316 + U+0301.
    std::vector<uint32_t> e = {'e'};
    for (int k = 0; k < n; ++k) e.push_back(0x0316);
    e.push_back(0x0301);
    e.push_back(0x0323);
    inputs.push_back(e);
    // Only non-starters, with no starter before them.
    std::vector<uint32_t> m;
    for (int k = 0; k < n; ++k) m.push_back(k % 3 ? 0x0301 : 0x0345);
    inputs.push_back(m);
  }
  // Random mixes of starters that compose, marks of several classes, Hangul
  // jamo, excluded and compatibility characters.
  const uint32_t pool[] = {'a',    'e',     'o',    'A',    0x0301, 0x0300, 0x0308, 0x0316,
                           0x0323, 0x0345,  0x05B0, 0x0F73, 0x0F75, 0x0344, 0x1100, 0x1161,
                           0x11A8, 0xAC00,  0xAC01, 0x0958, 0x2126, 0x212B, 0xFB2C, 0x1E9B,
                           0x00C5, 0x01C4,  0x0F71, 0x0F72, 0x0B47, 0x0B3E, 0x0DD9, 0x0DCF,
                           0xFDFA, 0x1D15E, 0x3099, 0x304B, 0x0CC6, 0x0CC2, 0x0CD5};
  std::mt19937 rng(12345);
  for (int t = 0; t < 3000; ++t) {
    std::vector<uint32_t> s(1 + rng() % (t < 2900 ? 12 : 120));
    for (uint32_t& cp : s) cp = pool[rng() % (sizeof(pool) / sizeof(pool[0]))];
    inputs.push_back(s);
  }
  for (const auto& in : inputs) {
    const std::string text = Encode(in);
    for (NormForm form : forms) {
      CAPTURE(static_cast<int>(form));
      CAPTURE(text);
      REQUIRE(Norm(form, text) == Encode(ReferenceNormalize(form, in)));
    }
  }
}

TEST_CASE("Normalize: ASCII fast path, bad bytes, and cap handling") {
  CHECK(Norm(NormForm::kNfc, "") == "");
  CHECK(Norm(NormForm::kNfc, "hello world") == "hello world");
  CHECK(Norm(NormForm::kNfc, "cafe\xCC\x81") == "caf\xC3\xA9");
  CHECK(Norm(NormForm::kNfd, "caf\xC3\xA9") == "cafe\xCC\x81");
  CHECK(Norm(NormForm::kNfkc, "\xEF\xAC\x81x") == "fix");  // U+FB01 LATIN SMALL LIGATURE FI
  CHECK(Norm(NormForm::kNfc, "a\xFF\xCC\x81") == "a\xEF\xBF\xBD\xCC\x81");
  CHECK(Norm(NormForm::kNfc, "\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8") == "\xEA\xB0\x81");  // jamo
  // A too-small buffer: full size returned, nothing written past cap.
  const std::string in = "e\xCC\x81\xEF\xB7\xBA";
  char buf[8];
  std::memset(buf, 'Z', sizeof(buf));
  const size_t need = Normalize(NormForm::kNfkd, in.data(), in.size(), buf, 4);
  CHECK(need == 3 + 33);
  for (size_t k = 4; k < sizeof(buf); ++k) CHECK(buf[k] == 'Z');
}

TEST_CASE("Transforms on random bytes: valid UTF-8 out, within the growth bounds, stable size") {
  std::mt19937 rng(99);
  const uint8_t pool[] = {'a',  'Z',  ' ',  0x80, 0xBF, 0xC3, 0xA9, 0xCC, 0x81, 0xE0, 0xA4,
                          0xED, 0xA0, 0xEF, 0xB7, 0xBA, 0xF0, 0x9F, 0xF4, 0x90, 0xFF, 0xE1};
  std::vector<char> out;
  for (int t = 0; t < 20000; ++t) {
    std::string in(rng() % 40, '\0');
    for (char& c : in) c = static_cast<char>(pool[rng() % sizeof(pool)]);
    const auto check = [&](auto transform, size_t growth) {
      const size_t need = transform(in.data(), in.size(), nullptr, 0);
      REQUIRE(need <= growth * in.size());
      out.assign(need + 4, '\x5A');
      REQUIRE(transform(in.data(), in.size(), out.data(), need) == need);
      REQUIRE(Utf8ValidPrefix(out.data(), need) == need);
      for (size_t k = need; k < out.size(); ++k) REQUIRE(out[k] == '\x5A');
      const size_t half = need / 2;  // a short buffer: same size, nothing past cap
      std::fill(out.begin(), out.end(), '\x5A');
      REQUIRE(transform(in.data(), in.size(), out.data(), half) == need);
      for (size_t k = half; k < out.size(); ++k) REQUIRE(out[k] == '\x5A');
    };
    for (NormForm form : {NormForm::kNfc, NormForm::kNfd, NormForm::kNfkc, NormForm::kNfkd}) {
      check([form](const char* s, size_t n, char* o,
                   size_t c) { return Normalize(form, s, n, o, c); },
            kMaxNormalizeGrowth);
    }
    check([](const char* s, size_t n, char* o, size_t c) { return Lowercase(s, n, o, c); },
          kMaxLowercaseGrowth);
    check([](const char* s, size_t n, char* o, size_t c) { return StripAccents(s, n, o, c); },
          kMaxStripAccentsGrowth);
    size_t i = 0, clusters = 0;
    while (i < in.size()) {
      const size_t next = NextGraphemeEnd(in.data(), in.size(), i);
      REQUIRE(next > i);
      REQUIRE(next <= in.size());
      i = next;
      ++clusters;
    }
    REQUIRE(clusters <= in.size());
  }
}

// --- Grapheme clusters ------------------------------------------------------------

TEST_CASE("NextGraphemeEnd passes GraphemeBreakTest.txt") {
  std::ifstream f(DataPath("GraphemeBreakTest.txt"));
  REQUIRE(f.good());
  std::string line;
  int tested = 0;
  while (std::getline(f, line)) {
    line = line.substr(0, line.find('#'));
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    std::istringstream in(line);
    std::string tok, text;
    std::vector<size_t> expect;
    while (in >> tok) {
      if (tok == "\xC3\xB7") {  // ÷
        if (!text.empty()) expect.push_back(text.size());
      } else if (tok != "\xC3\x97") {  // ×
        text += Encode({static_cast<uint32_t>(std::stoul(tok, nullptr, 16))});
      }
    }
    std::vector<size_t> got;
    for (size_t i = 0; i < text.size();) {
      i = NextGraphemeEnd(text.data(), text.size(), i);
      got.push_back(i);
    }
    CAPTURE(line);
    REQUIRE(got == expect);
    ++tested;
  }
  CHECK(tested > 600);
}

TEST_CASE("NextGraphemeEnd: emoji sequences, flags, Hangul, bounds") {
  const auto ends = [](const std::string& s) {
    std::vector<size_t> got;
    for (size_t i = 0; i < s.size();) got.push_back(i = NextGraphemeEnd(s.data(), s.size(), i));
    return got;
  };
  // 👩‍👩‍👧 (ZWJ sequence) then 👍🏽 (modifier): two clusters.
  const std::string family = Encode({0x1F469, 0x200D, 0x1F469, 0x200D, 0x1F467});
  const std::string thumbs = Encode({0x1F44D, 0x1F3FD});
  CHECK(ends(family + thumbs) == std::vector<size_t>{family.size(), family.size() + thumbs.size()});
  // Three regional indicators: a flag, then a lone one.
  CHECK(ends(Encode({0x1F1EB, 0x1F1F7, 0x1F1EB})) == std::vector<size_t>{8, 12});
  // Hangul L V T is one syllable; CR LF one cluster.
  CHECK(ends(Encode({0x1100, 0x1161, 0x11A8, 'a'})) == std::vector<size_t>{9, 10});
  CHECK(ends("\r\n\n") == std::vector<size_t>{2, 3});
  CHECK(NextGraphemeEnd("ab", 2, 2) == 2);
  CHECK(NextGraphemeEnd("ab", 2, 7) == 2);
  CHECK(NextGraphemeEnd("a\xCC", 2, 0) == 1);  // truncated mark: a byte of its own
}

}  // namespace
}  // namespace octet::text
