// The valid tiny models the fuzzer starts from and the corpus replay re-checks:
// one per family (llama, bert, t5), int8 and fp32, tied and untied heads, with
// and without a tokenizer blob. Small dimensions keep each under 16 KiB, so
// mutations land in the metadata often.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace octet {
namespace testing {

// (file name, file bytes) pairs; names end in ".octet".
std::vector<std::pair<std::string, std::vector<uint8_t>>> SeedModels();

}  // namespace testing
}  // namespace octet
