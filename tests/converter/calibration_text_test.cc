// Calibration text through the model's own tokenizer, as the runtime runs it
// (quantize/calibration_text.h): the Austen tokenizer gives the ids of
// tests/converter/data/austen_bpe_cases.json (made by make_bpe_cases.py beside
// it from models/austen/bpe.py and GPT-2's exact pattern); the built-in text
// encodes with every kind of tokenizer (byte-level BPE, SentencePiece BPE with
// byte fallback, Unigram, WordPiece), its calibration and held-out passages
// apart; a text calibration file is read through any of them.
#include "quantize/calibration_text.h"

#include <doctest/doctest.h>

#include <filesystem>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "converter/hf_fixtures.h"
#include "converter/test_util.h"
#include "convert.h"
#include "import/error.h"
#include "quantize/report.h"
#include "tokenize/compile_tokenizer.h"

namespace octet {
namespace {

using nlohmann::json;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The compiled tokenizer of a directory holding tokenizer.json (+ tokenizer_config.json).
std::unique_ptr<fb::TokenizerSpecT> Compile(const std::string& dir) {
  convert::TokenizerSources sources;
  sources.tokenizer = json::parse(ReadFile(dir + "/tokenizer.json"));
  std::ifstream config(dir + "/tokenizer_config.json");
  if (config.good()) sources.tokenizer_config = json::parse(config);
  return convert::CompileTokenizer(sources);
}

const std::string kSource = OCTET_SOURCE_DIR;
const std::string kTokenizers = OCTET_TOKENIZER_DATA_DIR;
constexpr uint32_t kAnyVocab = 1u << 20;  // larger than every tokenizer's

TEST_CASE("calibration text: the Austen tokenizer gives the ids of austen_bpe_cases.json") {
  const json data = json::parse(ReadFile(kSource + "/tests/converter/data/austen_bpe_cases.json"));
  const convert::TextEncoder encoder(*Compile(kSource + "/models/austen"));
  REQUIRE(data["cases"].size() >= 30);
  for (const json& c : data["cases"]) {
    const std::string text = c["text"].get<std::string>();
    INFO("text: " << json(text).dump());
    CHECK(encoder.Encode(text, false) == c["ids"].get<std::vector<int32_t>>());
  }
}

TEST_CASE("calibration text: the built-in passages encode with every kind of tokenizer") {
  for (const char* name : {"gpt2", "llama2", "t5_unigram", "bert_uncased", "albert_unigram"}) {
    CAPTURE(name);
    const auto spec = Compile(kTokenizers + "/" + name);
    const convert::TextEncoder encoder(*spec);
    const convert::BuiltInSamples s = convert::BuiltInCalibration(encoder, kAnyVocab, 128);
    // 6 languages x (3 calibration, 2 held-out) passages, each cut to 128 ids.
    CHECK(s.calibration.sequences.size() == 18);
    CHECK(s.heldout.sequences.size() == 12);
    std::set<std::vector<int32_t>> calibration(s.calibration.sequences.begin(),
                                               s.calibration.sequences.end());
    size_t ids = 0;
    for (const auto& seq : s.heldout.sequences) {
      CHECK(calibration.count(seq) == 0);  // measured on what it was not tuned on
      CHECK(seq.size() <= 128);
      ids += seq.size();
    }
    CHECK(ids > 12 * 40);
    CHECK(testing::Has(s.calibration.description, "en, es, fr, ja, ko, zh"));
    MESSAGE(std::string(name) << ": " << s.calibration.description << "; " << s.heldout.description);
  }
  // A vocabulary smaller than the tokenizer's: refused (the tokenizer is not the model's).
  const auto gpt2 = Compile(kTokenizers + "/gpt2");
  const convert::TextEncoder encoder(*gpt2);
  CHECK_THROWS_WITH_AS(convert::BuiltInCalibration(encoder, 100, 128),
                       doctest::Contains("outside the model's vocabulary (100)"), convert::Error);
}

TEST_CASE("calibration text: a text file is encoded by the model's tokenizer, whatever its kind") {
  testing::TempDir dir;
  const std::filesystem::path text = dir.path() / "calibration.txt";
  {
    std::ofstream out(text);
    out << "It is a truth universally acknowledged, that a single man in possession of a good "
           "fortune, must be in want of a wife.\n";
  }
  for (const char* name : {"bert_uncased", "t5_unigram"}) {
    CAPTURE(name);
    const auto spec = Compile(kTokenizers + "/" + name);
    const convert::TextEncoder encoder(*spec);
    const convert::Calibration c =
        convert::ReadCalibration(text, kAnyVocab, 0, &encoder);
    REQUIRE(c.sequences.size() == 1);
    CHECK(c.sequences[0] == encoder.Encode(ReadFile(text.string()), false));
    CHECK(testing::Has(c.description, "text encoded with the model's tokenizer"));
  }
  CHECK_THROWS_WITH_AS(convert::ReadCalibration(text, 1000, 0, nullptr),
                       doctest::Contains("has no tokenizer to encode it"), convert::Error);
}

// An encoder converted with no flags: calibrated on the built-in text through
// its own tokenizer (WordPiece here), tuned and measured on the held-out
// passages, layer by layer.
TEST_CASE("calibration text: an encoder with a tokenizer calibrates on the built-in text") {
  testing::HfOptions o;
  o.vocab = 30522;  // bert-base-uncased's
  testing::HfCheckpoint c = testing::MakeHfCheckpoint("bert", o);
  testing::TempDir dir;
  c.Write(dir.path(), "F32");
  for (const char* file : {"tokenizer.json", "tokenizer_config.json", "vocab.txt"}) {
    std::filesystem::copy_file(kTokenizers + "/bert_uncased/" + file, dir.path() / file);
  }
  convert::ConvertOptions options;
  options.tune.target_ppl_ratio = 0.5;  // every step
  const convert::ConvertResult r =
      convert::ConvertCheckpoint(dir.path(), dir.path() / "int8.octet", options);
  CHECK(testing::Has(r.calibration, "18 passages"));
  CHECK(testing::Has(r.calibration, "of the built-in text (public-domain prose in"));
  CHECK(testing::Has(r.tuning.evaluation, "of the held-out built-in text"));
  REQUIRE(r.tuning.steps.size() >= 2);
  CHECK(r.tuning.steps[1].name == "layer by layer");
  CHECK_FALSE(r.tuning.final_metrics.has_distribution);
  CHECK(r.tuning.final_metrics.noise_to_signal <= r.tuning.steps[0].metrics.noise_to_signal);
  MESSAGE(r.calibration << "; measured on " << r.tuning.evaluation);
}

}  // namespace
}  // namespace octet
