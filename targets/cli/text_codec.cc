#include "cli/text_codec.h"

#include <algorithm>

#include "cli/args.h"
#include "cli/model_util.h"

namespace octet {
namespace cli {

std::unique_ptr<TextCodec> TextCodec::ForModel(const Model& model) {
  const fb::TokenizerSpec* spec = model.tokenizer_spec();
  if (spec == nullptr) return nullptr;
  std::unique_ptr<TextCodec> codec(new TextCodec());
  const Status st = codec->tokenizer_.Init(spec);
  if (!st.ok()) throw Failure("tokenizer: " + DescribeStatus(st));
  codec->Reserve(4096, 4096);
  return codec;
}

void TextCodec::Reserve(size_t text_bytes, size_t ids) {
  if (workspace_.bytes() != 0 && text_bytes <= workspace_.max_text_bytes() &&
      ids <= workspace_.max_decode_ids()) {
    return;
  }
  // Grow geometrically so a long chat re-creates the workspace rarely.
  text_bytes = std::max(text_bytes, 2 * workspace_.max_text_bytes());
  ids = std::max(ids, 2 * workspace_.max_decode_ids());
  const Status st = tokenizer_.CreateWorkspace(text_bytes, ids, &workspace_);
  if (!st.ok()) throw Failure("tokenizer: " + DescribeStatus(st));
}

std::vector<int32_t> TextCodec::Encode(const std::string& text, bool add_special_tokens,
                                       bool split_special_tokens) {
  Reserve(std::max<size_t>(text.size(), 1), 1);
  std::vector<int32_t> ids(tokenizer_.MaxIds(text.size()));
  text::EncodeOptions options;
  options.add_special_tokens = add_special_tokens;
  options.split_special_tokens = split_special_tokens;
  size_t n = 0;
  const Status st = tokenizer_.Encode(text.data(), text.size(), options, workspace_, ids.data(),
                                      ids.size(), &n);
  if (!st.ok()) throw Failure("cannot encode the text: " + DescribeStatus(st));
  ids.resize(n);
  return ids;
}

std::string TextCodec::Decode(const int32_t* ids, size_t n, bool skip_special_tokens) {
  Reserve(1, std::max<size_t>(n, 1));
  std::string out(tokenizer_.MaxDecodedBytes(n), '\0');
  size_t written = 0;
  const Status st =
      tokenizer_.Decode(ids, n, skip_special_tokens, workspace_, &out[0], out.size(), &written);
  if (!st.ok()) throw Failure("cannot decode the ids: " + DescribeStatus(st));
  out.resize(written);
  return out;
}

std::string TextCodec::Label(int32_t id) {
  Reserve(1, 1);
  std::vector<char> buffer(tokenizer_.MaxDecodedBytes(1) + 256);
  const size_t n = tokenizer_.TokenText(id, workspace_, buffer.data(), buffer.size());
  std::string label;
  for (size_t i = 0; i < n; ++i) {
    switch (buffer[i]) {
      case ' ': label += "\xE2\x90\xA3"; break;  // U+2423 OPEN BOX
      case '\t': label += "\xE2\x86\x92"; break;  // U+2192 RIGHTWARDS ARROW
      case '\n': label += "\xE2\x86\xB5"; break;  // U+21B5 DOWNWARDS ARROW WITH CORNER LEFTWARDS
      case '\r': label += "\\r"; break;
      default: label += buffer[i];
    }
  }
  return label;
}

TextStream::TextStream(const text::Tokenizer& tokenizer, bool skip_special_tokens,
                       std::FILE* out)
    : out_(out) {
  Status st = tokenizer.CreateWorkspace(1, text::StreamDecoder::kWindow, &workspace_);
  if (st.ok()) st = decoder_.Init(&tokenizer, &workspace_, skip_special_tokens);
  if (!st.ok()) throw Failure("tokenizer: " + DescribeStatus(st));
  buffer_.resize(tokenizer.MaxDecodedBytes(text::StreamDecoder::kWindow));
}

void TextStream::Push(int32_t id) {
  size_t n = 0;
  const Status st = decoder_.Push(id, buffer_.data(), buffer_.size(), &n);
  if (!st.ok()) throw Failure("cannot decode token " + std::to_string(id) + ": " + DescribeStatus(st));
  Write(n);
}

void TextStream::Finish() {
  size_t n = 0;
  const Status st = decoder_.Finish(buffer_.data(), buffer_.size(), &n);
  if (!st.ok()) throw Failure("cannot decode the text: " + DescribeStatus(st));
  Write(n);
}

void TextStream::Write(size_t n) {
  WriteText(out_, buffer_.data(), n);
  std::fflush(out_);
}

void WriteText(std::FILE* out, const char* data, size_t n) {
  if (n > 0 && std::fwrite(data, 1, n, out) != n) throw Failure("cannot write the output");
}

}  // namespace cli
}  // namespace octet
