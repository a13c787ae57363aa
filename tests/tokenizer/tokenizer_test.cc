// The on-device tokenizer against Hugging Face tokenizers' goldens
// (goldens/<name>.jsonl, made by gen_goldens.js with npm tokenizers): each
// real tokenizer goes converter -> model file -> loader -> runtime, then every
// corpus line must give HF's ids with and without special tokens, HF's decode
// (skip and keep special), and the streaming decoder must give the same text.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "format/model.h"
#include "support/test_models.h"
#include "text/tokenizer.h"
#include "tokenize/compile_tokenizer.h"
#include "tokenizer_test_util.h"

namespace octet {
namespace {

using nlohmann::json;
using text::EncodeOptions;
using text::StreamDecoder;
using text::Tokenizer;
using text::TokenizerWorkspace;

std::string Show(const std::vector<int32_t>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s + "]";
}

struct Counts {
  int lines = 0, encode_bad = 0, encode_ns_bad = 0, encode_split_bad = 0, decode_bad = 0,
      decode_keep_bad = 0, stream_bad = 0, errors = 0;
};

void RunGoldens(const std::string& name) {
  testing::LoadedTokenizer loaded = testing::LoadTokenizer(name);
  REQUIRE_MESSAGE(loaded.error.empty(), loaded.error);
  const Tokenizer& tok = loaded.tokenizer;
  TokenizerWorkspace ws;
  // The corpus's lines are short (< 1 KiB); the workspace is sized for 4 KiB.
  REQUIRE(tok.CreateWorkspace(4096, 4096, &ws).ok());
  std::vector<int32_t> ids(tok.MaxIds(4096));
  std::vector<char> out(tok.MaxDecodedBytes(4096));
  StreamDecoder stream;
  std::ifstream in(testing::GoldenPath(name));
  REQUIRE(in);
  std::string line;
  std::getline(in, line);  // provenance
  Counts c;
  int shown = 0;
  const auto note = [&](const std::string& what) {
    if (shown++ < 12) MESSAGE(name << ": " << what);
  };
  const auto decode = [&](const std::vector<int32_t>& v, bool skip, std::string* s) {
    size_t n = 0;
    const Status st = tok.Decode(v.data(), v.size(), skip, ws, out.data(), out.size(), &n);
    if (!st.ok()) return std::string(st.message());
    s->assign(out.data(), n);
    return std::string();
  };
  const auto streamed = [&](const std::vector<int32_t>& v, bool skip, std::string* s) {
    s->clear();
    if (!stream.Init(&tok, &ws, skip).ok()) return std::string("stream init");
    std::vector<char> piece(tok.MaxDecodedBytes(StreamDecoder::kWindow));
    size_t n = 0;
    for (int32_t id : v) {
      const Status st = stream.Push(id, piece.data(), piece.size(), &n);
      if (!st.ok()) return std::string(st.message());
      s->append(piece.data(), n);
    }
    const Status st = stream.Finish(piece.data(), piece.size(), &n);
    if (!st.ok()) return std::string(st.message());
    s->append(piece.data(), n);
    return std::string();
  };
  while (std::getline(in, line)) {
    // "extra": a tokenizer's own encode cases beyond the corpus (marian: language codes).
    const json g0 = json::parse(line);
    const json& g = g0.contains("extra") ? g0["extra"] : g0;
    if (g.contains("decode")) {
      const json& d = g["decode"];
      const std::vector<int32_t> v = d["ids"].get<std::vector<int32_t>>();
      bool outside = false;
      for (int32_t id : v) outside = outside || id < 0 || static_cast<uint32_t>(id) >= tok.vocab_size();
      if (outside) {
        // HF skips such ids; octet refuses them (a model never gives one).
        std::string s;
        CHECK(!decode(v, true, &s).empty());
        CHECK(!decode(v, false, &s).empty());
        continue;
      }
      std::string s;
      std::string err = decode(v, true, &s);
      if (!err.empty() || s != d["decoded"].get<std::string>()) {
        ++c.decode_bad;
        note("decode case " + d["case"].dump() + ": " + err + " got " + json(s).dump());
      }
      err = decode(v, false, &s);
      if (!err.empty() || s != d["decoded_keep_special"].get<std::string>()) {
        ++c.decode_keep_bad;
        note("decode keep case " + d["case"].dump() + ": " + err + " got " + json(s).dump());
      }
      continue;
    }
    ++c.lines;
    const std::string text = g["text"].get<std::string>();
    for (bool special : {true, false}) {
      const std::vector<int32_t> want = g[special ? "ids" : "ids_no_special"].get<std::vector<int32_t>>();
      EncodeOptions o;
      o.add_special_tokens = special;
      size_t n = 0;
      const Status st = tok.Encode(text.data(), text.size(), o, ws, ids.data(), ids.size(), &n);
      const std::vector<int32_t> got(ids.begin(), ids.begin() + (st.ok() ? n : 0));
      if (!st.ok() || got != want) {
        ++(special ? c.encode_bad : c.encode_ns_bad);
        note(std::string(special ? "ids" : "ids_no_special") + " of " + json(text).dump() + ": " +
             (st.ok() ? "" : st.message()) + " got " + Show(got) + " want " + Show(want));
      }
    }
    if (g.contains("ids_split_special")) {
      // What --chat does with typed text: special-token strings are plain text.
      const std::vector<int32_t> want = g["ids_split_special"].get<std::vector<int32_t>>();
      EncodeOptions o;
      o.add_special_tokens = false;
      o.split_special_tokens = true;
      size_t n = 0;
      const Status st = tok.Encode(text.data(), text.size(), o, ws, ids.data(), ids.size(), &n);
      const std::vector<int32_t> got(ids.begin(), ids.begin() + (st.ok() ? n : 0));
      if (!st.ok() || got != want) {
        ++c.encode_split_bad;
        note("ids_split_special of " + json(text).dump() + ": " + (st.ok() ? "" : st.message()) +
             " got " + Show(got) + " want " + Show(want));
      }
    }
    // Decode of HF's ids (the round trip decode(encode(text)) when the ids match).
    const std::vector<int32_t> v = g["ids"].get<std::vector<int32_t>>();
    std::string s, s2;
    std::string err = decode(v, true, &s);
    if (!err.empty() || s != g["decoded"].get<std::string>()) {
      ++c.decode_bad;
      note("decode of " + json(text).dump() + ": " + err + " got " + json(s).dump() + " want " + g["decoded"].dump());
    }
    err = decode(v, false, &s2);
    if (!err.empty() || s2 != g["decoded_keep_special"].get<std::string>()) {
      ++c.decode_keep_bad;
      note("decode keep of " + json(text).dump() + ": " + err + " got " + json(s2).dump());
    }
    for (bool skip : {true, false}) {
      std::string st;
      err = streamed(v, skip, &st);
      if (!err.empty() || st != (skip ? s : s2)) {
        ++c.stream_bad;
        note("stream of " + json(text).dump() + ": " + err + " got " + json(st).dump());
      }
    }
  }
  MESSAGE(name << ": " << c.lines << " lines; mismatches: ids " << c.encode_bad << ", ids_no_special "
               << c.encode_ns_bad << ", ids_split_special " << c.encode_split_bad << ", decode " << c.decode_bad << ", decode_keep "
               << c.decode_keep_bad << ", stream " << c.stream_bad);
  CHECK(c.lines > 100);
  CHECK(c.encode_bad == 0);
  CHECK(c.encode_ns_bad == 0);
  CHECK(c.encode_split_bad == 0);
  CHECK(c.decode_bad == 0);
  CHECK(c.decode_keep_bad == 0);
  CHECK(c.stream_bad == 0);
}

TEST_CASE("goldens: austen (byte-level BPE)") { RunGoldens("austen"); }
TEST_CASE("goldens: gpt2 (byte-level BPE)") { RunGoldens("gpt2"); }
TEST_CASE("goldens: llama3 (Split + ByteLevel, ignore_merges)") { RunGoldens("llama3"); }
TEST_CASE("goldens: qwen2_5 (NFC + Split + ByteLevel)") { RunGoldens("qwen2_5"); }
TEST_CASE("goldens: llama2 (SentencePiece BPE, byte fallback)") { RunGoldens("llama2"); }
TEST_CASE("goldens: mistral (SentencePiece BPE, byte fallback)") { RunGoldens("mistral"); }
TEST_CASE("goldens: gemma (SentencePiece BPE, byte fallback)") {
  // Under qemu-user the 256k-vocabulary conversion takes minutes; the kind runs
  // there through llama2 and mistral, and gemma itself on the host presets.
  if (std::getenv("OCTET_TOKENIZER_EMULATED") != nullptr) {
    std::fprintf(stderr, "SKIPPED under the emulator: gemma's goldens (256k vocabulary) run on "
                         "the host presets; SentencePiece BPE runs here through llama2 and mistral\n");
    std::fflush(stderr);
    std::_Exit(77);  // ctest's SKIP_RETURN_CODE
  }
  RunGoldens("gemma");
}
TEST_CASE("goldens: bert_uncased (WordPiece)") { RunGoldens("bert_uncased"); }
TEST_CASE("goldens: t5_unigram (Unigram, Precompiled)") { RunGoldens("t5_unigram"); }
TEST_CASE("goldens: albert_unigram (Unigram)") { RunGoldens("albert_unigram"); }
TEST_CASE("goldens: albert (Unigram, ALBERT's own 30k vocabulary)") { RunGoldens("albert"); }
TEST_CASE("goldens: marian (SentencePiece Unigram, vocab.json ids, language codes)") {
  RunGoldens("marian");
}

}  // namespace
}  // namespace octet
