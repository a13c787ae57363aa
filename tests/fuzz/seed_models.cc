#include "fuzz/seed_models.h"

#include "support/test_models.h"

namespace octet {
namespace testing {

std::vector<std::pair<std::string, std::vector<uint8_t>>> SeedModels() {
  struct Seed {
    const char* name;
    fb::Family family;
    bool int8;
    bool tied;
    bool tokenizer;
  };
  const Seed seeds[] = {
      {"llama_int8", fb::Family::Llama, true, false, true},
      {"llama_fp32_tied", fb::Family::Llama, false, true, false},
      {"bert_int8", fb::Family::Bert, true, true, true},
      {"bert_fp32", fb::Family::Bert, false, true, false},
      {"t5_int8_tied", fb::Family::T5, true, true, true},
      {"t5_fp32", fb::Family::T5, false, false, true},
      {"lfm2_int8", fb::Family::Lfm2, true, true, false},  // a short convolution, then attention
      {"qwen3_5_int8", fb::Family::Qwen35, true, false, false},  // Gated DeltaNets, gated attention
      {"rwkv_int8", fb::Family::Rwkv, true, false, false},  // time and channel mixes, layer epsilons
  };
  std::vector<std::pair<std::string, std::vector<uint8_t>>> out;
  for (const Seed& s : seeds) {
    TinyModelOptions options;
    options.family = s.family;
    options.vocab = 8;
    options.hidden = 8;
    options.int8 = s.int8;
    options.tied = s.tied;
    options.tokenizer = s.tokenizer;
    options.layers = s.family == fb::Family::Lfm2 || s.family == fb::Family::Rwkv ? 2
                     : s.family == fb::Family::Qwen35                           ? 4
                                                                                : 1;
    out.emplace_back(std::string(s.name) + ".octet", MakeTinyModelBytes(options));
  }
  return out;
}

}  // namespace testing
}  // namespace octet
