// Helpers the octet subcommands share, on the public API alone (octet.hpp):
// opening a model and a session with errors turned into Failure, and the
// small formatting bits of the reports. Host-side code: errors are thrown as
// Failure (cli/args.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "octet/octet.hpp"

namespace octet {
namespace cli {

// Maps and verifies `path`; throws Failure carrying the loader's message.
api::Model OpenModel(const std::string& path);

// The model's facts (octet_model_get_info).
octet_model_info ModelInfo(const api::Model& model);

// Plans and allocates a session; throws Failure naming the limits and the reason.
api::Session OpenSession(const api::Model& model, const octet_session_options& options);

// "message (kind)", e.g. "tensor 'x' has rank 9 (invalid model)".
std::string StatusText(const api::Status& status);

// Throws Failure("<what> failed: message (kind)") unless ok.
void Check(const api::Status& status, const std::string& what);

// "encoder-only", "decoder-only" or "encoder-decoder".
std::string StructureName(int32_t structure);  // an octet_structure

// Bytes of the longest prefix of s[0, n) that is valid UTF-8.
size_t ValidUtf8Prefix(const char* s, size_t n);

}  // namespace cli
}  // namespace octet
