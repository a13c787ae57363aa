// Tiny models that carry real compiled tokenizers, for the fuzzers: the
// tokenizers of tests/tokenizer/data (byte-level BPE, SentencePiece BPE with
// byte fallback, WordPiece, Unigram with a Precompiled charsmap), compiled by
// the converter and written by the model writer, as octet-convert does.
//
// Cut ones (the first ids of the vocabulary, the merges among them, a few added
// tokens renumbered after them, the template and eos ids renumbered to match)
// seed the loader fuzzer: a few KiB each, so mutations land in the tables. Full
// ones give the encode fuzzer real vocabularies. Host only (the converter throws).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace octet {
namespace testing {

// The tokenizers of tests/tokenizer/data the fuzzers use, in a fixed order
// (the encode fuzzer picks one by index).
const std::vector<std::string>& FuzzTokenizerNames();

// (file name, file bytes): "tok_<name>.octet", one per FuzzTokenizerNames(),
// read from data_dir/<name>/ (the extracted archives); chat templates for the
// tokenizers that ship none come from templates_dir (tests/text/chat_templates).
// `cut`: the small seed form; else the whole vocabulary. Throws convert::Error
// (or nlohmann's exceptions) when a tokenizer does not compile.
std::vector<std::pair<std::string, std::vector<uint8_t>>> TokenizerModels(
    const std::string& data_dir, const std::string& templates_dir, bool cut);

}  // namespace testing
}  // namespace octet
