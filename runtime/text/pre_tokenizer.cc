// Pre-tokenizers, applied in order to the pieces the previous ones made, as
// tokenizers' pre_tokenizers/*.rs and NormalizedString::split do: each step
// finds matches in every piece, turns (gap, match) pieces into splits by its
// behavior, and drops empty splits. Steps that rewrite text (Metaspace,
// ByteLevel's prefix space) copy the pieces into the other buffer.
//
// ByteLevel is always the last step (the converter checks it): the model then
// works on the raw bytes, so the byte -> character mapping never runs.
#include <cstring>

#include "text/tokenizer_impl.h"
#include "text/unicode.h"
#include "core/utf8.h"

namespace octet {
namespace text {
namespace {

const char* Chars(const uint8_t* s) { return reinterpret_cast<const char*>(s); }

// One piece of a split: [b, e), and whether it is a match of the pattern.
struct Piece {
  uint32_t b, e;
  bool match;
};
static_assert(sizeof(Piece) == 12, "the workspace plans 12 bytes a piece");

enum class Gpt2Class : uint8_t { kOther, kLetter, kNumber, kSpace };

Gpt2Class ClassOf(uint32_t c) {
  if (c < 0x80) {
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return Gpt2Class::kLetter;
    if (c >= '0' && c <= '9') return Gpt2Class::kNumber;
    if (c == ' ' || (c >= 0x09 && c <= 0x0D)) return Gpt2Class::kSpace;
    return Gpt2Class::kOther;
  }
  const Category cat = CategoryOf(c);
  if (cat <= Category::kLo) return Gpt2Class::kLetter;
  if (cat >= Category::kNd && cat <= Category::kNo) return Gpt2Class::kNumber;
  if (IsWhiteSpace(c)) return Gpt2Class::kSpace;
  return Gpt2Class::kOther;
}

// The end of the match of GPT-2's pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// that starts at s[i] (the first alternative that matches wins, as in a
// backtracking engine). Every character is in one of the classes, so the
// matches tile the text.
size_t Gpt2MatchEnd(const uint8_t* s, size_t n, size_t i) {
  if (s[i] == '\'' && i + 1 < n) {
    const uint8_t a = s[i + 1];
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
    const uint8_t b = i + 2 < n ? s[i + 2] : 0;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
  }
  size_t first = i;
  if (s[i] == ' ' && i + 1 < n) first = i + 1;
  size_t k = first;
  const Gpt2Class cls = ClassOf(Utf8Decode(Chars(s), &k));
  if (cls != Gpt2Class::kSpace) {
    size_t end = k;
    while (end < n) {
      size_t j = end;
      if (ClassOf(Utf8Decode(Chars(s), &j)) != cls) break;
      end = j;
    }
    return end;
  }
  // \s+(?!\S) takes a whole run that ends the text and otherwise leaves the
  // run's last character to the word after it; a single space there is \s+.
  k = i;
  Utf8Decode(Chars(s), &k);
  size_t end = k, last_start = i, count = 1;
  while (end < n) {
    size_t j = end;
    if (ClassOf(Utf8Decode(Chars(s), &j)) != Gpt2Class::kSpace) break;
    last_start = end;
    end = j;
    ++count;
  }
  if (end == n || count == 1) return end;
  return last_start;
}

// Splits by the pieces of one input span, by `behavior`; appends the
// non-empty splits to out. Pieces cover the span in order.
void ApplyBehavior(const Piece* pieces, size_t n_pieces, fb::SplitBehavior behavior, Span* out,
                   size_t* n_out) {
  const size_t start = *n_out;
  auto push = [&](uint32_t b, uint32_t e) { out[(*n_out)++] = Span{b, e}; };
  bool previous_match = false;
  switch (behavior) {
    case fb::SplitBehavior::Isolated:
      for (size_t i = 0; i < n_pieces; ++i) push(pieces[i].b, pieces[i].e);
      break;
    case fb::SplitBehavior::Removed:
      for (size_t i = 0; i < n_pieces; ++i) {
        if (!pieces[i].match) push(pieces[i].b, pieces[i].e);
      }
      break;
    case fb::SplitBehavior::MergedWithPrevious:
      for (size_t i = 0; i < n_pieces; ++i) {
        if (pieces[i].match && !previous_match && *n_out > start) {
          out[*n_out - 1].end = pieces[i].e;
        } else {
          push(pieces[i].b, pieces[i].e);
        }
        previous_match = pieces[i].match;
      }
      break;
    case fb::SplitBehavior::MergedWithNext:
      for (size_t i = n_pieces; i-- > 0;) {
        if (pieces[i].match && !previous_match && *n_out > start) {
          out[*n_out - 1].begin = pieces[i].b;
        } else {
          push(pieces[i].b, pieces[i].e);
        }
        previous_match = pieces[i].match;
      }
      for (size_t a = start, b = *n_out; a + 1 < b; ++a, --b) {
        const Span t = out[a];
        out[a] = out[b - 1];
        out[b - 1] = t;
      }
      break;
    case fb::SplitBehavior::Contiguous:
      for (size_t i = 0; i < n_pieces; ++i) {
        if (pieces[i].match == previous_match && *n_out > start) {
          out[*n_out - 1].end = pieces[i].e;
        } else {
          push(pieces[i].b, pieces[i].e);
        }
        previous_match = pieces[i].match;
      }
      break;
  }
  // Empty splits are dropped (PreTokenizedString::split).
  size_t k = start;
  for (size_t i = start; i < *n_out; ++i) {
    if (out[i].end > out[i].begin) out[k++] = out[i];
  }
  *n_out = k;
}

template <typename Pred>
size_t CharPieces(const uint8_t* t, Span span, Pred pred, Piece* pieces) {
  size_t n = 0;
  uint32_t prev = span.begin;
  for (size_t i = span.begin; i < span.end;) {
    const size_t at = i;
    const uint32_t c = Utf8Decode(Chars(t), &i);
    if (pred(c)) {
      if (prev != at) pieces[n++] = Piece{prev, static_cast<uint32_t>(at), false};
      pieces[n++] = Piece{static_cast<uint32_t>(at), static_cast<uint32_t>(i), true};
      prev = static_cast<uint32_t>(i);
    }
  }
  if (prev != span.end) pieces[n++] = Piece{prev, span.end, false};
  return n;
}

}  // namespace

Status InitPreTokenizers(TokenizerImpl& t) {
  t.pre_tokenizers.Clear();
  t.pre_growth = Growth{};
  if (t.spec->pre_tokenizers() == nullptr) return Status::Ok();
  for (const fb::PreTokenizerStep* step : *t.spec->pre_tokenizers()) {
    PreTokenizerOp op;
    op.step = step;
    if (step->kind() == fb::PreTokenizerKind::Split && step->pattern_is_regex()) {
      op.regex.reset(New<Regex>());
      if (!op.regex) return Status(StatusCode::kOutOfMemory, "tokenizer: out of memory");
      OCTET_RETURN_IF_ERROR(
          op.regex->Compile(std::string_view(step->pattern()->data(), step->pattern()->size())));
    }
    if (step->kind() == fb::PreTokenizerKind::Metaspace) {
      const size_t r = step->replacement() ? step->replacement()->size() : 0;
      // Spaces become the replacement; one more before each piece.
      const Growth step_growth{2 * (r + 1), 1, r};
      t.pre_growth = Growth{Growth{t.pre_growth.num, 1, 0}.Apply(step_growth.num), 1,
                            step_growth.Apply(t.pre_growth.add)};
    } else if (step->kind() == fb::PreTokenizerKind::ByteLevel && step->add_prefix_space()) {
      t.pre_growth = Growth{Growth{t.pre_growth.num, 1, 0}.Apply(2), 1,
                            Growth{2, 1, 1}.Apply(t.pre_growth.add)};
    }
    if (!t.pre_tokenizers.Push(std::move(op))) return TokenizerOutOfMemory("pre-tokenizers");
  }
  return Status::Ok();
}

Status TokenizerImpl::PreTokenize(EncodeState& st, const uint8_t* s, size_t n, bool at_origin,
                                  const uint8_t** text_out, const Span** spans_out,
                                  size_t* n_spans_out) const {
  uint8_t* base = st.ws->memory_.get();
  Span* spans = reinterpret_cast<Span*>(base + st.layout.off_spans_a);
  Span* next = reinterpret_cast<Span*>(base + st.layout.off_spans_b);
  Piece* pieces = reinterpret_cast<Piece*>(base + st.layout.off_spans_c);
  uint8_t* bufs[2] = {base + st.layout.off_pre_a, base + st.layout.off_pre_b};
  int which = 0;
  const uint8_t* t = s;
  size_t n_spans = 0;
  if (n > 0) spans[n_spans++] = Span{0, static_cast<uint32_t>(n)};
  // Pieces arrays hold 2 * bytes + 1 entries at most; see LayoutFor.
  for (const PreTokenizerOp& op : pre_tokenizers) {
    const fb::PreTokenizerStep& step = *op.step;
    size_t n_next = 0;
    switch (step.kind()) {
      case fb::PreTokenizerKind::ByteLevel: {
        if (step.add_prefix_space()) {
          uint8_t* dst = bufs[which];
          size_t o = 0;
          for (size_t i = 0; i < n_spans; ++i) {
            const Span sp = spans[i];
            const uint32_t b = static_cast<uint32_t>(o);
            if (o + 1 + (sp.end - sp.begin) > st.layout.pre) return OutgrewWorkspace("pre-tokenizers");
            if (t[sp.begin] != ' ') dst[o++] = ' ';
            std::memcpy(dst + o, t + sp.begin, sp.end - sp.begin);
            o += sp.end - sp.begin;
            next[n_next++] = Span{b, static_cast<uint32_t>(o)};
          }
          t = dst;
          which ^= 1;
          std::memcpy(spans, next, n_next * sizeof(Span));
          n_spans = n_next;
          n_next = 0;
        }
        if (!step.use_regex()) continue;
        for (size_t i = 0; i < n_spans; ++i) {
          // The pattern's matches tile the piece: Isolated keeps each.
          const uint8_t* p = t + spans[i].begin;
          const size_t len = spans[i].end - spans[i].begin;
          for (size_t k = 0; k < len;) {
            const size_t e = Gpt2MatchEnd(p, len, k);
            next[n_next++] = Span{spans[i].begin + static_cast<uint32_t>(k),
                                  spans[i].begin + static_cast<uint32_t>(e)};
            k = e;
          }
        }
        break;
      }
      case fb::PreTokenizerKind::Split: {
        void* scratch = base + st.layout.off_regex;
        const size_t pn = step.pattern() ? step.pattern()->size() : 0;
        for (size_t i = 0; i < n_spans; ++i) {
          const Span sp = spans[i];
          const uint8_t* p = t + sp.begin;
          const size_t len = sp.end - sp.begin;
          size_t np = 0, prev = 0, from = 0;
          while (from <= len) {
            size_t b, e;
            if (op.regex) {
              Result<bool> found = op.regex->Find(Chars(p), len, from, &b, &e, scratch, st.layout.regex);
              if (!found.ok()) return found.status();
              if (!found.value()) break;
            } else {
              if (pn == 0) break;
              const void* hit = nullptr;
              for (size_t k = from; k + pn <= len; ++k) {
                if (p[k] == static_cast<uint8_t>(step.pattern()->data()[0]) &&
                    std::memcmp(p + k, step.pattern()->data(), pn) == 0) {
                  hit = p + k;
                  break;
                }
              }
              if (hit == nullptr) break;
              b = static_cast<const uint8_t*>(hit) - p;
              e = b + pn;
            }
            if (prev != b) pieces[np++] = Piece{sp.begin + static_cast<uint32_t>(prev), sp.begin + static_cast<uint32_t>(b), false};
            pieces[np++] = Piece{sp.begin + static_cast<uint32_t>(b), sp.begin + static_cast<uint32_t>(e), true};
            prev = e;
            if (e == b) {
              if (e >= len) break;
              size_t k = e;
              Utf8Decode(Chars(p), &k);
              from = k;
            } else {
              from = e;
            }
          }
          if (prev != len) pieces[np++] = Piece{sp.begin + static_cast<uint32_t>(prev), sp.end, false};
          if (step.invert()) {
            for (size_t k = 0; k < np; ++k) pieces[k].match = !pieces[k].match;
          }
          ApplyBehavior(pieces, np, step.behavior(), next, &n_next);
        }
        break;
      }
      case fb::PreTokenizerKind::Metaspace: {
        const flatbuffers::String* r = step.replacement();
        const size_t rn = r ? r->size() : 0;
        size_t k = 0;
        const uint32_t rc = rn ? Utf8Decode(r->data(), &k) : 0;
        uint8_t* dst = bufs[which];
        size_t o = 0;
        Span* rewritten = reinterpret_cast<Span*>(pieces);  // reused before the split below
        size_t n_rewritten = 0;
        for (size_t i = 0; i < n_spans; ++i) {
          const Span sp = spans[i];
          const uint32_t b = static_cast<uint32_t>(o);
          const bool starts_with_rep = rn > 0 && sp.end - sp.begin >= rn &&
                                       std::memcmp(t + sp.begin, r->data(), rn) == 0;
          // The replacement of a leading space counts as a start too (replace runs first).
          const bool starts_with_space = t[sp.begin] == ' ';
          bool prepend = false;
          if (step.prepend_scheme() == fb::PrependScheme::Always) {
            prepend = !starts_with_rep && !starts_with_space;
          } else if (step.prepend_scheme() == fb::PrependScheme::First) {
            prepend = !starts_with_rep && !starts_with_space && at_origin && sp.begin == 0;
          }
          size_t spaces = 0;
          for (size_t j = sp.begin; j < sp.end; ++j) spaces += t[j] == ' ';
          if (o + rn + (sp.end - sp.begin) + spaces * rn > st.layout.pre) {
            return OutgrewWorkspace("pre-tokenizers");
          }
          if (prepend) {
            std::memcpy(dst + o, r->data(), rn);
            o += rn;
          }
          for (size_t j = sp.begin; j < sp.end; ++j) {
            if (t[j] == ' ') {
              std::memcpy(dst + o, r->data(), rn);
              o += rn;
            } else {
              dst[o++] = t[j];
            }
          }
          rewritten[n_rewritten++] = Span{b, static_cast<uint32_t>(o)};
        }
        t = dst;
        which ^= 1;
        std::memcpy(spans, rewritten, n_rewritten * sizeof(Span));
        n_spans = n_rewritten;
        if (!step.split()) continue;
        for (size_t i = 0; i < n_spans; ++i) {
          const size_t np = CharPieces(t, spans[i], [rc](uint32_t c) { return c == rc; }, pieces);
          ApplyBehavior(pieces, np, fb::SplitBehavior::MergedWithNext, next, &n_next);
        }
        break;
      }
      case fb::PreTokenizerKind::Bert: {
        // Whitespace removed, then punctuation isolated.
        for (size_t i = 0; i < n_spans; ++i) {
          const size_t np = CharPieces(t, spans[i], [](uint32_t c) { return IsWhiteSpace(c); }, pieces);
          ApplyBehavior(pieces, np, fb::SplitBehavior::Removed, next, &n_next);
        }
        std::memcpy(spans, next, n_next * sizeof(Span));
        n_spans = n_next;
        n_next = 0;
        for (size_t i = 0; i < n_spans; ++i) {
          const size_t np = CharPieces(t, spans[i], [](uint32_t c) { return IsBertPunctuation(c); }, pieces);
          ApplyBehavior(pieces, np, fb::SplitBehavior::Isolated, next, &n_next);
        }
        break;
      }
      case fb::PreTokenizerKind::Whitespace: {
        // \w+|[^\w\s]+, the matches kept: runs of word and of other non-space characters.
        for (size_t i = 0; i < n_spans; ++i) {
          const Span sp = spans[i];
          size_t j = sp.begin;
          int run = -1;  // 0 word, 1 other
          uint32_t run_begin = 0;
          while (j < sp.end) {
            const size_t at = j;
            const uint32_t c = Utf8Decode(Chars(t), &j);
            const int cls = IsOnigWord(c) ? 0 : IsWhiteSpace(c) ? 2 : 1;
            if (cls != run) {
              if (run == 0 || run == 1) next[n_next++] = Span{run_begin, static_cast<uint32_t>(at)};
              run = cls;
              run_begin = static_cast<uint32_t>(at);
            }
          }
          if (run == 0 || run == 1) next[n_next++] = Span{run_begin, sp.end};
        }
        break;
      }
      case fb::PreTokenizerKind::WhitespaceSplit:
        for (size_t i = 0; i < n_spans; ++i) {
          const size_t np = CharPieces(t, spans[i], [](uint32_t c) { return IsWhiteSpace(c); }, pieces);
          ApplyBehavior(pieces, np, fb::SplitBehavior::Removed, next, &n_next);
        }
        break;
      case fb::PreTokenizerKind::Digits:
        for (size_t i = 0; i < n_spans; ++i) {
          const size_t np = CharPieces(t, spans[i], [](uint32_t c) { return IsNumeric(c); }, pieces);
          ApplyBehavior(pieces, np,
                        step.individual_digits() ? fb::SplitBehavior::Isolated
                                                 : fb::SplitBehavior::Contiguous,
                        next, &n_next);
        }
        break;
      case fb::PreTokenizerKind::Punctuation:
        for (size_t i = 0; i < n_spans; ++i) {
          const size_t np = CharPieces(t, spans[i], [](uint32_t c) { return IsBertPunctuation(c); }, pieces);
          ApplyBehavior(pieces, np, step.behavior(), next, &n_next);
        }
        break;
      case fb::PreTokenizerKind::CharDelimiter: {
        const uint32_t d = step.delimiter();
        for (size_t i = 0; i < n_spans; ++i) {
          const size_t np = CharPieces(t, spans[i], [d](uint32_t c) { return c == d; }, pieces);
          ApplyBehavior(pieces, np, fb::SplitBehavior::Removed, next, &n_next);
        }
        break;
      }
      default: return Status(StatusCode::kInternal, "pre-tokenizer kind");
    }
    Span* tmp = spans;
    spans = next;
    next = tmp;
    n_spans = n_next;
  }
  *text_out = t;
  *spans_out = spans;
  *n_spans_out = n_spans;
  return Status::Ok();
}

}  // namespace text
}  // namespace octet
