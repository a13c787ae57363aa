// WordPiece (greedy longest match with the continuing-subword prefix) and
// WordLevel (whole pre-tokens), as tokenizers' models/wordpiece and
// models/wordlevel.
#include <cstring>

#include "text/tokenizer_impl.h"
#include "core/utf8.h"

namespace octet {
namespace text {

Status TokenizerImpl::WordPiece(EncodeState& st, const uint8_t* w, size_t n) const {
  const auto unk = [&]() -> Status {
    if (unk_id < 0) return Status(StatusCode::kInvalidArgument, "tokenizer: a word has no token and the model has no unk");
    return Emit(st, unk_id);
  };
  size_t chars = 0;
  for (size_t i = 0; i < n; ++i) chars += !Utf8IsContinuation(w[i]);
  if (chars > model->max_input_chars_per_word()) return unk();
  const flatbuffers::String* prefix = model->continuing_subword_prefix();
  const auto* pre = prefix ? reinterpret_cast<const uint8_t*>(prefix->data()) : nullptr;
  const size_t pre_n = prefix ? prefix->size() : 0;
  const size_t first_id = st.n_ids;
  // A word's pieces may all turn into one unk at its last character, so
  // running out of id slots is only an error once the word is matched whole.
  bool out_of_slots = false;
  size_t start = 0;
  while (start < n) {
    const size_t extra = start > 0 ? pre_n : 0;
    // Nothing longer than the longest token can match.
    size_t end = n;
    if (end - start + extra > max_token_bytes) {
      end = max_token_bytes > extra ? start + (max_token_bytes - extra) : start;
      while (end > start && end < n && Utf8IsContinuation(w[end])) --end;
    }
    int32_t found = -1;
    while (start < end) {
      found = Lookup3(pre, extra, w + start, end - start, nullptr, 0);
      if (found >= 0) break;
      --end;
      while (end > start && Utf8IsContinuation(w[end])) --end;
    }
    if (found < 0) {
      st.n_ids = first_id;  // the whole word becomes unk
      return unk();
    }
    if (st.n_ids < st.max_ids) {
      st.ids[st.n_ids++] = found;
    } else {
      out_of_slots = true;
    }
    start = end;
  }
  if (out_of_slots) {
    return Status::Error(StatusCode::kOutOfMemory, "the text gives more than %zu ids", st.max_ids);
  }
  return Status::Ok();
}

Status TokenizerImpl::WordLevel(EncodeState& st, const uint8_t* w, size_t n) const {
  const int32_t id = Lookup(w, n);
  if (id >= 0) return Emit(st, id);
  if (unk_id < 0) return Status(StatusCode::kInvalidArgument, "tokenizer: a word has no token and the model has no unk");
  return Emit(st, unk_id);
}

}  // namespace text
}  // namespace octet
