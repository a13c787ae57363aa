#include "tokenize/sentencepiece_model.h"

#include <cstring>
#include <fstream>
#include <iterator>

#include "import/error.h"

namespace octet {
namespace convert {
namespace {

// Protobuf wire types.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kFixed64 = 1;
constexpr uint32_t kLengthDelimited = 2;
constexpr uint32_t kFixed32 = 5;

// One message's bytes; `base` is its offset in the file, for messages.
class Reader {
 public:
  Reader(const char* data, size_t size, size_t base, const std::string& what)
      : data_(data), size_(size), base_(base), what_(what) {}

  bool done() const { return pos_ >= size_; }

  uint64_t Varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= size_) Truncated();
      const uint8_t byte = static_cast<uint8_t>(data_[pos_++]);
      value |= uint64_t{byte & 0x7Fu} << shift;
      if ((byte & 0x80) == 0) return value;
    }
    Fail(what_, ": malformed varint at byte ", base_ + pos_);
  }

  // Reads a field key; returns the field number and sets *wire_type.
  uint32_t Key(uint32_t* wire_type) {
    const uint64_t key = Varint();
    *wire_type = static_cast<uint32_t>(key & 7);
    if ((key >> 3) == 0 || (key >> 3) > 0x1FFFFFFF) {
      Fail(what_, ": bad field number at byte ", base_ + pos_);
    }
    return static_cast<uint32_t>(key >> 3);
  }

  Reader Sub() {
    const uint64_t len = Varint();
    if (len > size_ - pos_) Truncated();
    Reader sub(data_ + pos_, static_cast<size_t>(len), base_ + pos_, what_);
    pos_ += static_cast<size_t>(len);
    return sub;
  }

  std::string Bytes() {
    Reader sub = Sub();
    return std::string(sub.data_, sub.size_);
  }

  float Fixed32Float() {
    if (size_ - pos_ < 4) Truncated();
    const auto* p = reinterpret_cast<const uint8_t*>(data_ + pos_);
    const uint32_t bits =
        uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
    pos_ += 4;
    float value;
    std::memcpy(&value, &bits, sizeof(value));
    return value;
  }

  // int32 fields are varints sign-extended to 64 bits.
  int32_t Int32() { return static_cast<int32_t>(static_cast<int64_t>(Varint())); }

  void Skip(uint32_t wire_type) {
    switch (wire_type) {
      case kVarint:
        (void)Varint();
        return;
      case kFixed64:
        Advance(8);
        return;
      case kLengthDelimited:
        (void)Sub();
        return;
      case kFixed32:
        Advance(4);
        return;
      default:
        Fail(what_, ": unsupported protobuf wire type ", wire_type, " at byte ", base_ + pos_);
    }
  }

  void Expect(uint32_t wire_type, uint32_t want, const char* field) {
    if (wire_type != want) Fail(what_, ": field ", field, " has the wrong wire type");
  }

 private:
  void Advance(size_t n) {
    if (size_ - pos_ < n) Truncated();
    pos_ += n;
  }
  [[noreturn]] void Truncated() const {
    Fail(what_, ": truncated or not a SentencePiece model (at byte ", base_ + pos_, ")");
  }

  const char* data_;
  size_t size_;
  size_t base_;
  size_t pos_ = 0;
  const std::string& what_;
};

SentencePieceModel::Piece ReadPiece(Reader r, const std::string& what) {
  SentencePieceModel::Piece piece;
  while (!r.done()) {
    uint32_t wt;
    switch (r.Key(&wt)) {
      case 1:
        r.Expect(wt, kLengthDelimited, "piece");
        piece.piece = r.Bytes();
        break;
      case 2:
        r.Expect(wt, kFixed32, "score");
        piece.score = r.Fixed32Float();
        break;
      case 3: {
        r.Expect(wt, kVarint, "type");
        const int32_t type = r.Int32();
        if (type < 1 || type > 6) Fail(what, ": piece type ", type, " is not a SentencePiece type");
        piece.type = static_cast<SentencePieceModel::PieceType>(type);
        break;
      }
      default:
        r.Skip(wt);
    }
  }
  return piece;
}

void ReadTrainerSpec(Reader r, SentencePieceModel* m) {
  while (!r.done()) {
    uint32_t wt;
    switch (r.Key(&wt)) {
      case 3:
        r.Expect(wt, kVarint, "trainer_spec.model_type");
        m->model_type = static_cast<SentencePieceModel::ModelType>(r.Int32());
        break;
      case 35:
        r.Expect(wt, kVarint, "trainer_spec.byte_fallback");
        m->byte_fallback = r.Varint() != 0;
        break;
      case 40:
        r.Expect(wt, kVarint, "trainer_spec.unk_id");
        m->unk_id = r.Int32();
        break;
      case 41:
        r.Expect(wt, kVarint, "trainer_spec.bos_id");
        m->bos_id = r.Int32();
        break;
      case 42:
        r.Expect(wt, kVarint, "trainer_spec.eos_id");
        m->eos_id = r.Int32();
        break;
      case 43:
        r.Expect(wt, kVarint, "trainer_spec.pad_id");
        m->pad_id = r.Int32();
        break;
      case 45:
        r.Expect(wt, kLengthDelimited, "trainer_spec.unk_piece");
        m->unk_piece = r.Bytes();
        break;
      default:
        r.Skip(wt);
    }
  }
}

void ReadNormalizerSpec(Reader r, SentencePieceModel* m) {
  while (!r.done()) {
    uint32_t wt;
    switch (r.Key(&wt)) {
      case 1:
        r.Expect(wt, kLengthDelimited, "normalizer_spec.name");
        m->normalizer_name = r.Bytes();
        break;
      case 2:
        r.Expect(wt, kLengthDelimited, "normalizer_spec.precompiled_charsmap");
        m->precompiled_charsmap = r.Bytes();
        break;
      case 3:
        r.Expect(wt, kVarint, "normalizer_spec.add_dummy_prefix");
        m->add_dummy_prefix = r.Varint() != 0;
        break;
      case 4:
        r.Expect(wt, kVarint, "normalizer_spec.remove_extra_whitespaces");
        m->remove_extra_whitespaces = r.Varint() != 0;
        break;
      case 5:
        r.Expect(wt, kVarint, "normalizer_spec.escape_whitespaces");
        m->escape_whitespaces = r.Varint() != 0;
        break;
      default:
        r.Skip(wt);
    }
  }
}

}  // namespace

SentencePieceModel ParseSentencePieceModel(const std::string& bytes, const std::string& what) {
  SentencePieceModel m;
  Reader r(bytes.data(), bytes.size(), 0, what);
  while (!r.done()) {
    uint32_t wt;
    switch (r.Key(&wt)) {
      case 1:
        r.Expect(wt, kLengthDelimited, "pieces");
        m.pieces.push_back(ReadPiece(r.Sub(), what));
        break;
      case 2:
        r.Expect(wt, kLengthDelimited, "trainer_spec");
        ReadTrainerSpec(r.Sub(), &m);
        break;
      case 3:
        r.Expect(wt, kLengthDelimited, "normalizer_spec");
        ReadNormalizerSpec(r.Sub(), &m);
        break;
      default:
        r.Skip(wt);
    }
  }
  if (m.pieces.empty()) Fail(what, ": no pieces (not a SentencePiece model)");
  if (m.model_type != SentencePieceModel::ModelType::kUnigram &&
      m.model_type != SentencePieceModel::ModelType::kBpe) {
    Fail(what, ": model type ", static_cast<int32_t>(m.model_type),
         " is not supported (only UNIGRAM and BPE models convert to a tokenizer.json)");
  }
  const auto count = static_cast<int64_t>(m.pieces.size());
  if (m.unk_id < 0 || m.unk_id >= count) {
    Fail(what, ": unk_id ", m.unk_id, " is outside the ", count, " pieces");
  }
  return m;
}

SentencePieceModel ReadSentencePieceModel(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(path.filename().string(), ": cannot be opened");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return ParseSentencePieceModel(bytes, path.filename().string());
}

}  // namespace convert
}  // namespace octet
