// lfm2: Lfm2ForCausalLM (Liquid AI's LFM2), as transformers' modeling_lfm2.py /
// configuration_lfm2.py define it. A pre-norm decoder with RMSNorm (weight as
// stored), SwiGLU feed-forward and a tied head by default, whose layers are either
// gated short convolutions (TokenMixer.ShortConv, engine/mixer_short_conv.cc) or
// grouped-query attention with an RMSNorm over each head of Q and K before RoPE
// (rotate-half). The layer kinds come from layer_types, else full_attn_idxs (the
// attention layers; every layer when neither is given).
//
//   [model.]embed_tokens.weight                      token_embedding
//   [model.]layers.{i}.operator_norm.weight          layers.{i}.attn_norm.weight
//   [model.]layers.{i}.conv.in_proj.*                layers.{i}.conv.in_proj.*  (b, c, x)
//   [model.]layers.{i}.conv.conv.weight [H, 1, K]    layers.{i}.conv.conv.weight [H, K]
//   [model.]layers.{i}.conv.conv.bias                layers.{i}.conv.conv.bias
//   [model.]layers.{i}.conv.out_proj.*               layers.{i}.conv.out_proj.*
//   [model.]layers.{i}.self_attn.{q,k,v}_proj.weight layers.{i}.attn.{q,k,v}.weight
//   [model.]layers.{i}.self_attn.out_proj.weight     layers.{i}.attn.o.weight
//   [model.]layers.{i}.self_attn.{q,k}_layernorm.weight  layers.{i}.attn.{q,k}_norm.weight
//   [model.]layers.{i}.ffn_norm.weight               layers.{i}.ffn_norm.weight
//   [model.]layers.{i}.feed_forward.{w1,w3,w2}.weight  layers.{i}.ffn.{gate,up,down}.weight
//   [model.]embedding_norm.weight                    final_norm.weight (the last norm,
//                                                    despite its name)
//   lm_head.weight                                   lm_head (untied only)
// The feed-forward width is read from w1's shape (transformers derives it from
// intermediate_size or block_ff_dim with block_auto_adjust_ff_dim, block_multiple_of
// and block_ffn_dim_multiplier; the formula is checked against the shape).
#include <memory>
#include <string>
#include <vector>

#include "import/common.h"
#include "import/error.h"
#include "import/importer.h"

namespace octet {
namespace convert {
namespace {

// Layer i is attention (true) or a short convolution (false).
std::vector<bool> ReadAttentionLayers(const ConfigView& config, uint32_t layers) {
  std::vector<bool> attention(layers, true);
  if (const nlohmann::json* types = config.Find("layer_types")) {
    if (!types->is_array() || types->size() != layers) {
      config.Invalid("layer_types", Cat("a list of ", layers, " layer kinds"));
    }
    for (uint32_t i = 0; i < layers; ++i) {
      const nlohmann::json& t = (*types)[i];
      const std::string kind = t.is_string() ? t.get<std::string>() : std::string();
      if (kind == "conv") {
        attention[i] = false;
      } else if (kind != "full_attention") {
        config.Unsupported("layer_types", "supported for lfm2: full_attention, conv");
      }
    }
    return attention;
  }
  if (const nlohmann::json* idxs = config.Find("full_attn_idxs")) {
    if (!idxs->is_array()) config.Invalid("full_attn_idxs", "a list of layer indices");
    attention.assign(layers, false);
    for (const nlohmann::json& i : *idxs) {
      if (!i.is_number_unsigned() || i.get<uint64_t>() >= layers) {
        config.Invalid("full_attn_idxs", Cat("layer indices below num_hidden_layers = ", layers));
      }
      attention[i.get<uint64_t>()] = true;
    }
  }
  return attention;
}

// The feed-forward width transformers computes from the config (Lfm2MLP).
uint64_t ExpectedFfnWidth(const ConfigView& config) {
  double width = static_cast<double>(
      config.Has("block_ff_dim") ? config.Count("block_ff_dim") : config.Count("intermediate_size"));
  if (!config.BoolOr("block_auto_adjust_ff_dim", true)) return static_cast<uint64_t>(width);
  uint64_t f = static_cast<uint64_t>(2.0 * width / 3.0);
  // The multiplier defaults to 1 (Lfm2Config's); null turns it and the rounding off.
  if (!config.Contains("block_ffn_dim_multiplier") || config.Has("block_ffn_dim_multiplier")) {
    const double m = config.NumberOr("block_ffn_dim_multiplier", 1.0);
    f = static_cast<uint64_t>(m * static_cast<double>(f));
    const uint64_t multiple = config.CountOr("block_multiple_of", 256);
    f = multiple * ((f + multiple - 1) / multiple);
  }
  return f;
}

}  // namespace

ModelSpec ImportLfm2(const ConfigView& config, const Checkpoint& checkpoint) {
  ModelSpec spec = NewSpec(config, "lfm2", fb::Family::Lfm2, fb::Structure::DecoderOnly);
  fb::ArchitectureT& a = spec.architecture;
  a.vocab_size = config.Count("vocab_size");
  a.hidden_size = config.Count("hidden_size");
  a.num_layers = config.Count("num_hidden_layers");
  a.max_positions = config.CountOr("max_position_embeddings", 128000);
  a.norm = fb::NormKind::RmsNorm;
  a.norm_placement = fb::NormPlacement::Pre;
  a.norm_eps = static_cast<float>(config.NumberOr("norm_eps", 1e-5));
  a.activation = fb::Activation::Silu;
  a.gated_ffn = true;
  a.position = fb::PositionKind::Rope;
  // tie_embedding (the published configs' key) wins over tie_word_embeddings.
  a.tied_embeddings =
      config.BoolOr("tie_embedding", config.BoolOr("tie_word_embeddings", true));

  const std::string p = DetectPrefix(checkpoint, {"model.", ""}, {"embed_tokens.weight"});
  // The feed-forward width, from the first layer's w1.
  const std::string w1 = p + "layers.0.feed_forward.w1.weight";
  const Tensor* gate = checkpoint.Find(w1);
  if (gate == nullptr || gate->shape.size() != 2) {
    Fail("lfm2: the checkpoint has no 2-d ", w1, " to read the feed-forward width from");
  }
  a.intermediate_size = static_cast<uint32_t>(gate->shape[0]);
  const uint64_t expected = ExpectedFfnWidth(config);
  if (expected != a.intermediate_size) {
    Fail("lfm2: ", w1, " has ", a.intermediate_size, " rows but config.json's feed-forward "
         "settings (intermediate_size / block_ff_dim, block_auto_adjust_ff_dim, "
         "block_multiple_of, block_ffn_dim_multiplier) give ", expected);
  }

  fb::AttentionT& att = *a.attention;
  ReadHeadCounts(config, att);
  att.head_dim = ReadHeadDim(config, a, 0);
  att.qk_norm = true;
  const std::vector<bool> attention = ReadAttentionLayers(config, a.num_layers);
  const bool conv_bias = config.BoolOr("conv_bias", false);
  bool any_conv = false;
  for (uint32_t i = 0; i < a.num_layers; ++i) {
    a.layer_mixers.push_back(attention[i] ? fb::TokenMixer::Attention : fb::TokenMixer::ShortConv);
    any_conv = any_conv || !attention[i];
  }
  if (any_conv) {
    a.short_conv = std::make_unique<fb::ShortConvT>();
    a.short_conv->kernel = config.CountOr("conv_L_cache", 3);
    if (a.short_conv->kernel < 2 || a.short_conv->kernel > 64) {
      config.Invalid("conv_L_cache", "a kernel of 2 to 64 taps");
    }
    a.short_conv->bias = conv_bias;
  }
  a.rope = ReadRope(config, att.head_dim, spec);
  // The base: rope_parameters' (read above), else theta, else rope_theta, else 1e6.
  const nlohmann::json* parameters = config.Object("rope_parameters");
  if (parameters == nullptr || !ConfigView(*parameters, config.where()).Has("rope_theta")) {
    const double theta =
        config.Has("theta") ? config.Number("theta") : config.NumberOr("rope_theta", 1e6);
    if (!(theta > 1.0)) config.Invalid("rope_theta", "a number > 1");
    a.rope->theta = static_cast<float>(theta);
  }
  FinishArchitecture(config, spec);
  spec.provenance.push_back({"rope_theta", Cat(a.rope->theta)});

  const uint32_t h = a.hidden_size, inter = a.intermediate_size;
  const uint32_t q_rows = att.num_heads * att.head_dim;
  const uint32_t kv_rows = att.num_kv_heads * att.head_dim;
  spec.Map("token_embedding", {a.vocab_size, h}, p + "embed_tokens.weight");
  for (uint32_t i = 0; i < a.num_layers; ++i) {
    const std::string src = Cat(p, "layers.", i, ".");
    const std::string dst = Cat("layers.", i, ".");
    spec.Map(dst + "attn_norm.weight", {h}, src + "operator_norm.weight");
    if (attention[i]) {
      MapLinear(spec, dst, src, "attn.q", "self_attn.q_proj", q_rows, h, false);
      MapLinear(spec, dst, src, "attn.k", "self_attn.k_proj", kv_rows, h, false);
      MapLinear(spec, dst, src, "attn.v", "self_attn.v_proj", kv_rows, h, false);
      MapLinear(spec, dst, src, "attn.o", "self_attn.out_proj", h, q_rows, false);
      spec.Map(dst + "attn.q_norm.weight", {att.head_dim}, src + "self_attn.q_layernorm.weight");
      spec.Map(dst + "attn.k_norm.weight", {att.head_dim}, src + "self_attn.k_layernorm.weight");
    } else {
      const uint32_t taps = a.short_conv->kernel;
      MapLinear(spec, dst, src, "conv.in_proj", "conv.in_proj", 3 * h, h, conv_bias);
      TensorMapping& w = spec.Map(dst + "conv.conv.weight", {h, taps}, src + "conv.conv.weight");
      w.source_shape = {h, 1, taps};  // Conv1d's [out, in / groups, kernel]
      if (conv_bias) spec.Map(dst + "conv.conv.bias", {h}, src + "conv.conv.bias");
      MapLinear(spec, dst, src, "conv.out_proj", "conv.out_proj", h, h, conv_bias);
    }
    spec.Map(dst + "ffn_norm.weight", {h}, src + "ffn_norm.weight");
    MapLinear(spec, dst, src, "ffn.gate", "feed_forward.w1", inter, h, false);
    MapLinear(spec, dst, src, "ffn.up", "feed_forward.w3", inter, h, false);
    MapLinear(spec, dst, src, "ffn.down", "feed_forward.w2", h, inter, false);
  }
  spec.Map("final_norm.weight", {h}, p + "embedding_norm.weight");
  MapLmHead(spec, p);
  return spec;
}

}  // namespace convert
}  // namespace octet
