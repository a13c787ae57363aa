// Legacy tokenizer sources -> tokenizer.json (converter/tokenize/legacy.h):
//  - Llama 2: the published tokenizer.json of Hugging Face, field by field
//    (vocab, merges, normalizer, pre-tokenizer, post-processor, decoder, model
//    flags, added tokens) from a tokenizer.model with the same pieces;
//  - SentencePiece models of each family, against the output that
//    gen_legacy_cases.py checked with HF tokenizers and SentencePiece;
//  - vocab.txt and vocab.json + merges.txt read as transformers reads them;
//  - malformed files give one-line errors, never a crash.
#include "tokenize/legacy.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "converter/test_util.h"
#include "import/json_util.h"
#include "tokenize/sentencepiece_model.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using octet::convert::CompileLegacyTokenizer;
using octet::convert::LegacyTokenizerJson;
using octet::convert::ParseSentencePieceModel;
using octet::testing::ErrorOf;
using octet::testing::Has;

const fs::path kCases = OCTET_LEGACY_CASES;

json ReadJson(const fs::path& path) {
  return octet::convert::ReadJsonFile(path, path.filename().string());
}

json ConvertCase(const std::string& name) {
  const fs::path src = kCases / name / "src";
  REQUIRE_MESSAGE(fs::exists(src), "missing case " << src);
  return LegacyTokenizerJson(src, ReadJson(src / "tokenizer_config.json"));
}

// A scratch directory with the given files, removed at the end of the test.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : path_(fs::temp_directory_path() / ("octet-legacy-" + name)) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() { fs::remove_all(path_); }
  void Write(const std::string& file, const std::string& text) const {
    std::ofstream(path_ / file, std::ios::binary) << text;
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// "a b" (older files) and ["a", "b"] (newer ones) are the same merge.
json MergePairs(const json& merges) {
  json out = json::array();
  for (const json& m : merges) {
    if (m.is_string()) {
      const std::string s = m.get<std::string>();
      const size_t space = s.find(' ');
      out.push_back({s.substr(0, space), s.substr(space + 1)});
    } else {
      out.push_back(m);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("legacy: Llama 2's tokenizer.model gives its published tokenizer.json") {
  const json got = ConvertCase("llama2-published");
  const json pub = ReadJson(kCases / "llama2-published" / "published.json");
  for (const char* field :
       {"added_tokens", "normalizer", "pre_tokenizer", "post_processor", "decoder"}) {
    CAPTURE(field);
    CHECK(got[field] == pub[field]);
  }
  const json& gm = got["model"];
  const json& pm = pub["model"];
  for (const char* field : {"type", "dropout", "unk_token", "continuing_subword_prefix",
                            "end_of_word_suffix", "fuse_unk", "byte_fallback"}) {
    CAPTURE(field);
    CHECK(gm[field] == pm[field]);
  }
  CHECK(gm["ignore_merges"] == pm.value("ignore_merges", false));
  CHECK(gm["vocab"].size() == 32000);
  CHECK(gm["vocab"] == pm["vocab"]);
  CHECK(gm["merges"].size() == pm["merges"].size());
  CHECK(gm["merges"] == MergePairs(pm["merges"]));
}

TEST_CASE("legacy: GPT-2's vocab.json + merges.txt give its published tokenizer.json") {
  const json got = ConvertCase("gpt2-published");
  const json pub = ReadJson(kCases / "gpt2-published" / "published.json");
  for (const char* field :
       {"added_tokens", "normalizer", "pre_tokenizer", "post_processor", "decoder"}) {
    CAPTURE(field);
    CHECK(got[field] == pub[field]);
  }
  const json& gm = got["model"];
  const json& pm = pub["model"];
  for (const char* field : {"type", "dropout", "unk_token", "continuing_subword_prefix",
                            "end_of_word_suffix", "fuse_unk", "byte_fallback"}) {
    CAPTURE(field);
    CHECK(gm[field] == pm[field]);
  }
  CHECK(gm["ignore_merges"] == pm.value("ignore_merges", false));
  CHECK(gm["vocab"].size() == 50257);
  CHECK(gm["vocab"] == pm["vocab"]);
  CHECK(gm["merges"].size() == 50000);
  CHECK(gm["merges"] == MergePairs(pm["merges"]));
}

TEST_CASE("legacy: SentencePiece families give the checked tokenizer.json") {
  for (const char* name : {"t5", "albert", "xlmr", "llama", "gemma"}) {
    CAPTURE(name);
    const json got = ConvertCase(name);
    const json want = ReadJson(kCases / name / "expected.json");
    CHECK(got == want);
  }
}

TEST_CASE("legacy: what each SentencePiece family adds") {
  const json t5 = ConvertCase("t5");
  CHECK(t5["model"]["type"] == "Unigram");
  CHECK(t5["model"]["unk_id"] == 2);
  // extra_ids = 8: <extra_id_7> .. <extra_id_0> after the 800 pieces.
  CHECK(t5["model"]["vocab"].size() == 808);
  CHECK(t5["model"]["vocab"][800][0] == "<extra_id_7>");
  CHECK(t5["model"]["vocab"][807][0] == "<extra_id_0>");
  CHECK(t5["normalizer"]["normalizers"][0]["type"] == "Precompiled");
  CHECK(t5["post_processor"]["single"][1]["SpecialToken"]["id"] == "</s>");

  const json xlmr = ConvertCase("xlmr");
  CHECK(xlmr["model"]["unk_id"] == 3);
  CHECK(xlmr["model"]["vocab"][3][0] == "<unk>");
  CHECK(xlmr["model"]["vocab"].back()[0] == "<mask>");
  bool mask_lstrip = false;
  for (const json& t : xlmr["added_tokens"]) {
    if (t["content"] == "<mask>") mask_lstrip = t["lstrip"].get<bool>();
  }
  CHECK(mask_lstrip);

  const json albert = ConvertCase("albert");
  // [MASK] is a user-defined piece: an added token that is not special... until
  // the config's mask_token makes it one; the first addition wins, as in HF.
  bool found_mask = false;
  for (const json& t : albert["added_tokens"]) {
    if (t["content"] == "[MASK]") {
      found_mask = true;
      CHECK(t["id"] == 4);
    }
  }
  CHECK(found_mask);
  CHECK(albert["normalizer"]["normalizers"][2]["type"] == "NFKD");

  const json gemma = ConvertCase("gemma");
  CHECK(gemma["model"]["type"] == "BPE");
  CHECK(gemma["model"]["byte_fallback"] == true);
  for (const json& t : gemma["added_tokens"]) {
    if (t["content"] == "<start_of_turn>") CHECK(t["special"] == true);
  }
}

TEST_CASE("legacy: tokenizer_config.json's added_tokens_decoder sets the added tokens' flags") {
  ScratchDir dir("decoder");
  fs::copy_file(kCases / "albert" / "src" / "spiece.model", dir.path() / "spiece.model");
  // [MASK] is a user-defined piece: the converter adds it as a plain token, and
  // AlbertTokenizerFast's own mask AddedToken(lstrip=True) is added again over it
  // (PreTrainedTokenizerFast re-adds AddedToken attributes; tokenizers keeps the
  // last flags for an id), special as a special-token attribute...
  json config = {{"tokenizer_class", "AlbertTokenizer"}};
  auto mask_of = [](const json& tok) {
    for (const json& t : tok["added_tokens"]) {
      if (t["content"] == "[MASK]") return t;
    }
    return json();
  };
  json mask = mask_of(LegacyTokenizerJson(dir.path(), config));
  CHECK(mask["special"] == true);
  CHECK(mask["lstrip"] == true);
  // ...and a config that lists it (as newer checkpoints do) gives its flags,
  // special too when a special-token attribute names it.
  config["added_tokens_decoder"] = {{"4",
                                     {{"content", "[MASK]"},
                                      {"lstrip", true},
                                      {"normalized", false},
                                      {"rstrip", false},
                                      {"single_word", false},
                                      {"special", false}}}};
  config["mask_token"] = "[MASK]";
  mask = mask_of(LegacyTokenizerJson(dir.path(), config));
  CHECK(mask["id"] == 4);
  CHECK(mask["special"] == true);
  CHECK(mask["lstrip"] == true);
}

TEST_CASE("legacy: vocab.txt read as BertTokenizer reads it") {
  ScratchDir dir("bert");
  // CRLF and a lone CR end lines too; a repeated token keeps its last line.
  dir.Write("vocab.txt", "[PAD]\n[UNK]\r\n[CLS]\r[SEP]\n[MASK]\nhello\n##lo\nhello\n");
  json config = {{"tokenizer_class", "BertTokenizerFast"}};
  json got = LegacyTokenizerJson(dir.path(), config);
  CHECK(got["model"]["type"] == "WordPiece");
  CHECK(got["model"]["vocab"]["hello"] == 7);
  CHECK(got["model"]["vocab"]["##lo"] == 6);
  CHECK(got["model"]["vocab"]["[SEP]"] == 3);
  CHECK(got["normalizer"]["lowercase"] == true);
  CHECK(got["normalizer"]["strip_accents"].is_null());
  CHECK(got["normalizer"]["handle_chinese_chars"] == true);
  CHECK(got["post_processor"]["special_tokens"]["[CLS]"]["ids"][0] == 2);
  CHECK(got["post_processor"]["pair"][3]["Sequence"]["type_id"] == 1);
  REQUIRE(got["added_tokens"].size() == 5);
  CHECK(got["added_tokens"][0]["content"] == "[PAD]");
  CHECK(got["added_tokens"][4]["content"] == "[MASK]");
  CHECK(got["added_tokens"][4]["normalized"] == false);

  config = {{"tokenizer_class", "BertTokenizer"},
            {"do_lower_case", false},
            {"strip_accents", false},
            {"tokenize_chinese_chars", false}};
  got = LegacyTokenizerJson(dir.path(), config);
  CHECK(got["normalizer"]["lowercase"] == false);
  CHECK(got["normalizer"]["strip_accents"] == false);
  CHECK(got["normalizer"]["handle_chinese_chars"] == false);

  // A special token the vocabulary lacks is added after it, as HF adds it.
  config["cls_token"] = "<cls>";
  got = LegacyTokenizerJson(dir.path(), config);
  CHECK(got["post_processor"]["special_tokens"]["<cls>"]["ids"][0] == 8);
  CHECK(got["added_tokens"].back()["content"] == "<cls>");
  CHECK(got["added_tokens"].back()["id"] == 8);
}

TEST_CASE("legacy: vocab.json + merges.txt read as GPT2Tokenizer reads them") {
  ScratchDir dir("gpt2");
  dir.Write("vocab.json",
            R"({"a": 0, "b": 1, "ab": 2, "c": 3, "abc": 4, "<|endoftext|>": 5, "<s>": 6,)"
            R"( "</s>": 7, "<pad>": 8, "<unk>": 9, "<mask>": 10})");
  // The first line is dropped whatever it says, and so is the last one.
  dir.Write("merges.txt", "a b\na  b\nab c\nab\tc\nc c");
  json got = LegacyTokenizerJson(dir.path(), {{"tokenizer_class", "GPT2Tokenizer"}});
  CHECK(got["model"]["merges"] == json::parse(R"([["a", "b"], ["ab", "c"]])"));
  CHECK(got["model"]["continuing_subword_prefix"] == "");
  CHECK(got["pre_tokenizer"]["add_prefix_space"] == false);
  CHECK(got["post_processor"]["type"] == "ByteLevel");
  CHECK(got["post_processor"]["trim_offsets"] == false);
  REQUIRE(got["added_tokens"].size() == 1);
  CHECK(got["added_tokens"][0]["id"] == 5);
  CHECK(got["added_tokens"][0]["normalized"] == false);

  got = LegacyTokenizerJson(dir.path(),
                            {{"tokenizer_class", "RobertaTokenizer"}, {"add_prefix_space", true}});
  CHECK(got["post_processor"]["type"] == "RobertaProcessing");
  CHECK(got["post_processor"]["cls"] == json::parse(R"(["<s>", 6])"));
  CHECK(got["post_processor"]["sep"] == json::parse(R"(["</s>", 7])"));
  CHECK(got["pre_tokenizer"]["add_prefix_space"] == true);
  CHECK(got["added_tokens"].back()["content"] == "<mask>");
  CHECK(got["added_tokens"].back()["lstrip"] == true);

  dir.Write("merges.txt", "#version: 0.2\na b c\n");
  CHECK(Has(ErrorOf([&] {
              LegacyTokenizerJson(dir.path(), {{"tokenizer_class", "GPT2Tokenizer"}});
            }),
            "merges.txt: line 2"));
}

TEST_CASE("legacy: Marian's files are compiled, and what is not supported is refused in one line") {
  ScratchDir dir("marian");
  dir.Write("config.json", R"({"model_type": "marian"})");
  CHECK(Has(ErrorOf([&] { CompileLegacyTokenizer(dir.path(), json::object(), nullptr, nullptr); }),
            "source.spm is missing"));
  CHECK(Has(ErrorOf([&] {
              CompileLegacyTokenizer(dir.path(), {{"separate_vocabs", true}}, nullptr, nullptr);
            }),
            "separate_vocabs"));
  dir.Write("source.spm", "not a model");
  dir.Write("target.spm", "not a model");
  dir.Write("vocab.json", R"({"</s>": 0, "<unk>": 2})");
  CHECK(Has(ErrorOf([&] { CompileLegacyTokenizer(dir.path(), json::object(), nullptr, nullptr); }),
            "vocab.json"));
  dir.Write("vocab.json", R"({"</s>": 0, "<unk>": 1, "<pad>": 2})");
  CHECK(Has(ErrorOf([&] { CompileLegacyTokenizer(dir.path(), json::object(), nullptr, nullptr); }),
            "source.spm"));
}

TEST_CASE("legacy: the tokenizer class comes from config.json when the config has none") {
  ScratchDir dir("class");
  dir.Write("vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n");
  CHECK(Has(ErrorOf([&] { LegacyTokenizerJson(dir.path(), json::object()); }), "config.json"));
  dir.Write("config.json", R"({"model_type": "bert"})");
  CHECK(LegacyTokenizerJson(dir.path(), json::object())["model"]["type"] == "WordPiece");
  dir.Write("config.json", R"({"model_type": "marian"})");
  CHECK(Has(ErrorOf([&] { LegacyTokenizerJson(dir.path(), json::object()); }), "MarianTokenizer"));
  CHECK(Has(ErrorOf([&] {
              LegacyTokenizerJson(dir.path(), {{"tokenizer_class", "FooTokenizer"}});
            }),
            "FooTokenizer"));
  CHECK(Has(ErrorOf([&] {
              LegacyTokenizerJson(dir.path(), {{"tokenizer_class", "T5Tokenizer"}});
            }),
            "spiece.model is missing"));
}

TEST_CASE("legacy: malformed SentencePiece models give one-line errors") {
  std::ifstream in(kCases / "t5" / "src" / "spiece.model", std::ios::binary);
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(good.size() > 1000);
  CHECK(ParseSentencePieceModel(good, "spiece.model").pieces.size() == 800);

  CHECK(Has(ErrorOf([&] { ParseSentencePieceModel("", "spiece.model"); }), "no pieces"));
  CHECK(Has(
      ErrorOf([&] { ParseSentencePieceModel(good.substr(0, good.size() / 2), "spiece.model"); }),
      "truncated"));
  // Field 1 with wire type 7 (none such).
  CHECK(Has(ErrorOf([&] { ParseSentencePieceModel(std::string("\x0f", 1), "x.model"); }),
            "wire type"));
  // A length that runs past the end.
  CHECK(
      Has(ErrorOf([&] { ParseSentencePieceModel(std::string("\x0a\xff\xff\x03", 4), "x.model"); }),
          "truncated"));

  // Random damage: parsed or refused, never a crash or a read out of bounds
  // (the asan preset checks the latter).
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    std::string bad = good.substr(0, 4096 + rng() % 4096);
    for (int k = 0; k < 8; ++k) bad[rng() % bad.size()] = static_cast<char>(rng());
    try {
      (void)ParseSentencePieceModel(bad, "x.model");
    } catch (const octet::convert::Error&) {
    }
  }
}
