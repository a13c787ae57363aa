// The on-device tokenizer: Hugging Face tokenizers' encode(text,
// add_special_tokens) and decode(ids, skip_special_tokens), id for id and
// byte for byte, run from the compiled TokenizerSpec in the model file
// (runtime/format/octet_model.fbs) in place.
//
// The pipeline, as tokenizers runs it:
//   text -> added tokens that are not `normalized` split out of the raw text
//        -> each other piece normalized, then the `normalized` added tokens split out
//        -> each remaining piece pre-tokenized -> each pre-token through the model
//        -> the template (post-processor) when add_special_tokens.
// Decode: ids -> token strings (special ones dropped when asked) -> the decoder chain.
//
// Memory: Init allocates (compiled regexes, the added-token matcher); Encode
// and Decode allocate nothing: they work in a TokenizerWorkspace the caller
// creates once for the longest text (and the longest id list) it will pass.
// A Tokenizer is immutable after Init and may be shared by threads, each with
// its own workspace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/alloc.h"
#include "core/status.h"
#include "octet_model_generated.h"

namespace octet {
namespace text {

struct EncodeOptions {
  bool add_special_tokens = true;    // apply the template (BOS/CLS/SEP...)
  bool split_special_tokens = false; // special tokens' strings in the text are plain text
  // Reuse the ids of words seen before in this workspace (same result, faster;
  // false runs every word through the model, for tests of the cache).
  bool word_cache = true;
};

class Tokenizer;
struct TokenizerImpl;

// Scratch for Encode and Decode: one allocation, made by Tokenizer::CreateWorkspace.
class TokenizerWorkspace {
 public:
  TokenizerWorkspace() = default;
  TokenizerWorkspace(TokenizerWorkspace&&) noexcept = default;
  TokenizerWorkspace& operator=(TokenizerWorkspace&&) noexcept = default;

  size_t max_text_bytes() const { return max_text_bytes_; }
  size_t max_decode_ids() const { return max_decode_ids_; }
  size_t bytes() const { return bytes_; }

 private:
  friend class Tokenizer;
  friend struct TokenizerImpl;
  OwnedArray<uint8_t> memory_;
  size_t bytes_ = 0;
  size_t max_text_bytes_ = 0;
  size_t max_decode_ids_ = 0;
};

class Tokenizer {
 public:
  Tokenizer();
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Binds to `spec`, which must outlive the Tokenizer and must have passed
  // CheckTokenizerSpec (the loader runs it). Compiles the regexes.
  Status Init(const fb::TokenizerSpec* spec);
  bool initialized() const { return impl_ != nullptr; }

  // A workspace for texts of up to max_text_bytes and id lists of up to
  // max_decode_ids (Decode, StreamDecoder), plus a 256 KiB cache of encoded
  // words (EncodeOptions::word_cache) when max_text_bytes >= 64. Each stage (normalizers,
  // pre-tokenizers) may grow the text to its bound but at most 4x: a text
  // that grows more (a run of U+FDFA through NFKD) gets kOutOfMemory and
  // takes a workspace made for a longer text.
  Status CreateWorkspace(size_t max_text_bytes, size_t max_decode_ids,
                         TokenizerWorkspace* workspace) const;
  // An upper bound on the ids Encode gives for a text of `text_bytes`.
  size_t MaxIds(size_t text_bytes) const;
  // An upper bound on the bytes Decode gives for `n_ids` ids.
  size_t MaxDecodedBytes(size_t n_ids) const;

  // Encodes text[0, n) into ids[0, *n_ids). Errors: invalid UTF-8 (the
  // message names the byte offset), a text longer than the workspace's
  // max_text_bytes, more than max_ids ids, or an id the model cannot give (a
  // word with no token and no unk).
  Status Encode(const char* text, size_t n, const EncodeOptions& options,
                TokenizerWorkspace& workspace, int32_t* ids, size_t max_ids,
                size_t* n_ids) const;

  // Decodes ids[0, n) into out[0, *n_out) (not NUL-terminated). Errors: an id
  // outside the vocabulary, more ids than the workspace's max_decode_ids, or
  // more than `cap` bytes.
  Status Decode(const int32_t* ids, size_t n, bool skip_special_tokens,
                TokenizerWorkspace& workspace, char* out, size_t cap, size_t* n_out) const;

  // The normalizers alone on text[0, n) (valid UTF-8, at most the
  // workspace's max_text_bytes): *out points into the workspace (or at text).
  // For the converter (added tokens' normalized forms) and tests.
  Status Normalize(const char* text, size_t n, TokenizerWorkspace& workspace, const char** out,
                   size_t* out_n) const;

  uint32_t vocab_size() const;
  // The token's string as the vocabulary spells it (GPT-2 byte characters
  // and all), for labels. Empty for ids without a token; out-of-range ids too.
  const char* TokenBytes(int32_t id, size_t* size) const;
  // A readable label: the token decoded on its own when that is valid UTF-8
  // without U+FFFD, else its vocabulary string. Writes at most cap bytes.
  size_t TokenText(int32_t id, TokenizerWorkspace& workspace, char* out, size_t cap) const;
  bool IsSpecial(int32_t id) const;
  bool IsEos(int32_t id) const;
  const fb::TokenizerSpec& spec() const;

 private:
  friend class StreamDecoder;
  Owned<TokenizerImpl> impl_;
};

// Streams text during generation: Push one id at a time and get the text it
// completes. Text that might still change (an unfinished UTF-8 character
// spread over byte-fallback tokens) is held back, so the concatenation of
// every Push's output, then Finish's, equals Decode of all the ids (as long
// as fewer than kWindow ids are held back at once).
class StreamDecoder {
 public:
  static constexpr size_t kWindow = 64;

  // `workspace` must allow kWindow decode ids; both must outlive the decoder.
  Status Init(const Tokenizer* tokenizer, TokenizerWorkspace* workspace, bool skip_special_tokens);
  void Reset();
  // Appends the newly completed text to out[0, *n_out).
  Status Push(int32_t id, char* out, size_t cap, size_t* n_out);
  // The held-back text (decoded as it stands).
  Status Finish(char* out, size_t cap, size_t* n_out);

 private:
  Status Emit(bool final, char* out, size_t cap, size_t* n_out);

  const Tokenizer* tokenizer_ = nullptr;
  TokenizerWorkspace* workspace_ = nullptr;
  bool skip_special_ = true;
  int32_t ids_[kWindow] = {};
  size_t n_ids_ = 0;
  size_t context_ = 0;  // ids_[0, context_) were emitted: they give the window's first-token effects
  OwnedArray<char> prefix_;  // decode of ids_[0, context_)
  size_t prefix_bytes_ = 0;
  OwnedArray<char> text_;   // decode of the window
  size_t text_cap_ = 0;
};

}  // namespace text
}  // namespace octet
