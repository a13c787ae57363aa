// distilbert: DistilBertModel and its heads' checkpoints ("distilbert." prefix
// or none). BERT's post-norm encoder without token types: learned (or stored
// sinusoidal) positions, LayerNorm after the embeddings with transformers'
// hard-coded eps 1e-12, biases everywhere, GELU (erf) or ReLU.
//
//   [distilbert.]embeddings.word_embeddings.weight       token_embedding
//   [distilbert.]embeddings.position_embeddings.weight   position_embedding
//   [distilbert.]embeddings.LayerNorm.*                  embedding_norm.*
//   [distilbert.]transformer.layer.{i}.
//     attention.{q_lin,k_lin,v_lin,out_lin}.*            layers.{i}.attn.{q,k,v,o}.*
//     sa_layer_norm.*                                    layers.{i}.attn_norm.*
//     ffn.lin1.*, ffn.lin2.*                             layers.{i}.ffn.up.*, ffn.down.*
//     output_layer_norm.*                                layers.{i}.ffn_norm.*
// Ignored: the heads (vocab_transform, vocab_layer_norm, vocab_projector of
// DistilBertForMaskedLM; pre_classifier, classifier, qa_outputs of the
// classification and QA classes) and the position_ids buffer.
//
// sinusoidal_pos_embds: transformers fills position_embeddings.weight with
// create_sinusoidal_embeddings and saves it like a learned table. A stored
// table is used as stored (it is what PyTorch computes with, rounded to the
// checkpoint's dtype) after checking it against the formula; a missing one is
// computed.
#include <cmath>
#include <string>
#include <vector>

#include "import/common.h"
#include "import/error.h"
#include "import/importer.h"

namespace octet {
namespace convert {
namespace {

// create_sinusoidal_embeddings: angle = pos / 10000^(2 * (j / 2) / dim) in
// double (numpy), sin in the even columns, cos in the odd ones, then float32.
float DistilBertSinusoid(uint64_t pos, uint64_t column, uint64_t dim) {
  const double exponent = 2.0 * static_cast<double>(column / 2) / static_cast<double>(dim);
  const double angle = static_cast<double>(pos) / std::pow(10000.0, exponent);
  return static_cast<float>(column % 2 == 0 ? std::sin(angle) : std::cos(angle));
}

void CheckSinusoids(const std::string& name, const Tensor& t, uint32_t rows, uint32_t dim) {
  const std::vector<float> values = Checkpoint::ReadAllF32(t);
  const double tolerance = StoredTableTolerance(t.dtype);
  for (uint64_t pos = 0; pos < rows; ++pos) {
    for (uint64_t c = 0; c < dim; ++c) {
      const double stored = values[pos * dim + c];
      const double expected = DistilBertSinusoid(pos, c, dim);
      if (!(std::fabs(stored - expected) <= tolerance)) {
        Fail("distilbert: tensor ", name,
             " is not the sinusoidal table sinusoidal_pos_embds "
             "asks for: [",
             pos, ", ", c, "] holds ", stored, ", expected ", expected);
      }
    }
  }
}

}  // namespace

ModelSpec ImportDistilBert(const ConfigView& config, const Checkpoint& checkpoint) {
  ModelSpec spec =
      NewSpec(config, "distilbert", fb::Family::DistilBert, fb::Structure::EncoderOnly);
  fb::ArchitectureT& a = spec.architecture;
  a.vocab_size = config.Count("vocab_size");
  a.hidden_size = config.Count("dim");
  a.num_layers = config.Count("n_layers");
  a.intermediate_size = config.Count("hidden_dim");
  a.max_positions = config.CountOr("max_position_embeddings", 512);
  a.type_vocab_size = 0;
  a.norm = fb::NormKind::LayerNorm;
  a.norm_placement = fb::NormPlacement::Post;
  a.norm_eps = 1e-12f;  // not a config key: modeling_distilbert.py writes it in
  a.activation = ActivationFromConfig(config, "activation", "gelu");
  a.position = fb::PositionKind::Learned;
  SetBiasedMultiHeadAttention(config, config.Count("n_heads"), "n_heads", "dim", a);
  FinishArchitecture(config, spec);
  const bool sinusoidal = config.BoolOr("sinusoidal_pos_embds", false);
  spec.provenance.push_back({"sinusoidal_pos_embds", sinusoidal ? "true" : "false"});

  const std::string p =
      DetectPrefix(checkpoint, {"distilbert.", ""}, {"embeddings.word_embeddings.weight"});
  const uint32_t h = a.hidden_size, inter = a.intermediate_size, rows = a.max_positions;
  const std::string emb = p + "embeddings.";
  spec.Map("token_embedding", {a.vocab_size, h}, emb + "word_embeddings.weight");
  const std::string positions = emb + "position_embeddings.weight";
  if (!sinusoidal || checkpoint.Find(positions) != nullptr) {
    spec.Map("position_embedding", {rows, h}, positions);
  } else {
    std::vector<float>& table = spec.Map("position_embedding", {rows, h}, "").values;
    table.resize(static_cast<size_t>(rows) * h);
    for (uint32_t pos = 0; pos < rows; ++pos) {
      for (uint32_t c = 0; c < h; ++c)
        table[static_cast<size_t>(pos) * h + c] = DistilBertSinusoid(pos, c, h);
    }
  }
  if (sinusoidal) {
    spec.extra_checks.push_back(
        {positions, [positions, rows, h](const Checkpoint&, const Tensor& t) {
           CheckSinusoids(positions, t, rows, h);
         }});
  }
  MapLayerNorm(spec, "embedding_norm", emb + "LayerNorm", h);
  const BertLayerNames names = {"attention.q_lin",   "attention.k_lin", "attention.v_lin",
                                "attention.out_lin", "sa_layer_norm",   "ffn.lin1",
                                "ffn.lin2",          "output_layer_norm"};
  for (uint32_t i = 0; i < a.num_layers; ++i) {
    MapBertLayer(spec, Cat("layers.", i, "."), Cat(p, "transformer.layer.", i, "."), names, h,
                 inter, nullptr);
  }
  spec.ignore = [p](const std::string& name) {
    for (const char* head : {"vocab_transform.", "vocab_layer_norm.", "vocab_projector.",
                             "pre_classifier.", "classifier.", "qa_outputs."}) {
      if (name.rfind(head, 0) == 0) return true;
    }
    return name == p + "embeddings.position_ids";
  };
  return spec;
}

}  // namespace convert
}  // namespace octet
