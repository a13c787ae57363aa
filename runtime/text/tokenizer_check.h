// Load-time verification of a compiled tokenizer (TokenizerSpec): every id in
// range, tables well formed, strings valid UTF-8, enums known, regexes
// compile. The loader calls it after the FlatBuffers Verifier; Tokenizer and
// the lookup probes (tok_tables.h) rely on what it checks.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "octet_model_generated.h"

namespace octet {
namespace text {

// arch_vocab: Architecture.vocab_size (the ids the model consumes); 0 skips
// that check. A bad table gives kInvalidModel naming it.
Status CheckTokenizerSpec(const fb::TokenizerSpec& spec, uint32_t arch_vocab);

}  // namespace text
}  // namespace octet
