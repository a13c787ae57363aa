// A byte-level BPE encoder for Hugging Face tokenizer.json files of the GPT-2
// kind, so that octet-convert can take calibration text and tokenize it with
// the checkpoint's own tokenizer.
//
// It reproduces what Hugging Face tokenizers' `encode(text,
// add_special_tokens=False)` gives, id for id, for the files it accepts:
//   model         BPE with vocab and merges ("a b" strings or [a, b] pairs), no
//                 dropout, no byte_fallback, no subword prefix or suffix, no
//                 ignore_merges; every one of the 256 byte symbols in the vocab
//                 (so no symbol is ever unknown and unk_token never applies).
//   pre_tokenizer ByteLevel (add_prefix_space, use_regex: GPT-2's pattern), or
//                 a Sequence whose only member is that ByteLevel.
//   normalizer    none.
//   added_tokens  special ones only. They are never produced from text: text
//                 that spells "<s>" is encoded as any other text (Hugging Face
//                 would give the special id unless split_special_tokens is set).
//   post_processor, decoder, truncation, padding: ignored; the caller adds
//                 bos/eos ids itself.
// Anything else is refused with one line naming it, ending "is not supported
// for text calibration yet; give token ids".
// \p{L}, \p{N} and \s come from unicode_tables.h (Unicode 14.0, made by
// gen_unicode_tables.py, which says how \s is read). Characters assigned in a
// Unicode version other than the one of tokenizers' regex engine (Oniguruma)
// may be classed differently there; older characters are not.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace octet {
namespace convert {

class BpeTokenizer {
 public:
  // Parses the text of a tokenizer.json. Throws convert::Error with a one-line
  // message starting "tokenizer.json: " for a malformed or unsupported file.
  static BpeTokenizer FromJson(const std::string& tokenizer_json_text);

  // The token ids of `utf8_text` (no special tokens added). Throws
  // convert::Error when the text is not valid UTF-8. Thread-safe (const).
  std::vector<int32_t> Encode(const std::string& utf8_text) const;

 private:
  struct Merge {
    int32_t rank;  // position in the merges list: lower merges first
    int32_t id;    // vocab id of the merged symbol
  };

  BpeTokenizer() = default;
  // Appends the ids of one pre-token (raw UTF-8 bytes of the text) to `ids`.
  void EncodePreToken(const char* bytes, size_t size, std::vector<int32_t>& ids) const;
  const Merge* FindMerge(int32_t left, int32_t right) const;

  bool add_prefix_space_ = false;
  bool use_regex_ = true;
  std::array<int32_t, 256> byte_ids_{};  // vocab id of each byte's one-character symbol
  // (left id << 32 | right id) -> the merge of that adjacent pair.
  std::unordered_map<uint64_t, Merge> merges_;
};

}  // namespace convert
}  // namespace octet
