// modernbert: ModernBertModel and the ModernBERT heads' checkpoints ("model."
// prefix or none), as transformers' modeling_modernbert.py / modular_modernbert.py
// define it, in both config styles (global_attn_every_n_layers with
// global_rope_theta / local_rope_theta; layer_types with rope_parameters per kind).
// A pre-norm encoder:
//   - embeddings: token table, then a LayerNorm (no positions, no token types);
//   - layer i: x += Wo(attention(attn_norm(x))), x += Wo(act(input) * gate) of
//     mlp_norm(x), where layer 0 has no attn_norm (the embeddings end in a norm:
//     Architecture.first_attn_norm false);
//   - attention: fused Wqkv split into Q, K, V (rows [0, H), [H, 2H), [2H, 3H)),
//     RoPE (rotate-half) over the whole head, 1/sqrt(head_dim); global layers see
//     every key with rope theta 160000, local ones the band |i - j| <= local_attention / 2
//     (sliding_window half + 1, sliding_window_ahead half) with theta 10000;
//   - GeGLU: Wi's first half goes through the activation (exact GELU by default),
//     its second half multiplies; then a final LayerNorm.
// LayerNorms have no bias unless norm_bias (zero biases are written, the runtime's
// LayerNorm adds them); eps is norm_eps (layer_norm_eps, which hub configs also
// carry, is not read by transformers either).
//
//   [model.]embeddings.tok_embeddings.weight   token_embedding
//   [model.]embeddings.norm.*                  embedding_norm.*
//   [model.]layers.{i}.attn_norm.*             layers.{i}.attn_norm.*       (i >= 1)
//   [model.]layers.{i}.attn.Wqkv.*             layers.{i}.attn.{q,k,v}.*    (rows split)
//   [model.]layers.{i}.attn.Wo.*               layers.{i}.attn.o.*
//   [model.]layers.{i}.mlp_norm.*              layers.{i}.ffn_norm.*
//   [model.]layers.{i}.mlp.Wi.weight           layers.{i}.ffn.{gate,up}.weight  (halves)
//   [model.]layers.{i}.mlp.Wo.weight           layers.{i}.ffn.down.weight
//   [model.]final_norm.*                       final_norm.*
// Ignored: head.* and decoder.* (the masked-LM head), classifier.*.
#include <string>
#include <vector>

#include "import/common.h"
#include "import/error.h"
#include "import/importer.h"

namespace octet {
namespace convert {
namespace {

// Layer i's kind: true = local (sliding). layer_types when given (it must
// agree with global_attn_every_n_layers when that is written too: transformers
// reads both in places), else every n-th layer from 0 is global.
std::vector<bool> ReadLocalLayers(const ConfigView& config, uint32_t layers) {
  const bool has_every = config.Has("global_attn_every_n_layers");
  const uint32_t every = config.CountOr("global_attn_every_n_layers", 3);
  std::vector<bool> local(layers);
  for (uint32_t i = 0; i < layers; ++i) local[i] = i % every != 0;
  const nlohmann::json* types = config.Find("layer_types");
  if (types == nullptr) return local;
  if (!types->is_array() || types->size() != layers) {
    config.Invalid("layer_types", Cat("a list of ", layers, " attention kinds"));
  }
  for (uint32_t i = 0; i < layers; ++i) {
    const nlohmann::json& t = (*types)[i];
    bool is_local = false;
    if (t == "sliding_attention") {
      is_local = true;
    } else if (t != "full_attention") {
      config.Unsupported("layer_types", "supported: full_attention, sliding_attention");
    }
    if (has_every && is_local != local[i]) {
      config.Unsupported("layer_types", Cat("layer ", i, " disagrees with "
                                            "global_attn_every_n_layers = ", every));
    }
    local[i] = is_local;
  }
  return local;
}

// The RoPE base of one kind of layer: rope_parameters[kind].rope_theta
// (transformers 5.x), else the old key, else its default. Only the default
// rope type is read.
double ReadTheta(const ConfigView& config, const std::string& kind, const std::string& old_key,
                 double fallback) {
  if (const nlohmann::json* all = config.Object("rope_parameters")) {
    const ConfigView params(*all, config.where() + ": rope_parameters");
    if (const nlohmann::json* table = params.Object(kind)) {
      const ConfigView p(*table, params.where() + ": " + kind);
      const std::string type = p.StringOr("rope_type", "default");
      if (type != "default") p.Unsupported("rope_type", "supported for modernbert: default");
      if (p.Has("rope_theta")) {
        const double theta = p.Number("rope_theta");
        if (!(theta > 1.0)) p.Invalid("rope_theta", "a number > 1");
        return theta;
      }
    }
  }
  if (config.Has(old_key)) {
    const double theta = config.Number(old_key);
    if (!(theta > 1.0)) config.Invalid(old_key, "a number > 1");
    return theta;
  }
  return fallback;
}

}  // namespace

ModelSpec ImportModernBert(const ConfigView& config, const Checkpoint& checkpoint) {
  ModelSpec spec = NewSpec(config, "modernbert", fb::Family::ModernBert,
                           fb::Structure::EncoderOnly);
  fb::ArchitectureT& a = spec.architecture;
  RejectTrue(config, "is_causal", "octet's ModernBERT is the bidirectional encoder");
  if (config.Has("rope_scaling")) {
    config.Unsupported("rope_scaling", "octet's ModernBERT reads the default RoPE only");
  }
  if (config.BoolOr("mlp_bias", false)) {
    config.Unsupported("mlp_bias", "the published ModernBERTs have none");
  }
  a.vocab_size = config.Count("vocab_size");
  a.hidden_size = config.Count("hidden_size");
  a.num_layers = config.Count("num_hidden_layers");
  a.intermediate_size = config.Count("intermediate_size");
  a.max_positions = config.CountOr("max_position_embeddings", 8192);
  a.norm = fb::NormKind::LayerNorm;
  a.norm_placement = fb::NormPlacement::Pre;
  a.norm_eps = static_cast<float>(config.NumberOr("norm_eps", 1e-5));
  a.activation = ActivationFromConfig(config, "hidden_activation", "gelu");
  a.gated_ffn = true;
  a.position = fb::PositionKind::Rope;
  a.first_attn_norm = false;
  const bool norm_bias = config.BoolOr("norm_bias", false);
  const bool attention_bias = config.BoolOr("attention_bias", false);

  fb::AttentionT& att = *a.attention;
  att.num_heads = config.Count("num_attention_heads");
  if (a.hidden_size % att.num_heads != 0) {
    config.Invalid("num_attention_heads", Cat("a divisor of hidden_size = ", a.hidden_size));
  }
  att.num_kv_heads = att.num_heads;
  att.head_dim = a.hidden_size / att.num_heads;
  att.qkv_bias = att.out_bias = attention_bias;
  const std::vector<bool> local = ReadLocalLayers(config, a.num_layers);
  bool any_local = false;
  for (bool l : local) any_local = any_local || l;
  if (any_local) {
    const uint32_t width = config.CountOr("local_attention", 128);
    if (width < 2) config.Invalid("local_attention", "at least 2 (a band of width / 2 each way)");
    const uint32_t half = width / 2;  // |i - j| <= half, as transformers' mask
    att.sliding_window = half + 1;    // the query and the `half` keys before it
    att.sliding_window_ahead = half;
    att.sliding_layers = local;
  }
  a.rope = std::make_unique<fb::RopeT>();
  const double global = ReadTheta(config, "full_attention", "global_rope_theta", 160000.0);
  a.rope->theta = static_cast<float>(global);
  if (any_local) {
    // An old config's null local_rope_theta means the global base.
    const bool old_null = config.Contains("local_rope_theta") && !config.Has("local_rope_theta") &&
                          config.Object("rope_parameters") == nullptr;
    a.rope->local_theta = static_cast<float>(
        old_null ? global : ReadTheta(config, "sliding_attention", "local_rope_theta", 10000.0));
  }
  spec.provenance.push_back(
      {"rope", Cat("theta ", a.rope->theta, " (global layers), ", a.rope->local_theta,
                   " (local layers)")});
  FinishArchitecture(config, spec);

  const std::string p = DetectPrefix(checkpoint, {"model.", ""}, {"embeddings.tok_embeddings.weight"});
  const uint32_t h = a.hidden_size, inter = a.intermediate_size;
  const auto layer_norm = [&](const std::string& dst, const std::string& src) {
    spec.Map(dst + ".weight", {h}, src + ".weight");
    if (norm_bias) {
      spec.Map(dst + ".bias", {h}, src + ".bias");
    } else {
      spec.Map(dst + ".bias", {h}, "").values.assign(h, 0.0f);
    }
  };
  spec.Map("token_embedding", {a.vocab_size, h}, p + "embeddings.tok_embeddings.weight");
  layer_norm("embedding_norm", p + "embeddings.norm");
  const std::vector<uint64_t> qkv_shape = {3ull * h, h};
  const std::vector<uint64_t> wi_shape = {2ull * inter, h};
  for (uint32_t i = 0; i < a.num_layers; ++i) {
    const std::string src = Cat(p, "layers.", i, ".");
    const std::string dst = Cat("layers.", i, ".");
    if (i > 0) layer_norm(dst + "attn_norm", src + "attn_norm");
    const char* parts[] = {"attn.q", "attn.k", "attn.v"};
    for (uint32_t part = 0; part < 3; ++part) {
      TensorMapping& w = spec.Map(dst + parts[part] + ".weight", {h, h}, src + "attn.Wqkv.weight");
      w.source_shape = qkv_shape;
      w.first_row = part * h;
      if (attention_bias) {
        TensorMapping& b = spec.Map(dst + parts[part] + ".bias", {h}, src + "attn.Wqkv.bias");
        b.source_shape = {3ull * h};
        b.first_row = part * h;
      }
    }
    MapLinear(spec, dst, src, "attn.o", "attn.Wo", h, h, attention_bias);
    layer_norm(dst + "ffn_norm", src + "mlp_norm");
    // input, gate = Wi(x).chunk(2): act(input) * gate, i.e. octet's act(gate) * up.
    TensorMapping& gate = spec.Map(dst + "ffn.gate.weight", {inter, h}, src + "mlp.Wi.weight");
    gate.source_shape = wi_shape;
    gate.first_row = 0;
    TensorMapping& up = spec.Map(dst + "ffn.up.weight", {inter, h}, src + "mlp.Wi.weight");
    up.source_shape = wi_shape;
    up.first_row = inter;
    spec.Map(dst + "ffn.down.weight", {h, inter}, src + "mlp.Wo.weight");
  }
  layer_norm("final_norm", p + "final_norm");
  spec.ignore = [](const std::string& name) {
    const auto starts = [&](const std::string& prefix) { return name.rfind(prefix, 0) == 0; };
    return starts("head.") || starts("decoder.") || starts("classifier.");
  };
  return spec;
}

}  // namespace convert
}  // namespace octet
