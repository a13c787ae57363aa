// Unicode character data and text transforms for the on-device tokenizers.
//
// Every function reproduces what Hugging Face `tokenizers` (Rust) does for the
// same step, because encodings are compared id-for-id with it; each comment
// names the definition followed. All data comes from one source, the Unicode
// Character Database 15.0.0 (see unicode_data.inc for the generator command).
// HF's dependencies pin their own tables: Rust std's char methods follow the
// Unicode version of the compiler that built HF's wheel, while the crates
// `unicode_categories` 0.1.1 and `unicode-normalization-alignments` carry
// older tables. They differ from ours only on code points assigned after
// those versions (new in the later standards), never on older text.
//
// Transforms take UTF-8 and write UTF-8 into a caller buffer: no allocation,
// no exceptions. They return the full output size in bytes even when it
// exceeds `cap`, and never write past out[cap); when the result exceeds
// `cap` the buffer holds an unspecified prefix and the caller retries with a
// buffer of the returned size (or sizes it once with the growth bounds
// below). Input should be valid UTF-8 (Utf8ValidPrefix); a byte that does not
// start a valid sequence is read as U+FFFD so bad input stays memory-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace octet::text {

// General_Category (UnicodeData.txt field 2); kCn for unassigned code points,
// noncharacters and anything above U+10FFFF.
// clang-format off
enum class Category : uint8_t {
  kLu, kLl, kLt, kLm, kLo,        // letters
  kMn, kMc, kMe,                  // marks
  kNd, kNl, kNo,                  // numbers
  kPc, kPd, kPs, kPe, kPi, kPf, kPo,  // punctuation
  kSm, kSc, kSk, kSo,             // symbols
  kZs, kZl, kZp,                  // separators
  kCc, kCf, kCs, kCo, kCn,        // other
};
// clang-format on
constexpr int kCategoryCount = 30;

Category CategoryOf(uint32_t cp);
// Two-letter alias ("Lu", "Cn", ...).
const char* CategoryName(Category c);

// Canonical_Combining_Class (0 for starters).
uint8_t CombiningClass(uint32_t cp);

// --- Predicates, named for the definition they follow -----------------------

// White_Space property = Rust char::is_whitespace = Oniguruma \s (Unicode).
bool IsWhiteSpace(uint32_t cp);
// Alphabetic derived property = Rust char::is_alphabetic.
bool IsAlphabetic(uint32_t cp);
// General_Category Nd|Nl|No = Rust char::is_numeric (Digits pre-tokenizer).
bool IsNumeric(uint32_t cp);
// Rust char::is_alphanumeric: IsAlphabetic || IsNumeric.
bool IsAlphanumeric(uint32_t cp);
// General_Category P* (Pc Pd Ps Pe Pi Pf Po) = unicode_categories
// is_punctuation.
bool IsPunctuation(uint32_t cp);
// BertPreTokenizer and the Punctuation pre-tokenizer (`is_bert_punc`):
// Rust char::is_ascii_punctuation (which adds the ASCII symbols $+<=>^`|~)
// or IsPunctuation.
bool IsBertPunctuation(uint32_t cp);
// BertNormalizer's is_whitespace: '\t', '\n', '\r' or IsWhiteSpace.
bool IsBertWhitespace(uint32_t cp);
// BertNormalizer's is_control: not '\t', '\n', '\r', and unicode_categories
// is_other, which is Cc|Cf|Co (it leaves out Cn and Cs). Its clean_text drops
// these, U+0000 and U+FFFD, and maps IsBertWhitespace to ' '.
bool IsBertControl(uint32_t cp);
// BertNormalizer's is_chinese_char: the eight CJK ranges of HF's code,
// including its 0x2B920..0x2CEAF (not the 0x2B820 of Google's BERT).
bool IsBertChineseChar(uint32_t cp);
// Oniguruma's \w with Unicode (ONIGENC_CTYPE_WORD): Alphabetic | General_
// Category M* | Nd | Pc, no Join_Control. (The docs say L|M|N|Pc; the
// tables say otherwise: Onigmo's [[:word:]], same lineage, has 128917 code
// points in Unicode 12.1, exactly |Alphabetic u M u Nd u Pc| there, where
// L|M|N|Pc would be 129675.) Used by the Whitespace pre-tokenizer's
// `\w+|[^\w\s]+` and by the regex engine.
bool IsOnigWord(uint32_t cp);
// Oniguruma's \d with Unicode: General_Category Nd.
bool IsOnigDigit(uint32_t cp);
// unicode-normalization(-alignments) char::is_combining_mark, which the
// StripAccents normalizer filters out: General_Category Mn|Mc|Me.
bool IsCombiningMark(uint32_t cp);

// --- Case ---------------------------------------------------------------------

// Simple case folding (CaseFolding.txt status C and S): the code point that
// (?i) compares. SimpleCaseFold(0x17F) == 's', SimpleCaseFold(0x212A) == 'k'.
uint32_t SimpleCaseFold(uint32_t cp);
// The next code point of cp's case orbit, in increasing order with wrap-around
// (the set of code points with the same SimpleCaseFold): 'K' -> 'k' ->
// U+212A -> 'K'. Returns cp itself when it has no other case. The regex
// engine enumerates a character's (?i) equivalents by following it.
uint32_t SimpleFoldOrbitNext(uint32_t cp);

// Rust char::to_lowercase for one code point (UnicodeData simple mapping plus
// SpecialCasing's unconditional entries: U+0130 -> "i\u0307" is the only
// one longer than one code point). Writes 1 or 2 code points to out[2] and
// returns the count.
size_t ToLowercase(uint32_t cp, uint32_t out[2]);

// --- Transforms (caller buffer, return full size; see the top comment) --------

enum class NormForm : uint8_t { kNfc, kNfd, kNfkc, kNfkd };

// Worst-case output bytes per input byte of each transform. Normalize: U+FDFA
// (3 bytes) has an 18-character compatibility decomposition (33 bytes), the
// largest ratio in the UCD (the generator checks it). Lowercase and
// StripAccents grow by at most 3x, reached by an invalid byte becoming U+FFFD
// (valid text grows at most 1.5x: U+0130 and U+023A/U+023E).
constexpr size_t kMaxNormalizeGrowth = 11;
constexpr size_t kMaxLowercaseGrowth = 3;
constexpr size_t kMaxStripAccentsGrowth = 3;

// UAX #15 normalization, as unicode-normalization(-alignments) `nfc()`,
// `nfd()`, `nfkc()`, `nfkd()` produce it (HF's NFC/NFD/NFKC/NFKD normalizers,
// BertNormalizer's strip_accents step): full decomposition, canonical
// ordering of any length of combining-mark run (no stream-safe CGJ
// insertion), canonical composition with the composition exclusions and
// algorithmic Hangul. Needs no heap and no fixed-size mark buffer: long runs
// of marks are handled with repeated passes over the input.
size_t Normalize(NormForm form, const char* in, size_t n, char* out, size_t cap);

// HF's Lowercase normalizer (NormalizedString::lowercase): ToLowercase on
// each code point independently; no Final_Sigma or language rules, so
// "ΟΔΟΣ" becomes "οδοσ", not "οδος".
size_t Lowercase(const char* in, size_t n, char* out, size_t cap);

// HF's StripAccents normalizer: drops every code point for which
// IsCombiningMark holds; does not decompose first (HF pipelines put NFD
// before it, BertNormalizer does NFD itself).
size_t StripAccents(const char* in, size_t n, char* out, size_t cap);

// --- Grapheme clusters ----------------------------------------------------------

// Grapheme_Cluster_Break property values (GraphemeBreakProperty.txt).
// clang-format off
enum class GraphemeBreak : uint8_t {
  kOther, kCR, kLF, kControl, kExtend, kZWJ, kRegionalIndicator, kPrepend,
  kSpacingMark, kL, kV, kT, kLV, kLVT,
};
// clang-format on
GraphemeBreak GraphemeBreakOf(uint32_t cp);
// Extended_Pictographic (emoji-data.txt).
bool IsExtendedPictographic(uint32_t cp);

// End (byte offset) of the extended grapheme cluster that starts at byte i of
// s[0, n), by the UAX #29 rules that the `unicode-segmentation` crate
// implements for Unicode 15.0 (GB3..GB13 and GB999: CR LF, controls, Hangul
// syllable sequences, Extend/ZWJ/SpacingMark, Prepend, Extended_Pictographic
// Extend* ZWJ x Extended_Pictographic, regional-indicator pairs). i must be
// a character boundary; returns n when i >= n. The SentencePiece Precompiled
// normalizer walks text with it. Newer unicode-segmentation releases (Unicode
// 15.1+) add GB9c, which keeps Indic consonant conjuncts together; those
// clusters are 9+ bytes, and Precompiled maps any cluster of 6+ bytes code
// point by code point, so its output is the same either way.
size_t NextGraphemeEnd(const char* s, size_t n, size_t i);

}  // namespace octet::text
