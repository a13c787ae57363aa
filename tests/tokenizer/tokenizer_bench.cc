// octet's side of scripts/bench-tokenizers.sh (not a test): encode speed on
// one thread, read the same way as bench_hf.js: FILE's paragraphs (split on
// "\n\n", empty ones dropped) each encoded without special tokens; bytes_per_s
// = UTF-8 bytes of all paragraphs / the best wall time of ROUNDS rounds
// (default 3), after one untimed warm-up round over the first 64 paragraphs.
// WORD_CACHE=0 turns the workspace's word cache off (EncodeOptions::word_cache).
//
// usage: tokenizer_bench TOKENIZER_DIR FILE
//   TOKENIZER_DIR holds tokenizer.json (+ tokenizer_config.json), compiled here
//   by the converter into a tokenizer-only model file, which the loader
//   verifies and the runtime tokenizer runs in place, as on a device.
// prints one JSON line: {"bytes_per_s", "bytes", "paragraphs", "tokens", "best_s", "rounds",
// "cpu_per_wall"}
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tokenizer_test_util.h"

int main(int argc, char** argv) {
  using namespace octet;
  if (argc != 3) {
    std::fprintf(stderr, "usage: tokenizer_bench TOKENIZER_DIR FILE\n");
    return 2;
  }
  // The device's path: converter -> model file -> loader -> runtime tokenizer.
  testing::LoadedTokenizer loaded = testing::LoadTokenizerFromDir(argv[1]);
  if (!loaded.error.empty()) {
    std::fprintf(stderr, "tokenizer_bench: %s\n", loaded.error.c_str());
    return 1;
  }
  const text::Tokenizer& tok = loaded.tokenizer;
  Status st;
  std::ifstream in(argv[2], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "tokenizer_bench: cannot read %s\n", argv[2]);
    return 1;
  }
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> paragraphs;
  for (size_t start = 0; start <= all.size();) {
    size_t end = all.find("\n\n", start);
    if (end == std::string::npos) end = all.size();
    if (end > start) paragraphs.push_back(all.substr(start, end - start));
    start = end + 2;
  }
  size_t bytes = 0, longest = 1;
  for (const std::string& p : paragraphs) {
    bytes += p.size();
    longest = std::max(longest, p.size());
  }
  text::TokenizerWorkspace ws;
  st = tok.CreateWorkspace(longest, 1, &ws);
  if (!st.ok()) {
    std::fprintf(stderr, "tokenizer_bench: %s\n", st.message());
    return 1;
  }
  std::vector<int32_t> ids(tok.MaxIds(longest));
  text::EncodeOptions options;
  options.add_special_tokens = false;
  // WORD_CACHE=0: every word through the model (what the cache saves).
  options.word_cache = !(std::getenv("WORD_CACHE") && std::string(std::getenv("WORD_CACHE")) == "0");
  const auto round = [&](size_t count, size_t* tokens) -> bool {
    *tokens = 0;
    for (size_t i = 0; i < count; ++i) {
      size_t n = 0;
      const Status s = tok.Encode(paragraphs[i].data(), paragraphs[i].size(), options, ws,
                                  ids.data(), ids.size(), &n);
      if (!s.ok()) {
        std::fprintf(stderr, "tokenizer_bench: paragraph %zu: %s\n", i + 1, s.message());
        return false;
      }
      *tokens += n;
    }
    return true;
  };
  size_t tokens = 0;
  if (!round(std::min<size_t>(64, paragraphs.size()), &tokens)) return 1;
  const int rounds = std::getenv("ROUNDS") ? std::max(1, std::atoi(std::getenv("ROUNDS"))) : 3;
  double best = 1e30, cpu_per_wall = 0;
  for (int r = 0; r < rounds; ++r) {
    const std::clock_t c0 = std::clock();
    const auto t0 = std::chrono::steady_clock::now();
    if (!round(paragraphs.size(), &tokens)) return 1;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    if (s < best) {
      best = s;
      cpu_per_wall = cpu / s;
    }
  }
  // cpu_per_wall as bench_hf.js prints it: below 1 when the machine was busy.
  std::printf("{\"bytes_per_s\": %.1f, \"bytes\": %zu, \"paragraphs\": %zu, \"tokens\": %zu, "
              "\"best_s\": %.6f, \"rounds\": %d, \"cpu_per_wall\": %.3f}\n",
              static_cast<double>(bytes) / best, bytes, paragraphs.size(), tokens, best, rounds,
              cpu_per_wall);
  return 0;
}
