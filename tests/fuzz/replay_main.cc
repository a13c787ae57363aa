// octet_fuzz_replay [DIR...]: runs the fuzz target's checks (loader_harness.h)
// on every file in each DIR (tests/fuzz/corpus: inputs the fuzzer once broke
// the loader with) and on the seed models, in ordinary builds, so fuzz
// findings stay fixed under every test preset, sanitizers and emulators included.
// Any input may be rejected; none may crash, be rejected without a message, or
// load into a model that breaks its promises. The seeds must load.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/loader_harness.h"
#include "fuzz/seed_models.h"
#ifdef OCTET_REPLAY_TOKENIZER_SEEDS
#include <exception>

#include "fuzz/tokenizer_seeds.h"
#endif

namespace {

int Check(const std::string& name, const std::vector<uint8_t>& bytes, bool must_load) {
  std::string broken;
  const octet::Status status = octet::testing::LoadUntrusted(bytes.data(), bytes.size(), &broken);
  if (!status.ok() && status.message()[0] == '\0') {
    std::fprintf(stderr, "FAIL %s: rejected without a message\n", name.c_str());
    return 1;
  }
  if (!broken.empty()) {
    std::fprintf(stderr, "FAIL %s: loaded, but %s\n", name.c_str(), broken.c_str());
    return 1;
  }
  if (must_load && !status.ok()) {
    std::fprintf(stderr, "FAIL %s: a seed model does not load: %s\n", name.c_str(),
                 status.message());
    return 1;
  }
  std::printf("ok   %s (%zu bytes): %s\n", name.c_str(), bytes.size(),
              status.ok() ? "loaded" : status.message());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int failures = 0;
  size_t inputs = 0;
  for (int a = 1; a < argc; ++a) {
    std::error_code error;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(argv[a], error)) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
    if (error) {
      std::fprintf(stderr, "FAIL cannot list %s: %s\n", argv[a], error.message().c_str());
      return 1;
    }
    std::sort(files.begin(), files.end());
    for (const auto& path : files) {
      std::ifstream in(path, std::ios::binary);
      const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                       std::istreambuf_iterator<char>());
      failures += Check(path.filename().string(), bytes, false);
      ++inputs;
    }
  }
  for (const auto& [name, bytes] : octet::testing::SeedModels()) {
    failures += Check(name, bytes, true);
    ++inputs;
  }
#ifdef OCTET_REPLAY_TOKENIZER_SEEDS
  // The loader fuzzer's real-tokenizer seeds (built with the converter).
  try {
    for (const auto& [name, bytes] : octet::testing::TokenizerModels(
             OCTET_TOKENIZER_DATA_DIR, OCTET_CHAT_TEMPLATES_DIR, /*cut=*/true)) {
      failures += Check(name, bytes, true);
      ++inputs;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL tokenizer seeds: %s\n", e.what());
    ++failures;
  }
#endif
  std::printf("%zu inputs, %d failures\n", inputs, failures);
  return failures == 0 ? 0 : 1;
}
