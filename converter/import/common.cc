#include "import/common.h"

#include "import/error.h"

namespace octet {
namespace convert {

void ReadRmsDecoderSizes(const ConfigView& config, uint32_t default_max_positions,
                         double default_eps, fb::ArchitectureT& a) {
  a.vocab_size = config.Count("vocab_size");
  a.hidden_size = config.Count("hidden_size");
  a.num_layers = config.Count("num_hidden_layers");
  a.intermediate_size = config.Count("intermediate_size");
  a.max_positions = config.CountOr("max_position_embeddings", default_max_positions);
  a.norm = fb::NormKind::RmsNorm;
  a.norm_placement = fb::NormPlacement::Pre;
  a.norm_eps = static_cast<float>(config.NumberOr("rms_norm_eps", default_eps));
}

void ReadHeadCounts(const ConfigView& config, fb::AttentionT& att) {
  att.num_heads = config.Count("num_attention_heads");
  att.num_kv_heads = config.CountOr("num_key_value_heads", att.num_heads);
  if (att.num_kv_heads > att.num_heads || att.num_heads % att.num_kv_heads != 0) {
    config.Invalid("num_key_value_heads", Cat("a divisor of num_attention_heads ", att.num_heads));
  }
}

uint32_t HeadDimFromHidden(const ConfigView& config, const fb::ArchitectureT& a) {
  const uint32_t heads = a.attention->num_heads;
  if (a.hidden_size % heads != 0) {
    config.Invalid("num_attention_heads", Cat("a divisor of hidden_size ", a.hidden_size));
  }
  return a.hidden_size / heads;
}

void MapLinear(ModelSpec& spec, const std::string& dst, const std::string& src,
               const std::string& to, const std::string& from, uint32_t out, uint32_t in,
               bool bias) {
  spec.Map(dst + to + ".weight", {out, in}, src + from + ".weight");
  if (bias) spec.Map(dst + to + ".bias", {out}, src + from + ".bias");
}

void MapLmHead(ModelSpec& spec, const std::string& prefix) {
  const fb::ArchitectureT& a = spec.architecture;
  if (!a.tied_embeddings) {
    spec.Map("lm_head", {a.vocab_size, a.hidden_size}, "lm_head.weight");
  } else {
    spec.RequireDuplicate("lm_head.weight", prefix + "embed_tokens.weight",
                          "config.json ties the head to the embedding: tie_word_embeddings");
  }
}

std::function<bool(const std::string&)> IgnoreRotaryInvFreq(const std::string& prefix) {
  return [prefix](const std::string& name) {
    return name.rfind(prefix + "layers.", 0) == 0 &&
           EndsWith(name, ".self_attn.rotary_emb.inv_freq");
  };
}

}  // namespace convert
}  // namespace octet
