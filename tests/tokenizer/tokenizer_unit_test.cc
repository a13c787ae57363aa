// The tokenizer's contracts beyond the goldens: errors (invalid UTF-8 with
// its offset, limits), malformed tables refused at load, converter refusals,
// no heap allocation per call, split_special_tokens, BPE's heap merge
// against a plain reference, and the word cache against the uncached path.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/alloc_counter.h"
#include "import/error.h"
#include "text/tokenizer.h"
#include "text/tokenizer_check.h"
#include "tokenize/compile_tokenizer.h"
#include "tokenize/legacy.h"
#include "tokenizer_test_util.h"

namespace octet {
namespace {

using nlohmann::json;
using text::EncodeOptions;
using text::Tokenizer;
using text::TokenizerWorkspace;

std::vector<int32_t> Encode(const Tokenizer& tok, const std::string& text, EncodeOptions o,
                            Status* status = nullptr) {
  TokenizerWorkspace ws;
  REQUIRE(tok.CreateWorkspace(text.size() + 1, 16, &ws).ok());
  std::vector<int32_t> ids(tok.MaxIds(text.size() + 1));
  size_t n = 0;
  const Status st = tok.Encode(text.data(), text.size(), o, ws, ids.data(), ids.size(), &n);
  if (status) *status = st;
  if (!st.ok()) return {};
  ids.resize(n);
  return ids;
}

TEST_CASE("invalid UTF-8 is refused with the offset of the first bad byte") {
  testing::LoadedTokenizer t = testing::LoadTokenizer("gpt2");
  REQUIRE_MESSAGE(t.error.empty(), t.error);
  const std::string bad[] = {std::string("abc\xff"), std::string("ab\xc3"), std::string("a\xed\xa0\x80"),
                             std::string("\xc0\xaf"), std::string("ok \xe2\x82 x")};
  const size_t offsets[] = {3, 2, 1, 0, 3};
  for (size_t i = 0; i < 5; ++i) {
    Status st;
    Encode(t.tokenizer, bad[i], EncodeOptions(), &st);
    CHECK(st.code() == StatusCode::kInvalidArgument);
    CHECK(std::string(st.message()).find("offset " + std::to_string(offsets[i])) != std::string::npos);
  }
}

TEST_CASE("limits: a text longer than the workspace, too few id slots, ids outside the vocabulary") {
  testing::LoadedTokenizer t = testing::LoadTokenizer("gpt2");
  REQUIRE(t.error.empty());
  TokenizerWorkspace ws;
  REQUIRE(t.tokenizer.CreateWorkspace(8, 4, &ws).ok());
  int32_t ids[64];
  size_t n = 0;
  const std::string longer = "this text is longer than eight bytes";
  CHECK(!t.tokenizer.Encode(longer.data(), longer.size(), EncodeOptions(), ws, ids, 64, &n).ok());
  CHECK(!t.tokenizer.Encode("a b c d", 7, EncodeOptions(), ws, ids, 2, &n).ok());
  char out[64];
  const int32_t outside[] = {1, 50257};
  CHECK(!t.tokenizer.Decode(outside, 2, true, ws, out, sizeof(out), &n).ok());
  const int32_t negative[] = {-1};
  CHECK(!t.tokenizer.Decode(negative, 1, true, ws, out, sizeof(out), &n).ok());
  const int32_t many[] = {1, 2, 3, 4, 5};
  CHECK(!t.tokenizer.Decode(many, 5, true, ws, out, sizeof(out), &n).ok());
}

TEST_CASE("split_special_tokens: special strings in the text are plain text") {
  testing::LoadedTokenizer t = testing::LoadTokenizer("gpt2");
  REQUIRE(t.error.empty());
  EncodeOptions o;
  o.add_special_tokens = false;
  CHECK(Encode(t.tokenizer, "a<|endoftext|>", o) == std::vector<int32_t>{64, 50256});
  o.split_special_tokens = true;
  const std::vector<int32_t> split = Encode(t.tokenizer, "a<|endoftext|>", o);
  CHECK(split.size() > 2);
  for (int32_t id : split) CHECK(id != 50256);
  CHECK(t.tokenizer.IsSpecial(50256));
  CHECK(!t.tokenizer.IsSpecial(64));
}

TEST_CASE("no heap allocation in Encode, Decode or the stream decoder") {
  REQUIRE(HeapAllocationCounterActive());
  for (const char* name : {"gpt2", "llama3", "llama2", "bert_uncased", "t5_unigram"}) {
    CAPTURE(name);
    testing::LoadedTokenizer t = testing::LoadTokenizer(name);
    REQUIRE_MESSAGE(t.error.empty(), t.error);
    const std::string text =
        "Mr. Darcy's <s> 今天天气很好 héllo 👋🏽 [CLS] 12345 \t\n  wörld </s> <|endoftext|>";
    TokenizerWorkspace ws;
    REQUIRE(t.tokenizer.CreateWorkspace(text.size(), text.size() * 4, &ws).ok());
    std::vector<int32_t> ids(t.tokenizer.MaxIds(text.size()));
    std::vector<char> out(t.tokenizer.MaxDecodedBytes(text.size() * 4));
    text::StreamDecoder stream;
    REQUIRE(stream.Init(&t.tokenizer, &ws, true).ok());
    std::vector<char> piece(t.tokenizer.MaxDecodedBytes(text::StreamDecoder::kWindow));
    const uint64_t before = HeapAllocationCount();
    for (int round = 0; round < 3; ++round) {
      size_t n = 0, m = 0, k = 0;
      REQUIRE(t.tokenizer.Encode(text.data(), text.size(), EncodeOptions(), ws, ids.data(),
                                 ids.size(), &n).ok());
      REQUIRE(t.tokenizer.Decode(ids.data(), n, round == 1, ws, out.data(), out.size(), &m).ok());
      stream.Reset();
      for (size_t i = 0; i < n; ++i) REQUIRE(stream.Push(ids[i], piece.data(), piece.size(), &k).ok());
      REQUIRE(stream.Finish(piece.data(), piece.size(), &k).ok());
    }
    CHECK(HeapAllocationCount() == before);
  }
}

// The compiled Austen tokenizer as an object, for targeted corruptions.
std::unique_ptr<fb::TokenizerSpecT> AustenSpec() {
  convert::TokenizerSources sources;
  sources.tokenizer = testing::ReadJsonOrNull(testing::TokenizerDir("austen") + "/tokenizer.json");
  return convert::CompileTokenizer(sources);
}

Status Check(const fb::TokenizerSpecT& spec, uint32_t arch_vocab = 0) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(fb::TokenizerSpec::Pack(fbb, &spec));
  flatbuffers::Verifier verifier(fbb.GetBufferPointer(), fbb.GetSize());
  REQUIRE(verifier.VerifyBuffer<fb::TokenizerSpec>(nullptr));
  return text::CheckTokenizerSpec(*flatbuffers::GetRoot<fb::TokenizerSpec>(fbb.GetBufferPointer()),
                                  arch_vocab);
}

TEST_CASE("malformed tokenizer tables are refused with a message naming the fault") {
  REQUIRE(Check(*AustenSpec()).ok());
  struct Corruption {
    const char* name;
    const char* expect;  // in the message
    void (*apply)(fb::TokenizerSpecT&);
  };
  const Corruption cases[] = {
      {"merge id", "merge slot", [](fb::TokenizerSpecT& s) {
         for (size_t i = 1; i < s.model->merges.size(); i += 4) {
           if (s.model->merges[i] != 0xFFFFFFFFu) {
             s.model->merges[i + 3] = 5000;
             break;
           }
         }
       }},
      {"merge table size", "merge table", [](fb::TokenizerSpecT& s) { s.model->merges.pop_back(); }},
      {"index slot count", "index", [](fb::TokenizerSpecT& s) { s.model->index[0] = 3; }},
      {"index id", "index slot", [](fb::TokenizerSpecT& s) { s.model->index[1] = 99999; }},
      {"offsets order", "out of order", [](fb::TokenizerSpecT& s) { s.model->vocab_offsets[5] = 1000000; }},
      {"offsets count", "vocab_offsets", [](fb::TokenizerSpecT& s) { s.model->vocab_offsets.pop_back(); }},
      {"token bytes", "UTF-8", [](fb::TokenizerSpecT& s) { s.model->vocab_bytes[0] = 0xFF; }},
      {"byte ids", "byte", [](fb::TokenizerSpecT& s) { s.model->byte_ids.resize(10); }},
      {"unk id", "unk", [](fb::TokenizerSpecT& s) { s.model->unk_id = 4096; }},
      {"added token id", "added token", [](fb::TokenizerSpecT& s) { s.added_tokens[0]->id = 4096; }},
      {"template id", "template", [](fb::TokenizerSpecT& s) {
         auto item = std::make_unique<fb::TemplateItemT>();
         item->ids = {7000};
         s.template_single.push_back(std::move(item));
       }},
      {"eos id", "eos", [](fb::TokenizerSpecT& s) { s.eos_ids = {-3}; }},
      {"model kind", "model kind", [](fb::TokenizerSpecT& s) { s.model->kind = static_cast<fb::TokModelKind>(9); }},
      {"pre-tokenizer kind", "pre-tokenizer", [](fb::TokenizerSpecT& s) {
         s.pre_tokenizers[0]->kind = static_cast<fb::PreTokenizerKind>(42);
       }},
      {"regex", "Split", [](fb::TokenizerSpecT& s) {
         auto step = std::make_unique<fb::PreTokenizerStepT>();
         step->kind = fb::PreTokenizerKind::Split;
         step->pattern = "(unclosed";
         step->pattern_is_regex = true;
         s.pre_tokenizers.insert(s.pre_tokenizers.begin(), std::move(step));
       }},
      {"charsmap", "Precompiled", [](fb::TokenizerSpecT& s) {
         auto step = std::make_unique<fb::NormalizerStepT>();
         step->kind = fb::NormalizerKind::Precompiled;
         step->charsmap = {1, 2, 3};
         s.normalizers.push_back(std::move(step));
       }},
  };
  for (const Corruption& c : cases) {
    CAPTURE(c.name);
    std::unique_ptr<fb::TokenizerSpecT> spec = AustenSpec();
    c.apply(*spec);
    const Status st = Check(*spec);
    CHECK(!st.ok());
    CHECK_MESSAGE(std::string(st.message()).find(c.expect) != std::string::npos, st.message());
  }
  // Ids the model consumes are checked against the architecture's vocabulary too.
  std::unique_ptr<fb::TokenizerSpecT> spec = AustenSpec();
  spec->eos_ids = {2000};
  CHECK(Check(*spec, 0).ok());
  CHECK(!Check(*spec, 1024).ok());
}

// Marian's tables (SentencePiece lattice, piece kinds) as an object.
std::unique_ptr<fb::TokenizerSpecT> MarianSpec() {
  const std::string dir = testing::TokenizerDir("marian");
  return convert::CompileLegacyTokenizer(dir, testing::ReadJsonOrNull(dir + "/tokenizer_config.json"),
                                         testing::ReadJsonOrNull(dir + "/config.json"), nullptr);
}

TEST_CASE("malformed SentencePiece lattice and decoder tables are refused") {
  REQUIRE(Check(*MarianSpec()).ok());
  REQUIRE(MarianSpec()->model->lattice_only > 0);  // the data has pieces vocab.json lacks
  struct Corruption {
    const char* name;
    const char* expect;
    void (*apply)(fb::TokenizerSpecT&);
  };
  const Corruption cases[] = {
      {"lattice slot", "lattice slot", [](fb::TokenizerSpecT& s) {
         for (size_t i = 1; i < s.model->lattice_index.size(); ++i) {
           if (s.model->lattice_index[i] != 0) {
             s.model->lattice_index[i] = 1u << 20;
             break;
           }
         }
       }},
      {"lattice size", "lattice index", [](fb::TokenizerSpecT& s) { s.model->lattice_index.pop_back(); }},
      {"lattice-only pieces without their bytes", "vocab_offsets",
       [](fb::TokenizerSpecT& s) { s.model->lattice_only += 5; }},
      {"lattice-only pieces without an index", "lattice-only",
       [](fb::TokenizerSpecT& s) { s.model->lattice_index.clear(); }},
      {"scores", "scores", [](fb::TokenizerSpecT& s) { s.model->scores_f64.pop_back(); }},
      {"piece kinds size", "piece kinds", [](fb::TokenizerSpecT& s) { s.decoders[0]->piece_kinds.pop_back(); }},
      {"piece kind", "piece kind", [](fb::TokenizerSpecT& s) { s.decoders[0]->piece_kinds[7] = 9; }},
      {"decoder not alone", "only decoder", [](fb::TokenizerSpecT& s) {
         auto step = std::make_unique<fb::DecoderStepT>();
         step->kind = fb::DecoderKind::Fuse;
         s.decoders.push_back(std::move(step));
       }},
      {"charsmap", "SentencePiece normalizer", [](fb::TokenizerSpecT& s) {
         s.normalizers[0]->charsmap = {1, 2, 3};
       }},
  };
  for (const Corruption& c : cases) {
    CAPTURE(c.name);
    std::unique_ptr<fb::TokenizerSpecT> spec = MarianSpec();
    c.apply(*spec);
    const Status st = Check(*spec);
    CHECK(!st.ok());
    CHECK_MESSAGE(std::string(st.message()).find(c.expect) != std::string::npos, st.message());
  }
}

TEST_CASE("the loader refuses a model file whose tokenizer tables are corrupt") {
  std::unique_ptr<fb::TokenizerSpecT> spec = AustenSpec();
  spec->model->merges[0] = 12345;  // not a power of two
  testing::TinyModelOptions options;
  options.layers = 0;
  options.vocab = 2048;
  ModelWriter writer = testing::MakeTinyModelWriter(options);
  writer.SetCompiledTokenizer(std::move(spec));
  testing::AlignedBytes bytes(writer.WriteToBuffer());
  Result<Model> model = Model::FromBuffer(bytes.data(), bytes.size());
  REQUIRE(!model.ok());
  CHECK(std::string(model.status().message()).find("merge table") != std::string::npos);
}

TEST_CASE("the converter refuses what the runtime cannot reproduce, in one line") {
  const json base = testing::ReadJsonOrNull(testing::TokenizerDir("austen") + "/tokenizer.json");
  const auto refused = [&](json j) {
    convert::TokenizerSources sources;
    sources.tokenizer = std::move(j);
    try {
      convert::CompileTokenizer(sources);
    } catch (const convert::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  json j = base;
  j["pre_tokenizer"] = {{"type", "UnicodeScripts"}};
  CHECK(refused(j) == "tokenizer.json: pre_tokenizer UnicodeScripts is not supported");
  j = base;
  j["model"]["dropout"] = 0.1;
  CHECK(refused(j) == "tokenizer.json: model BPE dropout is not supported");
  j = base;
  j["truncation"] = {{"max_length", 512}};
  CHECK(refused(j) == "tokenizer.json: truncation is not supported");
  j = base;
  j["decoder"] = {{"type", "CTC"}};
  CHECK(refused(j) == "tokenizer.json: decoder CTC is not supported");
  j = base;
  j["normalizer"] = {{"type", "Replace"}, {"pattern", {{"Regex", "(a)\\1"}}}, {"content", "x"}};
  CHECK(refused(j).rfind("tokenizer.json: normalizer Replace regex", 0) == 0);
  j = base;
  j["model"]["merges"][0] = "notin thevocab";
  CHECK(refused(j).find("is not in the vocab") != std::string::npos);
}

// BPE by the book: repeatedly merge the leftmost pair of lowest rank.
std::vector<std::string> ReferenceBpe(std::vector<std::string> symbols,
                                      const std::map<std::pair<std::string, std::string>, size_t>& ranks) {
  for (;;) {
    size_t best = SIZE_MAX, at = 0;
    for (size_t i = 0; i + 1 < symbols.size(); ++i) {
      const auto it = ranks.find({symbols[i], symbols[i + 1]});
      if (it != ranks.end() && it->second < best) {
        best = it->second;
        at = i;
      }
    }
    if (best == SIZE_MAX) return symbols;
    symbols[at] += symbols[at + 1];
    symbols.erase(symbols.begin() + static_cast<long>(at) + 1);
  }
}

TEST_CASE("BPE's heap merge equals the plain reference on random words") {
  testing::LoadedTokenizer t = testing::LoadTokenizer("austen");
  REQUIRE(t.error.empty());
  const json j = testing::ReadJsonOrNull(testing::TokenizerDir("austen") + "/tokenizer.json");
  std::map<std::pair<std::string, std::string>, size_t> ranks;
  const json& merges = j["model"]["merges"];
  for (size_t r = 0; r < merges.size(); ++r) {
    std::string a, b;
    if (merges[r].is_string()) {
      const std::string s = merges[r].get<std::string>();
      a = s.substr(0, s.find(' '));
      b = s.substr(s.find(' ') + 1);
    } else {
      a = merges[r][0].get<std::string>();
      b = merges[r][1].get<std::string>();
    }
    ranks.emplace(std::make_pair(a, b), r);
  }
  const json& vocab = j["model"]["vocab"];
  uint32_t seed = 12345;
  const char letters[] = "etaoinshrdlucmfwypvbgkqjxz";
  EncodeOptions o;
  o.add_special_tokens = false;
  for (int trial = 0; trial < 300; ++trial) {
    std::string word;
    seed = seed * 1664525u + 1013904223u;
    const int len = 1 + static_cast<int>(seed >> 28);
    for (int k = 0; k < len; ++k) {
      seed = seed * 1664525u + 1013904223u;
      word += letters[(seed >> 24) % 26 < 12 ? (seed >> 24) % 6 : (seed >> 24) % 26];
    }
    std::vector<std::string> symbols;
    for (char c : word) symbols.push_back(std::string(1, c));
    std::vector<int32_t> want;
    for (const std::string& s : ReferenceBpe(symbols, ranks)) want.push_back(vocab[s].get<int32_t>());
    CAPTURE(word);
    CHECK(Encode(t.tokenizer, word, o) == want);
  }
}

// Texts of random words over many scripts, drawn from a pool larger than the
// word cache, so that words hit, miss and evict one another.
std::vector<std::string> RandomMultilingualTexts(size_t texts, size_t words_per_text) {
  const char* parts[] = {"the", "ing", "Mr", "s", "é", "ü", "ß", "œ", "α", "λόγ", "д", "жизнь",
                         "日", "本語", "한", "👋", "🏽", "12", "7", "'s", "-", ",", ".", "’",
                         "ا", "ب", "ि", "क", "\u0301", "\u200d", "ﬁ", "Ⅻ", "x", "QU"};
  const char* gaps[] = {" ", " ", " ", "  ", "\n", " \t", ""};
  uint32_t seed = 2024;
  const auto next = [&](uint32_t n) {
    seed = seed * 1664525u + 1013904223u;
    return (seed >> 8) % n;
  };
  std::vector<std::string> pool(6000);
  for (std::string& w : pool) {
    const uint32_t len = 1 + next(6);
    for (uint32_t k = 0; k < len; ++k) w += parts[next(sizeof(parts) / sizeof(parts[0]))];
  }
  std::vector<std::string> out(texts);
  for (std::string& t : out) {
    for (size_t k = 0; k < words_per_text; ++k) {
      // Skewed toward the pool's start, as word frequencies are.
      const uint32_t limit = next(4) == 0 ? static_cast<uint32_t>(pool.size()) : 300;
      t += pool[next(limit)];
      t += gaps[next(sizeof(gaps) / sizeof(gaps[0]))];
    }
  }
  return out;
}

TEST_CASE("the word cache gives the uncached path's ids on large multilingual text") {
  std::vector<std::string> texts;
  {
    std::ifstream in(OCTET_TOKENIZER_CORPUS);
    REQUIRE(in);
    std::string line;
    while (std::getline(in, line)) texts.push_back(json::parse(line).get<std::string>());
  }
  REQUIRE(texts.size() > 300);
  // Under qemu and the sanitizers: fewer random texts and no gemma (its 256k
  // vocabulary takes minutes to convert there); the plain host build runs all.
  // Under qemu also one tokenizer per model kind and pre-tokenizer (the cache's
  // code is shared by all; what qemu adds is the 32-bit target's hashing).
  const bool emulated = std::getenv("OCTET_TOKENIZER_EMULATED") != nullptr;
  const bool quick = emulated || std::getenv("OCTET_TOKENIZER_SANITIZED") != nullptr;
  const std::vector<std::string> emulated_names = {"gpt2",           "llama2",     "bert_uncased",
                                                   "albert_unigram", "t5_unigram", "austen"};
  if (quick) MESSAGE("emulated or sanitized build: 40 random texts instead of 150, gemma left out");
  if (emulated) {
    MESSAGE("emulated build: the word cache is checked with gpt2, llama2, bert_uncased, "
            "albert_unigram, t5_unigram and austen only (the host presets check every tokenizer)");
  }
  for (std::string& t : RandomMultilingualTexts(quick ? 40 : 150, 400)) texts.push_back(std::move(t));
  const size_t n_texts = texts.size();
  for (size_t i = 0; i < n_texts; ++i) texts.push_back(texts[i]);  // again: all hits
  size_t longest = 1;
  for (const std::string& t : texts) longest = std::max(longest, t.size());

  std::vector<std::string> names;
  std::stringstream csv(OCTET_TOKENIZER_NAMES);
  for (std::string name; std::getline(csv, name, ',');) names.push_back(name);
  names.push_back("austen");
  for (const std::string& name : emulated_names) {
    REQUIRE_MESSAGE(std::find(names.begin(), names.end(), name) != names.end(), name);
  }
  for (const std::string& name : names) {
    if (quick && name == "gemma") continue;
    if (emulated &&
        std::find(emulated_names.begin(), emulated_names.end(), name) == emulated_names.end()) {
      continue;
    }
    CAPTURE(name);
    testing::LoadedTokenizer t = testing::LoadTokenizer(name);
    REQUIRE_MESSAGE(t.error.empty(), t.error);
    TokenizerWorkspace cached, plain;
    REQUIRE(t.tokenizer.CreateWorkspace(longest, 1, &cached).ok());
    REQUIRE(t.tokenizer.CreateWorkspace(longest, 1, &plain).ok());
    std::vector<int32_t> a(t.tokenizer.MaxIds(longest)), b(a.size());
    EncodeOptions with, without;
    without.word_cache = false;
    size_t differ = 0, total_ids = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      with.add_special_tokens = without.add_special_tokens = i % 2 == 0;
      size_t na = 0, nb = 0;
      const Status sa = t.tokenizer.Encode(texts[i].data(), texts[i].size(), with, cached, a.data(),
                                           a.size(), &na);
      const Status sb = t.tokenizer.Encode(texts[i].data(), texts[i].size(), without, plain,
                                           b.data(), b.size(), &nb);
      REQUIRE(sa.code() == sb.code());
      total_ids += nb;
      if (na != nb || !std::equal(a.begin(), a.begin() + static_cast<long>(na), b.begin())) {
        if (differ++ < 3) MESSAGE("text " << i << " differs: " << texts[i].substr(0, 80));
      }
    }
    CHECK(differ == 0);
    CHECK(total_ids > (quick ? 30000u : 100000u));
  }
}

}  // namespace
}  // namespace octet
