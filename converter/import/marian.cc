// marian: MarianMTModel / MarianModel ("model." prefix or none), the original
// Transformer: post-norm encoder-decoder with LayerNorm, biases everywhere,
// embeddings scaled by sqrt(d_model) (scale_embedding), sinusoidal positions
// in Marian's layout (sin in the first half of the vector, cos in the second),
// one embedding shared by the encoder, the decoder and the head, and
// final_logits_bias added to the logits.
//
//   [model.]shared.weight                               token_embedding
//   [model.]{encoder,decoder}.embed_tokens.weight       must equal shared.weight
//   [model.]{encoder,decoder}.embed_positions.weight    not stored: the engine computes the
//                                                       table; must match it within 1e-6 (F32)
//   [model.]encoder.layers.{i}.self_attn.{q,k,v,out}_proj.*  encoder.layers.{i}.attn.{q,k,v,o}.*
//   [model.]encoder.layers.{i}.self_attn_layer_norm.*   encoder.layers.{i}.attn_norm.*
//   [model.]encoder.layers.{i}.fc1.*, fc2.*             encoder.layers.{i}.ffn.up.*, ffn.down.*
//   [model.]encoder.layers.{i}.final_layer_norm.*       encoder.layers.{i}.ffn_norm.*
//   [model.]decoder.layers.{i}: as the encoder's, plus
//     encoder_attn.{q,k,v,out}_proj.*                   decoder.layers.{i}.cross_attn.{q,k,v,o}.*
//     encoder_attn_layer_norm.*                         decoder.layers.{i}.cross_attn_norm.*
//   final_logits_bias [1, vocab]                        final_logits_bias [vocab] (zeros when
//   absent,
//                                                       as transformers does)
//   lm_head.weight                                      must equal shared.weight (tied)
#include <algorithm>
#include <cmath>
#include <string>

#include "import/common.h"
#include "import/error.h"
#include "import/importer.h"

namespace octet {
namespace convert {
namespace {

// Marian's table, as transformers builds it (in double, then rounded):
// row pos, column j < dim/2: sin(pos / 10000^(2j/dim)); column dim/2 + j: the cos.
float SinusoidValue(uint64_t pos, uint64_t column, uint64_t dim) {
  const uint64_t half = dim / 2;
  const uint64_t j = column < half ? column : column - half;
  const double angle = static_cast<double>(pos) /
                       std::pow(10000.0, 2.0 * static_cast<double>(j) / static_cast<double>(dim));
  return static_cast<float>(column < half ? std::sin(angle) : std::cos(angle));
}

void CheckSinusoidTable(const std::string& name, const Tensor& t, uint32_t rows, uint32_t dim) {
  if (t.shape != std::vector<uint64_t>{rows, dim}) {
    Fail("marian: tensor ", name, " is ", ShapeString(t.shape), ", expected [", rows, ", ", dim,
         "] (max_position_embeddings, d_model)");
  }
  const std::vector<float> values = Checkpoint::ReadAllF32(t);
  const double tolerance = StoredTableTolerance(t.dtype);
  for (uint64_t pos = 0; pos < rows; ++pos) {
    for (uint64_t c = 0; c < dim; ++c) {
      const double stored = values[pos * dim + c];
      const double expected = SinusoidValue(pos, c, dim);
      if (!(std::fabs(stored - expected) <= tolerance)) {
        Fail("marian: tensor ", name, " is not Marian's sinusoidal table: [", pos, ", ", c,
             "] holds ", stored, ", expected ", expected,
             " (octet computes the table; learned positions are not supported)");
      }
    }
  }
}

// Encoder and decoder must agree where octet has one value for both.
uint32_t SameForBoth(const ConfigView& config, const std::string& encoder_key,
                     const std::string& decoder_key) {
  const uint32_t e = config.Count(encoder_key);
  const uint32_t d = config.CountOr(decoder_key, e);
  if (d != e) {
    config.Unsupported(decoder_key, Cat("octet needs it equal to ", encoder_key, " = ", e));
  }
  return e;
}

}  // namespace

ModelSpec ImportMarian(const ConfigView& config, const Checkpoint& checkpoint) {
  ModelSpec spec = NewSpec(config, "marian", fb::Family::Marian, fb::Structure::EncoderDecoder);
  fb::ArchitectureT& a = spec.architecture;
  a.vocab_size = config.Count("vocab_size");
  if (config.CountOr("decoder_vocab_size", a.vocab_size) != a.vocab_size) {
    config.Unsupported("decoder_vocab_size", "separate target vocabularies are not supported");
  }
  if (!config.BoolOr("share_encoder_decoder_embeddings", true)) {
    config.Unsupported("share_encoder_decoder_embeddings",
                       "separate encoder and decoder embeddings are not supported");
  }
  a.hidden_size = config.Count("d_model");
  if (a.hidden_size % 2 != 0) config.Invalid("d_model", "even (sin and cos halves)");
  a.num_layers = config.Count("encoder_layers");
  a.num_decoder_layers = config.Count("decoder_layers");
  a.intermediate_size = SameForBoth(config, "encoder_ffn_dim", "decoder_ffn_dim");
  a.max_positions = config.CountOr("max_position_embeddings", 1024);
  a.norm = fb::NormKind::LayerNorm;
  a.norm_placement = fb::NormPlacement::Post;
  a.norm_eps = 1e-5f;  // nn.LayerNorm's default; Marian's config has no field for it
  a.activation = ActivationFromConfig(config, "activation_function", "gelu");
  a.position = fb::PositionKind::SinusoidalSplit;
  a.embedding_scale = config.BoolOr("scale_embedding", false)
                          ? static_cast<float>(std::sqrt(static_cast<double>(a.hidden_size)))
                          : 1.0f;
  a.tied_embeddings = config.BoolOr("tie_word_embeddings", true);
  SetBiasedMultiHeadAttention(
      config, SameForBoth(config, "encoder_attention_heads", "decoder_attention_heads"),
      "encoder_attention_heads", "d_model", a);
  FinishArchitecture(config, spec);
  spec.provenance.push_back(
      {"activation_function", config.StringOr("activation_function", "gelu")});

  const std::string prefix =
      DetectPrefix(checkpoint, {"model.", ""},
                   {"shared.weight", "encoder.embed_tokens.weight", "encoder.layers.0.fc1.weight"});
  const uint32_t h = a.hidden_size, inter = a.intermediate_size;
  const std::string embedding = MapSharedEmbedding(spec, checkpoint, prefix);
  for (const char* stack : {"encoder", "decoder"}) {
    const std::string name = prefix + stack + ".embed_positions.weight";
    const uint32_t rows = a.max_positions;
    spec.extra_checks.push_back({name, [name, rows, h](const Checkpoint&, const Tensor& t) {
                                   CheckSinusoidTable(name, t, rows, h);
                                 }});
  }

  for (const bool decoder : {false, true}) {
    const std::string stack = decoder ? "decoder" : "encoder";
    const uint32_t layers = decoder ? a.num_decoder_layers : a.num_layers;
    for (uint32_t i = 0; i < layers; ++i) {
      const std::string src = Cat(prefix, stack, ".layers.", i, ".");
      const std::string dst = Cat(stack, ".layers.", i, ".");
      const auto linear = [&](const std::string& to, const std::string& from, uint32_t out,
                              uint32_t in) { MapLinear(spec, dst, src, to, from, out, in, true); };
      const auto norm = [&](const std::string& to, const std::string& from) {
        MapLayerNorm(spec, dst + to, src + from, h);
      };
      const auto attention = [&](const std::string& to, const std::string& from) {
        linear(to + ".q", from + ".q_proj", h, h);
        linear(to + ".k", from + ".k_proj", h, h);
        linear(to + ".v", from + ".v_proj", h, h);
        linear(to + ".o", from + ".out_proj", h, h);
      };
      attention("attn", "self_attn");
      norm("attn_norm", "self_attn_layer_norm");
      if (decoder) {
        attention("cross_attn", "encoder_attn");
        norm("cross_attn_norm", "encoder_attn_layer_norm");
      }
      linear("ffn.up", "fc1", inter, h);
      linear("ffn.down", "fc2", h, inter);
      norm("ffn_norm", "final_layer_norm");
    }
  }
  if (checkpoint.Find("final_logits_bias") != nullptr) {
    spec.Map("final_logits_bias", {a.vocab_size}, "final_logits_bias").source_shape = {
        1, a.vocab_size};
  } else {
    spec.Map("final_logits_bias", {a.vocab_size}, "").values.assign(a.vocab_size, 0.0f);
  }
  MapLmHeadOrTied(spec, embedding);
  return spec;
}

}  // namespace convert
}  // namespace octet
