// bert: BertModel and the BERT heads' checkpoints ("bert." prefix or none).
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
// Ignored: the pooler, cls.* (MLM / NSP heads), the position_ids and
// token_type_ids buffers. Old checkpoints' LayerNorm.gamma/.beta are read as
// .weight/.bias, as transformers does.
#include <string>

#include "import/error.h"
#include "import/importer.h"

namespace octet {
namespace convert {
namespace {

// "<base>.weight", or the old TensorFlow-era "<base>.gamma" when only that exists.
std::string NormSource(const Checkpoint& c, const std::string& base, bool weight) {
  const std::string modern = base + (weight ? ".weight" : ".bias");
  const std::string old = base + (weight ? ".gamma" : ".beta");
  return c.Find(modern) == nullptr && c.Find(old) != nullptr ? old : modern;
}

}  // namespace

ModelSpec ImportBert(const ConfigView& config, const Checkpoint& checkpoint) {
  ModelSpec spec = NewSpec(config, "bert", fb::Family::Bert, fb::Structure::EncoderOnly);
  fb::ArchitectureT& a = spec.architecture;
  const std::string type = config.StringOr("position_embedding_type", "absolute");
  if (type != "absolute") config.Unsupported("position_embedding_type", "only absolute");
  RejectTrue(config, "is_decoder", "octet's bert is an encoder");
  RejectTrue(config, "add_cross_attention", "octet's bert is an encoder");

  a.vocab_size = config.Count("vocab_size");
  a.hidden_size = config.Count("hidden_size");
  a.num_layers = config.Count("num_hidden_layers");
  a.intermediate_size = config.Count("intermediate_size");
  a.max_positions = config.CountOr("max_position_embeddings", 512);
  a.type_vocab_size = config.CountOr("type_vocab_size", 2);
  a.norm = fb::NormKind::LayerNorm;
  a.norm_placement = fb::NormPlacement::Post;
  a.norm_eps = static_cast<float>(config.NumberOr("layer_norm_eps", 1e-12));
  a.activation = ActivationFromConfig(config, "hidden_act", "gelu");
  a.position = fb::PositionKind::Learned;
  const uint32_t heads = config.Count("num_attention_heads");
  if (a.hidden_size % heads != 0) {
    config.Invalid("num_attention_heads", Cat("a divisor of hidden_size ", a.hidden_size));
  }
  fb::AttentionT& att = *a.attention;
  att.num_heads = heads;
  att.num_kv_heads = heads;
  att.head_dim = a.hidden_size / heads;
  att.qkv_bias = true;
  att.out_bias = true;
  FinishArchitecture(config, spec);

  const std::string p =
      DetectPrefix(checkpoint, {"bert.", ""}, {"embeddings.word_embeddings.weight"});
  const uint32_t h = a.hidden_size, inter = a.intermediate_size;
  const std::string emb = p + "embeddings.";
  spec.Map("token_embedding", {a.vocab_size, h}, emb + "word_embeddings.weight");
  spec.Map("position_embedding", {a.max_positions, h}, emb + "position_embeddings.weight");
  spec.Map("token_type_embedding", {a.type_vocab_size, h}, emb + "token_type_embeddings.weight");
  spec.Map("embedding_norm.weight", {h}, NormSource(checkpoint, emb + "LayerNorm", true));
  spec.Map("embedding_norm.bias", {h}, NormSource(checkpoint, emb + "LayerNorm", false));
  for (uint32_t i = 0; i < a.num_layers; ++i) {
    const std::string src = Cat(p, "encoder.layer.", i, ".");
    const std::string dst = Cat("layers.", i, ".");
    const auto linear = [&](const std::string& to, const std::string& from, uint32_t out,
                            uint32_t in) {
      spec.Map(dst + to + ".weight", {out, in}, src + from + ".weight");
      spec.Map(dst + to + ".bias", {out}, src + from + ".bias");
    };
    const auto norm = [&](const std::string& to, const std::string& from) {
      spec.Map(dst + to + ".weight", {h}, NormSource(checkpoint, src + from, true));
      spec.Map(dst + to + ".bias", {h}, NormSource(checkpoint, src + from, false));
    };
    linear("attn.q", "attention.self.query", h, h);
    linear("attn.k", "attention.self.key", h, h);
    linear("attn.v", "attention.self.value", h, h);
    linear("attn.o", "attention.output.dense", h, h);
    norm("attn_norm", "attention.output.LayerNorm");
    linear("ffn.up", "intermediate.dense", inter, h);
    linear("ffn.down", "output.dense", h, inter);
    norm("ffn_norm", "output.LayerNorm");
  }
  spec.ignore = [p](const std::string& name) {
    return name.rfind(p + "pooler.", 0) == 0 || name.rfind("cls.", 0) == 0 ||
           name == p + "embeddings.position_ids" || name == p + "embeddings.token_type_ids";
  };
  return spec;
}

}  // namespace convert
}  // namespace octet
