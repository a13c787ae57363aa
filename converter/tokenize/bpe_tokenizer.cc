// Byte-level BPE as Hugging Face tokenizers runs it (see bpe_tokenizer.h):
// text -> GPT-2 pre-tokens -> each pre-token's UTF-8 bytes as byte symbols ->
// merges, lowest rank first -> vocab ids.
#include "tokenize/bpe_tokenizer.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <queue>
#include <utility>

#include "import/error.h"
#include "import/json_util.h"
#include "core/utf8.h"
#include "tokenize/unicode_tables.h"

namespace octet {
namespace convert {
namespace {

using nlohmann::json;

[[noreturn]] void Unsupported(const std::string& what) {
  Fail("tokenizer.json: ", what, " is not supported for text calibration yet; give token ids");
}

// GPT-2's byte alphabet: printable Latin-1 bytes stand for themselves, the
// other 68 bytes take U+0100, U+0101, ... in byte order (space -> U+0120 'Ġ').
std::array<char32_t, 256> ByteSymbols() {
  std::array<char32_t, 256> symbols{};
  char32_t next = 0x100;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    symbols[b] = printable ? static_cast<char32_t>(b) : next++;
  }
  return symbols;
}

void AppendUtf8(char32_t c, std::string& out) {
  char bytes[kMaxUtf8Bytes];
  out.append(bytes, Utf8Encode(c, bytes));
}

[[noreturn]] void InvalidUtf8(const std::string& text, size_t offset) {
  char byte[8];
  std::snprintf(byte, sizeof(byte), "0x%02X", static_cast<unsigned char>(text[offset]));
  Fail("text is not valid UTF-8: byte ", byte, " at offset ", offset);
}

// Decodes `text` strictly (no overlong forms, no surrogates, nothing above
// U+10FFFF). code_points[i] starts at byte starts[i]; starts has one more
// entry, text.size().
void DecodeUtf8(const std::string& text, std::vector<char32_t>& code_points,
                std::vector<size_t>& starts) {
  size_t i = 0;
  while (i < text.size()) {
    const Utf8Char c = Utf8DecodeAt(text.data(), text.size(), i, Utf8Form::kStrict);
    if (!c.valid) InvalidUtf8(text, i);
    code_points.push_back(c.code_point);
    starts.push_back(i);
    i += c.length;
  }
  starts.push_back(text.size());
}

enum class CharClass { kOther, kLetter, kNumber, kSpace };

template <size_t N>
bool InRanges(const CodePointRange (&ranges)[N], char32_t c) {
  // The first range that ends at or after c.
  const CodePointRange* it = std::lower_bound(
      ranges, ranges + N, c, [](const CodePointRange& r, char32_t x) { return r.last < x; });
  return it != ranges + N && it->first <= c;
}

CharClass ClassOf(char32_t c) {
  if (InRanges(kLetterRanges, c)) return CharClass::kLetter;
  if (InRanges(kNumberRanges, c)) return CharClass::kNumber;
  if (InRanges(kSpaceRanges, c)) return CharClass::kSpace;
  return CharClass::kOther;
}

// The end of the match of GPT-2's pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// that starts at `i`, as a backtracking engine finds it (the first alternative
// that matches wins). Every character is in one of the classes, so some
// alternative always matches and the matches tile the text.
size_t Gpt2MatchEnd(const std::vector<char32_t>& text, const std::vector<CharClass>& cls,
                    size_t i) {
  const size_t n = text.size();
  if (text[i] == '\'' && i + 1 < n) {
    const char32_t a = text[i + 1];
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
    const char32_t b = i + 2 < n ? text[i + 2] : 0;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
  }
  // " ?" then a run of letters, of numbers, or of other characters.
  const size_t first = text[i] == ' ' && i + 1 < n ? i + 1 : i;
  if (cls[first] != CharClass::kSpace) {
    size_t end = first + 1;
    while (end < n && cls[end] == cls[first]) ++end;
    return end;
  }
  size_t end = i + 1;
  while (end < n && cls[end] == CharClass::kSpace) ++end;
  // \s+(?!\S) takes the whole run at the end of the text and otherwise leaves
  // its last character to the word after it; a single space there is \s+.
  if (end == n || end - i == 1) return end;
  return end - 1;
}

}  // namespace

BpeTokenizer BpeTokenizer::FromJson(const std::string& tokenizer_json_text) {
  const json root = ParseJson(tokenizer_json_text, "tokenizer.json");
  if (!root.is_object()) Fail("tokenizer.json: not a JSON object");
  const auto member = [](const json& object, const char* key) -> const json* {
    const auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
  };
  const auto type_of = [&](const json& object) {
    const json* type = object.is_object() ? member(object, "type") : nullptr;
    return type != nullptr && type->is_string() ? type->get<std::string>() : std::string("?");
  };
  BpeTokenizer t;

  if (const json* normalizer = member(root, "normalizer")) {
    Unsupported("normalizer '" + type_of(*normalizer) + "'");
  }

  const json* pre = member(root, "pre_tokenizer");
  if (pre == nullptr) Unsupported("a BPE model without a ByteLevel pre_tokenizer");
  if (type_of(*pre) == "Sequence") {
    const json* members = member(*pre, "pretokenizers");
    if (members == nullptr || !members->is_array() || members->empty()) {
      Unsupported("pre_tokenizer 'Sequence' without members");
    }
    for (const json& m : *members) {
      if (type_of(m) != "ByteLevel") Unsupported("pre_tokenizer '" + type_of(m) + "'");
    }
    if (members->size() != 1) Unsupported("pre_tokenizer 'Sequence' of several ByteLevel");
    pre = &(*members)[0];
  }
  if (type_of(*pre) != "ByteLevel") Unsupported("pre_tokenizer '" + type_of(*pre) + "'");
  const json* prefix = member(*pre, "add_prefix_space");
  if (prefix == nullptr || !prefix->is_boolean()) {
    Fail("tokenizer.json: pre_tokenizer ByteLevel: add_prefix_space must be true or false");
  }
  t.add_prefix_space_ = prefix->get<bool>();
  if (const json* use_regex = member(*pre, "use_regex")) {  // absent in older files: true
    if (!use_regex->is_boolean()) {
      Fail("tokenizer.json: pre_tokenizer ByteLevel: use_regex must be true or false");
    }
    t.use_regex_ = use_regex->get<bool>();
  }

  const json* model = member(root, "model");
  if (model == nullptr || !model->is_object()) Fail("tokenizer.json: model is missing");
  if (type_of(*model) != "BPE") Unsupported("model '" + type_of(*model) + "'");
  if (const json* dropout = member(*model, "dropout")) {
    if (!dropout->is_number() || dropout->get<double>() != 0) Unsupported("model.dropout");
  }
  const auto flag = [&](const char* key) {
    const json* value = member(*model, key);
    return value != nullptr && value->is_boolean() && value->get<bool>();
  };
  if (flag("byte_fallback")) Unsupported("model.byte_fallback");
  if (flag("ignore_merges")) Unsupported("model.ignore_merges");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const json* value = member(*model, key);
    if (value != nullptr && !(value->is_string() && value->get<std::string>().empty())) {
      Unsupported(std::string("model.") + key);
    }
  }

  const json* vocab_json = member(*model, "vocab");
  if (vocab_json == nullptr || !vocab_json->is_object()) {
    Fail("tokenizer.json: model.vocab must be an object of token -> id");
  }
  std::unordered_map<std::string, int32_t> vocab;
  for (const auto& [token, id] : vocab_json->items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      Fail("tokenizer.json: model.vocab[", json(token).dump(), "] = ", JsonValueString(id),
           " is not a token id");
    }
    vocab[token] = static_cast<int32_t>(id.get<int64_t>());
  }
  const auto id_of = [&](const std::string& token) {
    const auto it = vocab.find(token);
    return it == vocab.end() ? -1 : it->second;
  };

  const std::array<char32_t, 256> symbols = ByteSymbols();
  for (int b = 0; b < 256; ++b) {
    std::string symbol;
    AppendUtf8(symbols[b], symbol);
    t.byte_ids_[b] = id_of(symbol);
    if (t.byte_ids_[b] < 0) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "0x%02X", b);
      Fail("tokenizer.json: model.vocab lacks \"", symbol, "\", the symbol of byte ", hex,
           " (not a byte-level BPE vocab)");
    }
  }

  const json* merges = member(*model, "merges");
  if (merges == nullptr || !merges->is_array()) Fail("tokenizer.json: model.merges is missing");
  for (size_t rank = 0; rank < merges->size(); ++rank) {
    const json& m = (*merges)[rank];
    std::string left, right;
    if (m.is_string()) {  // "left right", exactly one space as tokenizers reads it
      const std::string s = m.get<std::string>();
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
        Fail("tokenizer.json: model.merges[", rank, "] = ", JsonValueString(m),
             " is not \"left right\"");
      }
      left = s.substr(0, space);
      right = s.substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      left = m[0].get<std::string>();
      right = m[1].get<std::string>();
    } else {
      Fail("tokenizer.json: model.merges[", rank, "] = ", JsonValueString(m),
           " is not \"left right\" or [left, right]");
    }
    const int32_t left_id = id_of(left), right_id = id_of(right), merged_id = id_of(left + right);
    for (const auto& [token, id] : {std::pair{left, left_id}, std::pair{right, right_id},
                                    std::pair{left + right, merged_id}}) {
      if (id < 0) {
        Fail("tokenizer.json: model.merges[", rank, "]: ", json(token).dump(),
             " is not in the vocab");
      }
    }
    // A pair listed twice keeps its last rank, as in tokenizers' merge map.
    t.merges_[static_cast<uint64_t>(left_id) << 32 | static_cast<uint32_t>(right_id)] =
        Merge{static_cast<int32_t>(rank), merged_id};
  }

  if (const json* added = member(root, "added_tokens")) {
    if (!added->is_array()) Fail("tokenizer.json: added_tokens must be a list");
    for (const json& token : *added) {
      const json* special = token.is_object() ? member(token, "special") : nullptr;
      if (special == nullptr || !special->is_boolean() || !special->get<bool>()) {
        const json* content = token.is_object() ? member(token, "content") : nullptr;
        Unsupported("the non-special added token " +
                    (content ? JsonValueString(*content) : std::string("?")) +
                    " (matched in text before BPE)");
      }
    }
  }
  return t;
}

const BpeTokenizer::Merge* BpeTokenizer::FindMerge(int32_t left, int32_t right) const {
  const auto it = merges_.find(static_cast<uint64_t>(left) << 32 | static_cast<uint32_t>(right));
  return it == merges_.end() ? nullptr : &it->second;
}

// Hugging Face's Word::merge_all without dropout: repeatedly merge the adjacent
// pair of lowest rank, the leftmost of equal ranks. A queue holds candidate
// pairs by (rank, left position); a candidate whose pair has changed since it
// was queued is skipped.
void BpeTokenizer::EncodePreToken(const char* bytes, size_t size, std::vector<int32_t>& ids) const {
  constexpr size_t kNone = std::numeric_limits<size_t>::max();
  struct Symbol {
    int32_t id;   // -1 once merged into the symbol on its left
    size_t prev;  // kNone at the ends
    size_t next;
  };
  std::vector<Symbol> symbols(size);  // [size]: one per byte at first
  for (size_t i = 0; i < size; ++i) {
    symbols[i] = {byte_ids_[static_cast<unsigned char>(bytes[i])], i == 0 ? kNone : i - 1,
                  i + 1 < size ? i + 1 : kNone};
  }
  struct Candidate {
    int32_t rank;
    size_t pos;  // the left symbol
    int32_t id;  // what the pair merges into
  };
  const auto later = [](const Candidate& a, const Candidate& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(later)> queue(later);
  const auto push = [&](size_t pos) {
    const size_t next = symbols[pos].next;
    if (next == kNone) return;
    if (const Merge* m = FindMerge(symbols[pos].id, symbols[next].id)) {
      queue.push({m->rank, pos, m->id});
    }
  };
  for (size_t i = 0; i + 1 < size; ++i) push(i);

  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (left.id < 0 || left.next == kNone) continue;
    Symbol& right = symbols[left.next];
    const Merge* m = FindMerge(left.id, right.id);
    if (m == nullptr || m->id != top.id) continue;  // stale
    left.id = top.id;
    right.id = -1;
    left.next = right.next;
    if (right.next != kNone) symbols[right.next].prev = top.pos;
    if (left.prev != kNone) push(left.prev);
    push(top.pos);
  }
  for (size_t pos = 0; pos != kNone; pos = symbols[pos].next) ids.push_back(symbols[pos].id);
}

std::vector<int32_t> BpeTokenizer::Encode(const std::string& utf8_text) const {
  std::vector<char32_t> code_points;  // [n]
  std::vector<size_t> starts;         // [n + 1] byte offsets into utf8_text
  DecodeUtf8(utf8_text, code_points, starts);
  std::vector<int32_t> ids;
  if (code_points.empty()) return ids;

  // ByteLevel's add_prefix_space: a space in front unless the text starts with one.
  std::string prefixed;
  const std::string* text = &utf8_text;
  if (add_prefix_space_ && code_points[0] != ' ') {
    prefixed = " " + utf8_text;
    text = &prefixed;
    code_points.insert(code_points.begin(), ' ');
    for (size_t& s : starts) ++s;
    starts.insert(starts.begin(), 0);
  }

  if (!use_regex_) {
    EncodePreToken(text->data(), text->size(), ids);
    return ids;
  }
  std::vector<CharClass> cls(code_points.size());  // [n]
  std::transform(code_points.begin(), code_points.end(), cls.begin(), ClassOf);
  for (size_t i = 0; i < code_points.size();) {
    const size_t end = Gpt2MatchEnd(code_points, cls, i);
    EncodePreToken(text->data() + starts[i], starts[end] - starts[i], ids);
    i = end;
  }
  return ids;
}

}  // namespace convert
}  // namespace octet
