// Marian's tokenizer (transformers' MarianTokenizer, a slow tokenizer with no
// tokenizer.json form): SentencePiece's source.spm segments the text, and the
// pieces take their ids from vocab.json (a piece vocab.json lacks becomes
// <unk>); a ">>xx<<" target-language code at the start of the text is one
// token; "</s>" is appended. Decoding maps ids back through vocab.json and
// lets target.spm turn the pieces into text.
//
// Compiled into the same TokenizerSpec as every other tokenizer, with the
// parts that are SentencePiece's own rather than tokenizers' approximations of
// it: SentencePiece's normalizer (NormalizerKind::SentencePiece), the lattice
// over source.spm's pieces summed in float (TokModel.lattice_index), the
// language-code rule, and MarianTokenizer's decode (DecoderKind::SentencePiece).
// The reference is tests/tokenizer/gen_marian_goldens.py (the SentencePiece
// library plus MarianTokenizer's mapping, transformers 4.x semantics).
#pragma once

#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "octet_model_generated.h"

namespace octet {
namespace convert {

// `dir` holds source.spm, target.spm and vocab.json; `tokenizer_config`
// (tokenizer_config.json, an object), `config` and `generation_config` (may
// be null) give the special tokens and the eos ids. Throws convert::Error
// naming the file and what is not supported (separate vocabularies, byte
// fallback, user-defined pieces, a BPE source model).
std::unique_ptr<fb::TokenizerSpecT> CompileMarianTokenizer(const std::filesystem::path& dir,
                                                           const nlohmann::json& tokenizer_config,
                                                           const nlohmann::json& config,
                                                           const nlohmann::json& generation_config);

}  // namespace convert
}  // namespace octet
