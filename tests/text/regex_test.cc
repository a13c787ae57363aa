// runtime/text/regex against the reference matches of data/regex_golden.txt
// (made by gen_regex_cases.py with the `regex` module, rewritten to Oniguruma's
// meaning, iterated as Hugging Face's find_iter does), plus what the golden
// file cannot say: compile errors, scratch limits, hostile bytes.
#include "text/regex.h"

#include "core/alloc.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace octet::text {
namespace {

struct Golden {
  std::vector<std::string> patterns;
  std::vector<std::string> texts;
  std::vector<std::string> records;  // M, H and C lines
};

bool ReadFile(const char* path, std::string* out) {
  FILE* f = std::fopen(path, "rb");
  if (f == nullptr) return false;
  char buf[1 << 16];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof(buf), f)) > 0) out->append(buf, got);
  std::fclose(f);
  return true;
}

// Parses the format described in gen_regex_cases.py.
bool LoadGolden(Golden* g) {
  std::string data;
  if (!ReadFile(OCTET_REGEX_GOLDEN, &data)) return false;
  size_t i = 0;
  auto line = [&]() {
    const size_t nl = data.find('\n', i);
    std::string l = data.substr(i, nl == std::string::npos ? std::string::npos : nl - i);
    i = nl == std::string::npos ? data.size() : nl + 1;
    return l;
  };
  auto raw = [&](size_t size) {
    std::string b = data.substr(i, size);
    i += size + 1;  // and its newline
    return b;
  };
  while (i < data.size()) {
    const std::string l = line();
    if (l.empty() || l[0] == '#') continue;
    if (l[0] == 'P') {
      g->patterns.push_back(raw(std::stoul(l.substr(2))));
    } else if (l[0] == 'T') {
      const size_t segments = std::stoul(l.substr(2));
      std::string t;
      for (size_t s = 0; s < segments; ++s) {
        const std::string head = line();
        size_t repeat = 0, size = 0;
        if (std::sscanf(head.c_str(), "%zu %zu", &repeat, &size) != 2) return false;
        const std::string unit = raw(size);
        for (size_t r = 0; r < repeat; ++r) t += unit;
      }
      g->texts.push_back(std::move(t));
    } else {
      g->records.push_back(l);
    }
  }
  return !g->patterns.empty() && !g->records.empty();
}

const Golden& GetGolden() {
  static Golden g;
  static bool loaded = LoadGolden(&g);
  REQUIRE_MESSAGE(loaded, "cannot read " OCTET_REGEX_GOLDEN);
  return g;
}

std::vector<size_t> Numbers(const std::string& l) {
  std::vector<size_t> v;
  const char* p = l.c_str() + 1;
  char* end = nullptr;
  for (;;) {
    const unsigned long long x = std::strtoull(p, &end, 10);
    if (end == p) break;
    v.push_back(static_cast<size_t>(x));
    p = end;
  }
  return v;
}

std::string Show(const std::string& s) {
  std::string o;
  for (unsigned char c : s.substr(0, 200)) {
    char b[8];
    if (c < 0x20 || c == 0x7F) {
      std::snprintf(b, sizeof(b), "\\x%02x", c);
      o += b;
    } else {
      o.push_back(static_cast<char>(c));
    }
  }
  return o;
}

// Every match in HF's find_iter order.
std::vector<std::pair<size_t, size_t>> AllMatches(const Regex& re, const std::string& text,
                                                  Status* error) {
  std::vector<char> scratch(re.ScratchBytes(text.size()));
  RegexMatchIterator it(re, text.data(), text.size(), scratch.data(), scratch.size());
  std::vector<std::pair<size_t, size_t>> out;
  for (;;) {
    size_t b = 0, e = 0;
    Result<bool> r = it.Next(&b, &e);
    if (!r.ok()) {
      *error = r.status();
      return out;
    }
    if (!r.value()) return out;
    out.emplace_back(b, e);
  }
}

uint64_t Fnv1a(const std::vector<std::pair<size_t, size_t>>& ms) {
  uint64_t h = 0xCBF29CE484222325ull;
  char buf[48];
  for (const auto& m : ms) {
    const int n = std::snprintf(buf, sizeof(buf), "%zu,%zu;", m.first, m.second);
    for (int k = 0; k < n; ++k) {
      h ^= static_cast<unsigned char>(buf[k]);
      h *= 0x100000001B3ull;
    }
  }
  return h;
}

Regex MustCompile(const std::string& pattern) {
  Regex re;
  const Status s = re.Compile(pattern);
  INFO("pattern: ", Show(pattern));
  REQUIRE_MESSAGE(s.ok(), s.message());
  return re;
}

TEST_CASE("regex: every golden match list (constructs, real patterns, long texts)") {
  const Golden& g = GetGolden();
  size_t checked = 0;
  for (const std::string& rec : g.records) {
    if (rec[0] != 'M' && rec[0] != 'H') continue;
    const bool hashed = rec[0] == 'H';
    std::vector<size_t> v;
    uint64_t want_hash = 0;
    if (hashed) {
      size_t p = 0, t = 0, count = 0;
      unsigned long long h = 0;
      REQUIRE(std::sscanf(rec.c_str(), "H %zu %zu %zu %llx", &p, &t, &count, &h) == 4);
      v = {p, t, count};
      want_hash = h;
    } else {
      v = Numbers(rec);
    }
    REQUIRE(v.size() >= 3);
    const std::string& pattern = g.patterns.at(v[0]);
    const std::string& text = g.texts.at(v[1]);
    const Regex re = MustCompile(pattern);
    Status error;
    const auto got = AllMatches(re, text, &error);
    INFO("pattern: ", Show(pattern));
    INFO("text: ", Show(text), " (", text.size(), " bytes)");
    REQUIRE_MESSAGE(error.ok(), error.message());
    if (hashed) {
      CHECK(got.size() == v[2]);
      CHECK(Fnv1a(got) == want_hash);
    } else {
      REQUIRE(v.size() == 3 + 2 * v[2]);
      std::vector<std::pair<size_t, size_t>> want;
      for (size_t k = 0; k < v[2]; ++k) want.emplace_back(v[3 + 2 * k], v[4 + 2 * k]);
      if (got != want) {
        size_t k = 0;
        while (k < got.size() && k < want.size() && got[k] == want[k]) ++k;
        std::string msg = "first difference at match " + std::to_string(k) + ": got ";
        msg += k < got.size() ? "(" + std::to_string(got[k].first) + "," +
                                    std::to_string(got[k].second) + ")"
                              : "none";
        msg += ", want ";
        msg += k < want.size() ? "(" + std::to_string(want[k].first) + "," +
                                     std::to_string(want[k].second) + ")"
                               : "none";
        FAIL_CHECK(msg);
      }
    }
    ++checked;
  }
  CHECK(checked > 1000);
}

// Every code point of every class is ~126 M searches: seconds natively, over the
// test timeout under qemu-user. Emulated presets set OCTET_REGEX_CODE_POINT_STRIDE
// (tests/text/CMakeLists.txt) and check, per class, every code point below U+0800,
// both sides of every boundary of the class's ranges, and every stride-th code
// point; the host presets check them all.
uint32_t CodePointStride() {
  const char* s = std::getenv("OCTET_REGEX_CODE_POINT_STRIDE");
  const long v = s ? std::strtol(s, nullptr, 10) : 1;
  return v > 1 ? static_cast<uint32_t>(v) : 1;
}

TEST_CASE("regex: classes agree with the reference on every code point") {
  const Golden& g = GetGolden();
  const uint32_t stride = CodePointStride();
  if (stride > 1) {
    MESSAGE("OCTET_REGEX_CODE_POINT_STRIDE=" << stride << ": every code point below U+0800, "
            "each range boundary and every " << stride << "th code point (all of them on the host)");
  }
  size_t classes = 0, checked = 0;
  for (const std::string& rec : g.records) {
    if (rec[0] != 'C') continue;
    const std::vector<size_t> v = Numbers(rec);
    REQUIRE(v.size() >= 2);
    REQUIRE(v.size() == 2 + 2 * v[1]);
    const std::string& pattern = g.patterns.at(v[0]);
    const Regex re = MustCompile(pattern);
    std::vector<char> scratch(re.ScratchBytes(4));
    size_t range = 0, mismatches = 0;
    for (uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      while (range < v[1] && v[3 + 2 * range] < cp) ++range;
      const bool want = range < v[1] && v[2 + 2 * range] <= cp;
      if (stride > 1 && cp >= 0x800 && cp % stride != 0) {
        // The ranges are [first, last]: keep first - 1, first, last and last + 1.
        const bool edge = range < v[1] && (cp + 1 == v[2 + 2 * range] || cp == v[2 + 2 * range] ||
                                           cp == v[3 + 2 * range]);
        const bool after = range > 0 && cp == v[3 + 2 * (range - 1)] + 1;
        if (!edge && !after) continue;
      }
      ++checked;
      char enc[4];
      const size_t len = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      if (len == 1) {
        enc[0] = static_cast<char>(cp);
      } else if (len == 2) {
        enc[0] = static_cast<char>(0xC0 | (cp >> 6));
        enc[1] = static_cast<char>(0x80 | (cp & 0x3F));
      } else if (len == 3) {
        enc[0] = static_cast<char>(0xE0 | (cp >> 12));
        enc[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        enc[2] = static_cast<char>(0x80 | (cp & 0x3F));
      } else {
        enc[0] = static_cast<char>(0xF0 | (cp >> 18));
        enc[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        enc[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        enc[3] = static_cast<char>(0x80 | (cp & 0x3F));
      }
      size_t b = 0, e = 0;
      Result<bool> r = re.Find(enc, len, 0, &b, &e, scratch.data(), scratch.size());
      if (!r.ok()) FAIL(r.status().message());  // (no assertion per code point: 60M of them)
      const bool got = r.value() && b == 0 && e == len;
      if (got != want && ++mismatches <= 5) {
        char where[32];
        std::snprintf(where, sizeof(where), "U+%04X", cp);
        FAIL_CHECK(Show(pattern), " on ", where, ": got ", got, ", want ", want);
      }
    }
    CHECK_MESSAGE(mismatches == 0, Show(pattern), ": ", mismatches, " code points differ");
    ++classes;
  }
  CHECK(classes > 40);
  if (stride > 1) MESSAGE(checked << " (class, code point) pairs checked");
}

TEST_CASE("regex: unsupported or malformed patterns are refused with construct and offset") {
  struct Case {
    const char* pattern;
    StatusCode code;
    const char* offset;  // "at offset N" must appear
  };
  const Case cases[] = {
      {"a\\h", StatusCode::kUnsupported, "at offset 1"},
      {"(a)\\1", StatusCode::kUnsupported, "at offset 3"},
      {"\\X", StatusCode::kUnsupported, "at offset 0"},
      {"\\K", StatusCode::kUnsupported, "at offset 0"},
      {"\\R", StatusCode::kUnsupported, "at offset 0"},
      {"\\G", StatusCode::kUnsupported, "at offset 0"},
      {"(?m)a", StatusCode::kUnsupported, "at offset 0"},
      {"(?x)a", StatusCode::kUnsupported, "at offset 0"},
      {"(?#note)a", StatusCode::kUnsupported, "at offset 0"},
      {"a(?i)b", StatusCode::kUnsupported, "at offset 1"},
      {"[[:alpha:]]", StatusCode::kUnsupported, "at offset 1"},
      {"[:alpha:]", StatusCode::kUnsupported, "at offset 0"},
      {"\\p{Han}", StatusCode::kUnsupported, "at offset 0"},
      {"\\pL", StatusCode::kUnsupported, "at offset 0"},
      {"(a*)*", StatusCode::kUnsupported, "at offset 4"},
      {"(?:a|)+", StatusCode::kUnsupported, "at offset 6"},
      {"a{2}+", StatusCode::kUnsupported, "at offset 4"},
      {"a{2}?", StatusCode::kUnsupported, "at offset 4"},
      {"a**", StatusCode::kUnsupported, "at offset 2"},
      {"a{2}{3}", StatusCode::kUnsupported, "at offset 4"},
      {"a*{2}", StatusCode::kUnsupported, "at offset 2"},
      {"(?<=a+)b", StatusCode::kUnsupported, "at offset 0"},
      {"(?<=a|bc*)d", StatusCode::kUnsupported, "at offset 0"},
      {"\\xA0", StatusCode::kUnsupported, "at offset 0"},
      {"a{100001}", StatusCode::kUnsupported, "at offset 1"},
      {"(?i)ss", StatusCode::kUnsupported, "at offset 4"},
      {"(?i:fi)", StatusCode::kUnsupported, "at offset 4"},
      {"(?i)\xc3\x9f", StatusCode::kUnsupported, "at offset 4"},        // U+00DF ~ "ss"
      {"(?i)a\xe1\xba\x9e", StatusCode::kUnsupported, "at offset 5"},  // U+1E9E, orbit of U+00DF
      {"(?i)[a\xc3\x9f]", StatusCode::kUnsupported, "at offset 4"},
      {"(?i)\\p{Lu}+", StatusCode::kUnsupported, "at offset 4"},    // holds U+1E9E
      {"[]a]", StatusCode::kUnsupported, "at offset 1"},
      {"[\\d-z]", StatusCode::kUnsupported, "at offset 3"},
      {"[\\b]", StatusCode::kUnsupported, "at offset 1"},
      {"^*", StatusCode::kUnsupported, "at offset 1"},
      {"(", StatusCode::kInvalidArgument, "at offset 0"},
      {"a)", StatusCode::kInvalidArgument, "at offset 1"},
      {"[a", StatusCode::kInvalidArgument, "at offset 0"},
      {"*a", StatusCode::kInvalidArgument, "at offset 0"},
      {"[z-a]", StatusCode::kInvalidArgument, "at offset 1"},
      {"a{3,2}", StatusCode::kInvalidArgument, "at offset 1"},
      {"\\", StatusCode::kInvalidArgument, "at offset 0"},
      {"\\x{110000}", StatusCode::kInvalidArgument, "at offset 3"},
      {"\\u12", StatusCode::kInvalidArgument, "at offset 0"},
      {"\\p{L", StatusCode::kInvalidArgument, "at offset 0"},
      {"a\xff", StatusCode::kInvalidArgument, "at offset 1"},
      {"[a&&]", StatusCode::kInvalidArgument, "at offset 0"},
  };
  for (const Case& c : cases) {
    Regex re;
    const Status s = re.Compile(c.pattern);
    INFO("pattern: ", Show(c.pattern), " -> ", s.message());
    CHECK(!s.ok());
    CHECK(s.code() == c.code);
    CHECK(std::strstr(s.message(), c.offset) != nullptr);
    CHECK(std::strstr(s.message(), "regex: ") == s.message());
    CHECK(!re.compiled());
  }
}

TEST_CASE("regex: Find from an offset sees the text before it") {
  const Regex re = MustCompile("(?<=a)b|^c|\\bd");
  const std::string text = "abxcad d";
  std::vector<char> scratch(re.ScratchBytes(text.size()));
  size_t b = 0, e = 0;
  Result<bool> r = re.Find(text.data(), text.size(), 1, &b, &e, scratch.data(), scratch.size());
  REQUIRE(r.ok());
  CHECK(r.value());
  CHECK(b == 1);
  CHECK(e == 2);
  // "c" at 3 is not at a line start even though the search starts there; "d" at 5
  // follows a word character; the one at 7 follows a space.
  r = re.Find(text.data(), text.size(), 3, &b, &e, scratch.data(), scratch.size());
  REQUIRE(r.ok());
  CHECK(r.value());
  CHECK(b == 7);
  r = re.Find(text.data(), text.size(), text.size(), &b, &e, scratch.data(), scratch.size());
  REQUIRE(r.ok());
  CHECK(!r.value());
  r = re.Find(text.data(), text.size(), text.size() + 1, &b, &e, scratch.data(), scratch.size());
  CHECK(!r.ok());
}

TEST_CASE("regex: scratch is a bound, and running out is an error, not a wrong answer") {
  const char* gpt2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
  const Regex tok = MustCompile(gpt2);
  // No loops over groups: the stack does not grow with the text.
  CHECK(tok.ScratchBytes(1 << 20) == tok.ScratchBytes(1));
  CHECK(tok.ScratchBytes(1) < 1024);

  // A loop over a group pushes a frame per iteration; ScratchBytes covers it.
  const Regex loop = MustCompile("(?:ab|a)+c");
  std::string text;
  for (int k = 0; k < 5000; ++k) text += "ab";
  text += "c";
  std::vector<char> scratch(loop.ScratchBytes(text.size()));
  size_t b = 0, e = 0;
  Result<bool> r = loop.Find(text.data(), text.size(), 0, &b, &e, scratch.data(), scratch.size());
  REQUIRE(r.ok());
  CHECK(r.value());
  CHECK(b == 0);
  CHECK(e == text.size());
  r = loop.Find(text.data(), text.size(), 0, &b, &e, scratch.data(), 256);
  REQUIRE(!r.ok());
  CHECK(r.status().code() == StatusCode::kOutOfMemory);
  r = loop.Find(text.data(), text.size(), 0, &b, &e, scratch.data(), 3);
  CHECK(!r.ok());
  // Any alignment: the bound includes the slack to align frames.
  std::vector<char> shifted(loop.ScratchBytes(text.size()) + 1);
  r = loop.Find(text.data(), text.size(), 0, &b, &e, shifted.data() + 1, shifted.size() - 1);
  REQUIRE(r.ok());
  CHECK(r.value());
  CHECK(e == text.size());
}

TEST_CASE("regex: arbitrary bytes never read out of bounds and results stay ordered") {
  const char* patterns[] = {
      "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
      "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
      "(?<=\\p{L}.)\\b|.{2,5}?\\B|[^a]*+$",
  };
  std::mt19937 rng(7);
  for (const char* p : patterns) {
    const Regex re = MustCompile(p);
    for (int round = 0; round < 300; ++round) {
      // Exactly-sized heap buffer, so a read past the end is caught by ASan.
      const size_t n = rng() % 64;
      std::vector<char> text(n);
      for (char& c : text) {
        const uint32_t kind = rng() % 4;
        c = static_cast<char>(kind == 0 ? 0x80 + rng() % 0x40 : kind == 1 ? 0xC0 + rng() % 0x40 : rng() % 0x100);
      }
      std::vector<char> scratch(re.ScratchBytes(n));
      RegexMatchIterator it(re, text.data(), n, scratch.data(), scratch.size());
      size_t last = 0, b = 0, e = 0;
      for (int guard = 0; guard < 1000; ++guard) {
        Result<bool> r = it.Next(&b, &e);
        REQUIRE(r.ok());
        if (!r.value()) break;
        CHECK(b >= last);
        CHECK(b <= e);
        CHECK(e <= n);
        last = e;
      }
    }
  }
}

// Random text that stresses the split patterns: contractions in every case
// (and with U+017F), whitespace runs of every kind ending in \r\n or not,
// digits of several scripts, letters, marks, punctuation, emoji, CJK.
std::string RandomPretokenizerText(size_t bytes, uint32_t seed) {
  static const char* const kPieces[] = {
      "'s", "'S", "'t", "'T", "'re", "'RE", "'rE", "'ve", "'VE", "'m", "'M", "'ll", "'LL",
      "'lL", "'d", "'D", "'\xc5\xbf", "'\xe2\x84\xaa", "'", "''", "'x", " ", "  ", "   ",
      "\t", "\n", "\r\n", "\r", " \n", "\n ", "\xc2\xa0", "\xe3\x80\x80", "\xe2\x80\xa8",
      "\x0b", "\x0c", "\xc2\x85", "\xe2\x80\x8d", "word", "Word", "WORD", "caf\xc3\xa9",
      "e\xcc\x81", "\xe4\xb8\xad\xe6\x96\x87", "\xd9\x85\xd8\xb1", "\xe0\xa4\xa8\xe0\xa4\xae",
      "1", "12", "123", "1234", "\xd9\xa3\xd9\xa4", "\xe0\xa5\xa7", "\xe2\x85\xab", "\xc2\xbd",
      ".", "!!", "...", ",", "(", ")", "/", "-", "\xe2\x80\x94", "\xe3\x80\x82",
      "\xf0\x9f\x98\x80", "\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd", "\xf0\x90\x90\x80", "$", "<|x|>",
  };
  std::mt19937 rng(seed);
  std::string t;
  while (t.size() < bytes) t += kPieces[rng() % (sizeof(kPieces) / sizeof(kPieces[0]))];
  return t;
}

TEST_CASE("regex: the hand-written matchers equal the general engine") {
  const char* patterns[] = {
      "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
      "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
      "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  };
  const Golden& g = GetGolden();
  std::vector<std::string> texts = g.texts;
  texts.push_back(RandomPretokenizerText(1 << 20, 1));
  texts.push_back(RandomPretokenizerText(1 << 16, 2));
  for (const char* p : patterns) {
    Regex fast, general;
    REQUIRE(fast.Compile(p).ok());
    REQUIRE(general.CompileGeneralOnly(p).ok());
    REQUIRE(fast.uses_fast_path());
    REQUIRE(!general.uses_fast_path());
    size_t total = 0;
    for (const std::string& text : texts) {
      Status e1, e2;
      const auto a = AllMatches(fast, text, &e1);
      const auto b = AllMatches(general, text, &e2);
      REQUIRE(e1.ok());
      REQUIRE(e2.ok());
      INFO("pattern: ", p, " text: ", Show(text));
      REQUIRE(a.size() == b.size());
      for (size_t k = 0; k < a.size(); ++k) {
        if (a[k] != b[k]) {
          FAIL("match ", k, ": fast (", a[k].first, ",", a[k].second, ") general (", b[k].first,
               ",", b[k].second, ") near ", Show(text.substr(b[k].first, 24)));
        }
      }
      total += a.size();
    }
    CHECK(total > 100000);
    // Find from arbitrary character starts, as a caller splitting pieces may.
    const std::string& text = texts.back();
    std::vector<char> scratch(general.ScratchBytes(text.size()));
    std::mt19937 rng(3);
    for (int k = 0; k < 2000; ++k) {
      size_t from = rng() % (text.size() + 1);
      while (from < text.size() && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80) ++from;
      size_t b1 = 0, e1 = 0, b2 = 0, e2 = 0;
      Result<bool> r1 = fast.Find(text.data(), text.size(), from, &b1, &e1, scratch.data(), scratch.size());
      Result<bool> r2 = general.Find(text.data(), text.size(), from, &b2, &e2, scratch.data(), scratch.size());
      REQUIRE(r1.ok());
      REQUIRE(r2.ok());
      REQUIRE(r1.value() == r2.value());
      if (r1.value()) {
        CHECK(b1 == b2);
        CHECK(e1 == e2);
      }
    }
  }
}

TEST_CASE("regex: NextBatch gives the matches Next gives") {
  const Regex re = MustCompile("\\p{L}+|\\p{N}{1,3}|\\s+(?!\\S)|\\s+|.");
  const std::string text = RandomPretokenizerText(50000, 9);
  Status error;
  const auto one = AllMatches(re, text, &error);
  REQUIRE(error.ok());
  std::vector<char> scratch(re.ScratchBytes(text.size()));
  RegexMatchIterator it(re, text.data(), text.size(), scratch.data(), scratch.size());
  std::vector<std::pair<size_t, size_t>> batched;
  size_t spans[2 * 7];
  for (;;) {
    Result<size_t> got = it.NextBatch(spans, 7);
    REQUIRE(got.ok());
    if (got.value() == 0) break;
    for (size_t k = 0; k < got.value(); ++k) batched.emplace_back(spans[2 * k], spans[2 * k + 1]);
  }
  CHECK(batched == one);
  CHECK(one.size() > 1000);
}

// Compiles `pattern` once for every allocation of its compile with that
// allocation failing (core/alloc.h: alloc_testing): each must give
// kOutOfMemory with a message saying what, and leave the regex uncompiled;
// the compile with no failure must match as before. `general` compiles
// without the hand-written matchers.
void CheckEveryAllocationMayFail(const char* pattern, bool general, const std::string& text) {
  INFO("pattern: ", std::string(pattern), std::string(general ? " (general engine)" : ""));
  auto compile = [&](Regex* re) {
    return general ? re->CompileGeneralOnly(pattern) : re->Compile(pattern);
  };
  // The first compile of the process also builds the shared property runs;
  // the runs counted below are those of every later compile.
  Regex warm;
  REQUIRE(compile(&warm).ok());
  Status error;
  const auto expected = AllMatches(warm, text, &error);
  REQUIRE(error.ok());

  alloc_testing::FailNthAllocation(0);
  Regex clean;
  REQUIRE(compile(&clean).ok());
  const uint64_t allocations = alloc_testing::AllocationCount();
  CHECK(allocations > 0);
  MESSAGE("allocations of the compile: ", allocations);
  uint64_t nth = 1;
  for (;; ++nth) {
    alloc_testing::FailNthAllocation(nth);
    Regex re;
    const Status s = compile(&re);
    if (!alloc_testing::InjectedFailure()) {
      alloc_testing::FailNthAllocation(0);
      REQUIRE_MESSAGE(s.ok(), s.message());
      CHECK(AllMatches(re, text, &error) == expected);
      CHECK(error.ok());
      break;
    }
    alloc_testing::FailNthAllocation(0);
    INFO("allocation ", nth, " failed: ", s.message());
    CHECK(s.code() == StatusCode::kOutOfMemory);
    CHECK(std::strncmp(s.message(), "regex: out of memory for ", 25) == 0);
    CHECK(!re.compiled());
  }
  CHECK(nth - 1 == allocations);
  CHECK(AllMatches(clean, text, &error) == expected);
}

TEST_CASE("regex: every allocation of a compile may fail with kOutOfMemory") {
  const std::string text = RandomPretokenizerText(20000, 11);
  const char* gpt2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
  CheckEveryAllocationMayFail(gpt2, false, text);
  CheckEveryAllocationMayFail(gpt2, true, text);
  // Lookbehind split into alternatives, \b's word class, (?i) literals and
  // classes, bounded and lazy loops over groups, atomic groups.
  CheckEveryAllocationMayFail(
      "(?<=ab|c)\\w+|\\b(?i:ab[k-m])[a-z&&[^q]]{1,3}?|(?:x\\d){2,4}|(?>\\s+)(?!\\S)|(?:ab)*?c", true, text);
}

}  // namespace
}  // namespace octet::text
