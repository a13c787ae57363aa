// The registries of token mixers and channel mixers: one row per kind of
// fb::TokenMixer and fb::ChannelMixer, in enum order.
#include "engine/mixer.h"

namespace octet {
namespace {

const TokenMixer* const kTokenMixers[] = {
    &kAttentionMixer,   // fb::TokenMixer::Attention
    &kTokenShiftMixer,  // fb::TokenMixer::TokenShift
    &kShortConvMixer,   // fb::TokenMixer::ShortConv
    &kGatedDeltaNetMixer,  // fb::TokenMixer::GatedDeltaNet
    &kRwkvTimeMixer,    // fb::TokenMixer::RwkvTimeMix
};
static_assert(sizeof(kTokenMixers) / sizeof(kTokenMixers[0]) ==
                  static_cast<size_t>(fb::TokenMixer::MAX) + 1,
              "one registry row per token mixer kind of the schema");

const ChannelMixer* const kChannelMixers[] = {
    &kFeedForwardMixer,  // fb::ChannelMixer::FeedForward
    &kRwkvChannelMixer,  // fb::ChannelMixer::RwkvChannelMix
};
static_assert(sizeof(kChannelMixers) / sizeof(kChannelMixers[0]) ==
                  static_cast<size_t>(fb::ChannelMixer::MAX) + 1,
              "one registry row per channel mixer kind of the schema");

}  // namespace

const TokenMixer& GetTokenMixer(fb::TokenMixer kind) {
  // The loader refused kinds past MAX.
  const size_t i = static_cast<size_t>(kind);
  return *kTokenMixers[i <= static_cast<size_t>(fb::TokenMixer::MAX) ? i : 0];
}

const ChannelMixer& GetChannelMixer(fb::ChannelMixer kind) {
  // The loader refused kinds past MAX.
  const size_t i = static_cast<size_t>(kind);
  return *kChannelMixers[i <= static_cast<size_t>(fb::ChannelMixer::MAX) ? i : 0];
}

const ChannelMixer& ModelChannelMixer(const fb::Architecture& a) {
  return GetChannelMixer(a.channel_mixer());
}

const TokenMixer& LayerTokenMixer(const fb::Architecture& a, LayerStack stack, uint32_t layer) {
  return GetTokenMixer(LayerMixer(RoleArchOf(a), stack, layer));
}

}  // namespace octet
