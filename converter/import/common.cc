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

void ReadGatedRopeDecoder(const ConfigView& config, uint32_t default_max_positions,
                          double default_eps, fb::ArchitectureT& a) {
  ReadRmsDecoderSizes(config, default_max_positions, default_eps, a);
  a.activation = ActivationFromConfig(config, "hidden_act", "silu");
  a.gated_ffn = true;
  a.position = fb::PositionKind::Rope;
  a.tied_embeddings = config.BoolOr("tie_word_embeddings", false);
  ReadHeadCounts(config, *a.attention);
}

uint32_t HeadDimFromHidden(const ConfigView& config, const fb::ArchitectureT& a) {
  const uint32_t heads = a.attention->num_heads;
  if (a.hidden_size % heads != 0) {
    config.Invalid("num_attention_heads", Cat("a divisor of hidden_size ", a.hidden_size));
  }
  return a.hidden_size / heads;
}

uint32_t ReadHeadDim(const ConfigView& config, const fb::ArchitectureT& a, uint32_t fallback) {
  if (config.Has("head_dim")) return config.Count("head_dim");
  if (fallback != 0) return fallback;
  return HeadDimFromHidden(config, a);
}

void SetBiasedMultiHeadAttention(const ConfigView& config, uint32_t heads, const char* heads_key,
                                 const char* hidden_key, fb::ArchitectureT& a) {
  if (a.hidden_size % heads != 0) {
    config.Invalid(heads_key, Cat("a divisor of ", hidden_key, " ", a.hidden_size));
  }
  fb::AttentionT& att = *a.attention;
  att.num_heads = heads;
  att.num_kv_heads = heads;
  att.head_dim = a.hidden_size / heads;
  att.qkv_bias = true;
  att.out_bias = true;
}

void MapLinear(ModelSpec& spec, const std::string& dst, const std::string& src,
               const std::string& to, const std::string& from, uint32_t out, uint32_t in,
               bool bias) {
  spec.Map(dst + to + ".weight", {out, in}, src + from + ".weight");
  if (bias) spec.Map(dst + to + ".bias", {out}, src + from + ".bias");
}

namespace {

// src + ".weight" (or ".bias"), or the TensorFlow-era src + ".gamma" (".beta")
// when `old_names` is given and has only that one.
std::string NormSource(const Checkpoint* old_names, const std::string& src, bool weight) {
  const std::string modern = src + (weight ? ".weight" : ".bias");
  if (old_names == nullptr) return modern;
  const std::string old = src + (weight ? ".gamma" : ".beta");
  return old_names->Find(modern) == nullptr && old_names->Find(old) != nullptr ? old : modern;
}

}  // namespace

void MapLayerNorm(ModelSpec& spec, const std::string& dst, const std::string& src, uint32_t size,
                  const Checkpoint* old_names) {
  spec.Map(dst + ".weight", {size}, NormSource(old_names, src, true));
  spec.Map(dst + ".bias", {size}, NormSource(old_names, src, false));
}

void MapBertLayer(ModelSpec& spec, const std::string& dst, const std::string& src,
                  const BertLayerNames& names, uint32_t hidden, uint32_t intermediate,
                  const Checkpoint* old_names) {
  const uint32_t h = hidden, inter = intermediate;
  MapLinear(spec, dst, src, "attn.q", names.q, h, h, true);
  MapLinear(spec, dst, src, "attn.k", names.k, h, h, true);
  MapLinear(spec, dst, src, "attn.v", names.v, h, h, true);
  MapLinear(spec, dst, src, "attn.o", names.o, h, h, true);
  MapLayerNorm(spec, dst + "attn_norm", src + names.attn_norm, h, old_names);
  MapLinear(spec, dst, src, "ffn.up", names.up, inter, h, true);
  MapLinear(spec, dst, src, "ffn.down", names.down, h, inter, true);
  MapLayerNorm(spec, dst + "ffn_norm", src + names.ffn_norm, h, old_names);
}

void MapLmHeadOrTied(ModelSpec& spec, const std::string& embedding) {
  const fb::ArchitectureT& a = spec.architecture;
  if (!a.tied_embeddings) {
    spec.Map("lm_head", {a.vocab_size, a.hidden_size}, "lm_head.weight");
  } else {
    spec.RequireDuplicate("lm_head.weight", embedding,
                          "config.json ties the head to the embedding: tie_word_embeddings");
  }
}

void MapLmHead(ModelSpec& spec, const std::string& prefix) {
  MapLmHeadOrTied(spec, prefix + "embed_tokens.weight");
}

std::string MapSharedEmbedding(ModelSpec& spec, const Checkpoint& checkpoint,
                               const std::string& prefix) {
  const std::string names[] = {prefix + "shared.weight", prefix + "encoder.embed_tokens.weight",
                               prefix + "decoder.embed_tokens.weight"};
  std::string embedding = names[0];
  for (const std::string& name : names) {
    if (checkpoint.Find(name) != nullptr) {
      embedding = name;
      break;
    }
  }
  const fb::ArchitectureT& a = spec.architecture;
  spec.Map("token_embedding", {a.vocab_size, a.hidden_size}, embedding);
  for (const std::string& name : names) {
    if (name != embedding) {
      spec.RequireDuplicate(name, embedding,
                            "separate encoder and decoder embeddings are not supported");
    }
  }
  return embedding;
}

std::function<bool(const std::string&)> IgnoreRotaryInvFreq(const std::string& prefix) {
  return [prefix](const std::string& name) {
    return name.rfind(prefix + "layers.", 0) == 0 &&
           EndsWith(name, ".self_attn.rotary_emb.inv_freq");
  };
}

}  // namespace convert
}  // namespace octet
