// What the fuzzer, the corpus replay and the malformed-file tests do with one
// untrusted model: load it the way an app would, and when the loader accepts
// it, use every part a session could use, checking the promises Model makes;
// then run it the way an app would (RunLoadedModel).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "format/model.h"

namespace octet {
namespace testing {

// Checks a loaded model against what model.h promises (views inside
// [begin, begin + size), 64-byte aligned, size == shape x dtype, names unique
// and found by Find, int8 tensors quantized, blobs inside the file) and reads
// every byte of every tensor and blob, so a sanitizer sees any view that is
// out of bounds. Returns "" when every promise holds, else the first broken one.
std::string WalkLoadedModel(const Model& model, const uint8_t* begin, uint64_t size);

// Creates a small session (2 sequences of up to 6 tokens, 2 decode steps) when
// its plan stays under 64 MiB, runs a padded batch (encoder-decoders: the same
// ids on both sides), and for decoders samples and steps twice; fp32 or int8,
// whatever the file holds. Every refusal must come with a message. Returns ""
// or the broken promise. Outputs are not checked: a malformed file may hold
// NaN weights; what must not happen is a crash or a sanitizer report.
std::string RunLoadedModel(const Model& model);

// When the model carries a compiled tokenizer (which the loader verified):
// binds it, encodes a few fixed texts (its own added tokens' strings among
// them) with and without special tokens and their splitting, decodes the ids,
// streams them, decodes fixed and out-of-range ids, labels tokens, and renders
// the chat template when there is one, then encodes the rendered text. A table
// that passes the checks but disagrees with itself shows up as a crash or a
// sanitizer report; the checked promises are: ids inside the vocabulary and
// within MaxIds, decodes of those ids succeed within MaxDecodedBytes, an
// out-of-range id is refused, every refusal has a message.
std::string RunLoadedTokenizer(const Model& model);

// Copies `data` into a 64-byte aligned buffer of exactly `size` bytes (so
// AddressSanitizer reports any read past the end), loads it with
// Model::FromBuffer, and walks and runs it (model and tokenizer) when it loads. Returns the load status;
// *broken_promise gets WalkLoadedModel's answer ("" after a failed load).
Status LoadUntrusted(const uint8_t* data, size_t size, std::string* broken_promise);

}  // namespace testing
}  // namespace octet
