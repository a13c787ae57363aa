// Inputs tests/fuzz/fuzz_encode.cc found breaking the tokenizer's contracts
// (scripts/fuzz.sh), kept fixed in every build.
#include <doctest/doctest.h>

#include <string>

#include "text/tokenizer.h"
#include "tokenizer_test_util.h"

namespace octet {
namespace {

using text::EncodeOptions;
using text::TokenizerWorkspace;

// WordPiece emitted a word's pieces as it matched them, so a word that ends
// as one [UNK] (a character with no piece, at its end) needed a slot per piece.
TEST_CASE("fuzz: a WordPiece word that becomes [UNK] needs one id slot") {
  testing::LoadedTokenizer t = testing::LoadTokenizer("bert_uncased");
  REQUIRE_MESSAGE(t.error.empty(), t.error);
  const std::string text = "re\xCC\x81su\xE2\x96\x81me\xCC\x81";  // "résu▁mé", e + U+0301
  TokenizerWorkspace ws;
  REQUIRE(t.tokenizer.CreateWorkspace(text.size(), 4, &ws).ok());
  EncodeOptions options;
  options.add_special_tokens = false;
  int32_t ids[2] = {-1, -1};
  size_t n = 0;
  const Status st = t.tokenizer.Encode(text.data(), text.size(), options, ws, ids, 1, &n);
  REQUIRE_MESSAGE(st.ok(), st.message());
  CHECK(n == 1);
  CHECK(ids[0] == 100);  // [UNK]
  CHECK(ids[1] == -1);
  // A word matched whole still needs a slot per piece.
  const std::string pieces = "xyzzyq";
  int32_t room[16];
  REQUIRE(t.tokenizer.Encode(pieces.data(), pieces.size(), options, ws, room, 16, &n).ok());
  REQUIRE(n >= 2);
  CHECK(room[0] != 100);
  const size_t whole = n;
  CHECK(t.tokenizer.Encode(pieces.data(), pieces.size(), options, ws, room, whole - 1, &n).code() ==
        StatusCode::kOutOfMemory);
}

}  // namespace
}  // namespace octet
