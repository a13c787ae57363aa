// rwkv: RwkvForCausalLM (RWKV-4), as transformers' modeling_rwkv.py /
// configuration_rwkv.py define it. Pre-norm blocks with LayerNorms: a time
// mix (TokenMixer.RwkvTimeMix) after ln1 and a channel mix
// (ChannelMixer.RwkvChannelMix) after ln2, both reading the previous
// position's row (engine/mixer_rwkv.cc); layer 0 also norms the embeddings
// (pre_ln), which is the format's embedding norm; ln_out (eps 1e-5, whatever
// layer_norm_epsilon says) before the head.
//
//   [rwkv.]embeddings.weight                        token_embedding
//   [rwkv.]blocks.0.pre_ln.{weight,bias}            embedding_norm.{weight,bias}
//   [rwkv.]blocks.{i}.ln1.{weight,bias}             layers.{i}.attn_norm.{weight,bias}
//   [rwkv.]blocks.{i}.attention.time_mix_{key,value,receptance} [1, 1, H]
//                                                   layers.{i}.time_mix.mix_{k,v,r} [H]
//   [rwkv.]blocks.{i}.attention.time_decay          layers.{i}.time_mix.decay
//   [rwkv.]blocks.{i}.attention.time_first          layers.{i}.time_mix.first
//   [rwkv.]blocks.{i}.attention.{key,value,receptance,output}.weight
//                                                   layers.{i}.time_mix.{...}.weight
//   [rwkv.]blocks.{i}.ln2.{weight,bias}             layers.{i}.ffn_norm.{weight,bias}
//   [rwkv.]blocks.{i}.feed_forward.time_mix_{key,receptance} [1, 1, H]
//                                                   layers.{i}.channel_mix.mix_{k,r} [H]
//   [rwkv.]blocks.{i}.feed_forward.{key,receptance,value}.weight
//                                                   layers.{i}.channel_mix.{...}.weight
//   [rwkv.]ln_out.{weight,bias}                     final_norm.{weight,bias}
//   head.weight                                     lm_head (untied only)
//
// rescale_every R (default 6; <= 0: none): at inference transformers divides
// block i's attention.output and feed_forward.value weights by 2^(i // R) and
// halves the residual stream after every R-th block, so block i reads the
// stream divided by s = 2^(i // R) and adds its outputs divided by s. Since
// LayerNorm(x / s, eps) = LayerNorm(x, eps * s^2) and s is a power of two
// (exact in floating point), that is the unscaled model with layer i's norms
// at eps * 4^(i // R) and ln_out's at 1e-5 * 4^(L // R)
// (Architecture.layer_norm_eps, final_norm_eps): the weights are kept as the
// checkpoint has them. The format's attention table is a placeholder (1 head
// of 8) that no layer reads.
#include <cmath>
#include <string>

#include "import/common.h"
#include "import/error.h"
#include "import/importer.h"

namespace octet {
namespace convert {

ModelSpec ImportRwkv(const ConfigView& config, const Checkpoint& checkpoint) {
  ModelSpec spec = NewSpec(config, "rwkv", fb::Family::Rwkv, fb::Structure::DecoderOnly);
  fb::ArchitectureT& a = spec.architecture;
  a.vocab_size = config.Count("vocab_size");
  a.hidden_size = config.Count("hidden_size");
  a.num_layers = config.Count("num_hidden_layers");
  const uint32_t h = a.hidden_size;
  if (config.Has("attention_hidden_size") && config.Count("attention_hidden_size") != h) {
    config.Unsupported("attention_hidden_size",
                       Cat("octet's RWKV time mix is as wide as the stream: hidden_size ", h,
                           " (or null)"));
  }
  // null (RwkvConfig's default) means 4 x hidden_size.
  a.intermediate_size =
      config.Has("intermediate_size") ? config.Count("intermediate_size") : 4 * h;
  a.max_positions = 0;  // a recurrence: no position limit
  a.norm = fb::NormKind::LayerNorm;
  a.norm_placement = fb::NormPlacement::Pre;
  const double eps = config.NumberOr("layer_norm_epsilon", 1e-5);
  if (!(eps > 0.0)) config.Invalid("layer_norm_epsilon", "a number > 0");
  a.norm_eps = static_cast<float>(eps);
  a.activation = fb::Activation::Relu;  // relu(k)^2 in the channel mix, not ffn.*
  a.position = fb::PositionKind::None;
  a.tied_embeddings = config.BoolOr("tie_word_embeddings", false);
  a.layer_mixers.assign(a.num_layers, fb::TokenMixer::RwkvTimeMix);
  a.channel_mixer = fb::ChannelMixer::RwkvChannelMix;
  fb::AttentionT& att = *a.attention;  // the format requires one; no RWKV layer reads it
  att.num_heads = 1;
  att.num_kv_heads = 1;
  att.head_dim = 8;

  // rescale_every: the norms' epsilons carry it (see the top of this file).
  int64_t rescale = 6;
  if (const nlohmann::json* r = config.Find("rescale_every")) {
    if (!r->is_number_integer()) config.Invalid("rescale_every", "an integer");
    rescale = r->get<int64_t>();
  }
  const auto scaled = [&](double base, uint32_t layer) {
    const double v = rescale > 0 ? base * std::pow(4.0, static_cast<double>(layer / rescale))
                                 : base;
    const float f = static_cast<float>(v);
    if (!std::isfinite(f)) {
      Fail(config.where(), ": rescale_every = ", rescale, " over ", a.num_layers,
           " layers puts a norm's epsilon at ", base, " x 4^", layer / rescale,
           ", beyond float range");
    }
    return f;
  };
  if (rescale > 0) {
    for (uint32_t i = 0; i < a.num_layers; ++i) a.layer_norm_eps.push_back(scaled(eps, i));
  }
  a.final_norm_eps = scaled(1e-5, a.num_layers);  // ln_out: nn.LayerNorm's default eps
  FinishArchitecture(config, spec);
  spec.provenance.push_back({"rescale_every", Cat(rescale)});
  if (config.Has("context_length")) {
    spec.provenance.push_back({"context_length", Cat(config.Count("context_length"))});
  }

  const std::string p = DetectPrefix(checkpoint, {"rwkv.", ""}, {"embeddings.weight"});
  const uint32_t inter = a.intermediate_size;
  spec.Map("token_embedding", {a.vocab_size, h}, p + "embeddings.weight");
  MapLayerNorm(spec, "embedding_norm", p + "blocks.0.pre_ln", h);
  // [1, 1, H] in the checkpoint, [H] here.
  const auto map_mix = [&](const std::string& dst, const std::string& src) {
    spec.Map(dst, {h}, src).source_shape = {1, 1, h};
  };
  for (uint32_t i = 0; i < a.num_layers; ++i) {
    const std::string src = Cat(p, "blocks.", i, ".");
    const std::string dst = Cat("layers.", i, ".");
    MapLayerNorm(spec, dst + "attn_norm", src + "ln1", h);
    map_mix(dst + "time_mix.mix_k", src + "attention.time_mix_key");
    map_mix(dst + "time_mix.mix_v", src + "attention.time_mix_value");
    map_mix(dst + "time_mix.mix_r", src + "attention.time_mix_receptance");
    spec.Map(dst + "time_mix.decay", {h}, src + "attention.time_decay");
    spec.Map(dst + "time_mix.first", {h}, src + "attention.time_first");
    for (const char* m : {"key", "value", "receptance", "output"}) {
      MapLinear(spec, dst, src, Cat("time_mix.", m), Cat("attention.", m), h, h, false);
    }
    MapLayerNorm(spec, dst + "ffn_norm", src + "ln2", h);
    map_mix(dst + "channel_mix.mix_k", src + "feed_forward.time_mix_key");
    map_mix(dst + "channel_mix.mix_r", src + "feed_forward.time_mix_receptance");
    MapLinear(spec, dst, src, "channel_mix.key", "feed_forward.key", inter, h, false);
    MapLinear(spec, dst, src, "channel_mix.receptance", "feed_forward.receptance", h, h, false);
    MapLinear(spec, dst, src, "channel_mix.value", "feed_forward.value", h, inter, false);
  }
  MapLayerNorm(spec, "final_norm", p + "ln_out", h);
  if (!a.tied_embeddings) {
    spec.Map("lm_head", {a.vocab_size, h}, "head.weight");
  } else {
    spec.RequireDuplicate("head.weight", p + "embeddings.weight",
                          "config.json ties the head to the embedding: tie_word_embeddings");
  }
  return spec;
}

}  // namespace convert
}  // namespace octet
