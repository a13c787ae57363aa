// The Precompiled normalizer (runtime/text/precompiled.h) against Hugging Face
// tokenizers' own output on SentencePiece's nmt_nfkc and nmt_nfkc_cf charsmaps
// (golden.tsv), its output-buffer contract, and hostile charsmaps.
#include "text/precompiled.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using octet::text::ApplyCharsmap;
using octet::text::CharsmapMaxGrowth;
using octet::text::CheckCharsmap;

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE_MESSAGE(f.good(), "cannot open " << path);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)),
                              std::istreambuf_iterator<char>());
}

std::vector<uint8_t> LoadMap(const std::string& rule) {
  return ReadFile(std::string(OCTET_PRECOMPILED_MAPS) + "/" + rule + ".bin");
}

std::string Unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

std::string Apply(const std::vector<uint8_t>& map, const std::string& in) {
  const size_t need = ApplyCharsmap(map.data(), map.size(), in.data(), in.size(), nullptr, 0);
  std::string out(need, '\0');
  const size_t again = ApplyCharsmap(map.data(), map.size(), in.data(), in.size(), &out[0], need);
  CHECK(again == need);
  return out;
}

struct GoldenLine {
  std::string rule, input, expected;
};

std::vector<GoldenLine> LoadGolden() {
  std::ifstream f(OCTET_PRECOMPILED_GOLDEN);
  REQUIRE(f.good());
  std::vector<GoldenLine> lines;
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    GoldenLine g;
    std::string in_hex, out_hex;
    std::getline(fields, g.rule, '\t');
    std::getline(fields, in_hex, '\t');
    std::getline(fields, out_hex, '\t');
    g.input = Unhex(in_hex);
    g.expected = Unhex(out_hex);
    lines.push_back(g);
  }
  return lines;
}

}  // namespace

TEST_CASE("precompiled: every golden line equals Hugging Face tokenizers' output") {
  const std::vector<GoldenLine> golden = LoadGolden();
  REQUIRE(golden.size() >= 40);
  std::map<std::string, std::vector<uint8_t>> maps;
  size_t changed = 0;
  for (const GoldenLine& g : golden) {
    auto it = maps.find(g.rule);
    if (it == maps.end()) {
      it = maps.emplace(g.rule, LoadMap(g.rule)).first;
      REQUIRE(CheckCharsmap(it->second.data(), it->second.size()).ok());
    }
    CAPTURE(g.rule);
    CAPTURE(g.input);
    CHECK(Apply(it->second, g.input) == g.expected);
    if (g.input != g.expected) ++changed;
  }
  // The corpus is meant to exercise the map, not to pass through it untouched.
  CHECK(changed >= 30);
}

TEST_CASE("precompiled: the shortest key of a short grapheme wins (tokenizers' quirk)") {
  const std::vector<uint8_t> map = LoadMap("nmt_nfkc");
  // U+FB01 (fi ligature) + U+0301: one grapheme of 5 bytes; its prefix U+FB01 is
  // a key, so the whole grapheme becomes "fi" and the accent is dropped.
  CHECK(Apply(map, "\xEF\xAC\x81\xCC\x81") == "fi");
  // Full width A is NFKC'd to A.
  CHECK(Apply(map, "\xEF\xBC\xA1") == "A");
}

TEST_CASE("precompiled: never writes past cap and always reports the full size") {
  const std::vector<uint8_t> map = LoadMap("nmt_nfkc");
  const size_t growth = CharsmapMaxGrowth(map.data(), map.size());
  CHECK(growth >= 3);
  for (const GoldenLine& g : LoadGolden()) {
    const std::string full = Apply(map, g.input);
    CHECK(full.size() <= g.input.size() * growth);
    for (size_t cap = 0; cap <= full.size(); cap += 7) {
      std::string buf(cap + 8, '\x55');
      const size_t need =
          ApplyCharsmap(map.data(), map.size(), g.input.data(), g.input.size(), &buf[0], cap);
      CHECK(need == full.size());
      CHECK(buf.compare(0, cap, full, 0, cap) == 0);
      CHECK(buf.substr(cap) == std::string(8, '\x55'));
    }
  }
}

TEST_CASE("precompiled: malformed charsmaps are refused") {
  const std::vector<uint8_t> good = LoadMap("nmt_nfkc");
  CHECK(CheckCharsmap(nullptr, 0).code() == octet::StatusCode::kInvalidModel);
  const uint8_t tiny[3] = {4, 0, 0};
  CHECK(!CheckCharsmap(tiny, sizeof(tiny)).ok());
  // A trie of zero units, and one that runs past the end of the blob.
  const uint8_t empty_trie[6] = {0, 0, 0, 0, 'a', 0};
  CHECK(!CheckCharsmap(empty_trie, sizeof(empty_trie)).ok());
  std::vector<uint8_t> long_trie = good;
  long_trie[0] = 0xFF;
  long_trie[1] = 0xFF;
  long_trie[2] = 0xFF;
  long_trie[3] = 0x7F;
  CHECK(!CheckCharsmap(long_trie.data(), long_trie.size()).ok());
  // Replacement strings that are not UTF-8.
  std::vector<uint8_t> bad_utf8 = good;
  bad_utf8.back() = 0xFF;
  const octet::Status s = CheckCharsmap(bad_utf8.data(), bad_utf8.size());
  CHECK(!s.ok());
  CHECK(std::string(s.message()).find("UTF-8") != std::string::npos);
}

TEST_CASE("precompiled: hostile tries stay inside the blob") {
  // Random units over a tiny blob: every walk leaves the array or points
  // outside the strings at some point; the sanitizer presets catch a stray read.
  std::mt19937 rng(1234);
  const std::string text =
      "abc \xEF\xBC\xA1\xEF\xAC\x81\xCC\x81 \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD x";
  for (int round = 0; round < 2000; ++round) {
    const size_t units = 1 + rng() % 64;
    const size_t strings = rng() % 16;
    std::vector<uint8_t> map(4 + units * 4 + strings);
    const uint32_t trie_bytes = static_cast<uint32_t>(units * 4);
    for (int i = 0; i < 4; ++i) map[i] = static_cast<uint8_t>(trie_bytes >> (8 * i));
    for (size_t i = 4; i < map.size(); ++i) map[i] = static_cast<uint8_t>(rng());
    // Labels that match the text now and then, so walks go deep.
    for (size_t u = 0; u < units; ++u) {
      if (rng() % 2) map[4 + u * 4] = static_cast<uint8_t>(text[rng() % text.size()]);
    }
    std::vector<uint8_t> exact(map);  // no slack after the blob for a stray read
    char out[256];
    const size_t need =
        ApplyCharsmap(exact.data(), exact.size(), text.data(), text.size(), out, sizeof(out));
    CHECK(need <= text.size() * CharsmapMaxGrowth(exact.data(), exact.size()));
  }
  // A real map with its trie units scrambled.
  std::vector<uint8_t> scrambled = LoadMap("nmt_nfkc");
  for (size_t i = 4; i < 4 + 40000 && i < scrambled.size(); i += 3) {
    scrambled[i] = static_cast<uint8_t>(rng());
  }
  std::string out(1024, '\0');
  (void)ApplyCharsmap(scrambled.data(), scrambled.size(), text.data(), text.size(), &out[0],
                      out.size());
}
