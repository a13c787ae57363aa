#include "cli/text_codec.h"

#include <utility>

#include "cli/api_util.h"
#include "cli/args.h"

namespace octet {
namespace cli {

std::unique_ptr<TextCodec> TextCodec::ForModel(const api::Model& model) {
  if (model.info().has_tokenizer == 0) return nullptr;
  std::unique_ptr<TextCodec> codec(new TextCodec(model));
  const api::Status st = codec->tokenizer_.Create(model);
  if (!st.ok()) throw Failure("the model's tokenizer: " + StatusText(st));
  return codec;
}

std::vector<int32_t> TextCodec::Encode(const std::string& text, bool add_special_tokens,
                                       bool split_special_tokens) {
  std::vector<int32_t> ids;
  const uint32_t flags = (add_special_tokens ? 0u : OCTET_ENCODE_NO_SPECIAL) |
                         (split_special_tokens ? OCTET_ENCODE_SPLIT_SPECIAL : 0u);
  const api::Status st = tokenizer_.Encode(text, flags, &ids);
  if (!st.ok()) throw Failure("cannot encode the text: " + StatusText(st));
  return ids;
}

std::string TextCodec::Decode(const int32_t* ids, size_t n, bool skip_special_tokens) {
  std::string text;
  const api::Status st =
      tokenizer_.Decode(ids, n, skip_special_tokens ? 0u : OCTET_DECODE_KEEP_SPECIAL, &text);
  if (!st.ok()) throw Failure("cannot decode the ids: " + StatusText(st));
  return text;
}

std::string TextCodec::Label(int32_t id) {
  std::string text;
  const api::Status st = tokenizer_.Decode(&id, 1, OCTET_DECODE_KEEP_SPECIAL, &text);
  bool readable = st.ok() && !text.empty() && ValidUtf8Prefix(text.data(), text.size()) == text.size() &&
                  text.find("\xEF\xBF\xBD") == std::string::npos;
  if (!readable) text = tokenizer_.Token(id);
  std::string label;
  for (char c : text) {
    switch (c) {
      case ' ': label += "\xE2\x90\xA3"; break;  // U+2423 OPEN BOX
      case '\t': label += "\xE2\x86\x92"; break;  // U+2192 RIGHTWARDS ARROW
      case '\n': label += "\xE2\x86\xB5"; break;  // U+21B5 DOWNWARDS ARROW WITH CORNER LEFTWARDS
      case '\r': label += "\\r"; break;
      default: label += c;
    }
  }
  return label;
}

TextStream::TextStream(const api::Model& model, bool skip_special_tokens, std::FILE* out)
    : out_(out) {
  const api::Status st =
      stream_.Create(model, skip_special_tokens ? 0u : OCTET_DECODE_KEEP_SPECIAL);
  if (!st.ok()) throw Failure("tokenizer: " + StatusText(st));
}

void TextStream::Push(int32_t id) {
  buffer_.clear();
  const api::Status st = stream_.Push(id, &buffer_);
  if (!st.ok()) throw Failure("cannot decode token " + std::to_string(id) + ": " + StatusText(st));
  Write();
}

void TextStream::Finish() {
  buffer_.clear();
  const api::Status st = stream_.Finish(&buffer_);
  if (!st.ok()) throw Failure("cannot decode the text: " + StatusText(st));
  Write();
}

void TextStream::Write() {
  WriteText(out_, buffer_.data(), buffer_.size());
  std::fflush(out_);
}

void WriteText(std::FILE* out, const char* data, size_t n) {
  if (n > 0 && std::fwrite(data, 1, n, out) != n) throw Failure("cannot write the output");
}

}  // namespace cli
}  // namespace octet
