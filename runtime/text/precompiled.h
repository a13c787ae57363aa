// SentencePiece's precompiled normalizer ("Precompiled" in Hugging Face
// tokenizers): the `precompiled_charsmap` blob that SentencePiece models carry
// (nmt_nfkc and friends), applied exactly as tokenizers' Precompiled normalizer
// applies it (its normalizers/precompiled.rs over the spm_precompiled crate).
//
// The blob, as SentencePiece writes it (all integers little-endian):
//   u32 trie_bytes
//   u32 units[trie_bytes / 4]      a Darts double-array trie over UTF-8 bytes
//   char normalized[]              the replacement strings, each ended by '\0'
// A trie leaf's value is a byte offset into `normalized`; the replacement is
// the bytes from there to the next '\0' (or the end of the block).
//
// How the text is walked (tokenizers' rule, kept bug for bug):
//   for each extended grapheme cluster g of the input:
//     if g is shorter than 6 bytes and the trie has a key that is a prefix of
//     g, g is replaced by the value of the SHORTEST such key (so the rest of
//     g is dropped: "ﬁ" + U+0301 becomes "fi");
//     otherwise each character c of g is replaced by the value of the
//     shortest key that is a prefix of c, or kept when there is none.
// A '\0' byte ends a key lookup early (as in the crate).
//
// The blob is untrusted (it comes from the model file). CheckCharsmap refuses
// what tokenizers refuses at load (a short header, a trie running past the
// end, a replacement block that is not UTF-8). Whatever the units say,
// ApplyCharsmap never reads outside the blob: a trie walk that leaves the
// array, or a value that points outside the replacement block or into the
// middle of a character, counts as "no key" (tokenizers would panic there).
//
// No allocation, no state: the functions read the blob in place.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace octet {
namespace text {

// kInvalidModel with a message naming the fault when `map` is not a charsmap
// that tokenizers would load; ok otherwise. An empty map (size 0) is refused:
// a model without a charsmap has no Precompiled step at all.
Status CheckCharsmap(const uint8_t* map, size_t size);

// The largest number of output bytes one input byte can become: the longest
// replacement string in the blob, at least 1. An output buffer of
// n * CharsmapMaxGrowth(map, size) bytes always suffices for n input bytes.
// Call on a checked map; O(size).
size_t CharsmapMaxGrowth(const uint8_t* map, size_t size);

// Normalizes the UTF-8 text in[0, n) with a map that passed CheckCharsmap.
// Writes the first min(result, cap) bytes of the normalized text to `out` and
// returns its full length (nothing is written past cap; `out` may be null when
// cap is 0). `in` should be valid UTF-8 (the caller validates text first);
// invalid input is still never read past n.
size_t ApplyCharsmap(const uint8_t* map, size_t map_size, const char* in, size_t n, char* out,
                     size_t cap);

// SentencePiece's own reading of the map (its normalizer.cc, what slow
// tokenizers such as Marian's run): the LONGEST key that is a prefix of
// in[0, n) (no grapheme clusters). Returns the key's length and sets *repl to
// its replacement, or returns 0 when no key matches. A map that fails
// CheckCharsmap (or a NUL byte, as above) matches nothing.
size_t CharsmapLongestPrefix(const uint8_t* map, size_t map_size, const char* in, size_t n,
                             const char** repl, size_t* repl_size);

}  // namespace text
}  // namespace octet
