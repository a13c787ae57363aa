#include "tokenize/legacy.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "import/error.h"
#include "import/json_util.h"
#include "tokenize/compile_tokenizer.h"
#include "tokenize/marian_tokenizer.h"
#include "tokenize/sentencepiece_model.h"

namespace octet {
namespace convert {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const char kMetaspace[] = "\xE2\x96\x81";  // U+2581, SentencePiece's word boundary

// --- small helpers ---------------------------------------------------------------

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(path.filename().string(), ": cannot be opened");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string Base64(const std::string& bytes) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = uint32_t{static_cast<uint8_t>(bytes[i])} << 16 |
                       uint32_t{static_cast<uint8_t>(bytes[i + 1])} << 8 |
                       static_cast<uint8_t>(bytes[i + 2]);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < bytes.size()) {
    const bool two = i + 1 < bytes.size();
    const uint32_t v = uint32_t{static_cast<uint8_t>(bytes[i])} << 16 |
                       (two ? uint32_t{static_cast<uint8_t>(bytes[i + 1])} << 8 : 0);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += two ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// Python's str(x) split points: SentencePieceExtractor slices pieces by code
// point, so merges never cut a UTF-8 sequence.
std::vector<size_t> CodePointStarts(const std::string& s) {
  std::vector<size_t> starts;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<uint8_t>(s[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  return starts;
}

// --- tokenizer.json pieces, as the tokenizers library serializes them ------------

json Pattern(const std::string& s, bool regex) { return json{{regex ? "Regex" : "String", s}}; }
json ReplaceStep(const std::string& pattern, const std::string& content, bool regex = false) {
  return {{"type", "Replace"}, {"pattern", Pattern(pattern, regex)}, {"content", content}};
}
json Typed(const char* type) { return json{{"type", type}}; }
json Metaspace(const std::string& prepend_scheme, bool split) {
  return {{"type", "Metaspace"},
          {"replacement", kMetaspace},
          {"prepend_scheme", prepend_scheme},
          {"split", split}};
}
json ByteLevel(bool add_prefix_space, bool trim_offsets) {
  return {{"type", "ByteLevel"},
          {"add_prefix_space", add_prefix_space},
          {"trim_offsets", trim_offsets},
          {"use_regex", true}};
}

// One TemplateProcessing piece from transformers' string form: "$A:0",
// "[CLS]:0", "$B", "</s>" (no ":n" means type id 0).
json TemplatePiece(const std::string& text) {
  std::string name = text;
  int type_id = 0;
  const size_t colon = text.rfind(':');
  if (colon != std::string::npos && colon + 1 < text.size() &&
      std::all_of(text.begin() + colon + 1, text.end(),
                  [](char c) { return c >= '0' && c <= '9'; })) {
    name = text.substr(0, colon);
    type_id = std::stoi(text.substr(colon + 1));
  }
  if (!name.empty() && name[0] == '$') {
    const std::string seq = name.size() == 1 ? "A" : name.substr(1);
    return {{"Sequence", {{"id", seq}, {"type_id", type_id}}}};
  }
  return {{"SpecialToken", {{"id", name}, {"type_id", type_id}}}};
}

json Template(const std::vector<std::string>& single, const std::vector<std::string>& pair,
              const std::vector<std::pair<std::string, int64_t>>& specials) {
  json out = {{"type", "TemplateProcessing"}, {"single", json::array()}, {"pair", json::array()}};
  for (const auto& p : single) out["single"].push_back(TemplatePiece(p));
  for (const auto& p : pair) out["pair"].push_back(TemplatePiece(p));
  json tokens = json::object();
  for (const auto& [token, id] : specials) {
    tokens[token] = {{"id", token}, {"ids", {id}}, {"tokens", {token}}};
  }
  out["special_tokens"] = tokens;
  return out;
}

// --- added tokens ----------------------------------------------------------------

struct TokenSpec {
  std::string content;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
  bool special = true;
  // An AddedToken rather than a string (a config object, or the class wraps it,
  // as AlbertTokenizerFast does its mask): PreTrainedTokenizerFast adds it again
  // and tokenizers keeps its flags over those the converter gave the content.
  bool wrapped = false;
};

// The special-token attribute `key` of tokenizer_config.json: a string (with
// the class's default flags), an AddedToken object, null (no such token), or
// absent (the class default, when it has one).
std::optional<TokenSpec> ConfigToken(const json& config, const std::string& key,
                                     std::optional<std::string> fallback, TokenSpec flags) {
  const auto it = config.find(key);
  if (it == config.end()) {
    if (!fallback) return std::nullopt;
    flags.content = *fallback;
    return flags;
  }
  if (it->is_null()) return std::nullopt;
  if (it->is_string()) {
    flags.content = it->get<std::string>();
    return flags;
  }
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
    const json& o = *it;
    flags.content = o["content"].get<std::string>();
    flags.wrapped = true;
    auto flag = [&](const char* name, bool* value) {
      if (o.contains(name) && o[name].is_boolean()) *value = o[name].get<bool>();
    };
    flag("single_word", &flags.single_word);
    flag("lstrip", &flags.lstrip);
    flag("rstrip", &flags.rstrip);
    flag("normalized", &flags.normalized);
    return flags;
  }
  Fail("tokenizer_config.json: ", key, " = ", JsonValueString(*it), " is not a token");
}

// The model's vocabulary plus the added tokens, in the order transformers
// adds them (the first addition of a content wins, as in its fast tokenizer).
class Vocabulary {
 public:
  void SetModelToken(const std::string& token, int64_t id) {
    ids_[token] = id;
    next_id_ = std::max(next_id_, id + 1);
  }

  bool Has(const std::string& content) const { return added_index_.count(content) != 0; }

  // Adds `t`, or gives an added token of the same content t's flags when
  // `replace` (tokenizers' add_tokens keeps the last flags for an id).
  void Add(const TokenSpec& t, bool replace = false) {
    if (t.content.empty()) return;
    const json entry = {{"content", t.content},       {"single_word", t.single_word},
                        {"lstrip", t.lstrip},         {"rstrip", t.rstrip},
                        {"normalized", t.normalized}, {"special", t.special}};
    auto known = added_index_.find(t.content);
    if (known != added_index_.end()) {
      if (!replace) return;
      json& old = added_[known->second];
      for (const auto& [key, value] : entry.items()) old[key] = value;
      return;
    }
    auto it = ids_.find(t.content);
    const int64_t id = it != ids_.end() ? it->second : next_id_++;
    ids_[t.content] = id;
    added_index_[t.content] = added_.size();
    json with_id = entry;
    with_id["id"] = id;
    added_.push_back(with_id);
  }

  int64_t Id(const std::string& token, const char* what) const {
    auto it = ids_.find(token);
    if (it == ids_.end())
      Fail(what, ": token ", JsonValueString(token), " is not in the vocabulary");
    return it->second;
  }

  json AddedTokens() const {
    json list = added_;
    std::stable_sort(list.begin(), list.end(),
                     [](const json& a, const json& b) { return a["id"] < b["id"]; });
    return list;
  }

 private:
  std::unordered_map<std::string, int64_t> ids_;
  std::unordered_map<std::string, size_t> added_index_;  // content -> index in added_
  json added_ = json::array();
  int64_t next_id_ = 0;
};

// The special-token attributes, in transformers' SPECIAL_TOKENS_ATTRIBUTES order.
struct SpecialDefaults {
  std::optional<std::string> bos, eos, unk, sep, pad, cls, mask;
  std::vector<std::string> additional;
  TokenSpec flags;       // for all but the mask token
  TokenSpec mask_flags;  // the mask token (lstrip in RoBERTa-like classes)
};

struct SpecialTokens {
  std::optional<TokenSpec> bos, eos, unk, sep, pad, cls, mask;
  std::vector<TokenSpec> additional;
};

SpecialTokens ReadSpecialTokens(const json& config, const SpecialDefaults& d) {
  SpecialTokens s;
  s.bos = ConfigToken(config, "bos_token", d.bos, d.flags);
  s.eos = ConfigToken(config, "eos_token", d.eos, d.flags);
  s.unk = ConfigToken(config, "unk_token", d.unk, d.flags);
  s.sep = ConfigToken(config, "sep_token", d.sep, d.flags);
  s.pad = ConfigToken(config, "pad_token", d.pad, d.flags);
  s.cls = ConfigToken(config, "cls_token", d.cls, d.flags);
  s.mask = ConfigToken(config, "mask_token", d.mask, d.mask_flags);
  const auto it = config.find("additional_special_tokens");
  if (it != config.end() && it->is_array()) {
    for (size_t i = 0; i < it->size(); ++i) {
      const json holder = {{"t", (*it)[i]}};
      if (auto t = ConfigToken(holder, "t", std::nullopt, d.flags)) s.additional.push_back(*t);
    }
  } else {
    for (const std::string& a : d.additional) {
      TokenSpec t = d.flags;
      t.content = a;
      s.additional.push_back(t);
    }
  }
  return s;
}

bool IsSpecialContent(const SpecialTokens& s, const std::string& content) {
  for (const auto* t : {&s.bos, &s.eos, &s.unk, &s.sep, &s.pad, &s.cls, &s.mask}) {
    if (*t && (*t)->content == content) return true;
  }
  return std::any_of(s.additional.begin(), s.additional.end(),
                     [&](const TokenSpec& t) { return t.content == content; });
}

// What PreTrainedTokenizerFast.__init__ adds on top of the converter's tokens:
// tokenizer_config.json's added_tokens_decoder (newer checkpoints; by id, its
// flags win, special when flagged so or named by a special-token attribute),
// then the special-token attributes whose content is not added yet.
void AddFastTokenizerTokens(const json& config, const SpecialTokens& s, Vocabulary* vocab) {
  std::set<std::string> from_decoder;  // their attributes are those AddedTokens (from_pretrained)
  const auto it = config.find("added_tokens_decoder");
  if (it != config.end() && it->is_object()) {
    std::vector<std::pair<int64_t, TokenSpec>> tokens;
    for (const auto& [key, value] : it->items()) {
      int64_t id = -1;
      try {
        id = std::stoll(key);
      } catch (const std::exception&) {
        Fail("tokenizer_config.json: added_tokens_decoder key ", JsonValueString(key),
             " is not an id");
      }
      TokenSpec flags;
      flags.special = value.is_object() && value.value("special", false);
      std::optional<TokenSpec> t = ConfigToken(*it, key, std::nullopt, flags);
      if (!t) continue;
      t->special = t->special || IsSpecialContent(s, t->content);
      tokens.emplace_back(id, *t);
    }
    std::stable_sort(tokens.begin(), tokens.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [id, t] : tokens) {
      vocab->Add(t, /*replace=*/true);
      from_decoder.insert(t.content);
    }
  }
  // An AddedToken attribute is added again and its flags win over the
  // converter's (AlbertTokenizerFast's [MASK] takes lstrip); a plain string is
  // not added again when its content is.
  const auto replace = [&](const TokenSpec& t) { return t.wrapped && from_decoder.count(t.content) == 0; };
  for (const auto* t : {&s.bos, &s.eos, &s.unk, &s.sep, &s.pad, &s.cls, &s.mask}) {
    if (*t) vocab->Add(**t, replace(**t));
  }
  for (const TokenSpec& t : s.additional) vocab->Add(t, replace(t));
}

const std::string& Content(const std::optional<TokenSpec>& t, const char* name) {
  if (!t) Fail("tokenizer_config.json: the tokenizer needs a ", name);
  return t->content;
}

bool ConfigBool(const json& config, const char* key, bool fallback) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) {
    Fail("tokenizer_config.json: ", key, " = ", JsonValueString(*it), " is not a boolean");
  }
  return it->get<bool>();
}

json Assemble(const Vocabulary& vocab, json normalizer, json pre_tokenizer, json post_processor,
              json decoder, json model) {
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", vocab.AddedTokens()},
          {"normalizer", std::move(normalizer)},
          {"pre_tokenizer", std::move(pre_tokenizer)},
          {"post_processor", std::move(post_processor)},
          {"decoder", std::move(decoder)},
          {"model", std::move(model)}};
}

// --- WordPiece: vocab.txt (BertConverter) -----------------------------------------

json BertJson(const fs::path& dir, const json& config) {
  const fs::path path = dir / "vocab.txt";
  if (!fs::exists(path)) Fail("BertTokenizer: vocab.txt is missing");
  // transformers reads it in text mode: "\r\n" and "\r" end lines too.
  const std::string text = ReadText(path);
  Vocabulary vocab;
  json model_vocab = json::object();
  int64_t index = 0;
  std::string token;
  for (size_t i = 0; i <= text.size(); ++i) {
    const bool end = i == text.size();
    if (!end && text[i] != '\n' && text[i] != '\r') {
      token += text[i];
      continue;
    }
    if (end && token.empty()) break;
    model_vocab[token] = index;
    vocab.SetModelToken(token, index);
    ++index;
    token.clear();
    if (!end && text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
  }
  if (model_vocab.empty()) Fail("vocab.txt: empty vocabulary");

  SpecialDefaults d;
  d.unk = "[UNK]";
  d.sep = "[SEP]";
  d.pad = "[PAD]";
  d.cls = "[CLS]";
  d.mask = "[MASK]";
  const SpecialTokens s = ReadSpecialTokens(config, d);
  AddFastTokenizerTokens(config, s, &vocab);

  const std::string& cls = Content(s.cls, "cls_token");
  const std::string& sep = Content(s.sep, "sep_token");
  json strip_accents = nullptr;
  if (config.contains("strip_accents") && config["strip_accents"].is_boolean()) {
    strip_accents = config["strip_accents"];
  }
  json normalizer = {{"type", "BertNormalizer"},
                     {"clean_text", true},
                     {"handle_chinese_chars", ConfigBool(config, "tokenize_chinese_chars", true)},
                     {"strip_accents", strip_accents},
                     {"lowercase", ConfigBool(config, "do_lower_case", true)}};
  json post = Template(
      {cls + ":0", "$A:0", sep + ":0"}, {cls + ":0", "$A:0", sep + ":0", "$B:1", sep + ":1"},
      {{cls, vocab.Id(cls, "BertTokenizer")}, {sep, vocab.Id(sep, "BertTokenizer")}});
  json model = {{"type", "WordPiece"},
                {"unk_token", Content(s.unk, "unk_token")},
                {"continuing_subword_prefix", "##"},
                {"max_input_chars_per_word", 100},
                {"vocab", std::move(model_vocab)}};
  return Assemble(vocab, normalizer, Typed("BertPreTokenizer"), post,
                  {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}, std::move(model));
}

// --- byte-level BPE: vocab.json + merges.txt (GPT2Converter, RobertaConverter) ----

json ByteLevelBpeModel(const fs::path& dir, const char* cls, Vocabulary* vocab) {
  const fs::path vocab_path = dir / "vocab.json";
  const fs::path merges_path = dir / "merges.txt";
  if (!fs::exists(vocab_path) || !fs::exists(merges_path)) {
    Fail(cls, ": vocab.json and merges.txt are needed");
  }
  json model_vocab = ReadJsonFile(vocab_path, "vocab.json");
  if (!model_vocab.is_object() || model_vocab.empty()) {
    Fail("vocab.json: not an object of token ids");
  }
  for (const auto& [token, id] : model_vocab.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0) {
      Fail("vocab.json: ", JsonValueString(token), " has id ", JsonValueString(id));
    }
    vocab->SetModelToken(token, id.get<int64_t>());
  }
  // transformers: merges_handle.read().split("\n")[1:-1]: the first line
  // (#version) and the last are dropped whatever they hold; a repeated merge
  // keeps its first place (dict keys).
  const std::string text = ReadText(merges_path);
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '\n') {
      lines.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  json merges = json::array();
  std::map<std::pair<std::string, std::string>, bool> seen;
  for (size_t i = 1; i + 1 < lines.size(); ++i) {
    std::vector<std::string> parts;
    std::string part;
    for (char c : lines[i] + " ") {
      // Python's str.split(): any ASCII whitespace separates.
      if (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
        if (!part.empty()) parts.push_back(part);
        part.clear();
      } else {
        part += c;
      }
    }
    if (parts.size() != 2) {
      Fail("merges.txt: line ", i + 1, " is not two symbols: ", JsonValueString(lines[i]));
    }
    if (seen.emplace(std::make_pair(parts[0], parts[1]), true).second) {
      merges.push_back({parts[0], parts[1]});
    }
  }
  return {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", nullptr},
          {"continuing_subword_prefix", ""},
          {"end_of_word_suffix", ""},
          {"fuse_unk", false},
          {"byte_fallback", false},
          {"ignore_merges", false},
          {"vocab", std::move(model_vocab)},
          {"merges", std::move(merges)}};
}

json Gpt2Json(const fs::path& dir, const json& config) {
  Vocabulary vocab;
  json model = ByteLevelBpeModel(dir, "GPT2Tokenizer", &vocab);
  SpecialDefaults d;
  d.bos = d.eos = d.unk = "<|endoftext|>";
  // GPT2Tokenizer wraps them as special AddedTokens: normalized False (the
  // gpt2 tokenizer.json of 2020 said True; GPT-2 has no normalizer, so the
  // ids are the same either way).
  d.flags.normalized = false;
  d.mask_flags = d.flags;
  const SpecialTokens s = ReadSpecialTokens(config, d);
  AddFastTokenizerTokens(config, s, &vocab);
  const bool add_prefix_space = ConfigBool(config, "add_prefix_space", false);
  json post = ByteLevel(true, false);
  if (ConfigBool(config, "add_bos_token", false)) {
    const std::string& bos = Content(s.bos, "bos_token");
    post = Template({bos + ":0", "$A:0"}, {bos + ":0", "$A:0", "$B:1"},
                    {{bos, vocab.Id(bos, "GPT2Tokenizer")}});
  }
  return Assemble(vocab, nullptr, ByteLevel(add_prefix_space, true), post, ByteLevel(true, true),
                  std::move(model));
}

json RobertaJson(const fs::path& dir, const json& config) {
  Vocabulary vocab;
  json model = ByteLevelBpeModel(dir, "RobertaTokenizer", &vocab);
  SpecialDefaults d;
  d.bos = d.cls = "<s>";
  d.eos = d.sep = "</s>";
  d.unk = "<unk>";
  d.pad = "<pad>";
  d.mask = "<mask>";
  // Special AddedTokens (normalized False); the mask token takes the space
  // before it: AddedToken(mask, lstrip=True, rstrip=False, normalized=False).
  d.mask_flags.lstrip = true;
  d.mask_flags.wrapped = true;
  const SpecialTokens s = ReadSpecialTokens(config, d);
  AddFastTokenizerTokens(config, s, &vocab);
  const bool add_prefix_space = ConfigBool(config, "add_prefix_space", false);
  const std::string& sep = Content(s.sep, "sep_token");
  const std::string& cls = Content(s.cls, "cls_token");
  json post = {{"type", "RobertaProcessing"},
               {"sep", {sep, vocab.Id(sep, "RobertaTokenizer")}},
               {"cls", {cls, vocab.Id(cls, "RobertaTokenizer")}},
               {"trim_offsets", true},
               {"add_prefix_space", add_prefix_space}};
  return Assemble(vocab, nullptr, ByteLevel(add_prefix_space, true), post, ByteLevel(true, true),
                  std::move(model));
}

// --- SentencePiece (SpmConverter and its subclasses) -------------------------------

enum class SpmKind { kT5, kAlbert, kXlmRoberta, kLlama, kGemma };

const char* SpmClassName(SpmKind kind) {
  switch (kind) {
    case SpmKind::kT5:
      return "T5Tokenizer";
    case SpmKind::kAlbert:
      return "AlbertTokenizer";
    case SpmKind::kXlmRoberta:
      return "XLMRobertaTokenizer";
    case SpmKind::kLlama:
      return "LlamaTokenizer";
    case SpmKind::kGemma:
      return "GemmaTokenizer";
  }
  return "?";
}

fs::path FindSpmFile(const fs::path& dir, SpmKind kind) {
  std::vector<const char*> names;
  switch (kind) {
    case SpmKind::kT5:
    case SpmKind::kAlbert:
      names = {"spiece.model", "sentencepiece.model", "tokenizer.model"};
      break;
    case SpmKind::kXlmRoberta:
      names = {"sentencepiece.bpe.model", "spiece.model", "tokenizer.model"};
      break;
    case SpmKind::kLlama:
    case SpmKind::kGemma:
      names = {"tokenizer.model", "spiece.model"};
      break;
  }
  for (const char* name : names) {
    if (fs::exists(dir / name)) return dir / name;
  }
  Fail(SpmClassName(kind), ": ", names[0], " is missing");
}

using ScoredVocab = std::vector<std::pair<std::string, double>>;

// SentencePieceExtractor.extract(vocab_scores) + generate_merges: every split
// of a piece into two known pieces is a merge, pieces' splits ordered by the
// ids of their halves, then all merges stable-sorted by the piece's score,
// highest first. (Newer transformers break score ties by the halves' lengths;
// the published Llama 2 and Gemma tokenizer.json files keep this order.)
json SpmMerges(const std::unordered_map<std::string, int64_t>& piece_ids,
               const ScoredVocab& vocab_scores) {
  struct Merge {
    const std::string* whole;
    size_t split;
    double score;
    int64_t left_id, right_id;
  };
  std::vector<std::pair<std::string, double>>
      unique;  // dict(vocab_scores): first place, last value
  std::unordered_map<std::string, size_t> where;
  for (const auto& [piece, score] : vocab_scores) {
    auto it = where.find(piece);
    if (it == where.end()) {
      where.emplace(piece, unique.size());
      unique.emplace_back(piece, score);
    } else {
      unique[it->second].second = score;
    }
  }
  std::vector<Merge> merges;
  for (const auto& [piece, score] : unique) {
    const size_t first = merges.size();
    for (size_t split : CodePointStarts(piece)) {
      if (split == 0) continue;
      auto l = piece_ids.find(piece.substr(0, split));
      auto r = piece_ids.find(piece.substr(split));
      if (l == piece_ids.end() || r == piece_ids.end()) continue;
      merges.push_back({&piece, split, score, l->second, r->second});
    }
    std::stable_sort(merges.begin() + static_cast<std::ptrdiff_t>(first), merges.end(),
                     [](const Merge& a, const Merge& b) {
                       return std::make_pair(a.left_id, a.right_id) <
                              std::make_pair(b.left_id, b.right_id);
                     });
  }
  std::stable_sort(merges.begin(), merges.end(),
                   [](const Merge& a, const Merge& b) { return a.score > b.score; });
  json out = json::array();
  for (const Merge& m : merges) {
    out.push_back({m.whole->substr(0, m.split), m.whole->substr(m.split)});
  }
  return out;
}

// _get_prepend_scheme()
std::string PrependScheme(bool add_prefix_space, bool legacy) {
  if (!add_prefix_space) return "never";
  return legacy ? "always" : "first";
}

// T5Tokenizer's extra_ids: how many <extra_id_N> sentinels (100 unless the config says).
int64_t T5ExtraIds(const json& config) {
  if (config.contains("extra_ids") && config["extra_ids"].is_number_integer()) {
    return config["extra_ids"].get<int64_t>();
  }
  return 100;
}

// The slow tokenizer class's special-token defaults.
SpecialDefaults SpmSpecialDefaults(const json& config, SpmKind kind) {
  SpecialDefaults d;
  d.flags.normalized = false;
  d.mask_flags = d.flags;
  // ALBERT and XLM-R: BERT-style roles with their own strings, mask lstripped.
  auto cls_sep_mask = [&d](const char* cls, const char* sep, const char* mask) {
    d.bos = d.cls = cls;
    d.eos = d.sep = sep;
    d.unk = "<unk>";
    d.pad = "<pad>";
    d.mask = mask;
    d.mask_flags.lstrip = true;
    d.mask_flags.wrapped = true;
  };
  switch (kind) {
    case SpmKind::kT5: {
      d.eos = "</s>";
      d.unk = "<unk>";
      d.pad = "<pad>";
      const int64_t extra = T5ExtraIds(config);
      for (int64_t i = 0; i < extra; ++i) d.additional.push_back(Cat("<extra_id_", i, ">"));
      break;
    }
    case SpmKind::kAlbert:
      cls_sep_mask("[CLS]", "[SEP]", "[MASK]");
      break;
    case SpmKind::kXlmRoberta:
      cls_sep_mask("<s>", "</s>", "<mask>");
      break;
    case SpmKind::kLlama:
      d.bos = "<s>";
      d.eos = "</s>";
      d.unk = "<unk>";
      break;
    case SpmKind::kGemma:
      d.bos = "<bos>";
      d.eos = "<eos>";
      d.unk = "<unk>";
      d.pad = "<pad>";
      break;
  }
  return d;
}

// Llama's pieces 0..2 as convert_ids_to_tokens gives them: the pieces
// themselves unless tokenizer_config.json's added_tokens_decoder renames them.
std::string LlamaLeadingToken(const json& config, size_t id, const std::string& piece) {
  if (!config.contains("added_tokens_decoder") || !config["added_tokens_decoder"].is_object()) {
    return piece;
  }
  const json& dec = config["added_tokens_decoder"];
  const std::string key = std::to_string(id);
  if (dec.contains(key) && dec[key].is_object() && dec[key].contains("content") &&
      dec[key]["content"].is_string()) {
    return dec[key]["content"].get<std::string>();
  }
  return piece;
}

// The converter's vocab(proto): the pieces and scores the tokenizer.json
// model lists, in id order.
ScoredVocab SpmScoredVocab(const SentencePieceModel& proto, const json& config,
                           const SpecialTokens& s, SpmKind kind) {
  ScoredVocab scored;
  const auto& pieces = proto.pieces;
  switch (kind) {
    case SpmKind::kT5: {
      for (const auto& p : pieces) scored.emplace_back(p.piece, p.score);
      // T5Converter appends the sentinels last first: <extra_id_99> ... <extra_id_0>.
      for (int64_t i = T5ExtraIds(config) - 1; i >= 0; --i) {
        scored.emplace_back(Cat("<extra_id_", i, ">"), 0.0);
      }
      break;
    }
    case SpmKind::kAlbert:
      for (const auto& p : pieces) {
        // check_number_comma: "3," style pieces are pushed down by 100.
        const std::string& t = p.piece;
        const bool number_comma =
            t.size() >= 2 && t.back() == ',' && t[t.size() - 2] >= '0' && t[t.size() - 2] <= '9';
        scored.emplace_back(t, number_comma ? double{p.score} - 100.0 : double{p.score});
      }
      break;
    case SpmKind::kXlmRoberta:
      scored = {{"<s>", 0.0}, {"<pad>", 0.0}, {"</s>", 0.0}, {"<unk>", 0.0}};
      for (size_t i = 3; i < pieces.size(); ++i)
        scored.emplace_back(pieces[i].piece, pieces[i].score);
      scored.emplace_back("<mask>", 0.0);
      break;
    case SpmKind::kLlama:
      for (size_t i = 0; i < pieces.size(); ++i) {
        if (i < 3) {
          scored.emplace_back(LlamaLeadingToken(config, i, pieces[i].piece), 0.0);
        } else {
          scored.emplace_back(pieces[i].piece, pieces[i].score);
        }
      }
      break;
    case SpmKind::kGemma: {
      if (pieces.size() < 3) Fail("tokenizer.model: fewer than 3 pieces");
      scored = {{Content(s.pad, "pad_token"), 0.0},
                {Content(s.eos, "eos_token"), 0.0},
                {Content(s.bos, "bos_token"), 0.0}};
      for (size_t i = 3; i < pieces.size(); ++i)
        scored.emplace_back(pieces[i].piece, pieces[i].score);
      // Older Gemma files lack "\t": the byte piece <0x09> takes its place.
      const bool has_tab =
          std::any_of(scored.begin(), scored.end(), [](const auto& e) { return e.first == "\t"; });
      if (!has_tab) {
        for (auto& e : scored) {
          if (e.first == "<0x09>") {
            e = {"\t", 0.0};
            break;
          }
        }
      }
      break;
    }
  }
  return scored;
}

// The tokenizer.json model (Unigram or BPE) of `scored`; its tokens into `vocab`.
json SpmModel(const SentencePieceModel& proto, const ScoredVocab& scored, SpmKind kind,
              Vocabulary* vocab) {
  const bool byte_fallback = kind == SpmKind::kLlama || kind == SpmKind::kGemma;
  int64_t unk_id = proto.unk_id;
  if (kind == SpmKind::kXlmRoberta) unk_id = 3;
  if (kind == SpmKind::kLlama) unk_id = 0;
  if (kind == SpmKind::kGemma) unk_id = 3;
  if (proto.model_type != SentencePieceModel::ModelType::kBpe) {
    json list = json::array();
    for (size_t i = 0; i < scored.size(); ++i) {
      list.push_back({scored[i].first, scored[i].second});
      vocab->SetModelToken(scored[i].first, static_cast<int64_t>(i));
    }
    if (unk_id < 0 || unk_id >= static_cast<int64_t>(scored.size())) {
      Fail(SpmClassName(kind), ": unk id ", unk_id, " is outside the vocabulary");
    }
    return {{"type", "Unigram"},
            {"unk_id", unk_id},
            {"vocab", std::move(list)},
            {"byte_fallback", byte_fallback}};
  }
  json bpe_vocab = json::object();
  for (size_t i = 0; i < scored.size(); ++i) {
    bpe_vocab[scored[i].first] = static_cast<int64_t>(i);
    vocab->SetModelToken(scored[i].first, static_cast<int64_t>(i));
  }
  // The extractor's own vocab: the model's pieces by id (a repeated piece keeps its last id).
  const auto& pieces = proto.pieces;
  std::unordered_map<std::string, int64_t> piece_ids;
  for (size_t i = 0; i < pieces.size(); ++i) piece_ids[pieces[i].piece] = static_cast<int64_t>(i);
  if (kind == SpmKind::kGemma && !piece_ids.count("\t") && piece_ids.count("<0x09>")) {
    piece_ids["\t"] = piece_ids["<0x09>"];
  }
  return {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", proto.unk_piece},
          {"continuing_subword_prefix", nullptr},
          {"end_of_word_suffix", nullptr},
          {"fuse_unk", true},
          {"byte_fallback", byte_fallback},
          {"ignore_merges", false},
          {"vocab", std::move(bpe_vocab)},
          {"merges", SpmMerges(piece_ids, scored)}};
}

// Control pieces are special added tokens, user-defined ones plain added
// tokens (Gemma's turn markers are special too).
void AddSpmPieceTokens(const SentencePieceModel& proto, SpmKind kind, Vocabulary* vocab) {
  const auto& pieces = proto.pieces;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const auto type = pieces[i].type;
    if (type != SentencePieceModel::PieceType::kControl &&
        type != SentencePieceModel::PieceType::kUserDefined) {
      continue;
    }
    TokenSpec t;
    t.content = pieces[i].piece;
    t.special = type == SentencePieceModel::PieceType::kControl ||
                (kind == SpmKind::kGemma &&
                 (t.content == "<start_of_turn>" || t.content == "<end_of_turn>"));
    vocab->Add(t);
  }
}

// The text pipeline around the model: normalizer, pre-tokenizer, decoder.
struct SpmPipeline {
  json normalizer, pre_tokenizer, decoder;
};

SpmPipeline SpmTextPipeline(const std::string& charsmap, const json& config, bool legacy,
                            bool add_prefix_space, SpmKind kind) {
  auto precompiled = [&]() {
    return json{{"type", "Precompiled"}, {"precompiled_charsmap", Base64(charsmap)}};
  };
  const std::string scheme = PrependScheme(add_prefix_space, legacy);
  SpmPipeline p;
  switch (kind) {
    case SpmKind::kT5:
    case SpmKind::kXlmRoberta: {
      // SpmConverter.normalizer
      json steps = json::array();
      if (!charsmap.empty()) steps.push_back(precompiled());
      steps.push_back({{"type", "Strip"}, {"strip_left", false}, {"strip_right", true}});
      steps.push_back(ReplaceStep(" {2,}", kMetaspace, true));
      p.normalizer = {{"type", "Sequence"}, {"normalizers", steps}};
      p.pre_tokenizer = Metaspace(scheme, true);
      p.decoder = Metaspace(scheme, true);
      break;
    }
    case SpmKind::kAlbert: {
      json steps = json::array({ReplaceStep("``", "\""), ReplaceStep("''", "\"")});
      if (!ConfigBool(config, "keep_accents", false)) {
        steps.push_back(Typed("NFKD"));
        steps.push_back(Typed("StripAccents"));
      }
      if (ConfigBool(config, "do_lower_case", true)) steps.push_back(Typed("Lowercase"));
      if (!charsmap.empty()) steps.push_back(precompiled());
      steps.push_back(ReplaceStep(" {2,}", " ", true));
      p.normalizer = {{"type", "Sequence"}, {"normalizers", steps}};
      p.pre_tokenizer = Metaspace(scheme, true);
      p.decoder = Metaspace(scheme, true);
      break;
    }
    case SpmKind::kLlama: {
      p.normalizer = nullptr;
      p.pre_tokenizer = nullptr;
      if (legacy) {
        json steps = json::array();
        if (add_prefix_space) steps.push_back({{"type", "Prepend"}, {"prepend", kMetaspace}});
        steps.push_back(ReplaceStep(" ", kMetaspace));
        p.normalizer = {{"type", "Sequence"}, {"normalizers", steps}};
      } else {
        p.pre_tokenizer = Metaspace(scheme, false);
      }
      json steps =
          json::array({ReplaceStep(kMetaspace, " "), Typed("ByteFallback"), Typed("Fuse")});
      if (add_prefix_space) {
        steps.push_back({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});
      }
      p.decoder = {{"type", "Sequence"}, {"decoders", steps}};
      break;
    }
    case SpmKind::kGemma:
      p.normalizer = ReplaceStep(" ", kMetaspace);
      p.pre_tokenizer = {{"type", "Split"},
                         {"pattern", Pattern(" ", false)},
                         {"behavior", "MergedWithPrevious"},
                         {"invert", false}};
      p.decoder = {
          {"type", "Sequence"},
          {"decoders", {ReplaceStep(kMetaspace, " "), Typed("ByteFallback"), Typed("Fuse")}}};
      break;
  }
  return p;
}

// The post-processor: the special tokens each class adds around a sequence.
json SpmPostProcessor(const json& config, const SpecialTokens& s, const Vocabulary& vocab,
                      SpmKind kind) {
  const char* cls_name = SpmClassName(kind);
  switch (kind) {
    case SpmKind::kT5: {
      const std::string& eos = Content(s.eos, "eos_token");
      return Template({"$A", eos}, {"$A", eos, "$B", eos}, {{eos, vocab.Id(eos, cls_name)}});
    }
    case SpmKind::kAlbert:
      return Template(
          {"[CLS]:0", "$A:0", "[SEP]:0"}, {"[CLS]:0", "$A:0", "[SEP]:0", "$B:1", "[SEP]:1"},
          {{"[CLS]", vocab.Id("[CLS]", cls_name)}, {"[SEP]", vocab.Id("[SEP]", cls_name)}});
    case SpmKind::kXlmRoberta:
      return Template({"<s>", "$A", "</s>"}, {"<s>", "$A", "</s>", "</s>", "$B", "</s>"},
                      {{"<s>", vocab.Id("<s>", cls_name)}, {"</s>", vocab.Id("</s>", cls_name)}});
    case SpmKind::kLlama:
    case SpmKind::kGemma:
      break;
  }
  // LlamaTokenizerFast / GemmaTokenizerFast.update_post_processor().
  const bool add_bos = ConfigBool(config, "add_bos_token", true);
  const bool add_eos = ConfigBool(config, "add_eos_token", false);
  std::vector<std::string> single, pair;
  std::vector<std::pair<std::string, int64_t>> specials;
  const std::string bos = add_bos ? Content(s.bos, "bos_token") : "";
  const std::string eos = add_eos ? Content(s.eos, "eos_token") : "";
  if (add_bos) single.push_back(bos + ":0");
  single.push_back("$A:0");
  if (add_eos) single.push_back(eos + ":0");
  pair = single;
  if (add_bos) pair.push_back(bos + ":1");
  pair.push_back("$B:1");
  if (add_eos) pair.push_back(eos + ":1");
  if (add_bos) specials.emplace_back(bos, vocab.Id(bos, cls_name));
  if (add_eos) specials.emplace_back(eos, vocab.Id(eos, cls_name));
  return Template(single, pair, specials);
}

// The tokenizer.json transformers' SpmConverter subclass for `kind` makes
// from the SentencePiece model in `dir` and tokenizer_config.json.
json SpmJson(const fs::path& dir, const json& config, SpmKind kind) {
  const SentencePieceModel proto = ReadSentencePieceModel(FindSpmFile(dir, kind));
  const bool legacy = ConfigBool(config, "legacy", true);
  const bool add_prefix_space = ConfigBool(config, "add_prefix_space", true);
  const SpecialTokens s = ReadSpecialTokens(config, SpmSpecialDefaults(config, kind));
  Vocabulary vocab;
  json model = SpmModel(proto, SpmScoredVocab(proto, config, s, kind), kind, &vocab);
  AddSpmPieceTokens(proto, kind, &vocab);
  AddFastTokenizerTokens(config, s, &vocab);
  SpmPipeline pipeline =
      SpmTextPipeline(proto.precompiled_charsmap, config, legacy, add_prefix_space, kind);
  json post = SpmPostProcessor(config, s, vocab, kind);
  return Assemble(vocab, std::move(pipeline.normalizer), std::move(pipeline.pre_tokenizer),
                  std::move(post), std::move(pipeline.decoder), std::move(model));
}

// --- which converter ------------------------------------------------------------

}  // namespace

std::string LegacyTokenizerClass(const fs::path& dir, const json& config) {
  if (config.is_object() && config.contains("tokenizer_class") &&
      config["tokenizer_class"].is_string()) {
    std::string cls = config["tokenizer_class"].get<std::string>();
    const std::string fast = "Fast";
    if (cls.size() > fast.size() && cls.compare(cls.size() - fast.size(), fast.size(), fast) == 0) {
      cls.resize(cls.size() - fast.size());
    }
    return cls;
  }
  const fs::path config_path = dir / "config.json";
  if (!fs::exists(config_path)) {
    Fail(
        "tokenizer_config.json has no tokenizer_class and there is no config.json to tell the "
        "tokenizer");
  }
  const json model_config = ReadJsonFile(config_path, "config.json");
  const std::string type = model_config.value("model_type", std::string());
  static const std::map<std::string, std::string> kByModelType = {
      {"bert", "BertTokenizer"},       {"distilbert", "DistilBertTokenizer"},
      {"electra", "ElectraTokenizer"}, {"gpt2", "GPT2Tokenizer"},
      {"roberta", "RobertaTokenizer"}, {"t5", "T5Tokenizer"},
      {"albert", "AlbertTokenizer"},   {"xlm-roberta", "XLMRobertaTokenizer"},
      {"llama", "LlamaTokenizer"},     {"mistral", "LlamaTokenizer"},
      {"gemma", "GemmaTokenizer"},     {"marian", "MarianTokenizer"},
  };
  const auto it = kByModelType.find(type);
  if (it == kByModelType.end()) {
    Fail("config.json: model_type ", JsonValueString(type),
         " names no tokenizer that can be converted without tokenizer.json");
  }
  return it->second;
}

json LegacyTokenizerJson(const fs::path& dir, const json& tokenizer_config) {
  const json config = tokenizer_config.is_object() ? tokenizer_config : json::object();
  const std::string cls = LegacyTokenizerClass(dir, config);
  static const char* const kBert[] = {
      "BertTokenizer",       "DistilBertTokenizer",  "ElectraTokenizer", "ConvBertTokenizer",
      "MobileBertTokenizer", "SqueezeBertTokenizer", "LayoutLMTokenizer"};
  for (const char* name : kBert) {
    if (cls == name) return BertJson(dir, config);
  }
  if (cls == "GPT2Tokenizer" || cls == "CodeGenTokenizer") return Gpt2Json(dir, config);
  if (cls == "RobertaTokenizer" || cls == "BartTokenizer" || cls == "LongformerTokenizer") {
    return RobertaJson(dir, config);
  }
  if (cls == "T5Tokenizer") return SpmJson(dir, config, SpmKind::kT5);
  if (cls == "AlbertTokenizer") return SpmJson(dir, config, SpmKind::kAlbert);
  if (cls == "XLMRobertaTokenizer") return SpmJson(dir, config, SpmKind::kXlmRoberta);
  if (cls == "LlamaTokenizer" || cls == "CodeLlamaTokenizer") {
    return SpmJson(dir, config, SpmKind::kLlama);
  }
  if (cls == "GemmaTokenizer") return SpmJson(dir, config, SpmKind::kGemma);
  if (cls == "MarianTokenizer") {
    Fail("MarianTokenizer has no tokenizer.json form (CompileLegacyTokenizer compiles it)");
  }
  Fail("tokenizer class ", JsonValueString(cls), " has no converter from its legacy files");
}

std::unique_ptr<fb::TokenizerSpecT> CompileLegacyTokenizer(const fs::path& dir,
                                                           const json& tokenizer_config,
                                                           const json& config,
                                                           const json& generation_config) {
  const json tc = tokenizer_config.is_object() ? tokenizer_config : json::object();
  if (LegacyTokenizerClass(dir, tc) == "MarianTokenizer") {
    return CompileMarianTokenizer(dir, tc, config, generation_config);
  }
  TokenizerSources sources;
  sources.tokenizer = LegacyTokenizerJson(dir, tc);
  sources.tokenizer_config = tokenizer_config;
  sources.config = config;
  sources.generation_config = generation_config;
  return CompileTokenizer(sources);
}

}  // namespace convert
}  // namespace octet
