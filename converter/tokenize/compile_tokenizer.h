// Compiles a Hugging Face tokenizer.json (parsed) into the model file's
// TokenizerSpec (runtime/format/octet_model.fbs), which the runtime tokenizer
// (runtime/text/tokenizer.h) runs in place: the step lists flattened, the
// post-processor as templates, and the lookup tables (vocabulary hash, BPE
// merge table) built with the runtime's own hashing (runtime/text/tok_tables.h).
//
// Whatever the runtime cannot reproduce exactly is refused: Fail() with one
// line starting "tokenizer.json: " naming the component, e.g.
//   tokenizer.json: pre_tokenizer UnicodeScripts is not supported
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "octet_model_generated.h"

namespace octet {
namespace convert {

struct TokenizerSources {
  nlohmann::json tokenizer;          // tokenizer.json, or the same shape made from older files
  nlohmann::json tokenizer_config;   // tokenizer_config.json; null when absent
  nlohmann::json generation_config;  // generation_config.json; null when absent
  nlohmann::json config;             // config.json; null when absent
};

// Throws convert::Error. The result passes text::CheckTokenizerSpec.
std::unique_ptr<fb::TokenizerSpecT> CompileTokenizer(const TokenizerSources& sources);

// A TokModel.index-layout table over `keys` (key -> id; a later key wins);
// *max_key gets the longest key's length.
std::vector<uint32_t> BuildTokIndex(const std::vector<std::pair<std::string, int32_t>>& keys,
                                    uint32_t* max_key);

}  // namespace convert
}  // namespace octet
