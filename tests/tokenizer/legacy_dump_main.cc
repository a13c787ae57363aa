// octet-legacy-tokenizer DIR: prints the tokenizer.json that the converter
// makes from DIR's legacy tokenizer files (vocab.txt, vocab.json + merges.txt,
// a SentencePiece model) and DIR/tokenizer_config.json. Used by
// gen_legacy_cases.py to check the output against Hugging Face tokenizers.
#include <cstdio>
#include <exception>
#include <filesystem>

#include "import/json_util.h"
#include "tokenize/legacy.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: octet-legacy-tokenizer DIR\n");
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    nlohmann::json config = nlohmann::json::object();
    if (std::filesystem::exists(dir / "tokenizer_config.json")) {
      config = octet::convert::ReadJsonFile(dir / "tokenizer_config.json", "tokenizer_config.json");
    }
    std::printf("%s\n",
                octet::convert::LegacyTokenizerJson(dir, config).dump(-1, ' ', false).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "octet-legacy-tokenizer: %s\n", e.what());
    return 1;
  }
  return 0;
}
