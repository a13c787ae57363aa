// octet_fuzz_seeds DIR: writes the loader fuzzer's seed models (seed_models.h,
// and the cut real tokenizers of tokenizer_seeds.h) into DIR, which must
// exist. scripts/fuzz.sh starts the loader fuzzer from them.
// octet_fuzz_seeds --full DIR: the whole real tokenizers, which the encode
// fuzzer loads (the build runs this).
// octet_fuzz_seeds --encode DIR: the encode fuzzer's seeds (fuzz_encode.cc's
// input layout): each text of tests/tokenizer/corpus.jsonl for one tokenizer,
// options varied, and a few id lists.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include <fstream>

#include <nlohmann/json.hpp>

#include "fuzz/seed_models.h"
#include "fuzz/tokenizer_seeds.h"

namespace {

using Files = std::vector<std::pair<std::string, std::vector<uint8_t>>>;

bool WriteAll(const std::string& dir, const Files& files) {
  for (const auto& [name, bytes] : files) {
    const std::string path = dir + "/" + name;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    const bool ok = f != nullptr && std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    if (f == nullptr || std::fclose(f) != 0 || !ok) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return false;
    }
    std::printf("%s (%zu bytes)\n", path.c_str(), bytes.size());
  }
  return true;
}

Files EncodeSeeds() {
  Files files;
  std::ifstream in(OCTET_TOKENIZER_CORPUS);
  std::string line;
  const uint8_t tokenizers = static_cast<uint8_t>(octet::testing::FuzzTokenizerNames().size());
  for (uint32_t i = 0; std::getline(in, line); ++i) {
    if (line.empty()) continue;
    const std::string text = nlohmann::json::parse(line).get<std::string>();
    // Byte 1: bits 0-1 the encode options, bit 4 the workspace checks; never bit 3 (ids).
    std::vector<uint8_t> bytes = {static_cast<uint8_t>(i % tokenizers),
                                  static_cast<uint8_t>((i / tokenizers) & 0x13)};
    bytes.insert(bytes.end(), text.begin(), text.end());
    files.emplace_back("encode_" + std::to_string(i), std::move(bytes));
  }
  for (uint8_t t = 0; t < tokenizers; ++t) {
    std::vector<uint8_t> bytes = {t, static_cast<uint8_t>(8 | (t & 1 ? 4 : 0))};
    for (uint32_t id = 0; id < 64; ++id) {
      const uint32_t v = id * 977 + t;
      for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<uint8_t>(v >> (8 * b)));
    }
    files.emplace_back("ids_" + std::to_string(t), std::move(bytes));
  }
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  const bool full = argc == 3 && std::strcmp(argv[1], "--full") == 0;
  const bool encode = argc == 3 && std::strcmp(argv[1], "--encode") == 0;
  if (argc != 2 && !full && !encode) {
    std::fprintf(stderr, "usage: %s [--full|--encode] DIR\n", argv[0]);
    return 2;
  }
  Files files;
  try {
    if (encode) return WriteAll(argv[2], EncodeSeeds()) ? 0 : 1;
    files = octet::testing::TokenizerModels(OCTET_TOKENIZER_DATA_DIR, OCTET_CHAT_TEMPLATES_DIR,
                                            /*cut=*/!full);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tokenizer seeds: %s\n", e.what());
    return 1;
  }
  if (!full) {
    for (auto& seed : octet::testing::SeedModels()) files.push_back(std::move(seed));
  }
  return WriteAll(argv[full ? 2 : 1], files) ? 0 : 1;
}
