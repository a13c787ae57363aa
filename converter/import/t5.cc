// t5: T5ForConditionalGeneration / T5Model. Pre-norm encoder-decoder with RMS
// norms (no mean, no bias), no biases in any projection, logits not scaled by
// 1/sqrt(d) (Attention.scale = 1), a bucketed relative position bias computed
// by the first block of each stack and shared by all its layers, ReLU or gated
// feed-forward (feed_forward_proj), and a tied head rescaled by d_model^-0.5.
//
//   shared.weight                                          token_embedding
//   {encoder,decoder}.embed_tokens.weight                  must equal shared.weight
//   encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight  encoder.relative_bias
//   decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight  decoder.relative_bias
//   encoder.block.{i}.layer.0.SelfAttention.{q,k,v,o}.weight
//   encoder.layers.{i}.attn.{q,k,v,o}.weight encoder.block.{i}.layer.0.layer_norm.weight
//   encoder.layers.{i}.attn_norm.weight encoder.block.{i}.layer.1.DenseReluDense.wi.weight
//   encoder.layers.{i}.ffn.up.weight
//     (gated: wi_0 -> ffn.gate, wi_1 -> ffn.up)
//   encoder.block.{i}.layer.1.DenseReluDense.wo.weight     encoder.layers.{i}.ffn.down.weight
//   encoder.block.{i}.layer.1.layer_norm.weight            encoder.layers.{i}.ffn_norm.weight
//   decoder.block.{i}.layer.0: as the encoder's            decoder.layers.{i}.attn*
//   decoder.block.{i}.layer.1.EncDecAttention.{q,k,v,o}    decoder.layers.{i}.cross_attn.*
//   decoder.block.{i}.layer.1.layer_norm                   decoder.layers.{i}.cross_attn_norm
//   decoder.block.{i}.layer.2.DenseReluDense / layer_norm  decoder.layers.{i}.ffn* / ffn_norm
//   {encoder,decoder}.final_layer_norm.weight              {encoder,decoder}.final_norm.weight
//   lm_head.weight                                         lm_head (untied; tied: must equal
//   shared)
#include <cmath>
#include <string>

#include "import/common.h"
#include "import/error.h"
#include "import/importer.h"

namespace octet {
namespace convert {
namespace {

// T5Config's reading of feed_forward_proj: "[gated-]ACT", with "gated-gelu"
// meaning the tanh GELU (gelu_new).
void ReadFeedForward(const ConfigView& config, fb::ArchitectureT& a) {
  const std::string proj = config.StringOr("feed_forward_proj", "relu");
  std::string act = proj;
  a.gated_ffn = proj.rfind("gated-", 0) == 0;
  if (a.gated_ffn) act = proj.substr(6);
  if (proj == "gated-gelu") act = "gelu_new";
  if (act.find('-') != std::string::npos || !ActivationFromName(act, &a.activation)) {
    config.Unsupported("feed_forward_proj",
                       Cat("expected ACT or gated-ACT with ACT one of: ", kSupportedActivations));
  }
}

}  // namespace

ModelSpec ImportT5(const ConfigView& config, const Checkpoint& checkpoint) {
  ModelSpec spec = NewSpec(config, "t5", fb::Family::T5, fb::Structure::EncoderDecoder);
  fb::ArchitectureT& a = spec.architecture;
  if (!config.BoolOr("is_encoder_decoder", true)) {
    config.Unsupported("is_encoder_decoder", "octet's t5 is the encoder-decoder");
  }
  a.vocab_size = config.Count("vocab_size");
  a.hidden_size = config.Count("d_model");
  a.intermediate_size = config.Count("d_ff");
  a.num_layers = config.Count("num_layers");
  a.num_decoder_layers = config.CountOr("num_decoder_layers", a.num_layers);
  a.max_positions = 0;  // relative positions: no table, no limit
  a.norm = fb::NormKind::RmsNorm;
  a.norm_placement = fb::NormPlacement::Pre;
  a.norm_eps = static_cast<float>(config.NumberOr("layer_norm_epsilon", 1e-6));
  ReadFeedForward(config, a);
  a.position = fb::PositionKind::RelativeBias;
  a.tied_embeddings = config.BoolOr("tie_word_embeddings", true);
  // T5ForConditionalGeneration rescales the decoder output before a tied head.
  a.logits_scale = a.tied_embeddings ? static_cast<float>(1.0 / std::sqrt(a.hidden_size)) : 1.0f;
  fb::AttentionT& att = *a.attention;
  att.num_heads = config.Count("num_heads");
  att.num_kv_heads = att.num_heads;
  att.head_dim = config.Count("d_kv");
  att.scale = 1.0f;
  att.relative_buckets = config.CountOr("relative_attention_num_buckets", 32);
  att.relative_max_distance = config.CountOr("relative_attention_max_distance", 128);
  FinishArchitecture(config, spec);
  spec.provenance.push_back({"feed_forward_proj", config.StringOr("feed_forward_proj", "relu")});

  const uint32_t h = a.hidden_size, inter = a.intermediate_size;
  const uint32_t inner = att.num_heads * att.head_dim;
  // The embedding is stored once as shared.weight; copies under other names must match.
  const std::string embedding = MapSharedEmbedding(spec, checkpoint, "");
  const uint32_t buckets = att.relative_buckets, heads = att.num_heads;
  spec.Map("encoder.relative_bias", {buckets, heads},
           "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight");
  spec.Map("decoder.relative_bias", {buckets, heads},
           "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight");

  for (const bool decoder : {false, true}) {
    const std::string stack = decoder ? "decoder" : "encoder";
    const uint32_t layers = decoder ? a.num_decoder_layers : a.num_layers;
    for (uint32_t i = 0; i < layers; ++i) {
      const std::string src = Cat(stack, ".block.", i, ".layer.");
      const std::string dst = Cat(stack, ".layers.", i, ".");
      const auto attention = [&](const std::string& to, const std::string& from) {
        spec.Map(dst + to + ".q.weight", {inner, h}, src + from + ".q.weight");
        spec.Map(dst + to + ".k.weight", {inner, h}, src + from + ".k.weight");
        spec.Map(dst + to + ".v.weight", {inner, h}, src + from + ".v.weight");
        spec.Map(dst + to + ".o.weight", {h, inner}, src + from + ".o.weight");
      };
      attention("attn", "0.SelfAttention");
      spec.Map(dst + "attn_norm.weight", {h}, src + "0.layer_norm.weight");
      std::string ffn = "1";
      if (decoder) {
        attention("cross_attn", "1.EncDecAttention");
        spec.Map(dst + "cross_attn_norm.weight", {h}, src + "1.layer_norm.weight");
        ffn = "2";
      }
      const std::string dense = src + ffn + ".DenseReluDense.";
      if (a.gated_ffn) {
        spec.Map(dst + "ffn.gate.weight", {inter, h}, dense + "wi_0.weight");
        spec.Map(dst + "ffn.up.weight", {inter, h}, dense + "wi_1.weight");
      } else {
        spec.Map(dst + "ffn.up.weight", {inter, h}, dense + "wi.weight");
      }
      spec.Map(dst + "ffn.down.weight", {h, inter}, dense + "wo.weight");
      spec.Map(dst + "ffn_norm.weight", {h}, src + ffn + ".layer_norm.weight");
    }
    spec.Map(stack + ".final_norm.weight", {h}, stack + ".final_layer_norm.weight");
  }
  MapLmHeadOrTied(spec, embedding);
  return spec;
}

}  // namespace convert
}  // namespace octet
