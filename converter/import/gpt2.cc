// gpt2: GPT2Model / GPT2LMHeadModel ("transformer." prefix or none). Pre-norm
// decoder, learned positions, GELU (tanh), biases everywhere, tied head by default.
// Its Conv1D layers store weights [in, out]: each is transposed to [out, in],
// and the fused c_attn [hidden, 3 x hidden] is split into Q, K and V.
//
//   [transformer.]wte.weight                   token_embedding
//   [transformer.]wpe.weight                   position_embedding
//   [transformer.]h.{i}.ln_1.*                 layers.{i}.attn_norm.*
//   [transformer.]h.{i}.attn.c_attn.*          layers.{i}.attn.{q,k,v}.*  (split, transposed)
//   [transformer.]h.{i}.attn.c_proj.*          layers.{i}.attn.o.*        (transposed)
//   [transformer.]h.{i}.ln_2.*                 layers.{i}.ffn_norm.*
//   [transformer.]h.{i}.mlp.c_fc.*             layers.{i}.ffn.up.*        (transposed)
//   [transformer.]h.{i}.mlp.c_proj.*           layers.{i}.ffn.down.*      (transposed)
//   [transformer.]ln_f.*                       final_norm.*
//   lm_head.weight                             lm_head (untied only; when tied it must equal wte)
// Ignored: the attn.bias / attn.masked_bias causal-mask buffers.
#include <string>

#include "import/common.h"
#include "import/error.h"
#include "import/importer.h"

namespace octet {
namespace convert {
ModelSpec ImportGpt2(const ConfigView& config, const Checkpoint& checkpoint) {
  ModelSpec spec = NewSpec(config, "gpt2", fb::Family::Gpt2, fb::Structure::DecoderOnly);
  fb::ArchitectureT& a = spec.architecture;
  RejectTrue(config, "scale_attn_by_inverse_layer_idx", "octet scales every layer alike");
  RejectTrue(config, "add_cross_attention", "octet's gpt2 is decoder-only");

  a.vocab_size = config.Count("vocab_size");
  a.hidden_size = config.Count("n_embd");
  a.num_layers = config.Count("n_layer");
  a.intermediate_size = config.CountOr("n_inner", 4 * a.hidden_size);
  a.max_positions = config.CountOr("n_positions", 1024);
  a.norm = fb::NormKind::LayerNorm;
  a.norm_placement = fb::NormPlacement::Pre;
  a.norm_eps = static_cast<float>(config.NumberOr("layer_norm_epsilon", 1e-5));
  a.activation = ActivationFromConfig(config, "activation_function", "gelu_new");
  a.position = fb::PositionKind::Learned;
  a.tied_embeddings = config.BoolOr("tie_word_embeddings", true);
  SetBiasedMultiHeadAttention(config, config.Count("n_head"), "n_head", "n_embd", a);
  fb::AttentionT& att = *a.attention;
  // scale_attn_weights = false: logits are not divided by sqrt(head_dim).
  att.scale = config.BoolOr("scale_attn_weights", true) ? 0.0f : 1.0f;
  FinishArchitecture(config, spec);
  spec.provenance.push_back(
      {"activation_function", config.StringOr("activation_function", "gelu_new")});

  const std::string p = DetectPrefix(checkpoint, {"transformer.", ""}, {"wte.weight"});
  const uint32_t h = a.hidden_size, inter = a.intermediate_size;
  spec.Map("token_embedding", {a.vocab_size, h}, p + "wte.weight");
  spec.Map("position_embedding", {a.max_positions, h}, p + "wpe.weight");
  for (uint32_t i = 0; i < a.num_layers; ++i) {
    const std::string src = Cat(p, "h.", i, ".");
    const std::string dst = Cat("layers.", i, ".");
    const auto norm = [&](const std::string& to, const std::string& from) {
      MapLayerNorm(spec, dst + to, src + from, h);
    };
    // A Conv1D: weight [in, out] -> [out, in]; bias [out].
    const auto conv1d = [&](const std::string& to, const std::string& from, uint32_t out,
                            uint32_t in, uint32_t parts, uint32_t part) {
      TensorMapping& w = spec.Map(dst + to + ".weight", {out, in}, src + from + ".weight");
      w.transpose = true;
      w.parts = parts;
      w.part = part;
      TensorMapping& b = spec.Map(dst + to + ".bias", {out}, src + from + ".bias");
      b.parts = parts;
      b.part = part;
    };
    norm("attn_norm", "ln_1");
    conv1d("attn.q", "attn.c_attn", h, h, 3, 0);
    conv1d("attn.k", "attn.c_attn", h, h, 3, 1);
    conv1d("attn.v", "attn.c_attn", h, h, 3, 2);
    conv1d("attn.o", "attn.c_proj", h, h, 1, 0);
    norm("ffn_norm", "ln_2");
    conv1d("ffn.up", "mlp.c_fc", inter, h, 1, 0);
    conv1d("ffn.down", "mlp.c_proj", h, inter, 1, 0);
  }
  MapLayerNorm(spec, "final_norm", p + "ln_f", h);
  MapLmHeadOrTied(spec, p + "wte.weight");
  spec.ignore = [p](const std::string& name) {
    return name.rfind(p + "h.", 0) == 0 &&
           (EndsWith(name, ".attn.bias") || EndsWith(name, ".attn.masked_bias"));
  };
  return spec;
}

}  // namespace convert
}  // namespace octet
