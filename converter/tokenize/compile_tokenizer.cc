#include "tokenize/compile_tokenizer.h"

#include "tokenize/chat_template_check.h"

#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "import/error.h"
#include "import/json_util.h"
#include "text/precompiled.h"
#include "text/regex.h"
#include "text/tok_tables.h"
#include "text/tokenizer.h"
#include "text/tokenizer_check.h"
#include "core/utf8.h"
#include "tokenize/chat_template_check.h"

namespace octet {
namespace convert {
namespace {

using nlohmann::json;

[[noreturn]] void Unsupported(const std::string& what) {
  Fail("tokenizer.json: ", what, " is not supported");
}

const json* Member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::string TypeOf(const json& object) {
  const json* type = Member(object, "type");
  return type != nullptr && type->is_string() ? type->get<std::string>() : std::string("?");
}

bool Bool(const json& object, const char* key, bool fallback, const std::string& where) {
  const json* v = Member(object, key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) Fail("tokenizer.json: ", where, ".", key, " must be true or false");
  return v->get<bool>();
}

std::string String(const json& object, const char* key, const std::string& fallback,
                   const std::string& where) {
  const json* v = Member(object, key);
  if (v == nullptr) return fallback;
  if (!v->is_string()) Fail("tokenizer.json: ", where, ".", key, " must be a string");
  return v->get<std::string>();
}

// A Replace / Split pattern: {"String": s} or {"Regex": r}.
void Pattern(const json& object, const std::string& where, std::string* pattern, bool* is_regex) {
  const json* p = Member(object, "pattern");
  if (p == nullptr || !p->is_object()) Fail("tokenizer.json: ", where, " has no pattern");
  if (const json* s = Member(*p, "String"); s && s->is_string()) {
    *pattern = s->get<std::string>();
    *is_regex = false;
    return;
  }
  if (const json* r = Member(*p, "Regex"); r && r->is_string()) {
    *pattern = r->get<std::string>();
    *is_regex = true;
    text::Regex regex;
    const Status st = regex.Compile(*pattern);
    if (!st.ok()) Fail("tokenizer.json: ", where, " regex ", json(*pattern).dump(), " is not supported: ", st.message());
    return;
  }
  Fail("tokenizer.json: ", where, " pattern must be {\"String\": ...} or {\"Regex\": ...}");
}

// Flattens nested Sequences: `key` names the member list ("normalizers", ...).
void Flatten(const json& node, const char* key, std::vector<const json*>& out) {
  if (TypeOf(node) == "Sequence") {
    const json* list = Member(node, key);
    if (list == nullptr || !list->is_array()) Fail("tokenizer.json: a Sequence without ", key);
    for (const json& m : *list) Flatten(m, key, out);
    return;
  }
  out.push_back(&node);
}

uint32_t Codepoint(const std::string& s, const std::string& where) {
  size_t i = 0;
  if (s.empty() || !Utf8IsValid(s.data(), s.size())) Fail("tokenizer.json: ", where, " must be one character");
  const uint32_t c = Utf8Decode(s.data(), &i);
  if (i != s.size()) Fail("tokenizer.json: ", where, " must be one character");
  return c;
}

fb::PrependScheme Scheme(const json& node, const std::string& where) {
  if (const json* p = Member(node, "prepend_scheme")) {
    const std::string s = p->is_string() ? p->get<std::string>() : "";
    if (s == "always") return fb::PrependScheme::Always;
    if (s == "first") return fb::PrependScheme::First;
    if (s == "never") return fb::PrependScheme::Never;
    Fail("tokenizer.json: ", where, ".prepend_scheme ", JsonValueString(*p), " is not known");
  }
  // Older files: add_prefix_space true = always.
  return Bool(node, "add_prefix_space", true, where) ? fb::PrependScheme::Always
                                                     : fb::PrependScheme::Never;
}

fb::SplitBehavior Behavior(const json& node, const std::string& where) {
  const std::string b = String(node, "behavior", "Isolated", where);
  const std::string l = [&] {
    std::string x;
    for (char c : b) x += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return x;
  }();
  if (l == "removed") return fb::SplitBehavior::Removed;
  if (l == "isolated") return fb::SplitBehavior::Isolated;
  if (l == "mergedwithprevious" || l == "merged_with_previous") return fb::SplitBehavior::MergedWithPrevious;
  if (l == "mergedwithnext" || l == "merged_with_next") return fb::SplitBehavior::MergedWithNext;
  if (l == "contiguous") return fb::SplitBehavior::Contiguous;
  Fail("tokenizer.json: ", where, ".behavior ", json(b).dump(), " is not known");
}

// GPT-2's byte characters: the raw bytes a byte-level token stands for; false
// when a character is not one of them.
bool ByteLevelBytes(const std::string& token, std::string* raw) {
  static const auto inverse = [] {
    std::unordered_map<uint32_t, uint8_t> m;
    uint32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      m[printable ? static_cast<uint32_t>(b) : next++] = static_cast<uint8_t>(b);
    }
    return m;
  }();
  raw->clear();
  if (!Utf8IsValid(token.data(), token.size())) return false;
  for (size_t i = 0; i < token.size();) {
    const uint32_t c = Utf8Decode(token.data(), &i);
    const auto it = inverse.find(c);
    if (it == inverse.end()) return false;
    raw->push_back(static_cast<char>(it->second));
  }
  return true;
}

std::string ByteLevelChar(uint8_t b) {
  uint32_t next = 0x100, c = 0;
  for (int x = 0; x < 256; ++x) {
    const bool printable = (x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE;
    const uint32_t cx = printable ? static_cast<uint32_t>(x) : next++;
    if (x == b) c = cx;
  }
  char buf[4];
  return std::string(buf, Utf8Encode(c, buf));
}

std::string HexByteToken(uint8_t b) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "<0x%02X>", b);
  return buf;
}

}  // namespace

std::vector<uint32_t> BuildTokIndex(const std::vector<std::pair<std::string, int32_t>>& keys,
                                    uint32_t* max_key) {
  const uint32_t slots = text::TokSlotsFor(keys.size());
  std::vector<uint32_t> index(1 + static_cast<size_t>(slots), 0);
  index[0] = slots;
  std::vector<const std::string*> slot_key(slots, nullptr);
  *max_key = 0;
  for (const auto& [key, id] : keys) {
    *max_key = std::max<uint32_t>(*max_key, static_cast<uint32_t>(key.size()));
    uint32_t i = text::TokHash(reinterpret_cast<const uint8_t*>(key.data()), key.size()) & (slots - 1);
    while (slot_key[i] != nullptr && *slot_key[i] != key) i = (i + 1) & (slots - 1);
    slot_key[i] = &key;
    index[1 + i] = static_cast<uint32_t>(id) + 1;
  }
  return index;
}

namespace {

std::vector<uint32_t> BuildIndex(const std::vector<std::pair<std::string, int32_t>>& keys,
                                 uint32_t* max_key) {
  return BuildTokIndex(keys, max_key);
}

struct Vocab {
  std::map<int32_t, std::string> by_id;               // the model's tokens
  std::unordered_map<std::string, int32_t> by_token;  // token -> id (last wins)
  int32_t Id(const std::string& token) const {
    const auto it = by_token.find(token);
    return it == by_token.end() ? -1 : it->second;
  }
};

int32_t JsonId(const json& v, const std::string& where) {
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= (1 << 24)) {
    Fail("tokenizer.json: ", where, " = ", JsonValueString(v), " is not a token id");
  }
  return static_cast<int32_t>(v.get<int64_t>());
}

// One BPE merge: the ids of its halves, its rank and the id of the merged token.
struct BpeMergeEntry {
  uint32_t left, right, rank, merged;
};

// model.merges ("left right" strings or [left, right] pairs) as ids; a pair
// listed twice keeps its last rank, as in tokenizers' merge map.
std::vector<BpeMergeEntry> ReadBpeMerges(const json& model, size_t prefix_len, const Vocab& vocab) {
  const json* merges = Member(model, "merges");
  if (merges == nullptr || !merges->is_array()) Fail("tokenizer.json: model.merges is missing");
  std::vector<BpeMergeEntry> entries;
  std::unordered_map<uint64_t, size_t> seen;
  for (size_t rank = 0; rank < merges->size(); ++rank) {
    const json& e = (*merges)[rank];
    std::string a, b;
    if (e.is_string()) {
      const std::string s = e.get<std::string>();
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
        Fail("tokenizer.json: model.merges[", rank, "] = ", JsonValueString(e), " is not \"left right\"");
      }
      a = s.substr(0, space);
      b = s.substr(space + 1);
    } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
      a = e[0].get<std::string>();
      b = e[1].get<std::string>();
    } else {
      Fail("tokenizer.json: model.merges[", rank, "] = ", JsonValueString(e), " is not \"left right\" or [left, right]");
    }
    if (b.size() < prefix_len) Fail("tokenizer.json: model.merges[", rank, "]: the right part is shorter than the subword prefix");
    const std::string merged = a + b.substr(prefix_len);
    const int32_t ia = vocab.Id(a), ib = vocab.Id(b), im = vocab.Id(merged);
    for (const auto& [tok, id] : {std::pair{a, ia}, std::pair{b, ib}, std::pair{merged, im}}) {
      if (id < 0) Fail("tokenizer.json: model.merges[", rank, "]: ", json(tok).dump(), " is not in the vocab");
    }
    const uint64_t key = static_cast<uint64_t>(ia) << 32 | static_cast<uint32_t>(ib);
    const BpeMergeEntry entry{static_cast<uint32_t>(ia), static_cast<uint32_t>(ib), static_cast<uint32_t>(rank), static_cast<uint32_t>(im)};
    const auto it = seen.find(key);
    if (it != seen.end()) {
      entries[it->second] = entry;
    } else {
      seen[key] = entries.size();
      entries.push_back(entry);
    }
  }
  return entries;
}

// The merges as the runtime's open-addressing table: [slots], then per slot
// left, right, rank, merged (text::TokPairHash, at most three quarters full).
std::vector<uint32_t> BpeMergeTable(const std::vector<BpeMergeEntry>& entries) {
  uint32_t slots = 16;
  while (static_cast<uint64_t>(slots) * 3 < static_cast<uint64_t>(entries.size()) * 4 + 4) slots <<= 1;
  std::vector<uint32_t> table(1 + 4 * static_cast<size_t>(slots), 0);
  table[0] = slots;
  for (uint32_t i = 0; i < slots; ++i) table[1 + 4 * static_cast<size_t>(i)] = text::kTokEmptyPair;
  for (const BpeMergeEntry& e : entries) {
    uint32_t i = text::TokPairHash(e.left, e.right) & (slots - 1);
    while (table[1 + 4 * static_cast<size_t>(i)] != text::kTokEmptyPair) i = (i + 1) & (slots - 1);
    uint32_t* s = &table[1 + 4 * static_cast<size_t>(i)];
    s[0] = e.left;
    s[1] = e.right;
    s[2] = e.rank;
    s[3] = e.merged;
  }
  return table;
}

void CompileBpeModel(const json& model, bool byte_level, const std::string& unk_token,
                     fb::TokModelT& m, const Vocab& vocab) {
  const std::string where = "model";
  m.kind = fb::TokModelKind::Bpe;
  if (const json* d = Member(model, "dropout")) {
    if (!d->is_number() || d->get<double>() != 0.0) Unsupported("model BPE dropout");
  }
  m.byte_fallback = Bool(model, "byte_fallback", false, where);
  m.fuse_unk = Bool(model, "fuse_unk", false, where);
  m.ignore_merges = Bool(model, "ignore_merges", false, where);
  m.continuing_subword_prefix = String(model, "continuing_subword_prefix", "", where);
  m.end_of_word_suffix = String(model, "end_of_word_suffix", "", where);
  // tokenizers looks the unk token up when a character is unknown: absent = error there.
  if (!unk_token.empty() && m.unk_id < 0) {
    Fail("tokenizer.json: model.unk_token ", json(unk_token).dump(), " is not in the vocab");
  }
  if (byte_level && (!m.continuing_subword_prefix.empty() || !m.end_of_word_suffix.empty())) {
    Unsupported("model BPE with a ByteLevel pre_tokenizer and a subword prefix or suffix");
  }
  m.byte_level = byte_level;
  if (byte_level || m.byte_fallback) {
    m.byte_ids.assign(256, -1);
    for (int b = 0; b < 256; ++b) {
      m.byte_ids[b] = vocab.Id(byte_level ? ByteLevelChar(static_cast<uint8_t>(b))
                                          : HexByteToken(static_cast<uint8_t>(b)));
    }
  }
  m.merges = BpeMergeTable(ReadBpeMerges(model, m.continuing_subword_prefix.size(), vocab));
}

void CompileUnigramModel(const json& model, const json* v, fb::TokModelT& m, Vocab& vocab) {
  m.kind = fb::TokModelKind::Unigram;
  if (v == nullptr || !v->is_array()) Fail("tokenizer.json: model.vocab must be a list of [piece, score]");
  double min_score = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < v->size(); ++i) {
    const json& e = (*v)[i];
    if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number()) {
      Fail("tokenizer.json: model.vocab[", i, "] is not [piece, score]");
    }
    vocab.by_id[static_cast<int32_t>(i)] = e[0].get<std::string>();
    vocab.by_token[e[0].get<std::string>()] = static_cast<int32_t>(i);
    m.scores_f64.push_back(e[1].get<double>());
    m.scores.push_back(static_cast<float>(e[1].get<double>()));
    min_score = std::min(min_score, e[1].get<double>());
  }
  if (v->empty()) Fail("tokenizer.json: model.vocab is empty");
  m.unk_score = min_score - 10.0;
  if (const json* u = Member(model, "unk_id")) m.unk_id = JsonId(*u, "model.unk_id");
  m.byte_fallback = Bool(model, "byte_fallback", false, "model");
  m.fuse_unk = true;
  if (m.byte_fallback) {
    m.byte_ids.assign(256, -1);
    for (int b = 0; b < 256; ++b) m.byte_ids[b] = vocab.Id(HexByteToken(static_cast<uint8_t>(b)));
  }
}

// The index: every model token as the model matches it.
void IndexModelTokens(bool byte_level, fb::TokModelT& m, const Vocab& vocab) {
  std::vector<std::pair<std::string, int32_t>> keys;
  if (m.kind == fb::TokModelKind::Unigram) {
    for (const auto& [id, token] : vocab.by_id) keys.push_back({token, id});
  } else {
    for (const auto& [token, id] : vocab.by_token) {
      if (!byte_level) {
        keys.push_back({token, id});
        continue;
      }
      std::string raw;
      if (ByteLevelBytes(token, &raw)) keys.push_back({raw, id});
    }
  }
  m.index = BuildIndex(keys, &m.max_token_bytes);
}

void CompileModel(const json& model, bool byte_level, fb::TokenizerSpecT& spec, Vocab& vocab) {
  auto m = std::make_unique<fb::TokModelT>();
  const std::string type = TypeOf(model);
  const std::string where = "model";
  const json* v = Member(model, "vocab");
  std::string unk_token;
  if (type == "BPE" || type == "WordPiece" || type == "WordLevel") {
    if (v == nullptr || !v->is_object()) Fail("tokenizer.json: model.vocab must be an object of token -> id");
    for (const auto& [token, id] : v->items()) {
      const int32_t i = JsonId(id, "model.vocab[" + json(token).dump() + "]");
      vocab.by_id[i] = token;
      vocab.by_token[token] = i;
    }
    unk_token = String(model, "unk_token", "", where);
    if (!unk_token.empty()) m->unk_id = vocab.Id(unk_token);
    if (!unk_token.empty() && m->unk_id < 0 && type != "BPE") {
      Fail("tokenizer.json: model.unk_token ", json(unk_token).dump(), " is not in the vocab");
    }
  }
  if (type == "BPE") {
    CompileBpeModel(model, byte_level, unk_token, *m, vocab);
  } else if (type == "WordPiece") {
    m->kind = fb::TokModelKind::WordPiece;
    m->continuing_subword_prefix = String(model, "continuing_subword_prefix", "##", where);
    if (const json* mx = Member(model, "max_input_chars_per_word")) {
      if (!mx->is_number_unsigned()) Fail("tokenizer.json: model.max_input_chars_per_word must be a count");
      m->max_input_chars_per_word = static_cast<uint32_t>(std::min<uint64_t>(mx->get<uint64_t>(), 0xFFFFFFFFu));
    }
  } else if (type == "WordLevel") {
    m->kind = fb::TokModelKind::WordLevel;
  } else if (type == "Unigram") {
    CompileUnigramModel(model, v, *m, vocab);
  } else {
    Unsupported("model " + type);
  }
  IndexModelTokens(byte_level, *m, vocab);
  spec.model = std::move(m);
}

std::vector<uint8_t> Base64(const std::string& text, const std::string& where) {
  std::vector<uint8_t> out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+') v = 62;
    else if (c == '/') v = 63;
    else if (c == '=') break;
    else Fail("tokenizer.json: ", where, ": the charsmap is not base64");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>(acc >> bits));
      acc &= (1u << bits) - 1;
    }
  }
  return out;
}

void CompileNormalizers(const json& root, fb::TokenizerSpecT& spec) {
  const json* n = Member(root, "normalizer");
  if (n == nullptr) return;
  std::vector<const json*> steps;
  Flatten(*n, "normalizers", steps);
  for (const json* s : steps) {
    auto step = std::make_unique<fb::NormalizerStepT>();
    const std::string type = TypeOf(*s);
    const std::string where = "normalizer " + type;
    if (type == "NFC") step->kind = fb::NormalizerKind::NFC;
    else if (type == "NFD") step->kind = fb::NormalizerKind::NFD;
    else if (type == "NFKC") step->kind = fb::NormalizerKind::NFKC;
    else if (type == "NFKD") step->kind = fb::NormalizerKind::NFKD;
    else if (type == "Lowercase") step->kind = fb::NormalizerKind::Lowercase;
    else if (type == "StripAccents") step->kind = fb::NormalizerKind::StripAccents;
    else if (type == "BertNormalizer") {
      step->kind = fb::NormalizerKind::Bert;
      step->bert_clean_text = Bool(*s, "clean_text", true, where);
      step->bert_handle_chinese_chars = Bool(*s, "handle_chinese_chars", true, where);
      step->bert_lowercase = Bool(*s, "lowercase", true, where);
      step->bert_strip_accents = Bool(*s, "strip_accents", step->bert_lowercase, where);
    } else if (type == "Replace") {
      step->kind = fb::NormalizerKind::Replace;
      Pattern(*s, where, &step->pattern, &step->pattern_is_regex);
      step->content = String(*s, "content", "", where);
    } else if (type == "Prepend") {
      step->kind = fb::NormalizerKind::Prepend;
      step->content = String(*s, "prepend", "", where);
    } else if (type == "Precompiled") {
      step->kind = fb::NormalizerKind::Precompiled;
      const std::string b64 = String(*s, "precompiled_charsmap", "", where);
      step->charsmap = Base64(b64, where);
      const Status st = text::CheckCharsmap(step->charsmap.data(), step->charsmap.size());
      if (!st.ok()) Fail("tokenizer.json: ", where, ": ", st.message());
    } else if (type == "Strip") {
      step->kind = fb::NormalizerKind::Strip;
      step->strip_left = Bool(*s, "strip_left", false, where);
      step->strip_right = Bool(*s, "strip_right", false, where);
    } else {
      Unsupported("normalizer " + type);
    }
    spec.normalizers.push_back(std::move(step));
  }
}

// Returns whether the last pre-tokenizer is ByteLevel.
bool CompilePreTokenizers(const json& root, fb::TokenizerSpecT& spec) {
  const json* p = Member(root, "pre_tokenizer");
  if (p == nullptr) return false;
  std::vector<const json*> steps;
  Flatten(*p, "pretokenizers", steps);
  bool byte_level = false;
  for (size_t k = 0; k < steps.size(); ++k) {
    const json& s = *steps[k];
    auto step = std::make_unique<fb::PreTokenizerStepT>();
    const std::string type = TypeOf(s);
    const std::string where = "pre_tokenizer " + type;
    if (type == "ByteLevel") {
      if (k + 1 != steps.size()) Unsupported("pre_tokenizer ByteLevel before other pre-tokenizers");
      step->kind = fb::PreTokenizerKind::ByteLevel;
      step->add_prefix_space = Bool(s, "add_prefix_space", true, where);
      step->use_regex = Bool(s, "use_regex", true, where);
      byte_level = true;
    } else if (type == "Split") {
      step->kind = fb::PreTokenizerKind::Split;
      Pattern(s, where, &step->pattern, &step->pattern_is_regex);
      step->behavior = Behavior(s, where);
      step->invert = Bool(s, "invert", false, where);
    } else if (type == "Metaspace") {
      step->kind = fb::PreTokenizerKind::Metaspace;
      step->replacement = String(s, "replacement", "\xE2\x96\x81", where);
      Codepoint(step->replacement, where + ".replacement");
      step->prepend_scheme = Scheme(s, where);
      step->split = Bool(s, "split", true, where);
    } else if (type == "BertPreTokenizer") {
      step->kind = fb::PreTokenizerKind::Bert;
    } else if (type == "Whitespace") {
      step->kind = fb::PreTokenizerKind::Whitespace;
    } else if (type == "WhitespaceSplit") {
      step->kind = fb::PreTokenizerKind::WhitespaceSplit;
    } else if (type == "Digits") {
      step->kind = fb::PreTokenizerKind::Digits;
      step->individual_digits = Bool(s, "individual_digits", false, where);
    } else if (type == "Punctuation") {
      step->kind = fb::PreTokenizerKind::Punctuation;
      step->behavior = Behavior(s, where);
    } else if (type == "CharDelimiterSplit") {
      step->kind = fb::PreTokenizerKind::CharDelimiter;
      step->delimiter = Codepoint(String(s, "delimiter", "", where), where + ".delimiter");
    } else {
      Unsupported("pre_tokenizer " + type);
    }
    spec.pre_tokenizers.push_back(std::move(step));
  }
  return byte_level;
}

void CompileDecoders(const json& root, fb::TokenizerSpecT& spec) {
  const json* d = Member(root, "decoder");
  if (d == nullptr) return;
  std::vector<const json*> steps;
  Flatten(*d, "decoders", steps);
  for (const json* s : steps) {
    auto step = std::make_unique<fb::DecoderStepT>();
    const std::string type = TypeOf(*s);
    const std::string where = "decoder " + type;
    if (type == "ByteLevel") {
      step->kind = fb::DecoderKind::ByteLevel;
    } else if (type == "Metaspace") {
      step->kind = fb::DecoderKind::Metaspace;
      step->replacement = String(*s, "replacement", "\xE2\x96\x81", where);
      Codepoint(step->replacement, where + ".replacement");
      step->prepend_scheme = Scheme(*s, where);
    } else if (type == "WordPiece") {
      step->kind = fb::DecoderKind::WordPiece;
      step->prefix = String(*s, "prefix", "##", where);
      step->cleanup = Bool(*s, "cleanup", true, where);
    } else if (type == "ByteFallback") {
      step->kind = fb::DecoderKind::ByteFallback;
    } else if (type == "Fuse") {
      step->kind = fb::DecoderKind::Fuse;
    } else if (type == "Strip") {
      step->kind = fb::DecoderKind::Strip;
      step->content = String(*s, "content", " ", where);
      Codepoint(step->content, where + ".content");
      const json* a = Member(*s, "start");
      const json* b = Member(*s, "stop");
      step->start = a && a->is_number_unsigned() ? static_cast<uint32_t>(std::min<uint64_t>(a->get<uint64_t>(), 1u << 20)) : 0;
      step->stop = b && b->is_number_unsigned() ? static_cast<uint32_t>(std::min<uint64_t>(b->get<uint64_t>(), 1u << 20)) : 0;
    } else if (type == "Replace") {
      step->kind = fb::DecoderKind::Replace;
      bool regex = false;
      Pattern(*s, where, &step->pattern, &regex);
      if (regex) Unsupported("decoder Replace with a regex");
      step->content = String(*s, "content", "", where);
    } else if (type == "BPEDecoder") {
      step->kind = fb::DecoderKind::BpeSuffix;
      step->prefix = String(*s, "suffix", "</w>", where);
    } else {
      Unsupported("decoder " + type);
    }
    spec.decoders.push_back(std::move(step));
  }
}

std::unique_ptr<fb::TemplateItemT> Special(const std::vector<int32_t>& ids, uint32_t type_id) {
  auto item = std::make_unique<fb::TemplateItemT>();
  item->kind = fb::TemplateItemKind::SpecialToken;
  item->ids = ids;
  item->type_id = type_id;
  return item;
}

std::unique_ptr<fb::TemplateItemT> Sequence(fb::TemplateItemKind kind, uint32_t type_id) {
  auto item = std::make_unique<fb::TemplateItemT>();
  item->kind = kind;
  item->type_id = type_id;
  return item;
}

void CompilePostProcessor(const json& root, fb::TokenizerSpecT& spec) {
  const json* p = Member(root, "post_processor");
  if (p == nullptr) return;
  std::vector<const json*> steps;
  Flatten(*p, "processors", steps);
  bool have = false;
  for (const json* s : steps) {
    const std::string type = TypeOf(*s);
    const std::string where = "post_processor " + type;
    if (type == "ByteLevel") continue;  // offsets only
    if (have) Unsupported("post_processor Sequence of several templates");
    have = true;
    const auto pair_of = [&](const char* key) {
      const json* v = Member(*s, key);
      if (v == nullptr || !v->is_array() || v->size() != 2 || !(*v)[1].is_number_integer()) {
        Fail("tokenizer.json: ", where, ".", key, " must be [token, id]");
      }
      return JsonId((*v)[1], where + "." + key);
    };
    if (type == "BertProcessing" || type == "RobertaProcessing") {
      const int32_t cls = pair_of("cls"), sep = pair_of("sep");
      spec.template_single.push_back(Special({cls}, 0));
      spec.template_single.push_back(Sequence(fb::TemplateItemKind::SequenceA, 0));
      spec.template_single.push_back(Special({sep}, 0));
      spec.template_pair.push_back(Special({cls}, 0));
      spec.template_pair.push_back(Sequence(fb::TemplateItemKind::SequenceA, 0));
      spec.template_pair.push_back(Special({sep}, 0));
      if (type == "RobertaProcessing") spec.template_pair.push_back(Special({sep}, 0));
      spec.template_pair.push_back(Sequence(fb::TemplateItemKind::SequenceB, type == "RobertaProcessing" ? 0 : 1));
      spec.template_pair.push_back(Special({sep}, type == "RobertaProcessing" ? 0 : 1));
    } else if (type == "TemplateProcessing") {
      const json* tokens = Member(*s, "special_tokens");
      const auto ids_of = [&](const std::string& name) {
        const json* t = tokens ? Member(*tokens, name.c_str()) : nullptr;
        const json* ids = t ? Member(*t, "ids") : nullptr;
        if (ids == nullptr || !ids->is_array()) Fail("tokenizer.json: ", where, ": special token ", json(name).dump(), " has no ids");
        std::vector<int32_t> out;
        for (const json& id : *ids) out.push_back(JsonId(id, where + " special token ids"));
        return out;
      };
      const auto items = [&](const char* key, std::vector<std::unique_ptr<fb::TemplateItemT>>& out) {
        const json* list = Member(*s, key);
        if (list == nullptr || !list->is_array()) Fail("tokenizer.json: ", where, ".", key, " must be a list");
        for (const json& item : *list) {
          if (const json* st = Member(item, "SpecialToken")) {
            const json* tid = Member(*st, "type_id");
            out.push_back(Special(ids_of(String(*st, "id", "", where)), tid && tid->is_number_unsigned() ? tid->get<uint32_t>() : 0));
          } else if (const json* sq = Member(item, "Sequence")) {
            const std::string id = String(*sq, "id", "A", where);
            const json* tid = Member(*sq, "type_id");
            out.push_back(Sequence(id == "B" ? fb::TemplateItemKind::SequenceB : fb::TemplateItemKind::SequenceA,
                                   tid && tid->is_number_unsigned() ? tid->get<uint32_t>() : 0));
          } else {
            Fail("tokenizer.json: ", where, ".", key, ": an item is neither SpecialToken nor Sequence");
          }
        }
      };
      items("single", spec.template_single);
      items("pair", spec.template_pair);
    } else {
      Unsupported("post_processor " + type);
    }
  }
}

// tokenizer_config's bos_token / eos_token: a string or an AddedToken-like object.
std::string ConfigToken(const json& config, const char* key) {
  const json* v = Member(config, key);
  if (v == nullptr) return "";
  if (v->is_string()) return v->get<std::string>();
  if (const json* c = Member(*v, "content"); c && c->is_string()) return c->get<std::string>();
  return "";
}

void AddEos(const json& config, std::vector<int32_t>& eos, const char* where) {
  const json* v = Member(config, "eos_token_id");
  if (v == nullptr) return;
  const auto add = [&](const json& id) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= (1 << 24)) {
      Fail(where, ": eos_token_id ", JsonValueString(id), " is not a token id");
    }
    const int32_t i = static_cast<int32_t>(id.get<int64_t>());
    for (int32_t e : eos) {
      if (e == i) return;
    }
    eos.push_back(i);
  };
  if (v->is_array()) {
    for (const json& id : *v) add(id);
  } else {
    add(*v);
  }
}

// The normalized form of the `normalized` added tokens: their content through
// the compiled normalizers, run by the runtime itself.
void NormalizeAddedTokens(fb::TokenizerSpecT& spec) {
  if (spec.normalizers.empty()) return;
  bool any = false;
  for (const auto& a : spec.added_tokens) any = any || a->normalized;
  if (!any) return;
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(fb::TokenizerSpec::Pack(fbb, &spec));
  const auto* packed = flatbuffers::GetRoot<fb::TokenizerSpec>(fbb.GetBufferPointer());
  text::Tokenizer tokenizer;
  Status st = tokenizer.Init(packed);
  if (!st.ok()) Fail("tokenizer.json: ", st.message());
  for (auto& a : spec.added_tokens) {
    if (!a->normalized) continue;
    text::TokenizerWorkspace ws;
    st = tokenizer.CreateWorkspace(a->content.size(), 1, &ws);
    if (!st.ok()) Fail("tokenizer.json: ", st.message());
    const char* out = nullptr;
    size_t n = 0;
    st = tokenizer.Normalize(a->content.data(), a->content.size(), ws, &out, &n);
    if (!st.ok()) Fail("tokenizer.json: added token ", json(a->content).dump(), ": ", st.message());
    a->normalized_content.assign(out, n);
  }
}

}  // namespace

std::unique_ptr<fb::TokenizerSpecT> CompileTokenizer(const TokenizerSources& sources) {
  const json& root = sources.tokenizer;
  if (!root.is_object()) Fail("tokenizer.json: not a JSON object");
  if (Member(root, "truncation") != nullptr) Unsupported("truncation");
  if (const json* padding = Member(root, "padding")) {
    const json* strategy = Member(*padding, "strategy");
    if (strategy == nullptr || !(strategy->is_string() && strategy->get<std::string>() == "BatchLongest")) {
      Unsupported("padding to a fixed length");
    }
  }
  auto spec = std::make_unique<fb::TokenizerSpecT>();
  CompileNormalizers(root, *spec);
  const bool byte_level = CompilePreTokenizers(root, *spec);
  const json* model = Member(root, "model");
  if (model == nullptr || !model->is_object()) Fail("tokenizer.json: model is missing");
  if (byte_level && TypeOf(*model) != "BPE") Unsupported("pre_tokenizer ByteLevel with model " + TypeOf(*model));
  Vocab vocab;
  CompileModel(*model, byte_level, *spec, vocab);
  CompileDecoders(root, *spec);
  CompilePostProcessor(root, *spec);

  // The id space: the model's tokens and the added tokens (which win for decode).
  std::map<int32_t, std::string> strings = vocab.by_id;
  if (const json* added = Member(root, "added_tokens")) {
    if (!added->is_array()) Fail("tokenizer.json: added_tokens must be a list");
    for (size_t i = 0; i < added->size(); ++i) {
      const json& t = (*added)[i];
      const std::string where = "added_tokens[" + std::to_string(i) + "]";
      const json* id = Member(t, "id");
      if (id == nullptr) Fail("tokenizer.json: ", where, " has no id");
      auto a = std::make_unique<fb::AddedTokenT>();
      a->id = JsonId(*id, where + ".id");
      a->content = String(t, "content", "", where);
      a->special = Bool(t, "special", false, where);
      a->single_word = Bool(t, "single_word", false, where);
      a->lstrip = Bool(t, "lstrip", false, where);
      a->rstrip = Bool(t, "rstrip", false, where);
      a->normalized = Bool(t, "normalized", !a->special, where);
      strings[a->id] = a->content;
      spec->added_tokens.push_back(std::move(a));
    }
  }
  if (strings.empty()) Fail("tokenizer.json: the vocabulary is empty");
  fb::TokModelT& m = *spec->model;
  m.vocab_size = static_cast<uint32_t>(strings.rbegin()->first) + 1;
  m.vocab_offsets.assign(m.vocab_size + 1, 0);
  {
    uint32_t id = 0;
    for (const auto& [i, s] : strings) {
      while (id <= static_cast<uint32_t>(i)) m.vocab_offsets[id++] = static_cast<uint32_t>(m.vocab_bytes.size());
      m.vocab_bytes.insert(m.vocab_bytes.end(), s.begin(), s.end());
    }
    while (id <= m.vocab_size) m.vocab_offsets[id++] = static_cast<uint32_t>(m.vocab_bytes.size());
  }
  if (m.kind == fb::TokModelKind::Unigram) {
    m.scores_f64.resize(m.vocab_size, 0.0);
    m.scores.resize(m.vocab_size, 0.0f);
  }

  if (!sources.tokenizer_config.is_null()) {
    const json& tc = sources.tokenizer_config;
    if (const json* t = Member(tc, "chat_template"); t && !t->is_null()) {
      // A list of named templates: "default" is the one transformers renders.
      std::string note;
      spec->chat_template = SelectChatTemplate(*t, &note);
      // Refused here, with the construct and its line, rather than mis-rendered later.
      CheckChatTemplate(spec->chat_template);
    }
    spec->bos_token = ConfigToken(tc, "bos_token");
    spec->eos_token = ConfigToken(tc, "eos_token");
    if (const json* c = Member(tc, "clean_up_tokenization_spaces"); c && c->is_boolean()) {
      spec->clean_up_tokenization_spaces = c->get<bool>();
    }
  }
  if (!sources.config.is_null()) AddEos(sources.config, spec->eos_ids, "config.json");
  if (!sources.generation_config.is_null()) AddEos(sources.generation_config, spec->eos_ids, "generation_config.json");

  NormalizeAddedTokens(*spec);

  // What the loader will check, checked here so a refusal names the converter's input.
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(fb::TokenizerSpec::Pack(fbb, spec.get()));
  const Status st = text::CheckTokenizerSpec(*flatbuffers::GetRoot<fb::TokenizerSpec>(fbb.GetBufferPointer()), 0);
  if (!st.ok()) Fail("tokenizer.json: ", st.message());
  return spec;
}

}  // namespace convert
}  // namespace octet
