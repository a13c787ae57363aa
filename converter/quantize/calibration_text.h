// Text for calibration, encoded by the model's own tokenizer as the runtime
// runs it (the compiled tokenizer the file will carry: byte-level BPE,
// SentencePiece BPE or Unigram, WordPiece), and the built-in calibration
// text for models that cannot write their own (encoders, encoder-decoders):
// public-domain prose in English, Spanish, French, Japanese, Chinese and
// Korean (calibration_text.inc, made from Debian packages by
// scripts/make-calibration-text.py, which records where each passage is from).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "octet_model_generated.h"
#include "quantize/report.h"

namespace octet {
namespace convert {

class TextEncoder {
 public:
  // Throws Error when the runtime cannot bind the tokenizer.
  explicit TextEncoder(const fb::TokenizerSpecT& spec);
  ~TextEncoder();
  TextEncoder(const TextEncoder&) = delete;
  TextEncoder& operator=(const TextEncoder&) = delete;

  // The ids of `text` (UTF-8); add_special_tokens: the tokenizer's template
  // (BOS, [CLS] ... [SEP], </s>). Throws Error naming what the tokenizer refused.
  std::vector<int32_t> Encode(const std::string& text, bool add_special_tokens) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The built-in passages, each encoded (with the tokenizer's template) into
// one sequence of at most max_len ids (the first max_len when longer): the
// calibration ones, and apart from them the held-out ones. Ids at or past
// `vocab` are an Error (a tokenizer that does not match the model).
struct BuiltInSamples {
  Calibration calibration;
  Calibration heldout;
};
BuiltInSamples BuiltInCalibration(const TextEncoder& encoder, uint32_t vocab, size_t max_len);

}  // namespace convert
}  // namespace octet
