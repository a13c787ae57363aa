// A backtracking regex engine with Oniguruma's semantics for the patterns
// Hugging Face tokenizers run through Oniguruma: the Split pre-tokenizers
// (GPT-2, Llama 3, Qwen, o200k, DeepSeek, ...), ByteLevel's GPT-2 split and
// the Replace normalizers. The reference is Oniguruma's default syntax
// (ONIG_SYNTAX_ONIGURUMA, what the onig crate's Regex::new uses) with UTF-8,
// Unicode classes and no options; HF's iteration is RegexMatchIterator.
//
// Matching is leftmost-first with Perl priorities: alternatives in order,
// greedy quantifiers longest first, lazy ones shortest first, possessive and
// atomic groups never give back. The supported syntax is a subset; anything
// outside it makes Compile fail with the construct and its byte offset, so a
// model whose pattern we would mis-run is refused at conversion, not
// mis-tokenized.
//
// Supported: literals and escapes (\t \n \r \f \v \a \e \xHH (< 0x80) \x{H..}
// \uHHHH, escaped punctuation), `.` (any character but \n), classes [...] with
// ranges, negation, nested classes (union) and && (intersection), \s \S \d \D
// \w \W (Unicode: White_Space, Nd, Alphabetic|M|Nd|Pc), \p{..} \P{..} \p{^..}
// for General_Category values (short and long names, Any), groups ( ), (?: ),
// (?<name> ), (?i) (?-i) at the start of a group, (?i: ) (?-i: ), alternation,
// * + ? {m} {m,} {m,n} {,n} greedy, lazy (suffix ?) and possessive (suffix +,
// except after {..}, which Oniguruma reads as a further repetition), (?> ),
// lookahead (?= ) (?! ), lookbehind (?<= ) (?<! ) whose alternatives each have
// a fixed length, anchors ^ $ (line anchors, as in Oniguruma) \A \z \Z \b \B.
// (?i) uses simple case folding (CaseFolding.txt C and S: (?i)s matches U+017F,
// (?i)k matches U+212A), closing classes before negating them as Oniguruma
// does; where Oniguruma would also apply a multi-character fold (U+00DF ~
// "ss"), Compile refuses the pattern.
//
// A Regex is immutable after Compile and can be shared between threads; each
// Find uses only the caller's scratch space.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include "core/result.h"
#include "core/status.h"
#include "core/vector.h"
#include "text/regex_fast.h"

namespace octet::text {

class Regex {
 public:
  Regex() = default;

  // Parses and compiles `pattern` (UTF-8). Load time: allocates (through
  // core/alloc.h; a failed allocation gives kOutOfMemory, "regex: out of
  // memory for ..."). An unsupported or malformed pattern gives kUnsupported /
  // kInvalidArgument with a message naming the construct and its byte offset
  // in the pattern. On an error the regex is left uncompiled.
  Status Compile(std::string_view pattern);
  // The same without the hand-written matchers that Compile picks for the
  // GPT-2 and Llama 3 / Qwen2 split patterns: the general engine only (for
  // the tests that compare the two, and for benchmarks).
  Status CompileGeneralOnly(std::string_view pattern);

  // Leftmost match that starts at or after `from` in text[0, n): on true,
  // [*begin, *end) is the match. `from` must be a character boundary <= n.
  // Lookaround and \b see the whole text (as Oniguruma's search with a start
  // offset does). `scratch` must hold at least ScratchBytes(n) bytes (any
  // alignment); nothing is allocated. Text should be valid UTF-8; invalid
  // bytes are read as U+FFFD, one byte each, and never read out of bounds.
  // Errors: kOutOfMemory when the backtracking stack outgrows `scratch`,
  // kInvalidArgument for from > n or n >= 4 GiB, kUnsupported when a match
  // attempt exceeds the backtracking budget (a pathological pattern).
  Result<bool> Find(const char* text, size_t n, size_t from, size_t* begin, size_t* end,
                    void* scratch, size_t scratch_bytes) const;

  // Scratch that Find needs for a text of `text_bytes` bytes: a bound on the
  // backtracking stack, derived from the program (a constant for the
  // tokenizer patterns, which have no loops over groups).
  size_t ScratchBytes(size_t text_bytes) const;

  bool compiled() const { return !program_.empty(); }
  // True when Find runs a hand-written matcher for this pattern.
  bool uses_fast_path() const { return fast_ != regex_fast::Kind::kNone; }

  // Implementation types (public so the compiler in regex.cc can fill them).
  struct Inst {
    uint8_t op = 0;
    uint8_t mode = 0;
    uint16_t flags = 0;
    uint32_t a = 0;
    uint32_t b = 0;
    uint32_t c = 0;
  };
  struct CharClass {
    uint64_t ascii[2] = {0, 0};   // code points 0..127
    uint16_t bmp_block[256] = {};  // code point >> 8 -> block in blocks_ (0: empty)
    uint32_t astral_begin = 0;     // index in ranges_ of sorted [lo, hi] pairs, for cp >= 0x10000
    uint32_t astral_count = 0;
  };
  struct Block {
    uint64_t bits[4];
  };
  struct ByteSet {
    uint64_t bits[4];
  };

 private:
  enum class Outcome : uint8_t { kNoMatch, kMatch, kStackFull, kBudget, kInternal };
  static Status OutcomeStatus(Outcome o);
  // Find after the argument checks, on a stack already aligned for frames
  // (`stack_cap` frames): no Status is built on the way.
  Outcome FindImpl(const char* text, size_t n, size_t from, size_t* begin, size_t* end,
                   void* stack, size_t stack_cap) const;
  Outcome MatchAt(const char* text, size_t n, size_t start, size_t* end, void* stack,
                  size_t stack_cap) const;
  bool ClassHas(uint32_t cls, uint32_t cp) const;
  class Matcher;  // MatchAt's state and steps (regex.cc)

  friend class RegexCompiler;
  friend class RegexMatchIterator;

  Vector<Inst> program_;
  Vector<CharClass> classes_;
  Vector<Block> blocks_;
  Vector<uint32_t> ranges_;
  Vector<ByteSet> byte_sets_;
  Vector<char> literals_;
  // Backtracking stack bound: fixed entries + one per `per_char_num /
  // per_char_den`-ish term; see ScratchBytes.
  size_t stack_fixed_ = 0;
  Vector<uint32_t> loop_min_lengths_;  // one per push site inside a loop
  bool anchored_start_ = false;             // pattern starts with \A
  int32_t first_set_ = -1;                  // byte set of a match's first byte, or -1
  regex_fast::Kind fast_ = regex_fast::Kind::kNone;
  regex_fast::CharKinds kinds_;  // built only for a fast pattern
};

// Hugging Face tokenizers' SysRegex::find_iter, which is the onig crate's
// FindMatches: successive Find calls from the end of the previous match; an
// empty match moves the next search one character further, and an empty
// match found right after a non-empty one (the next search after it, wherever
// it lands) is dropped.
class RegexMatchIterator {
 public:
  // `scratch` as for Regex::Find (at least ScratchBytes(n) bytes), used by
  // every Next.
  RegexMatchIterator(const Regex& regex, const char* text, size_t n, void* scratch,
                     size_t scratch_bytes);

  // The next match, or false at the end. Errors as Regex::Find.
  Result<bool> Next(size_t* begin, size_t* end);
  // Up to `max` next matches: match i is [spans[2i], spans[2i+1]). Returns
  // how many (0 at the end). Cheaper per match than Next for short pieces.
  Result<size_t> NextBatch(size_t* spans, size_t max);

 private:
  Regex::Outcome Step(size_t* begin, size_t* end);

  const Regex& regex_;
  const char* text_;
  size_t n_;
  void* stack_ = nullptr;  // scratch, aligned for the engine's frames
  size_t stack_cap_ = 0;   // frames
  size_t last_end_ = 0;
  bool skip_next_empty_ = false;
};

}  // namespace octet::text
