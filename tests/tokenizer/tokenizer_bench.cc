// octet's side of scripts/bench-tokenizers.sh (not a test): encode speed on
// one thread, read the same way as bench_hf.js: FILE's paragraphs (split on
// "\n\n", empty ones dropped) each encoded without special tokens; bytes_per_s
// = UTF-8 bytes of all paragraphs / the best wall time of ROUNDS rounds
// (default 3), after one untimed warm-up round over the first 64 paragraphs.
//
// usage: tokenizer_bench TOKENIZER_DIR FILE
//   TOKENIZER_DIR holds tokenizer.json (+ tokenizer_config.json), compiled here
//   by the converter exactly as octet-convert compiles it into a model file.
// prints one JSON line: {"bytes_per_s", "bytes", "paragraphs", "tokens", "best_s", "rounds"}
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "import/error.h"
#include "import/json_util.h"
#include "text/tokenizer.h"
#include "tokenize/compile_tokenizer.h"

int main(int argc, char** argv) {
  using namespace octet;
  if (argc != 3) {
    std::fprintf(stderr, "usage: tokenizer_bench TOKENIZER_DIR FILE\n");
    return 2;
  }
  const std::string dir = argv[1];
  std::unique_ptr<fb::TokenizerSpecT> spec;
  try {
    convert::TokenizerSources sources;
    sources.tokenizer = convert::ReadJsonFile(dir + "/tokenizer.json", "tokenizer.json");
    spec = convert::CompileTokenizer(sources);
  } catch (const convert::Error& e) {
    std::fprintf(stderr, "tokenizer_bench: %s\n", e.what());
    return 1;
  }
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(fb::TokenizerSpec::Pack(fbb, spec.get()));
  text::Tokenizer tok;
  Status st = tok.Init(flatbuffers::GetRoot<fb::TokenizerSpec>(fbb.GetBufferPointer()));
  if (!st.ok()) {
    std::fprintf(stderr, "tokenizer_bench: %s\n", st.message());
    return 1;
  }
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
  double best = 1e30;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!round(paragraphs.size(), &tokens)) return 1;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, s);
  }
  std::printf("{\"bytes_per_s\": %.1f, \"bytes\": %zu, \"paragraphs\": %zu, \"tokens\": %zu, "
              "\"best_s\": %.6f, \"rounds\": %d}\n",
              static_cast<double>(bytes) / best, bytes, paragraphs.size(), tokens, best, rounds);
  return 0;
}
