// regex_bench PATTERN FILE [RUNS]: splits FILE with PATTERN as HF's find_iter
// does and prints the matches and the speed (best of RUNS, default 5).
// PATTERN is a regex or one of the names below (the tokenizers' patterns);
// --general runs the general engine even where a hand-written matcher exists.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "text/regex.h"

namespace {

struct Named {
  const char* name;
  const char* pattern;
};

const Named kNamed[] = {
    {"gpt2", "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"},
    {"llama3",
     "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
     "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
    {"qwen2",
     "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
     "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
    {"o200k",
     "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'"
     "t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}"
     "\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|"
     "\\s+(?!\\S)|\\s+"},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || std::strcmp(argv[1], "--help") == 0) {
    std::fprintf(stderr, "usage: regex_bench [--general] PATTERN|gpt2|llama3|qwen2|o200k FILE [RUNS]\n");
    return argc < 3 ? 2 : 0;
  }
  bool general = false;
  if (std::strcmp(argv[1], "--general") == 0) {
    general = true;
    ++argv;
    --argc;
    if (argc < 3) return 2;
  }
  const char* pattern = argv[1];
  for (const Named& n : kNamed) {
    if (std::strcmp(argv[1], n.name) == 0) pattern = n.pattern;
  }
  const int runs = argc > 3 ? std::atoi(argv[3]) : 5;
  FILE* f = std::fopen(argv[2], "rb");
  if (f == nullptr) {
    std::fprintf(stderr, "regex_bench: cannot open %s\n", argv[2]);
    return 1;
  }
  std::string text;
  char buf[1 << 16];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, got);
  std::fclose(f);

  octet::text::Regex re;
  const auto t0 = std::chrono::steady_clock::now();
  const octet::Status s = general ? re.CompileGeneralOnly(pattern) : re.Compile(pattern);
  const double compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!s.ok()) {
    std::fprintf(stderr, "regex_bench: %s\n", s.message());
    return 1;
  }
  std::vector<char> scratch(re.ScratchBytes(text.size()));
  double best = 1e30;
  size_t matches = 0;
  for (int r = 0; r < runs; ++r) {
    octet::text::RegexMatchIterator it(re, text.data(), text.size(), scratch.data(),
                                       scratch.size());
    matches = 0;
    const auto start = std::chrono::steady_clock::now();
    size_t spans[2 * 256];
    for (;;) {
      auto got = it.NextBatch(spans, 256);
      if (!got.ok()) {
        std::fprintf(stderr, "regex_bench: %s\n", got.status().message());
        return 1;
      }
      if (got.value() == 0) break;
      matches += got.value();
    }
    const double sec =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (sec < best) best = sec;
  }
  std::printf("%s: %zu bytes, %zu matches, compile %.2f ms, scratch %zu bytes, best %.3f ms, %.1f MB/s\n",
              re.uses_fast_path() ? "hand-written matcher" : "general engine", text.size(),
              matches, compile_ms, scratch.size(), best * 1e3,
              static_cast<double>(text.size()) / best / 1e6);
  return 0;
}
