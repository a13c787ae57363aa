// Helpers the octet subcommands share: loading a model and creating a session
// with errors turned into Failure, and the small formatting bits of the reports.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "engine/session.h"
#include "format/model.h"

namespace octet {
namespace cli {

// Maps and verifies `path`; throws Failure carrying the loader's message.
Model LoadModel(const std::string& path);

// Plans and allocates a session; throws Failure naming the limits and the reason.
Session CreateSession(const Model& model, const SessionLimits& limits);

// "message (kind)", e.g. "tensor 'x' has rank 9 (invalid model)".
std::string DescribeStatus(const Status& status);

// Bytes of every tensor in the model.
uint64_t WeightBytes(const Model& model);

// A generated EnumName* result, or "unknown(N)" for a value the schema does not name.
std::string EnumText(const char* name, int value);

// "encoder-only", "decoder-only" or "encoder-decoder".
std::string StructureText(fb::Structure structure);

// "1.5 MiB", "512 B": for people; reports also give the exact byte count.
std::string HumanBytes(uint64_t bytes);

}  // namespace cli
}  // namespace octet
