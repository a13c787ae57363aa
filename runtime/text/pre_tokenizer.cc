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

// The spans a run of pre-tokenizers works on: the current text and its spans,
// the splits the running step makes, the pieces of one span, and the two
// buffers that steps which rewrite the text alternate between. Each step
// leaves its result in `spans`.
struct SplitState {
  const uint8_t* text;
  Span* spans;
  size_t n_spans;
  Span* next;  // the running step's splits
  size_t n_next;
  Piece* pieces;  // pieces of one span; 2 * bytes + 1 entries at most (see LayoutFor)
  uint8_t* bufs[2];
  int which;         // the buffer the next rewrite writes
  size_t buf_bytes;  // of each buffer

  // The step's splits become the spans.
  void Advance() {
    Span* tmp = spans;
    spans = next;
    next = tmp;
    n_spans = n_next;
    n_next = 0;
  }
  // The spans become a copy of from[0, n).
  void TakeSpans(const Span* from, size_t n) {
    std::memcpy(spans, from, n * sizeof(Span));
    n_spans = n;
    n_next = 0;
  }
  // The text becomes the buffer a rewrite just wrote.
  void TakeRewrite() {
    text = bufs[which];
    which ^= 1;
  }
};

// Splits every span at the characters `pred` holds for, by `behavior`.
template <typename Pred>
void SplitAtChars(SplitState& ss, Pred pred, fb::SplitBehavior behavior) {
  for (size_t i = 0; i < ss.n_spans; ++i) {
    const size_t np = CharPieces(ss.text, ss.spans[i], pred, ss.pieces);
    ApplyBehavior(ss.pieces, np, behavior, ss.next, &ss.n_next);
  }
  ss.Advance();
}

// ByteLevel's add_prefix_space: each span copied to the free buffer with a
// space in front unless it starts with one.
Status AddPrefixSpaces(SplitState& ss) {
  uint8_t* dst = ss.bufs[ss.which];
  size_t o = 0;
  for (size_t i = 0; i < ss.n_spans; ++i) {
    const Span sp = ss.spans[i];
    const uint32_t b = static_cast<uint32_t>(o);
    if (o + 1 + (sp.end - sp.begin) > ss.buf_bytes) return OutgrewWorkspace("pre-tokenizers");
    if (ss.text[sp.begin] != ' ') dst[o++] = ' ';
    std::memcpy(dst + o, ss.text + sp.begin, sp.end - sp.begin);
    o += sp.end - sp.begin;
    ss.next[ss.n_next++] = Span{b, static_cast<uint32_t>(o)};
  }
  ss.TakeRewrite();
  ss.TakeSpans(ss.next, ss.n_next);
  return Status::Ok();
}

// ByteLevel's use_regex: the GPT-2 pattern's matches, which tile each span,
// each kept (Isolated).
void SplitGpt2(SplitState& ss) {
  for (size_t i = 0; i < ss.n_spans; ++i) {
    const uint8_t* p = ss.text + ss.spans[i].begin;
    const size_t len = ss.spans[i].end - ss.spans[i].begin;
    for (size_t k = 0; k < len;) {
      const size_t e = Gpt2MatchEnd(p, len, k);
      ss.next[ss.n_next++] = Span{ss.spans[i].begin + static_cast<uint32_t>(k),
                                  ss.spans[i].begin + static_cast<uint32_t>(e)};
      k = e;
    }
  }
  ss.Advance();
}

// The first occurrence of pattern[0, pn) in p[from, len): true with its start
// in *at.
bool FindLiteral(const uint8_t* p, size_t len, size_t from, const char* pattern, size_t pn,
                 size_t* at) {
  for (size_t k = from; k + pn <= len; ++k) {
    if (p[k] == static_cast<uint8_t>(pattern[0]) && std::memcmp(p + k, pattern, pn) == 0) {
      *at = k;
      return true;
    }
  }
  return false;
}

// The (gap, match) pieces of span `sp` for a Split step's pattern (a regex,
// or a literal string), in order, as HF's find_iter walks them: an empty
// match moves the search one character on.
Status PatternPieces(const PreTokenizerOp& op, const uint8_t* text, Span sp, void* scratch,
                     size_t scratch_bytes, Piece* pieces, size_t* n_pieces) {
  const fb::PreTokenizerStep& step = *op.step;
  const size_t pn = step.pattern() ? step.pattern()->size() : 0;
  const uint8_t* p = text + sp.begin;
  const size_t len = sp.end - sp.begin;
  size_t np = 0, prev = 0, from = 0;
  while (from <= len) {
    size_t b, e;
    if (op.regex) {
      Result<bool> found = op.regex->Find(Chars(p), len, from, &b, &e, scratch, scratch_bytes);
      if (!found.ok()) return found.status();
      if (!found.value()) break;
    } else {
      if (pn == 0 || !FindLiteral(p, len, from, step.pattern()->data(), pn, &b)) break;
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
  *n_pieces = np;
  return Status::Ok();
}

// Split: every span's pattern pieces (inverted when asked) by the step's
// behavior.
Status SplitByPattern(const PreTokenizerOp& op, SplitState& ss, void* scratch,
                      size_t scratch_bytes) {
  const fb::PreTokenizerStep& step = *op.step;
  for (size_t i = 0; i < ss.n_spans; ++i) {
    size_t np = 0;
    OCTET_RETURN_IF_ERROR(
        PatternPieces(op, ss.text, ss.spans[i], scratch, scratch_bytes, ss.pieces, &np));
    if (step.invert()) {
      for (size_t k = 0; k < np; ++k) ss.pieces[k].match = !ss.pieces[k].match;
    }
    ApplyBehavior(ss.pieces, np, step.behavior(), ss.next, &ss.n_next);
  }
  ss.Advance();
  return Status::Ok();
}

// Metaspace's rewrite: each span copied to the free buffer with its spaces
// replaced by the replacement, which is also prepended as the prepend scheme
// says.
Status ReplaceSpaces(const fb::PreTokenizerStep& step, bool at_origin, SplitState& ss) {
  const flatbuffers::String* r = step.replacement();
  const size_t rn = r ? r->size() : 0;
  uint8_t* dst = ss.bufs[ss.which];
  const uint8_t* t = ss.text;
  size_t o = 0;
  Span* rewritten = reinterpret_cast<Span*>(ss.pieces);  // free until the split after this
  size_t n_rewritten = 0;
  for (size_t i = 0; i < ss.n_spans; ++i) {
    const Span sp = ss.spans[i];
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
    if (o + rn + (sp.end - sp.begin) + spaces * rn > ss.buf_bytes) {
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
  ss.TakeRewrite();
  ss.TakeSpans(rewritten, n_rewritten);
  return Status::Ok();
}

// Metaspace: the rewrite, then (split) a split before each replacement
// character.
Status Metaspace(const fb::PreTokenizerStep& step, bool at_origin, SplitState& ss) {
  OCTET_RETURN_IF_ERROR(ReplaceSpaces(step, at_origin, ss));
  if (!step.split()) return Status::Ok();
  const flatbuffers::String* r = step.replacement();
  size_t k = 0;
  const uint32_t rc = r && r->size() ? Utf8Decode(r->data(), &k) : 0;
  SplitAtChars(ss, [rc](uint32_t c) { return c == rc; }, fb::SplitBehavior::MergedWithNext);
  return Status::Ok();
}

// Whitespace: \w+|[^\w\s]+, the matches kept: runs of word and of other
// non-space characters.
void SplitWordRuns(SplitState& ss) {
  for (size_t i = 0; i < ss.n_spans; ++i) {
    const Span sp = ss.spans[i];
    size_t j = sp.begin;
    int run = -1;  // 0 word, 1 other
    uint32_t run_begin = 0;
    while (j < sp.end) {
      const size_t at = j;
      const uint32_t c = Utf8Decode(Chars(ss.text), &j);
      const int cls = IsOnigWord(c) ? 0 : IsWhiteSpace(c) ? 2 : 1;
      if (cls != run) {
        if (run == 0 || run == 1) ss.next[ss.n_next++] = Span{run_begin, static_cast<uint32_t>(at)};
        run = cls;
        run_begin = static_cast<uint32_t>(at);
      }
    }
    if (run == 0 || run == 1) ss.next[ss.n_next++] = Span{run_begin, sp.end};
  }
  ss.Advance();
}

// One pre-tokenizer step over all spans.
Status RunStep(const PreTokenizerOp& op, bool at_origin, void* scratch, size_t scratch_bytes,
               SplitState& ss) {
  const fb::PreTokenizerStep& step = *op.step;
  switch (step.kind()) {
    case fb::PreTokenizerKind::ByteLevel:
      if (step.add_prefix_space()) OCTET_RETURN_IF_ERROR(AddPrefixSpaces(ss));
      if (step.use_regex()) SplitGpt2(ss);
      return Status::Ok();
    case fb::PreTokenizerKind::Split:
      return SplitByPattern(op, ss, scratch, scratch_bytes);
    case fb::PreTokenizerKind::Metaspace:
      return Metaspace(step, at_origin, ss);
    case fb::PreTokenizerKind::Bert:
      // Whitespace removed, then punctuation isolated.
      SplitAtChars(ss, [](uint32_t c) { return IsWhiteSpace(c); }, fb::SplitBehavior::Removed);
      SplitAtChars(ss, [](uint32_t c) { return IsBertPunctuation(c); }, fb::SplitBehavior::Isolated);
      return Status::Ok();
    case fb::PreTokenizerKind::Whitespace:
      SplitWordRuns(ss);
      return Status::Ok();
    case fb::PreTokenizerKind::WhitespaceSplit:
      SplitAtChars(ss, [](uint32_t c) { return IsWhiteSpace(c); }, fb::SplitBehavior::Removed);
      return Status::Ok();
    case fb::PreTokenizerKind::Digits:
      SplitAtChars(ss, [](uint32_t c) { return IsNumeric(c); },
                   step.individual_digits() ? fb::SplitBehavior::Isolated
                                            : fb::SplitBehavior::Contiguous);
      return Status::Ok();
    case fb::PreTokenizerKind::Punctuation:
      SplitAtChars(ss, [](uint32_t c) { return IsBertPunctuation(c); }, step.behavior());
      return Status::Ok();
    case fb::PreTokenizerKind::CharDelimiter: {
      const uint32_t d = step.delimiter();
      SplitAtChars(ss, [d](uint32_t c) { return c == d; }, fb::SplitBehavior::Removed);
      return Status::Ok();
    }
    default:
      return Status(StatusCode::kInternal, "pre-tokenizer kind");
  }
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
  SplitState ss;
  ss.text = s;
  ss.spans = reinterpret_cast<Span*>(base + st.layout.off_spans_a);
  ss.n_spans = 0;
  ss.next = reinterpret_cast<Span*>(base + st.layout.off_spans_b);
  ss.n_next = 0;
  ss.pieces = reinterpret_cast<Piece*>(base + st.layout.off_spans_c);
  ss.bufs[0] = base + st.layout.off_pre_a;
  ss.bufs[1] = base + st.layout.off_pre_b;
  ss.which = 0;
  ss.buf_bytes = st.layout.pre;
  if (n > 0) ss.spans[ss.n_spans++] = Span{0, static_cast<uint32_t>(n)};
  for (const PreTokenizerOp& op : pre_tokenizers) {
    OCTET_RETURN_IF_ERROR(
        RunStep(op, at_origin, base + st.layout.off_regex, st.layout.regex, ss));
  }
  *text_out = ss.text;
  *spans_out = ss.spans;
  *n_spans_out = ss.n_spans;
  return Status::Ok();
}

}  // namespace text
}  // namespace octet
