// Tokenizers from the files that came before tokenizer.json: BERT's vocab.txt,
// GPT-2/RoBERTa's vocab.json + merges.txt, and SentencePiece models
// (spiece.model: T5, ALBERT; sentencepiece.bpe.model: XLM-R; tokenizer.model:
// Llama 2, Mistral, Gemma). Each is turned into the tokenizer.json that
// transformers' convert_slow_tokenizer.py makes for the checkpoint's tokenizer
// class (BertConverter, GPT2Converter, RobertaConverter, T5Converter,
// AlbertConverter, XLMRobertaConverter, LlamaConverter, GemmaConverter), plus
// the added tokens and post-processor that transformers' fast tokenizer class
// sets up on top, so the tokenizer compiler reads one format for every source.
//
// Where transformers versions differ, the published tokenizer.json files of
// real checkpoints decide (see legacy.cc for each case).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "octet_model_generated.h"

namespace octet {
namespace convert {

// `dir` holds the legacy files; `tokenizer_config` is the parsed
// tokenizer_config.json (an empty object when the checkpoint has none). The
// tokenizer class comes from its "tokenizer_class" ("...Fast" counts as the
// slow class), else from config.json's model_type in `dir`.
// Throws convert::Error (one line naming the file or the class) when the
// files are missing or malformed or the class has no converter here.
nlohmann::json LegacyTokenizerJson(const std::filesystem::path& dir,
                                   const nlohmann::json& tokenizer_config);

// The tokenizer class the legacy files of `dir` are for (tokenizer_config's
// "tokenizer_class" without "Fast", else from config.json's model_type).
std::string LegacyTokenizerClass(const std::filesystem::path& dir,
                                 const nlohmann::json& tokenizer_config);

// The compiled tokenizer of a checkpoint without tokenizer.json: Marian's
// through marian_tokenizer.h, every other class through LegacyTokenizerJson
// and CompileTokenizer. `config` and `generation_config` may be null.
std::unique_ptr<fb::TokenizerSpecT> CompileLegacyTokenizer(
    const std::filesystem::path& dir, const nlohmann::json& tokenizer_config,
    const nlohmann::json& config, const nlohmann::json& generation_config);

}  // namespace convert
}  // namespace octet
