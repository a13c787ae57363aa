// libFuzzer target for the tokenizer's run time: real tokenizers (whole
// vocabularies, compiled by the converter when the fuzzer is built: byte-level
// BPE, SentencePiece BPE with byte fallback, WordPiece, Unigram with a
// Precompiled charsmap), arbitrary input.
//
// Input: byte 0 picks the tokenizer, byte 1 the options and the mode; the
// rest is the text, or (mode "ids") little-endian int32 ids for Decode.
// Text mode checks, against simple references where there is one:
//   - invalid UTF-8 is refused with the offset of the first bad sequence;
//   - valid text: ids inside the vocabulary, at most MaxIds; the same ids
//     twice; a too-small id buffer or workspace is refused, not overrun;
//   - Decode of the ids succeeds within MaxDecodedBytes and is valid UTF-8;
//     a smaller cap is refused or filled, never overrun;
//   - the StreamDecoder's pieces add up to Decode, skipping specials or not;
//   - byte-level tokenizers without normalizer give the text back (when
//     clean-up has nothing to change).
// Ids mode: Decode refuses exactly the lists holding an id outside the
// vocabulary; the stream decoder takes any list without overrunning.
// Any failed check aborts with a message (a finding, like a sanitizer report).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "format/model.h"
#include "text/tokenizer.h"

namespace {

using octet::Status;
using octet::StatusCode;
using octet::text::EncodeOptions;
using octet::text::StreamDecoder;
using octet::text::Tokenizer;
using octet::text::TokenizerWorkspace;

constexpr size_t kMaxText = 4096;  // scripts/fuzz.sh passes -max_len=4098
// MaxIds assumes every normalizer may grow the text 4x, which for a chain of
// several is far past any real text: id buffers stop at 16 per byte (a text
// that needs more gets the kOutOfMemory refusal, which is checked for).
constexpr size_t kIdsPerByte = 16;

size_t IdRoom(const octet::text::Tokenizer& tok, size_t n) {
  return std::min(tok.MaxIds(n), kIdsPerByte * n + 64);
}

struct Loaded {
  std::string name;
  std::vector<uint8_t> file;  // 64-byte aligned copy lives in `aligned`
  void* aligned = nullptr;
  std::unique_ptr<octet::Model> model;
  Tokenizer tok;
  TokenizerWorkspace ws;  // kMaxText bytes, MaxIds(kMaxText) ids
  bool round_trip = false;
};

std::vector<std::unique_ptr<Loaded>>* g_tokenizers = nullptr;

[[noreturn]] void Finding(const Loaded& t, const char* what, const Status& s = Status::Ok()) {
  std::fprintf(stderr, "tokenizer %s: %s%s%s\n", t.name.c_str(), what, s.ok() ? "" : ": ",
               s.ok() ? "" : s.message());
  std::abort();
}

// The offset of the first invalid UTF-8 sequence, or n: an independent
// reading of RFC 3629 (no overlongs, no surrogates, nothing past U+10FFFF).
size_t FirstInvalidUtf8(const uint8_t* p, size_t n) {
  size_t i = 0;
  while (i < n) {
    const uint8_t b = p[i];
    size_t len = 0;
    uint32_t cp = 0;
    if (b < 0x80) {
      ++i;
      continue;
    } else if ((b & 0xE0) == 0xC0) {
      len = 2;
      cp = b & 0x1F;
    } else if ((b & 0xF0) == 0xE0) {
      len = 3;
      cp = b & 0x0F;
    } else if ((b & 0xF8) == 0xF0) {
      len = 4;
      cp = b & 0x07;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = cp << 6 | (p[i + k] & 0x3F);
    }
    static const uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return n;
}

// Text HF's clean_up_tokenization_spaces would change.
bool CleanUpApplies(const std::string& s) {
  for (const char* pat : {" .", " ?", " !", " ,", " '", " n't"}) {
    if (s.find(pat) != std::string::npos) return true;
  }
  return false;
}

void LoadAll() {
  g_tokenizers = new std::vector<std::unique_ptr<Loaded>>();
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(OCTET_FUZZ_TOKENIZERS)) {
    if (e.path().extension() == ".octet") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    auto t = std::make_unique<Loaded>();
    t->name = path.stem().string();
    std::ifstream in(path, std::ios::binary);
    t->file.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (posix_memalign(&t->aligned, octet::kDataAlignment, t->file.size()) != 0) std::abort();
    std::memcpy(t->aligned, t->file.data(), t->file.size());
    octet::Result<octet::Model> model = octet::Model::FromBuffer(t->aligned, t->file.size());
    if (!model.ok()) Finding(*t, "does not load", model.status());
    t->model = std::make_unique<octet::Model>(std::move(model.value()));
    Status s = t->tok.Init(t->model->tokenizer_spec());
    if (s.ok()) s = t->tok.CreateWorkspace(kMaxText, IdRoom(t->tok, kMaxText), &t->ws);
    if (!s.ok()) Finding(*t, "does not initialize", s);
    t->round_trip = t->name == "tok_gpt2" || t->name == "tok_llama3";
    g_tokenizers->push_back(std::move(t));
  }
  if (g_tokenizers->empty()) {
    std::fprintf(stderr, "no tokenizers in %s (build octet_fuzz_tokenizers)\n", OCTET_FUZZ_TOKENIZERS);
    std::abort();
  }
}

std::string DecodeAll(Loaded& t, const int32_t* ids, size_t n, bool skip) {
  const size_t bound = t.tok.MaxDecodedBytes(n);
  std::unique_ptr<char[]> out(new char[bound + 1]);
  size_t n_out = 0;
  const Status s = t.tok.Decode(ids, n, skip, t.ws, out.get(), bound, &n_out);
  if (!s.ok()) Finding(t, "Decode of Encode's ids failed within MaxDecodedBytes", s);
  if (n_out > bound) Finding(t, "Decode wrote past MaxDecodedBytes");
  const std::string text(out.get(), n_out);
  if (FirstInvalidUtf8(reinterpret_cast<const uint8_t*>(text.data()), n_out) != n_out) {
    Finding(t, "Decode gave invalid UTF-8");
  }
  // A cap half as large: refused or met, never overrun (the buffer is exact).
  const size_t cap = n_out / 2;
  std::unique_ptr<char[]> small(new char[cap > 0 ? cap : 1]);
  size_t n_small = 0;
  const Status ss = t.tok.Decode(ids, n, skip, t.ws, small.get(), cap, &n_small);
  if (ss.ok() && (n_small > cap || std::memcmp(small.get(), text.data(), n_small) != 0)) {
    Finding(t, "Decode into a small cap wrote past it or wrote other bytes");
  }
  return text;
}

// Streams ids[0, n) and returns the concatenated pieces; *status gets the
// first refusal.
std::string Stream(Loaded& t, const int32_t* ids, size_t n, bool skip, Status* status) {
  StreamDecoder stream;
  *status = stream.Init(&t.tok, &t.ws, skip);
  if (!status->ok()) Finding(t, "StreamDecoder::Init refused", *status);
  std::string all;
  static char piece[1 << 16];
  for (size_t i = 0; i < n; ++i) {
    size_t got = 0;
    *status = stream.Push(ids[i], piece, sizeof(piece), &got);
    if (!status->ok()) return all;
    if (got > sizeof(piece)) Finding(t, "StreamDecoder::Push reported more than its cap");
    all.append(piece, got);
  }
  size_t got = 0;
  *status = stream.Finish(piece, sizeof(piece), &got);
  if (status->ok()) all.append(piece, got);
  return all;
}

void FuzzText(Loaded& t, uint8_t flags, const char* text, size_t n) {
  EncodeOptions options;
  options.add_special_tokens = (flags & 1) != 0;
  options.split_special_tokens = (flags & 2) != 0;
  const size_t max_ids = IdRoom(t.tok, n);
  std::vector<int32_t> ids(max_ids + 1);
  size_t n_ids = 0;
  Status s = t.tok.Encode(text, n, options, t.ws, ids.data(), max_ids, &n_ids);

  const size_t bad = FirstInvalidUtf8(reinterpret_cast<const uint8_t*>(text), n);
  if (bad != n) {
    const std::string offset = "at offset " + std::to_string(bad);
    if (s.code() != StatusCode::kInvalidArgument || std::strstr(s.message(), offset.c_str()) == nullptr) {
      Finding(t, ("invalid UTF-8 not refused " + offset).c_str(), s);
    }
    return;
  }
  // A text may grow past the workspace's 4x per stage (tokenizer.h): the one refusal allowed.
  if (s.code() == StatusCode::kOutOfMemory) return;
  if (!s.ok()) Finding(t, "Encode refused valid UTF-8", s);
  if (n_ids > max_ids) Finding(t, "Encode gave more ids than it had room for");
  for (size_t i = 0; i < n_ids; ++i) {
    if (ids[i] < 0 || static_cast<uint32_t>(ids[i]) >= t.tok.vocab_size()) {
      Finding(t, "Encode gave an id outside the vocabulary");
    }
  }
  std::vector<int32_t> again(n_ids);
  size_t n_again = 0;
  s = t.tok.Encode(text, n, options, t.ws, again.data(), n_ids, &n_again);
  if (!s.ok()) Finding(t, "Encode refused an id buffer as long as its own result", s);
  if (n_again != n_ids || !std::equal(again.begin(), again.end(), ids.begin())) {
    Finding(t, "Encode is not deterministic");
  }
  if (n_ids > 0) {
    // Exactly one slot short (the vector is exact, so ASan sees an overrun).
    std::vector<int32_t> short_ids(n_ids - 1);
    s = t.tok.Encode(text, n, options, t.ws, short_ids.data(), n_ids - 1, &n_again);
    if (s.ok()) Finding(t, "Encode fit its ids into one slot fewer");
  }
  if (n > 0 && (flags & 0x10) != 0) {
    TokenizerWorkspace small;
    s = t.tok.CreateWorkspace(n - 1, 4, &small);
    if (!s.ok()) Finding(t, "CreateWorkspace refused", s);
    s = t.tok.Encode(text, n, options, small, ids.data(), max_ids, &n_again);
    if (s.ok()) Finding(t, "Encode took a text longer than the workspace");
    s = t.tok.CreateWorkspace(n, 4, &small);
    if (!s.ok()) Finding(t, "CreateWorkspace refused", s);
    s = t.tok.Encode(text, n, options, small, ids.data(), max_ids, &n_again);
    if (s.code() != StatusCode::kOutOfMemory &&
        (!s.ok() || n_again != n_ids || !std::equal(ids.begin(), ids.begin() + n_ids, again.begin()))) {
      Finding(t, "Encode in an exact workspace differs", s);
    }
  }

  for (bool skip : {false, true}) {
    const std::string decoded = DecodeAll(t, ids.data(), n_ids, skip);
    Status ss;
    const std::string streamed = Stream(t, ids.data(), n_ids, skip, &ss);
    if (!ss.ok()) Finding(t, "StreamDecoder refused Encode's ids", ss);
    if (streamed != decoded) Finding(t, "the stream decoder's pieces differ from Decode");
    if (!skip && t.round_trip && !options.add_special_tokens) {
      const std::string original(text, n);
      if (!CleanUpApplies(original) && decoded != original) {
        Finding(t, "byte-level decode(encode(text)) is not the text");
      }
    }
  }
}

void FuzzIds(Loaded& t, uint8_t flags, const uint8_t* data, size_t size) {
  static int32_t ids[kMaxText / 4];
  const size_t n = std::min(size / 4, t.ws.max_decode_ids());
  const uint32_t vocab = t.tok.vocab_size();
  bool all_valid = true;
  for (size_t i = 0; i < n; ++i) {
    uint32_t raw = 0;
    std::memcpy(&raw, data + 4 * i, 4);
    // Mostly ids near the vocabulary, so lists of only valid ids are common.
    if ((flags & 0x20) == 0) raw %= vocab + 4;
    ids[i] = static_cast<int32_t>(raw);
    all_valid = all_valid && ids[i] >= 0 && raw < vocab;
  }
  const bool skip = (flags & 4) != 0;
  const size_t bound = t.tok.MaxDecodedBytes(n);
  std::unique_ptr<char[]> out(new char[bound > 0 ? bound : 1]);
  size_t n_out = 0;
  const Status s = t.tok.Decode(ids, n, skip, t.ws, out.get(), bound, &n_out);
  if (all_valid && !s.ok()) Finding(t, "Decode refused valid ids within MaxDecodedBytes", s);
  if (!all_valid && s.ok()) Finding(t, "Decode took an id outside the vocabulary");
  if (s.ok() && FirstInvalidUtf8(reinterpret_cast<const uint8_t*>(out.get()), n_out) != n_out) {
    Finding(t, "Decode gave invalid UTF-8");
  }
  Status ss;
  (void)Stream(t, ids, n, skip, &ss);
  if (all_valid && !ss.ok()) Finding(t, "StreamDecoder refused valid ids", ss);
  for (size_t i = 0; i < n && i < 16; ++i) {
    static char label[64];
    const size_t w = t.tok.TokenText(ids[i], t.ws, label, sizeof(label));
    if (w > sizeof(label)) Finding(t, "TokenText reported more than its cap");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  LoadAll();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2 || size - 2 > kMaxText) return 0;
  Loaded& t = *(*g_tokenizers)[data[0] % g_tokenizers->size()];
  const uint8_t flags = data[1];
  if ((flags & 8) != 0) {
    FuzzIds(t, flags, data + 2, size - 2);
  } else {
    FuzzText(t, flags, reinterpret_cast<const char*>(data) + 2, size - 2);
  }
  return 0;
}
