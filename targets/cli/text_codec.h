// The model's tokenizer for `octet run`: text in (prompts, chat turns) and
// text out (generated tokens streamed to stdout, heatmap labels). Host-side
// code: errors are thrown as Failure (cli/args.h); the workspaces are sized
// up front and grown only for a longer text than any before.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "format/model.h"
#include "text/tokenizer.h"

namespace octet {
namespace cli {

class TextCodec {
 public:
  // The model's compiled tokenizer, or null when the file has none.
  static std::unique_ptr<TextCodec> ForModel(const Model& model);

  // Hugging Face's encode(text, add_special_tokens); with split_special_tokens
  // the strings of special tokens in `text` are plain text.
  std::vector<int32_t> Encode(const std::string& text, bool add_special_tokens,
                              bool split_special_tokens = false);
  // Hugging Face's decode(ids, skip_special_tokens).
  std::string Decode(const int32_t* ids, size_t n, bool skip_special_tokens);
  std::string Decode(const std::vector<int32_t>& ids, bool skip_special_tokens) {
    return Decode(ids.data(), ids.size(), skip_special_tokens);
  }
  // A label for a heatmap: the token's text with spaces, tabs and newlines
  // made visible (U+2423, U+2192, U+21B5), so " the" and "the" differ.
  std::string Label(int32_t id);

  const text::Tokenizer& tokenizer() const { return tokenizer_; }
  const fb::TokenizerSpec& spec() const { return tokenizer_.spec(); }

 private:
  void Reserve(size_t text_bytes, size_t ids);

  text::Tokenizer tokenizer_;
  text::TokenizerWorkspace workspace_;
};

// Writes the text of ids to `out` as they come, flushing after each token.
// UTF-8 safe: a character spread over byte-fallback tokens is written once
// complete, and the whole output equals Decode(all ids) (text::StreamDecoder).
class TextStream {
 public:
  TextStream(const text::Tokenizer& tokenizer, bool skip_special_tokens, std::FILE* out);
  void Push(int32_t id);
  // The held-back text, if any.
  void Finish();

 private:
  void Write(size_t n);

  text::TokenizerWorkspace workspace_;
  text::StreamDecoder decoder_;
  std::vector<char> buffer_;
  std::FILE* out_;
};

// Writes all of data[0, n) to `out` or throws Failure.
void WriteText(std::FILE* out, const char* data, size_t n);
inline void WriteText(std::FILE* out, const std::string& s) { WriteText(out, s.data(), s.size()); }

}  // namespace cli
}  // namespace octet
