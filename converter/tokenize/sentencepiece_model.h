// A minimal reader of SentencePiece's ModelProto (the .model files: T5's
// spiece.model, Marian's source.spm, Llama's tokenizer.model, ...), enough for
// converting them to a tokenizer.json: the pieces, the trainer fields that say
// how they are used, and the normalizer spec. Our own protobuf wire-format
// parser: every length is checked against the bytes left, so an untrusted or
// truncated file yields convert::Error, never a read out of bounds. Fields we
// do not need are skipped by wire type; unknown wire types are errors.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace octet {
namespace convert {

struct SentencePieceModel {
  // sentencepiece_model.proto's ModelProto.SentencePiece.Type values.
  enum class PieceType : int32_t {
    kNormal = 1,
    kUnknown = 2,
    kControl = 3,
    kUserDefined = 4,
    kUnused = 5,
    kByte = 6,
  };
  // TrainerSpec.ModelType values.
  enum class ModelType : int32_t { kUnigram = 1, kBpe = 2, kWord = 3, kChar = 4 };

  struct Piece {
    std::string piece;
    float score = 0.0f;
    PieceType type = PieceType::kNormal;
  };
  std::vector<Piece> pieces;

  // trainer_spec (defaults are the proto's).
  ModelType model_type = ModelType::kUnigram;
  bool byte_fallback = false;
  int32_t unk_id = 0;
  int32_t bos_id = 1;
  int32_t eos_id = 2;
  int32_t pad_id = -1;
  std::string unk_piece = "<unk>";

  // normalizer_spec.
  std::string normalizer_name;
  std::string precompiled_charsmap;  // raw bytes, empty when absent
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
  bool escape_whitespaces = true;
};

// Parses a serialized ModelProto; `what` names the file in messages
// ("spiece.model: truncated at byte 812"). Throws convert::Error.
SentencePieceModel ParseSentencePieceModel(const std::string& bytes, const std::string& what);
SentencePieceModel ReadSentencePieceModel(const std::filesystem::path& path);

}  // namespace convert
}  // namespace octet
