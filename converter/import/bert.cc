// bert: BertModel and the BERT heads' checkpoints ("bert." prefix or none);
// roberta and xlm-roberta: RobertaModel / XLMRobertaModel and their heads
// ("roberta." prefix or none), BERT's layout under other names for the prefix.
// Post-norm encoder, learned absolute positions and token types, LayerNorm
// after the embeddings, biases everywhere, GELU (erf) by default.
//
//   [bert.]embeddings.word_embeddings.weight        token_embedding
//   [bert.]embeddings.position_embeddings.weight    position_embedding
//   [bert.]embeddings.token_type_embeddings.weight  token_type_embedding
//   [bert.]embeddings.LayerNorm.*                   embedding_norm.*
//   [bert.]encoder.layer.{i}.
//     attention.self.{query,key,value}.*            layers.{i}.attn.{q,k,v}.*
//     attention.output.dense.*                      layers.{i}.attn.o.*
//     attention.output.LayerNorm.*                  layers.{i}.attn_norm.*
//     intermediate.dense.*                          layers.{i}.ffn.up.*
//     output.dense.*                                layers.{i}.ffn.down.*
//     output.LayerNorm.*                            layers.{i}.ffn_norm.*
// Ignored: the pooler, cls.* (BERT's MLM / NSP heads), lm_head.*, classifier.*
// and qa_outputs.* (RoBERTa's heads), the position_ids and token_type_ids
// buffers. Old checkpoints' LayerNorm.gamma/.beta are read as .weight/.bias,
// as transformers does.
//
// RoBERTa's positions (transformers' create_position_ids_from_input_ids):
// real tokens get padding_idx + 1, + 2, ...; octet's sequences are right-padded
// with lengths, so position_offset = pad_token_id + 1 and the usable length is
// the table's rows minus that offset (514 - 2 = 512).
#include <string>

#include "import/common.h"
#include "import/error.h"
#include "import/importer.h"

namespace octet {
namespace convert {
namespace {

ModelSpec ImportBertLayout(const ConfigView& config, const Checkpoint& checkpoint,
                           const std::string& model_type, fb::Family family) {
  const bool roberta = family != fb::Family::Bert;
  ModelSpec spec = NewSpec(config, model_type, family, fb::Structure::EncoderOnly);
  fb::ArchitectureT& a = spec.architecture;
  const std::string type = config.StringOr("position_embedding_type", "absolute");
  if (type != "absolute") config.Unsupported("position_embedding_type", "only absolute");
  const std::string encoder = Cat("octet's ", model_type, " is an encoder");
  RejectTrue(config, "is_decoder", encoder);
  RejectTrue(config, "add_cross_attention", encoder);

  a.vocab_size = config.Count("vocab_size");
  a.hidden_size = config.Count("hidden_size");
  a.num_layers = config.Count("num_hidden_layers");
  a.intermediate_size = config.Count("intermediate_size");
  a.max_positions = config.CountOr("max_position_embeddings", 512);
  if (roberta) {
    // RobertaConfig's default pad_token_id is 1.
    const int64_t pad = config.TokenIdOr("pad_token_id", 1);
    if (pad < 0 || pad + 1 >= a.max_positions) {
      config.Invalid("pad_token_id", Cat("an id below max_position_embeddings - 1 = ",
                                         a.max_positions - 1, " (positions start at it + 1)"));
    }
    a.position_offset = static_cast<uint32_t>(pad + 1);
    a.max_positions -= a.position_offset;
  }
  a.type_vocab_size = config.CountOr("type_vocab_size", 2);
  a.norm = fb::NormKind::LayerNorm;
  a.norm_placement = fb::NormPlacement::Post;
  a.norm_eps = static_cast<float>(config.NumberOr("layer_norm_eps", 1e-12));
  a.activation = ActivationFromConfig(config, "hidden_act", "gelu");
  a.position = fb::PositionKind::Learned;
  SetBiasedMultiHeadAttention(config, config.Count("num_attention_heads"), "num_attention_heads",
                              "hidden_size", a);
  FinishArchitecture(config, spec);

  const std::string p = DetectPrefix(checkpoint, {roberta ? "roberta." : "bert.", ""},
                                     {"embeddings.word_embeddings.weight"});
  const uint32_t h = a.hidden_size, inter = a.intermediate_size;
  const std::string emb = p + "embeddings.";
  spec.Map("token_embedding", {a.vocab_size, h}, emb + "word_embeddings.weight");
  spec.Map("position_embedding", {a.position_offset + a.max_positions, h},
           emb + "position_embeddings.weight");
  spec.Map("token_type_embedding", {a.type_vocab_size, h}, emb + "token_type_embeddings.weight");
  MapLayerNorm(spec, "embedding_norm", emb + "LayerNorm", h, &checkpoint);
  const BertLayerNames names = {"attention.self.query",       "attention.self.key",
                                "attention.self.value",       "attention.output.dense",
                                "attention.output.LayerNorm", "intermediate.dense",
                                "output.dense",               "output.LayerNorm"};
  for (uint32_t i = 0; i < a.num_layers; ++i) {
    MapBertLayer(spec, Cat("layers.", i, "."), Cat(p, "encoder.layer.", i, "."), names, h, inter,
                 &checkpoint);
  }
  spec.ignore = [p, roberta](const std::string& name) {
    const auto starts = [&](const std::string& prefix) { return name.rfind(prefix, 0) == 0; };
    if (starts(p + "pooler.") || name == p + "embeddings.position_ids" ||
        name == p + "embeddings.token_type_ids") {
      return true;
    }
    return roberta ? starts("lm_head.") || starts("classifier.") || starts("qa_outputs.")
                   : starts("cls.");
  };
  return spec;
}

}  // namespace

ModelSpec ImportBert(const ConfigView& config, const Checkpoint& checkpoint) {
  return ImportBertLayout(config, checkpoint, "bert", fb::Family::Bert);
}

ModelSpec ImportRoberta(const ConfigView& config, const Checkpoint& checkpoint,
                        const std::string& model_type) {
  return ImportBertLayout(
      config, checkpoint, model_type,
      model_type == "xlm-roberta" ? fb::Family::XlmRoberta : fb::Family::Roberta);
}

}  // namespace convert
}  // namespace octet
