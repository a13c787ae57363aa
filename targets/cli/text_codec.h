// The model's tokenizer for `octet run`: text in (prompts, chat turns) and
// text out (generated tokens streamed to stdout, heatmap labels), on the
// public API. Host-side code: errors are thrown as Failure (cli/args.h).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "octet/octet.hpp"

namespace octet {
namespace cli {

class TextCodec {
 public:
  // The model's tokenizer, or null when the file has none.
  static std::unique_ptr<TextCodec> ForModel(const api::Model& model);

  // Hugging Face's encode(text, add_special_tokens); with split_special_tokens
  // the strings of special tokens in `text` are plain text.
  std::vector<int32_t> Encode(const std::string& text, bool add_special_tokens,
                              bool split_special_tokens = false);
  // Hugging Face's decode(ids, skip_special_tokens).
  std::string Decode(const int32_t* ids, size_t n, bool skip_special_tokens);
  std::string Decode(const std::vector<int32_t>& ids, bool skip_special_tokens) {
    return Decode(ids.data(), ids.size(), skip_special_tokens);
  }
  // A label for a heatmap: the token decoded on its own when that is valid
  // UTF-8 without U+FFFD, else its vocabulary string; spaces, tabs and
  // newlines made visible (U+2423, U+2192, U+21B5), so " the" and "the" differ.
  std::string Label(int32_t id);
  // The special added tokens (their strings, ids, lstrip/rstrip).
  std::vector<octet_special_token> Specials() const { return tokenizer_.Specials(); }

  const api::Model& model() const { return *model_; }

 private:
  explicit TextCodec(const api::Model& model) : model_(&model) {}

  const api::Model* model_;
  api::Tokenizer tokenizer_;
};

// Writes the text of ids to `out` as they come, flushing after each token.
// UTF-8 safe: a character spread over byte-fallback tokens is written once
// complete, and the whole output equals Decode(all ids).
class TextStream {
 public:
  TextStream(const api::Model& model, bool skip_special_tokens, std::FILE* out);
  void Push(int32_t id);
  // The held-back text, if any.
  void Finish();

 private:
  void Write();

  api::TextStream stream_;
  std::string buffer_;
  std::FILE* out_;
};

// Writes all of data[0, n) to `out` or throws Failure.
void WriteText(std::FILE* out, const char* data, size_t n);
inline void WriteText(std::FILE* out, const std::string& s) { WriteText(out, s.data(), s.size()); }

}  // namespace cli
}  // namespace octet
