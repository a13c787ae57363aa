// Normalizers, applied in order to each piece of text between added tokens,
// as tokenizers' normalizers do (normalizers/{unicode,bert,replace,prepend,strip}.rs).
#include <cstring>

#include "text/precompiled.h"
#include "text/tokenizer_impl.h"
#include "text/unicode.h"
#include "core/utf8.h"

namespace octet {
namespace text {
namespace {

const char* Chars(const uint8_t* s) { return reinterpret_cast<const char*>(s); }
char* Chars(uint8_t* s) { return reinterpret_cast<char*>(s); }

size_t Str(const flatbuffers::String* s) { return s ? s->size() : 0; }

// BertNormalizer: clean text, CJK spacing, accents, lowercase.
size_t Bert(const fb::NormalizerStep& step, const uint8_t* in, size_t n, uint8_t* out, size_t cap,
            uint8_t* tmp, size_t tmp_cap) {
  size_t o = 0;
  const auto put = [&](uint32_t c) {
    char buf[4];
    const size_t len = Utf8Encode(c, buf);
    if (o + len <= cap) std::memcpy(out + o, buf, len);
    o += len;
  };
  for (size_t i = 0; i < n;) {
    const uint32_t c = Utf8Decode(Chars(in), &i);
    if (step.bert_clean_text()) {
      if (c == 0 || c == 0xFFFD || IsBertControl(c)) continue;
      if (IsBertWhitespace(c)) {
        put(' ');
        continue;
      }
    }
    if (step.bert_handle_chinese_chars() && IsBertChineseChar(c)) {
      put(' ');
      put(c);
      put(' ');
      continue;
    }
    put(c);
  }
  if (o > cap) return o;
  if (step.bert_strip_accents()) {
    // NFD, then the non-spacing marks (Mn) dropped: BertNormalizer's own filter.
    const size_t d = Normalize(NormForm::kNfd, Chars(out), o, Chars(tmp), tmp_cap);
    if (d > tmp_cap) return cap + 1;
    size_t k = 0;
    for (size_t i = 0; i < d;) {
      const size_t at = i;
      const uint32_t c = Utf8Decode(Chars(tmp), &i);
      if (CategoryOf(c) == Category::kMn) continue;
      std::memmove(tmp + k, tmp + at, i - at);
      k += i - at;
    }
    if (k > cap) return k;
    std::memcpy(out, tmp, k);
    o = k;
  }
  if (step.bert_lowercase()) {
    const size_t l = Lowercase(Chars(out), o, Chars(tmp), tmp_cap);
    if (l > cap || l > tmp_cap) return cap + 1;
    std::memcpy(out, tmp, l);
    o = l;
  }
  return o;
}

size_t ReplaceLiteral(const fb::NormalizerStep& step, const uint8_t* in, size_t n, uint8_t* out,
                      size_t cap) {
  const size_t pn = Str(step.pattern()), cn = Str(step.content());
  const uint8_t* p = step.pattern() ? reinterpret_cast<const uint8_t*>(step.pattern()->data()) : nullptr;
  const char* c = step.content() ? step.content()->data() : "";
  size_t o = 0;
  const auto copy = [&](const void* src, size_t len) {
    if (o + len <= cap) std::memcpy(out + o, src, len);
    o += len;
  };
  if (pn == 0) {
    copy(in, n);
    return o;
  }
  size_t i = 0;
  while (i < n) {
    if (n - i >= pn && in[i] == p[0] && std::memcmp(in + i, p, pn) == 0) {
      copy(c, cn);
      i += pn;
    } else {
      copy(in + i, 1);
      ++i;
    }
  }
  return o;
}

// SentencePiece's Normalizer::Normalize (normalizer.cc), as slow tokenizers
// run it: the input is consumed prefix by prefix, each prefix replaced by the
// charsmap's longest key (or kept as one character); leading spaces are
// dropped, a dummy U+2581 goes first, spaces become U+2581, a space after a
// space is dropped, and trailing U+2581 (or spaces) are removed.
size_t SentencePieceNormalize(const fb::NormalizerStep& step, const uint8_t* in, size_t n,
                              uint8_t* out, size_t cap) {
  static const char kSpace[] = "\xE2\x96\x81";
  const uint8_t* map = step.charsmap() ? step.charsmap()->data() : nullptr;
  const size_t map_size = step.charsmap() ? step.charsmap()->size() : 0;
  const bool remove_extra = step.spm_remove_extra_whitespaces();
  const bool escape = step.spm_escape_whitespaces();
  size_t o = 0;
  const auto put = [&](const void* p, size_t len) {
    if (o + len <= cap) std::memcpy(out + o, p, len);
    o += len;
  };
  // The next prefix of in[i, n) and what it normalizes to.
  const auto prefix = [&](size_t i, const char** sp, size_t* sp_n) -> size_t {
    if (map_size != 0) {
      const size_t len = CharsmapLongestPrefix(map, map_size, Chars(in + i), n - i, sp, sp_n);
      if (len != 0) return len;
    }
    size_t k = i;
    Utf8Decode(Chars(in), &k);
    *sp = Chars(in + i);
    *sp_n = k - i;
    return k - i;
  };
  size_t i = 0;
  const char* sp;
  size_t sp_n;
  if (remove_extra) {
    while (i < n) {
      const size_t len = prefix(i, &sp, &sp_n);
      if (!(sp_n == 1 && sp[0] == ' ')) break;
      i += len;
    }
  }
  if (i >= n) return 0;
  const auto space = [&]() {
    if (escape) {
      put(kSpace, 3);
    } else {
      put(" ", 1);
    }
  };
  if (step.spm_add_dummy_prefix()) space();
  bool prev_space = remove_extra;
  while (i < n) {
    i += prefix(i, &sp, &sp_n);
    size_t b = 0;
    if (prev_space) {
      while (b < sp_n && sp[b] == ' ') ++b;
    }
    if (b < sp_n) {
      for (size_t k = b; k < sp_n; ++k) {
        if (escape && sp[k] == ' ') {
          put(kSpace, 3);
        } else {
          put(sp + k, 1);
        }
      }
      prev_space = sp[sp_n - 1] == ' ';
    }
    if (!remove_extra) prev_space = false;
  }
  if (remove_extra && o <= cap) {
    const size_t w = escape ? 3 : 1;
    const char* tail = escape ? kSpace : " ";
    while (o >= w && std::memcmp(out + o - w, tail, w) == 0) o -= w;
  }
  return o;
}

}  // namespace

Status InitNormalizers(TokenizerImpl& t) {
  t.normalizers.Clear();
  if (t.spec->normalizers() == nullptr) return Status::Ok();
  for (const fb::NormalizerStep* step : *t.spec->normalizers()) {
    NormalizerOp op;
    op.step = step;
    Growth g;
    switch (step->kind()) {
      case fb::NormalizerKind::NFC:
      case fb::NormalizerKind::NFD:
      case fb::NormalizerKind::NFKC:
      case fb::NormalizerKind::NFKD: g.num = kMaxNormalizeGrowth; break;
      // Valid text: U+0130 (2 bytes) lowercases to 3 bytes; marks only go.
      case fb::NormalizerKind::Lowercase: g = Growth{3, 2, 0}; break;
      case fb::NormalizerKind::StripAccents: break;
      case fb::NormalizerKind::Bert:
        // CJK spacing (3 bytes -> 5), then NFD, then lowercase.
        g.num = 2 * (step->bert_strip_accents() ? kMaxNormalizeGrowth : 1) *
                (step->bert_lowercase() ? 3 : 1);
        g.den = step->bert_lowercase() ? 2 : 1;
        break;
      case fb::NormalizerKind::Replace: {
        const size_t pn = Str(step->pattern()), cn = Str(step->content());
        if (step->pattern_is_regex()) {
          op.regex.reset(New<Regex>());
          if (!op.regex) return Status(StatusCode::kOutOfMemory, "tokenizer: out of memory");
          OCTET_RETURN_IF_ERROR(op.regex->Compile(
              std::string_view(step->pattern()->data(), step->pattern()->size())));
          g.num = 1 + cn;  // an empty match may insert the content at every byte
          g.add = cn;
        } else {
          g.num = pn == 0 ? 1 : (cn + pn - 1) / pn + 1;
        }
        break;
      }
      case fb::NormalizerKind::Prepend: g.add = Str(step->content()); break;
      case fb::NormalizerKind::Strip: break;
      case fb::NormalizerKind::Precompiled:
        g.num = CharsmapMaxGrowth(step->charsmap()->data(), step->charsmap()->size());
        break;
      case fb::NormalizerKind::SentencePiece:
        // Each output byte may be a space that becomes U+2581; the dummy prefix adds one.
        g.num = 3 * (step->charsmap() && step->charsmap()->size() != 0
                         ? CharsmapMaxGrowth(step->charsmap()->data(), step->charsmap()->size())
                         : 1);
        g.add = 3;
        break;
      default:
        return Status::Error(StatusCode::kUnsupported, "normalizer %s is not supported",
                             fb::EnumNameNormalizerKind(step->kind()));
    }
    op.growth = g;
    if (!t.normalizers.Push(std::move(op))) return TokenizerOutOfMemory("normalizers");
  }
  return Status::Ok();
}

Status TokenizerImpl::Normalize(EncodeState& st, const uint8_t* s, size_t n, const uint8_t** out,
                                size_t* out_n) const {
  if (normalizers.empty()) {
    *out = s;
    *out_n = n;
    return Status::Ok();
  }
  uint8_t* base = st.ws->memory_.get();
  uint8_t* bufs[2] = {base + st.layout.off_norm_a, base + st.layout.off_norm_b};
  const size_t cap = st.layout.piece;
  const uint8_t* cur = s;
  size_t cur_n = n;
  int which = 0;
  for (const NormalizerOp& op : normalizers) {
    uint8_t* dst = bufs[which];
    const fb::NormalizerStep& step = *op.step;
    size_t m = 0;
    switch (step.kind()) {
      case fb::NormalizerKind::NFC:
        m = text::Normalize(NormForm::kNfc, Chars(cur), cur_n, Chars(dst), cap);
        break;
      case fb::NormalizerKind::NFD:
        m = text::Normalize(NormForm::kNfd, Chars(cur), cur_n, Chars(dst), cap);
        break;
      case fb::NormalizerKind::NFKC:
        m = text::Normalize(NormForm::kNfkc, Chars(cur), cur_n, Chars(dst), cap);
        break;
      case fb::NormalizerKind::NFKD:
        m = text::Normalize(NormForm::kNfkd, Chars(cur), cur_n, Chars(dst), cap);
        break;
      case fb::NormalizerKind::Lowercase: m = Lowercase(Chars(cur), cur_n, Chars(dst), cap); break;
      case fb::NormalizerKind::StripAccents:
        m = StripAccents(Chars(cur), cur_n, Chars(dst), cap);
        break;
      case fb::NormalizerKind::Bert: {
        // Bert needs a third buffer when cur is the other one: use the pre-token buffers.
        uint8_t* tmp = base + st.layout.off_pre_a;
        m = Bert(step, cur, cur_n, dst, cap, tmp, st.layout.pre);
        break;
      }
      case fb::NormalizerKind::Replace:
        if (op.regex) {
          size_t o = 0, from = 0, b, e, last = 0;
          const size_t cn = Str(step.content());
          void* scratch = base + st.layout.off_regex;
          while (from <= cur_n) {
            Result<bool> found =
                op.regex->Find(Chars(cur), cur_n, from, &b, &e, scratch, st.layout.regex);
            if (!found.ok()) return found.status();
            if (!found.value()) break;
            if (o + (b - last) + cn > cap) return OutgrewWorkspace("normalizers");
            std::memcpy(dst + o, cur + last, b - last);
            o += b - last;
            std::memcpy(dst + o, step.content()->data(), cn);
            o += cn;
            last = e;
            if (e == b) {
              if (e >= cur_n) break;
              size_t k = e;
              Utf8Decode(Chars(cur), &k);
              from = k;
            } else {
              from = e;
            }
          }
          if (o + (cur_n - last) > cap) return OutgrewWorkspace("normalizers");
          std::memcpy(dst + o, cur + last, cur_n - last);
          m = o + cur_n - last;
        } else {
          m = ReplaceLiteral(step, cur, cur_n, dst, cap);
        }
        break;
      case fb::NormalizerKind::Prepend: {
        const size_t cn = Str(step.content());
        if (cur_n == 0) {
          m = 0;
        } else {
          m = cn + cur_n;
          if (m <= cap) {
            std::memcpy(dst, step.content()->data(), cn);
            std::memcpy(dst + cn, cur, cur_n);
          }
        }
        break;
      }
      case fb::NormalizerKind::Strip: {
        size_t b = 0, e = cur_n;
        if (step.strip_left()) {
          while (b < e) {
            size_t k = b;
            if (!IsWhiteSpace(Utf8Decode(Chars(cur), &k))) break;
            b = k;
          }
        }
        if (step.strip_right()) {
          while (e > b) {
            size_t p = e - 1;
            while (p > b && Utf8IsContinuation(cur[p])) --p;
            size_t k = p;
            if (!IsWhiteSpace(Utf8Decode(Chars(cur), &k))) break;
            e = p;
          }
        }
        m = e - b;
        std::memmove(dst, cur + b, m);
        break;
      }
      case fb::NormalizerKind::Precompiled:
        m = ApplyCharsmap(step.charsmap()->data(), step.charsmap()->size(), Chars(cur), cur_n,
                          Chars(dst), cap);
        break;
      case fb::NormalizerKind::SentencePiece:
        m = SentencePieceNormalize(step, cur, cur_n, dst, cap);
        break;
      default: return Status(StatusCode::kInternal, "normalizer kind");
    }
    if (m > cap) return OutgrewWorkspace("normalizers");
    cur = dst;
    cur_n = m;
    which ^= 1;
  }
  *out = cur;
  *out_n = cur_n;
  return Status::Ok();
}

}  // namespace text
}  // namespace octet
