// The registry of token mixers: one row per kind of fb::TokenMixer, in enum order.
#include "engine/mixer.h"

namespace octet {
namespace {

const TokenMixer* const kTokenMixers[] = {
    &kAttentionMixer,   // fb::TokenMixer::Attention
    &kTokenShiftMixer,  // fb::TokenMixer::TokenShift
    &kShortConvMixer,   // fb::TokenMixer::ShortConv
    &kGatedDeltaNetMixer,  // fb::TokenMixer::GatedDeltaNet
};
static_assert(sizeof(kTokenMixers) / sizeof(kTokenMixers[0]) ==
                  static_cast<size_t>(fb::TokenMixer::MAX) + 1,
              "one registry row per token mixer kind of the schema");

}  // namespace

const TokenMixer& GetTokenMixer(fb::TokenMixer kind) {
  // The loader refused kinds past MAX.
  const size_t i = static_cast<size_t>(kind);
  return *kTokenMixers[i <= static_cast<size_t>(fb::TokenMixer::MAX) ? i : 0];
}

const TokenMixer& LayerTokenMixer(const fb::Architecture& a, LayerStack stack, uint32_t layer) {
  return GetTokenMixer(LayerMixer(RoleArchOf(a), stack, layer));
}

}  // namespace octet
