#include "text/tokenizer_check.h"

#include <cmath>

#include "text/precompiled.h"
#include "text/regex.h"
#include "core/utf8.h"

namespace octet {
namespace text {
namespace {

constexpr StatusCode kBad = StatusCode::kInvalidModel;
constexpr uint32_t kMaxTokVocab = 1u << 24;

bool IsPow2(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

Status CheckString(const flatbuffers::String* s, const char* what) {
  if (s != nullptr && !Utf8IsValid(s->data(), s->size())) {
    return Status::Error(kBad, "tokenizer: %s is not valid UTF-8", what);
  }
  return Status::Ok();
}

Status CheckRegex(const flatbuffers::String* s, const char* what) {
  if (s == nullptr) return Status::Error(kBad, "tokenizer: %s has no pattern", what);
  Regex regex;
  Status st = regex.Compile(std::string_view(s->data(), s->size()));
  if (!st.ok()) return Status::Error(kBad, "tokenizer: %s: %s", what, st.message());
  return Status::Ok();
}


// The vocabulary: its size, the lattice-only pieces after it, and every
// piece's bytes (in order, inside vocab_bytes, valid UTF-8).
Status CheckVocabulary(const fb::TokModel* m) {
  const uint32_t vocab = m->vocab_size();
  if (vocab == 0 || vocab > kMaxTokVocab) {
    return Status::Error(kBad, "tokenizer: vocab_size %u is outside [1, %u]", vocab, kMaxTokVocab);
  }
  // Pieces only a Unigram lattice matches (Marian) follow the vocabulary's tokens.
  const uint32_t extra = m->lattice_only();
  if (extra > kMaxTokVocab || (extra != 0 && m->kind() != fb::TokModelKind::Unigram)) {
    return Status::Error(kBad, "tokenizer: %u lattice-only pieces (only a Unigram model has them, "
                         "at most %u)", extra, kMaxTokVocab);
  }
  const uint32_t pieces = vocab + extra;
  const auto* offsets = m->vocab_offsets();
  const uint32_t nbytes = m->vocab_bytes() ? m->vocab_bytes()->size() : 0;
  if (offsets == nullptr || offsets->size() != pieces + 1) {
    return Status::Error(kBad, "tokenizer: vocab_offsets has %u entries, not %u",
                         offsets ? offsets->size() : 0, pieces + 1);
  }
  if (offsets->Get(0) != 0) return Status(kBad, "tokenizer: vocab_offsets does not start at 0");
  for (uint32_t i = 0; i < pieces; ++i) {
    const uint32_t b = offsets->Get(i), e = offsets->Get(i + 1);
    if (e < b || e > nbytes) {
      return Status::Error(kBad, "tokenizer: token %u's bytes [%u, %u) are out of order or outside the %u vocabulary bytes", i, b, e, nbytes);
    }
    if (!Utf8IsValid(reinterpret_cast<const char*>(m->vocab_bytes()->data()) + b, e - b)) {
      return Status::Error(kBad, "tokenizer: token %u is not valid UTF-8", i);
    }
  }
  return Status::Ok();
}

// The model's tables: unk id, vocabulary and lattice indexes, merges, byte
// ids, Unigram scores, subword affixes.
Status CheckModelTables(const fb::TokModel* m, uint32_t arch_vocab) {
  const uint32_t vocab = m->vocab_size();
  const uint32_t extra = m->lattice_only();
  const uint32_t pieces = vocab + extra;
  const auto id_ok = [&](int64_t id) { return id >= 0 && id < vocab; };
  const auto model_id_ok = [&](int64_t id) { return id_ok(id) && (arch_vocab == 0 || id < arch_vocab); };
  if (m->unk_id() != -1 && !model_id_ok(m->unk_id())) {
    return Status::Error(kBad, "tokenizer: unk id %d is outside the vocabulary", m->unk_id());
  }
  if (const auto* index = m->index()) {
    if (index->size() > 0) {
      const uint32_t slots = index->Get(0);
      if (!IsPow2(slots) || index->size() != static_cast<uint64_t>(slots) + 1) {
        return Status(kBad, "tokenizer: the vocabulary index's size is not 1 + a power of two");
      }
      for (uint32_t i = 1; i <= slots; ++i) {
        if (index->Get(i) > vocab) return Status::Error(kBad, "tokenizer: index slot %u names id %u, outside the vocabulary", i - 1, index->Get(i) - 1);
      }
    }
  }
  if (const auto* lattice = m->lattice_index()) {
    if (lattice->size() > 0) {
      const uint32_t slots = lattice->Get(0);
      if (m->kind() != fb::TokModelKind::Unigram || !IsPow2(slots) ||
          lattice->size() != static_cast<uint64_t>(slots) + 1) {
        return Status(kBad, "tokenizer: the lattice index is not a Unigram table of 1 + a power of two");
      }
      for (uint32_t i = 1; i <= slots; ++i) {
        if (lattice->Get(i) > pieces) return Status::Error(kBad, "tokenizer: lattice slot %u names piece %u, outside the pieces", i - 1, lattice->Get(i) - 1);
      }
    }
  }
  if (extra != 0 && (m->lattice_index() == nullptr || m->lattice_index()->size() == 0 || m->unk_id() < 0)) {
    return Status(kBad, "tokenizer: lattice-only pieces without a lattice index and an unk id");
  }
  if (const auto* merges = m->merges()) {
    if (merges->size() > 0) {
      const uint32_t slots = merges->Get(0);
      if (!IsPow2(slots) || merges->size() != 1 + 4ull * slots) {
        return Status(kBad, "tokenizer: the merge table's size is not 1 + 4 x a power of two");
      }
      for (uint32_t i = 0; i < slots; ++i) {
        const uint32_t* s = merges->data() + 1 + 4ull * i;
        if (s[0] == 0xFFFFFFFFu) continue;
        if (s[0] >= vocab || s[1] >= vocab || s[3] >= vocab) {
          return Status::Error(kBad, "tokenizer: merge slot %u names an id outside the vocabulary", i);
        }
      }
    }
  }
  if (const auto* bytes = m->byte_ids()) {
    if (bytes->size() != 0 && bytes->size() != 256) return Status(kBad, "tokenizer: byte_ids must have 256 entries");
    for (int32_t id : *bytes) {
      if (id != -1 && !id_ok(id)) return Status::Error(kBad, "tokenizer: byte id %d is outside the vocabulary", id);
    }
  }
  if (m->byte_level() && (m->byte_ids() == nullptr || m->byte_ids()->size() != 256)) {
    return Status(kBad, "tokenizer: a byte-level model without byte_ids");
  }
  if (m->kind() == fb::TokModelKind::Unigram) {
    if (m->scores_f64() == nullptr || m->scores_f64()->size() != pieces) {
      return Status(kBad, "tokenizer: Unigram scores do not match the vocabulary");
    }
    for (double s : *m->scores_f64()) {
      if (!std::isfinite(s)) return Status(kBad, "tokenizer: a Unigram score is not finite");
    }
    if (!std::isfinite(m->unk_score())) return Status(kBad, "tokenizer: the unk score is not finite");
  }
  OCTET_RETURN_IF_ERROR(CheckString(m->continuing_subword_prefix(), "continuing_subword_prefix"));
  OCTET_RETURN_IF_ERROR(CheckString(m->end_of_word_suffix(), "end_of_word_suffix"));

  return Status::Ok();
}

Status CheckNormalizers(const fb::TokenizerSpec& spec) {
  if (const auto* steps = spec.normalizers()) {
    for (const fb::NormalizerStep* s : *steps) {
      if (s->kind() > fb::NormalizerKind::MAX) return Status(kBad, "tokenizer: unknown normalizer kind");
      if (s->kind() == fb::NormalizerKind::Precompiled) {
        if (s->charsmap() == nullptr) return Status(kBad, "tokenizer: a Precompiled normalizer without a charsmap");
        Status st = CheckCharsmap(s->charsmap()->data(), s->charsmap()->size());
        if (!st.ok()) return st.WithContext("tokenizer: Precompiled normalizer");
      }
      if (s->kind() == fb::NormalizerKind::SentencePiece && s->charsmap() != nullptr &&
          s->charsmap()->size() != 0) {
        Status st = CheckCharsmap(s->charsmap()->data(), s->charsmap()->size());
        if (!st.ok()) return st.WithContext("tokenizer: SentencePiece normalizer");
      }
      OCTET_RETURN_IF_ERROR(CheckString(s->pattern(), "a normalizer pattern"));
      OCTET_RETURN_IF_ERROR(CheckString(s->content(), "a normalizer content"));
      if (s->kind() == fb::NormalizerKind::Replace && s->pattern_is_regex()) {
        OCTET_RETURN_IF_ERROR(CheckRegex(s->pattern(), "normalizer Replace"));
      }
    }
  }
  return Status::Ok();
}

Status CheckPreTokenizers(const fb::TokenizerSpec& spec) {
  if (const auto* steps = spec.pre_tokenizers()) {
    for (const fb::PreTokenizerStep* s : *steps) {
      if (s->kind() > fb::PreTokenizerKind::MAX || s->behavior() > fb::SplitBehavior::MAX ||
          s->prepend_scheme() > fb::PrependScheme::MAX) {
        return Status(kBad, "tokenizer: unknown pre-tokenizer kind or option");
      }
      OCTET_RETURN_IF_ERROR(CheckString(s->pattern(), "a pre-tokenizer pattern"));
      OCTET_RETURN_IF_ERROR(CheckString(s->replacement(), "a Metaspace replacement"));
      if (s->kind() == fb::PreTokenizerKind::Split && s->pattern_is_regex()) {
        OCTET_RETURN_IF_ERROR(CheckRegex(s->pattern(), "pre-tokenizer Split"));
      }
      if (s->kind() == fb::PreTokenizerKind::CharDelimiter && (s->delimiter() > kMaxCodePoint ||
          (s->delimiter() >= 0xD800 && s->delimiter() <= 0xDFFF))) {
        return Status(kBad, "tokenizer: the CharDelimiter is not a character");
      }
    }
  }
  return Status::Ok();
}

Status CheckDecoders(const fb::TokenizerSpec& spec, uint32_t vocab) {
  if (const auto* steps = spec.decoders()) {
    for (const fb::DecoderStep* s : *steps) {
      if (s->kind() > fb::DecoderKind::MAX || s->kind() == fb::DecoderKind::Ctc ||
          s->prepend_scheme() > fb::PrependScheme::MAX) {
        return Status(kBad, "tokenizer: unknown decoder kind or option");
      }
      OCTET_RETURN_IF_ERROR(CheckString(s->pattern(), "a decoder pattern"));
      OCTET_RETURN_IF_ERROR(CheckString(s->content(), "a decoder content"));
      OCTET_RETURN_IF_ERROR(CheckString(s->prefix(), "a decoder prefix"));
      OCTET_RETURN_IF_ERROR(CheckString(s->replacement(), "a decoder replacement"));
      OCTET_RETURN_IF_ERROR(CheckString(s->unk_surface(), "a decoder unk surface"));
      if (s->kind() == fb::DecoderKind::SentencePiece) {
        if (steps->size() != 1) return Status(kBad, "tokenizer: a SentencePiece decoder must be the only decoder");
        if (s->piece_kinds() == nullptr || s->piece_kinds()->size() != vocab) {
          return Status(kBad, "tokenizer: the SentencePiece decoder's piece kinds do not match the vocabulary");
        }
        for (uint8_t k : *s->piece_kinds()) {
          if (k > 3) return Status::Error(kBad, "tokenizer: unknown SentencePiece piece kind %u", k);
        }
      }
    }
  }
  return Status::Ok();
}

// Added tokens, the post-processor's templates, eos ids and the chat template.
Status CheckAddedTokensAndTemplates(const fb::TokenizerSpec& spec, uint32_t vocab,
                                    uint32_t arch_vocab) {
  const auto id_ok = [&](int64_t id) { return id >= 0 && id < vocab; };
  const auto model_id_ok = [&](int64_t id) { return id_ok(id) && (arch_vocab == 0 || id < arch_vocab); };
  if (const auto* added = spec.added_tokens()) {
    for (const fb::AddedToken* a : *added) {
      if (!id_ok(a->id())) return Status::Error(kBad, "tokenizer: added token id %d is outside the vocabulary", a->id());
      OCTET_RETURN_IF_ERROR(CheckString(a->content(), "an added token"));
      OCTET_RETURN_IF_ERROR(CheckString(a->normalized_content(), "an added token"));
    }
  }
  for (const auto* items : {spec.template_single(), spec.template_pair()}) {
    if (items == nullptr) continue;
    for (const fb::TemplateItem* item : *items) {
      if (item->kind() > fb::TemplateItemKind::MAX) return Status(kBad, "tokenizer: unknown template item");
      if (item->ids()) {
        for (int32_t id : *item->ids()) {
          if (!model_id_ok(id)) return Status::Error(kBad, "tokenizer: template id %d is outside the vocabulary", id);
        }
      }
    }
  }
  if (const auto* eos = spec.eos_ids()) {
    for (int32_t id : *eos) {
      // The model's ids (config.json), which a small tokenizer may not spell.
      if (id < 0 || id >= static_cast<int64_t>(kMaxTokVocab) || (arch_vocab != 0 && static_cast<uint32_t>(id) >= arch_vocab)) {
        return Status::Error(kBad, "tokenizer: eos id %d is outside the vocabulary", id);
      }
    }
  }
  OCTET_RETURN_IF_ERROR(CheckString(spec.chat_template(), "the chat template"));
  return Status::Ok();
}

}  // namespace

Status CheckTokenizerSpec(const fb::TokenizerSpec& spec, uint32_t arch_vocab) {
  const fb::TokModel* m = spec.model();
  if (m == nullptr) return Status(kBad, "tokenizer: no model");
  if (m->kind() == fb::TokModelKind::None || m->kind() > fb::TokModelKind::MAX) {
    return Status::Error(kBad, "tokenizer: unknown model kind %d", static_cast<int>(m->kind()));
  }
  OCTET_RETURN_IF_ERROR(CheckVocabulary(m));
  OCTET_RETURN_IF_ERROR(CheckModelTables(m, arch_vocab));
  OCTET_RETURN_IF_ERROR(CheckNormalizers(spec));
  OCTET_RETURN_IF_ERROR(CheckPreTokenizers(spec));
  OCTET_RETURN_IF_ERROR(CheckDecoders(spec, m->vocab_size()));
  return CheckAddedTokensAndTemplates(spec, m->vocab_size(), arch_vocab);
}

}  // namespace text
}  // namespace octet
