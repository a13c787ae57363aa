#include "tokenize/marian_tokenizer.h"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "import/error.h"
#include "import/json_util.h"
#include "text/tokenizer_check.h"
#include "tokenize/compile_tokenizer.h"
#include "tokenize/sentencepiece_model.h"

namespace octet {
namespace convert {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Type = SentencePieceModel::PieceType;

// A tokenizer_config special token: a string or an AddedToken-like object.
std::string TokenString(const json& config, const char* key, const char* fallback) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return fallback;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
    return (*it)["content"].get<std::string>();
  }
  Fail("tokenizer_config.json: ", key, " is neither a string nor a token object");
}

// vocab.json as a list indexed by id; the ids must be 0 .. n-1, each once.
std::vector<std::string> ReadVocab(const fs::path& path) {
  const json v = ReadJsonFile(path, "vocab.json");
  if (!v.is_object() || v.empty()) Fail("vocab.json: not an object of token -> id");
  std::vector<std::string> by_id(v.size());
  std::vector<bool> seen(v.size(), false);
  for (const auto& [token, id] : v.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() >= static_cast<int64_t>(v.size())) {
      Fail("vocab.json: ", JsonValueString(json(token)), " has id ", JsonValueString(id),
           ": the ids must run from 0 to ", v.size() - 1);
    }
    const size_t i = static_cast<size_t>(id.get<int64_t>());
    if (seen[i]) Fail("vocab.json: id ", i, " is given to two tokens");
    seen[i] = true;
    by_id[i] = token;
  }
  return by_id;
}

void CheckSpm(const SentencePieceModel& m, const char* name) {
  if (m.byte_fallback) Fail(name, ": byte fallback is not supported in a Marian tokenizer");
  for (const auto& p : m.pieces) {
    if (p.type == Type::kUserDefined) {
      Fail(name, ": user-defined piece ", JsonValueString(json(p.piece)), " is not supported");
    }
    if (p.type == Type::kByte) Fail(name, ": byte pieces are not supported in a Marian tokenizer");
  }
}

}  // namespace

std::unique_ptr<fb::TokenizerSpecT> CompileMarianTokenizer(const fs::path& dir,
                                                           const json& tokenizer_config,
                                                           const json& config,
                                                           const json& generation_config) {
  const json tc = tokenizer_config.is_object() ? tokenizer_config : json::object();
  if (tc.value("separate_vocabs", false)) {
    Fail("MarianTokenizer: separate_vocabs (a target_vocab.json for the decoder) is not supported");
  }
  for (const char* name : {"source.spm", "target.spm", "vocab.json"}) {
    if (!fs::is_regular_file(dir / name)) Fail("MarianTokenizer: ", name, " is missing");
  }
  const std::vector<std::string> vocab = ReadVocab(dir / "vocab.json");
  std::unordered_map<std::string, int32_t> id_of;
  for (size_t i = 0; i < vocab.size(); ++i) id_of[vocab[i]] = static_cast<int32_t>(i);
  const SentencePieceModel source = ReadSentencePieceModel(dir / "source.spm");
  const SentencePieceModel target = ReadSentencePieceModel(dir / "target.spm");
  if (source.model_type != SentencePieceModel::ModelType::kUnigram) {
    Fail("source.spm: only a Unigram model is supported for Marian");
  }
  CheckSpm(source, "source.spm");
  CheckSpm(target, "target.spm");

  // The special tokens (MarianTokenizer's defaults), split out of the text as a slow tokenizer does.
  std::vector<std::string> specials = {TokenString(tc, "eos_token", "</s>"),
                                       TokenString(tc, "unk_token", "<unk>"),
                                       TokenString(tc, "pad_token", "<pad>")};
  if (const auto it = tc.find("additional_special_tokens"); it != tc.end() && it->is_array()) {
    for (const json& t : *it) {
      if (t.is_string()) specials.push_back(t.get<std::string>());
      if (t.is_object() && t.contains("content") && t["content"].is_string()) {
        specials.push_back(t["content"].get<std::string>());
      }
    }
  }
  for (const std::string& s : specials) {
    if (id_of.count(s) == 0) {
      Fail("vocab.json: the special token ", JsonValueString(json(s)), " is not in the vocabulary");
    }
  }
  const int32_t eos = id_of.at(specials[0]);
  const int32_t unk = id_of.at(specials[1]);

  // The rest of the pipeline in tokenizer.json's shape, compiled as every other one.
  json root = json::object();
  json pieces = json::array();
  for (const std::string& t : vocab) pieces.push_back(json::array({t, 0.0}));
  root["model"] = {{"type", "Unigram"}, {"unk_id", unk}, {"vocab", std::move(pieces)}};
  json added = json::array();
  for (const std::string& s : specials) {
    bool dup = false;
    for (const json& a : added) dup = dup || a["content"] == s;
    if (dup) continue;
    added.push_back({{"id", id_of.at(s)}, {"content", s}, {"special", true}, {"normalized", false},
                     {"lstrip", false}, {"rstrip", false}, {"single_word", false}});
  }
  root["added_tokens"] = std::move(added);
  const json seq_a = {{"Sequence", {{"id", "A"}, {"type_id", 0}}}};
  const json seq_b = {{"Sequence", {{"id", "B"}, {"type_id", 0}}}};
  const json end = {{"SpecialToken", {{"id", specials[0]}, {"type_id", 0}}}};
  root["post_processor"] = {
      {"type", "TemplateProcessing"},
      {"single", json::array({seq_a, end})},
      {"pair", json::array({seq_a, seq_b, end})},
      {"special_tokens",
       {{specials[0], {{"id", specials[0]}, {"ids", json::array({eos})}, {"tokens", json::array({specials[0]})}}}}}};
  TokenizerSources sources;
  sources.tokenizer = std::move(root);
  sources.tokenizer_config = tc;
  sources.config = config;
  sources.generation_config = generation_config;
  std::unique_ptr<fb::TokenizerSpecT> spec = CompileTokenizer(sources);
  fb::TokModelT& m = *spec->model;
  if (m.vocab_size != vocab.size()) Fail("vocab.json: the compiled vocabulary has another size");

  // SentencePiece's normalizer, with source.spm's charsmap and flags.
  auto norm = std::make_unique<fb::NormalizerStepT>();
  norm->kind = fb::NormalizerKind::SentencePiece;
  norm->charsmap.assign(source.precompiled_charsmap.begin(), source.precompiled_charsmap.end());
  norm->spm_add_dummy_prefix = source.add_dummy_prefix;
  norm->spm_remove_extra_whitespaces = source.remove_extra_whitespaces;
  norm->spm_escape_whitespaces = source.escape_whitespaces;
  spec->normalizers.clear();
  spec->normalizers.push_back(std::move(norm));

  // The lattice: source.spm's normal pieces (SentencePiece matches no control,
  // unknown or unused piece), by vocab.json id or, when vocab.json lacks the
  // piece, by an id past the vocabulary that is emitted as <unk>.
  std::vector<std::pair<std::string, int32_t>> keys;
  float min_score = std::numeric_limits<float>::max();
  uint32_t extra = 0;
  for (const auto& p : source.pieces) {
    if (p.type != Type::kNormal) continue;
    min_score = std::min(min_score, p.score);
    int32_t id;
    if (const auto it = id_of.find(p.piece); it != id_of.end()) {
      id = it->second;
    } else {
      id = static_cast<int32_t>(m.vocab_size + extra++);
      m.vocab_bytes.insert(m.vocab_bytes.end(), p.piece.begin(), p.piece.end());
      m.vocab_offsets.push_back(static_cast<uint32_t>(m.vocab_bytes.size()));
      m.scores_f64.push_back(0.0);
      m.scores.push_back(0.0f);
    }
    m.scores_f64[static_cast<size_t>(id)] = static_cast<double>(p.score);
    m.scores[static_cast<size_t>(id)] = p.score;
    keys.push_back({p.piece, id});
  }
  if (keys.empty()) Fail("source.spm: no normal pieces");
  uint32_t longest = 0;
  m.lattice_index = BuildTokIndex(keys, &longest);
  m.lattice_only = extra;
  m.float_lattice = true;
  m.fuse_unk = true;
  m.unk_score = static_cast<double>(min_score - 10.0f);  // SentencePiece: min score - kUnkPenalty, in float
  spec->language_code_prefix = true;

  // Decoding: vocab.json's pieces as target.spm reads them.
  std::unordered_map<std::string, Type> target_type;
  for (const auto& p : target.pieces) target_type[p.piece] = p.type;
  auto dec = std::make_unique<fb::DecoderStepT>();
  dec->kind = fb::DecoderKind::SentencePiece;
  dec->unk_surface = " \xE2\x81\x87 ";  // SentencePiece's default unk_surface
  dec->piece_kinds.resize(vocab.size(), 0);
  for (size_t i = 0; i < vocab.size(); ++i) {
    const auto it = target_type.find(vocab[i]);
    if (it == target_type.end()) {
      dec->piece_kinds[i] = 2;
    } else if (it->second == Type::kControl) {
      dec->piece_kinds[i] = 1;
    } else if (it->second == Type::kUnknown) {
      dec->piece_kinds[i] = 3;
    }
  }
  spec->decoders.clear();
  spec->decoders.push_back(std::move(dec));

  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(fb::TokenizerSpec::Pack(fbb, spec.get()));
  const Status st =
      text::CheckTokenizerSpec(*flatbuffers::GetRoot<fb::TokenizerSpec>(fbb.GetBufferPointer()), 0);
  if (!st.ok()) Fail("MarianTokenizer: ", st.message());
  return spec;
}

}  // namespace convert
}  // namespace octet
