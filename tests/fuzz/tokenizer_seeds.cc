#include "fuzz/tokenizer_seeds.h"

#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "import/error.h"
#include "support/test_models.h"
#include "tokenize/compile_tokenizer.h"
#include "tokenize/legacy.h"

namespace octet {
namespace testing {
namespace {

using nlohmann::json;

struct Source {
  const char* name;
  size_t keep;        // cut: model ids [0, keep) stay
  const char* chat;   // a chat template for tokenizers that ship none (tests/text/chat_templates)
};

// One of each model kind; gemma (17 MB of JSON) adds nothing the others lack.
const Source kSources[] = {
    {"gpt2", 400, nullptr},                     // byte-level BPE, merges, no template
    {"llama2", 420, "mistral_v0_1.jinja"},      // SentencePiece BPE, byte fallback
    {"bert_uncased", 1100, nullptr},            // WordPiece, BertNormalizer, pair template
    {"t5_unigram", 400, nullptr},               // Unigram, Precompiled
    {"albert_unigram", 400, "gemma.jinja"},     // Unigram, Precompiled + NFKD + lowercase
    {"qwen2_5", 400, nullptr},                  // byte-level BPE, NFC, added tokens, chat
    {"llama3", 400, nullptr},                   // byte-level BPE, 256 added tokens, chat
    // SentencePiece's normalizer and float lattice, vocab.json ids, language codes, Marian's
    // decoder; from source.spm + vocab.json (no tokenizer.json), whole even when cut (4770 ids).
    {"marian", 0, nullptr},
};
constexpr size_t kKeepAdded = 12;  // cut: added tokens past the vocabulary that stay

json ReadJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  if (!in) convert::Fail("cannot read ", path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Base64(const std::string& bytes) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) v |= static_cast<uint8_t>(bytes[i + 2]);
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += i + 1 < bytes.size() ? kAlphabet[v >> 6 & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[v & 63] : '=';
  }
  return out;
}

// A SentencePiece charsmap (a darts double-array trie, then the replacement
// strings) of a few rules, in place of the real 240 KB one: enough to walk
// the trie, hit leaves at several depths, grow, shrink and erase text.
std::string TinyCharsmap() {
  const std::vector<std::pair<std::string, std::string>> rules = {
      {"\xEF\xBC\xA1", "A"},          // fullwidth A
      {"\xEF\xAC\x81", "fi"},         // the fi ligature grows
      {"\xC2\xA0", " "},              // no-break space
      {"\xE2\x80\x8B", ""},           // zero-width space is erased
      {"\xE2\x84\xAB", "\xC3\x85"},   // angstrom sign -> A with ring
      {"\xE2\x84\xA2", "TM"},
  };
  std::string strings;
  std::vector<uint32_t> values;
  for (const auto& r : rules) {
    values.push_back(static_cast<uint32_t>(strings.size()));
    strings += r.second;
    strings += '\0';
  }
  struct Node {
    std::map<uint8_t, size_t> children;
    int rule = -1;
  };
  std::vector<Node> nodes(1);
  for (size_t r = 0; r < rules.size(); ++r) {
    size_t at = 0;
    for (char ch : rules[r].first) {
      const uint8_t c = static_cast<uint8_t>(ch);
      auto it = nodes[at].children.find(c);
      if (it == nodes[at].children.end()) {
        nodes.emplace_back();
        it = nodes[at].children.emplace(c, nodes.size() - 1).first;
      }
      at = it->second;
    }
    nodes[at].rule = static_cast<int>(r);
  }
  // Each node gets a base: its children sit at base ^ label, its leaf value at base.
  std::vector<uint32_t> units(1, 0);
  std::vector<bool> used(1, true);
  auto take = [&](size_t i) {
    if (i >= units.size()) {
      units.resize(i + 1, 0);
      used.resize(i + 1, false);
    }
    used[i] = true;
  };
  auto free_at = [&](size_t i) { return i >= used.size() || !used[i]; };
  std::vector<std::pair<size_t, size_t>> queue = {{0, 0}};  // (node, its unit index)
  for (size_t q = 0; q < queue.size(); ++q) {
    const Node& n = nodes[queue[q].first];
    size_t base = 1;
    for (;; ++base) {
      bool ok = n.rule < 0 || free_at(base);
      for (const auto& [c, child] : n.children) ok = ok && free_at(base ^ c);
      if (ok) break;
    }
    const size_t self = queue[q].second;
    units[self] |= static_cast<uint32_t>(base) << 10 | (n.rule >= 0 ? 1u << 8 : 0u);
    if (n.rule >= 0) {
      take(base);
      units[base] = 0x80000000u | values[static_cast<size_t>(n.rule)];
    }
    for (const auto& [c, child] : n.children) {
      take(base ^ c);
      units[base ^ c] = c;
      queue.emplace_back(child, base ^ c);
    }
  }
  std::string out;
  const uint32_t trie_bytes = static_cast<uint32_t>(units.size() * 4);
  for (int i = 0; i < 4; ++i) out += static_cast<char>(trie_bytes >> (8 * i));
  for (uint32_t u : units) {
    for (int i = 0; i < 4; ++i) out += static_cast<char>(u >> (8 * i));
  }
  return out + strings;
}

void ShrinkCharsmaps(json& j) {
  if (j.is_object()) {
    if (j.contains("type") && j["type"] == "Precompiled") {
      j["precompiled_charsmap"] = Base64(TinyCharsmap());
    }
    for (auto it = j.begin(); it != j.end(); ++it) ShrinkCharsmaps(it.value());
  } else if (j.is_array()) {
    for (auto& v : j) ShrinkCharsmaps(v);
  }
}

// Ids a post-processor names, and renumbering them.
void PostProcessorIds(json& p, const std::map<int64_t, int64_t>* remap, std::set<int64_t>* seen) {
  if (p.is_object()) {
    for (const char* key : {"sep", "cls"}) {
      if (p.contains(key) && p[key].is_array() && p[key].size() == 2) {
        json& id = p[key][1];
        if (seen) seen->insert(id.get<int64_t>());
        if (remap && remap->count(id.get<int64_t>())) id = remap->at(id.get<int64_t>());
      }
    }
    if (p.contains("ids") && p["ids"].is_array()) {
      for (json& id : p["ids"]) {
        if (seen) seen->insert(id.get<int64_t>());
        if (remap && remap->count(id.get<int64_t>())) id = remap->at(id.get<int64_t>());
      }
    }
    for (auto it = p.begin(); it != p.end(); ++it) {
      if (it.key() != "sep" && it.key() != "cls" && it.key() != "ids") {
        PostProcessorIds(it.value(), remap, seen);
      }
    }
  } else if (p.is_array()) {
    for (json& v : p) PostProcessorIds(v, remap, seen);
  }
}

std::string ConfigToken(const json& config, const char* key) {
  if (!config.is_object() || !config.contains(key)) return "";
  const json& v = config[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) {
    return v["content"].get<std::string>();
  }
  return "";
}

// The first `keep` ids of the model, the merges among them, the added tokens
// the template or the config name plus kKeepAdded others, renumbered after them.
void Cut(json& tok, json& config, size_t keep) {
  json& model = tok["model"];
  const std::string type = model["type"].get<std::string>();
  std::set<std::string> kept;
  if (type == "Unigram") {
    json vocab = json::array();
    for (size_t i = 0; i < keep && i < model["vocab"].size(); ++i) {
      vocab.push_back(model["vocab"][i]);
      kept.insert(model["vocab"][i][0].get<std::string>());
    }
    model["vocab"] = vocab;
  } else {
    json vocab = json::object();
    for (auto it = model["vocab"].begin(); it != model["vocab"].end(); ++it) {
      if (it.value().get<int64_t>() < static_cast<int64_t>(keep)) {
        vocab[it.key()] = it.value();
        kept.insert(it.key());
      }
    }
    model["vocab"] = vocab;
  }
  if (type == "BPE") {
    json merges = json::array();
    for (const json& m : model["merges"]) {
      std::string a, b;
      if (m.is_string()) {
        const std::string s = m.get<std::string>();
        const size_t space = s.find(' ');
        a = s.substr(0, space);
        b = space == std::string::npos ? "" : s.substr(space + 1);
      } else {
        a = m[0].get<std::string>();
        b = m[1].get<std::string>();
      }
      if (kept.count(a) && kept.count(b) && kept.count(a + b)) merges.push_back(m);
    }
    model["merges"] = merges;
  }

  std::set<int64_t> named;
  PostProcessorIds(tok["post_processor"], nullptr, &named);
  const std::set<std::string> named_tokens = {ConfigToken(config, "eos_token"),
                                              ConfigToken(config, "bos_token")};
  std::map<int64_t, int64_t> remap;
  json added = json::array();
  size_t others = 0;
  int64_t next = static_cast<int64_t>(keep);
  for (json& a : tok["added_tokens"]) {
    const int64_t id = a["id"].get<int64_t>();
    if (id < static_cast<int64_t>(keep)) {
      added.push_back(a);
      continue;
    }
    const bool needed = named.count(id) || named_tokens.count(a["content"].get<std::string>());
    if (!needed && others >= kKeepAdded) continue;
    if (!needed) ++others;
    remap[id] = next;
    a["id"] = next++;
    added.push_back(a);
  }
  tok["added_tokens"] = added;
  PostProcessorIds(tok["post_processor"], &remap, nullptr);
  ShrinkCharsmaps(tok["normalizer"]);
}

std::vector<uint8_t> ModelBytes(const std::string& data_dir, const std::string& templates_dir,
                                const Source& source, bool cut) {
  const std::string dir = data_dir + "/" + source.name;
  if (source.keep == 0) {
    std::unique_ptr<fb::TokenizerSpecT> spec = convert::CompileLegacyTokenizer(
        dir, ReadJson(dir + "/tokenizer_config.json"), ReadJson(dir + "/config.json"), nullptr);
    TinyModelOptions options;
    options.family = fb::Family::Llama;
    options.vocab = spec->model->vocab_size;
    options.hidden = 8;
    options.layers = cut ? 1 : 0;
    options.tokenizer = false;
    ModelWriter writer = MakeTinyModelWriter(options);
    writer.SetCompiledTokenizer(std::move(spec));
    return writer.WriteToBuffer();
  }
  convert::TokenizerSources sources;
  sources.tokenizer = ReadJson(dir + "/tokenizer.json");
  if (sources.tokenizer.is_null()) convert::Fail("no tokenizer.json in ", dir);
  const json full_config = ReadJson(dir + "/tokenizer_config.json");
  json config = json::object();
  for (const char* key : {"chat_template", "bos_token", "eos_token", "clean_up_tokenization_spaces"}) {
    if (full_config.is_object() && full_config.contains(key)) config[key] = full_config[key];
  }
  if (source.chat != nullptr) config["chat_template"] = ReadText(templates_dir + "/" + source.chat);
  if (cut) Cut(sources.tokenizer, config, source.keep);
  // eos ids from a generation_config, as Hugging Face checkpoints carry them.
  const std::string eos = ConfigToken(config, "eos_token");
  for (const json& a : sources.tokenizer["added_tokens"]) {
    if (a["content"] == eos) sources.generation_config = json{{"eos_token_id", json::array({a["id"]})}};
  }
  sources.tokenizer_config = config;

  std::unique_ptr<fb::TokenizerSpecT> spec = convert::CompileTokenizer(sources);
  TinyModelOptions options;
  options.family = fb::Family::Llama;
  options.vocab = spec->model->vocab_size;
  options.hidden = 8;
  options.layers = cut ? 1 : 0;  // the loader fuzzer runs the model too
  options.tokenizer = false;
  ModelWriter writer = MakeTinyModelWriter(options);
  writer.SetCompiledTokenizer(std::move(spec));
  return writer.WriteToBuffer();
}

}  // namespace

const std::vector<std::string>& FuzzTokenizerNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const Source& s : kSources) n.push_back(s.name);
    return n;
  }();
  return names;
}

std::vector<std::pair<std::string, std::vector<uint8_t>>> TokenizerModels(
    const std::string& data_dir, const std::string& templates_dir, bool cut) {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> out;
  for (const Source& s : kSources) {
    out.emplace_back(std::string("tok_") + s.name + ".octet",
                     ModelBytes(data_dir, templates_dir, s, cut));
  }
  return out;
}

}  // namespace testing
}  // namespace octet
