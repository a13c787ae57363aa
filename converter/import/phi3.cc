// phi3: Phi3ForCausalLM (Phi-3, Phi-3.5 mini, Phi-4 mini). Llama-shaped
// (pre-RMSNorm, SwiGLU, RoPE rotate-half, GQA) with fused projections, split
// here: qkv_proj's rows are Q (heads * head_dim), then K and V (kv_heads *
// head_dim each); gate_up_proj's are the gate, then up (Phi3MLP chunks the
// output in two and multiplies up by silu of the first). partial_rotary_factor
// rotates the first dimensions of each head only. sliding_window (when set)
// applies to every layer. rope_scaling: null, or "su" / "longrope" with
// short_factor and long_factor (RopeScaling.LongRope; attention_factor the
// config's or sqrt(1 + ln(s) / ln(original)) with s = max_position_embeddings /
// original_max_position_embeddings, 1 when s <= 1).
//
//   model.embed_tokens.weight                       token_embedding
//   model.layers.{i}.input_layernorm.weight         layers.{i}.attn_norm.weight
//   model.layers.{i}.self_attn.qkv_proj.weight      layers.{i}.attn.{q,k,v}.weight (row blocks)
//   model.layers.{i}.self_attn.o_proj.weight        layers.{i}.attn.o.weight
//   model.layers.{i}.post_attention_layernorm.weight  layers.{i}.ffn_norm.weight
//   model.layers.{i}.mlp.gate_up_proj.weight        layers.{i}.ffn.{gate,up}.weight (halves)
//   model.layers.{i}.mlp.down_proj.weight           layers.{i}.ffn.down.weight
//   model.norm.weight                               final_norm.weight
//   lm_head.weight                                  lm_head (untied; when tied it must equal
//   embed_tokens)
// Ignored: old checkpoints' self_attn.rotary_emb.inv_freq buffers.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "import/common.h"
#include "import/error.h"
#include "import/importer.h"

namespace octet {
namespace convert {
namespace {

std::vector<float> ReadFactors(const ConfigView& s, const std::string& key, uint32_t pairs) {
  const nlohmann::json* list = s.Find(key);
  if (list == nullptr) s.Invalid(key, Cat("a list of ", pairs, " factors"));
  if (!list->is_array() || list->size() != pairs) {
    s.Invalid(key, Cat("a list of ", pairs, " factors (rotary dimensions / 2)"));
  }
  std::vector<float> out;
  for (const nlohmann::json& v : *list) {
    const double f = v.is_number() ? v.get<double>() : 0.0;
    if (!(f > 0.0) || !std::isfinite(f)) s.Invalid(key, "a list of finite factors > 0");
    out.push_back(static_cast<float>(f));
  }
  return out;
}

// rope_theta and rope_scaling (transformers 4.x), or rope_parameters (5.x), as llama.cc.
std::unique_ptr<fb::RopeT> ReadRope(const ConfigView& config, const fb::ArchitectureT& a,
                                    ModelSpec& spec) {
  auto rope = std::make_unique<fb::RopeT>();
  const nlohmann::json* parameters = config.Object("rope_parameters");
  const nlohmann::json* scaling = parameters ? parameters : config.Object("rope_scaling");
  const std::string key = parameters ? "rope_parameters" : "rope_scaling";
  const double theta = config.NumberOr("rope_theta", 10000.0);
  rope->theta = static_cast<float>(
      parameters ? ConfigView(*parameters, config.where() + ": " + key).NumberOr("rope_theta", theta)
                 : theta);
  if (!(rope->theta > 1.0f)) config.Invalid("rope_theta", "a number > 1");
  const uint32_t head_dim = a.attention->head_dim;
  const double partial = config.NumberOr("partial_rotary_factor", 1.0);
  if (!(partial > 0.0 && partial <= 1.0)) config.Invalid("partial_rotary_factor", "in (0, 1]");
  // Phi3's int(head_dim * partial_rotary_factor).
  const uint32_t dim = static_cast<uint32_t>(head_dim * partial);
  if (dim == 0 || dim % 2 != 0) {
    config.Invalid("partial_rotary_factor",
                   Cat("a factor giving an even rotary dimension of ", head_dim));
  }
  if (dim != head_dim) rope->rotary_dim = dim;

  if (scaling == nullptr) return rope;
  spec.provenance.push_back({key, scaling->dump()});
  const ConfigView s(*scaling, config.where() + ": " + key);
  const std::string type_key = s.Has("rope_type") ? "rope_type" : "type";
  const std::string type = s.StringOr(type_key, "default");
  if (type == "default") return rope;
  if (type != "su" && type != "longrope") {
    s.Unsupported(type_key, "supported: default, su, longrope");
  }
  rope->scaling = fb::RopeScaling::LongRope;
  rope->short_factors = ReadFactors(s, "short_factor", dim / 2);
  rope->long_factors = ReadFactors(s, "long_factor", dim / 2);
  // Phi3Config keeps the pretrained length at the top level; without it the
  // long factors never apply (Hugging Face's original = max_position_embeddings).
  const uint32_t original = config.Has("original_max_position_embeddings")
                                ? config.Count("original_max_position_embeddings")
                                : a.max_positions;
  if (original == 0) config.Invalid("original_max_position_embeddings", "a positive integer");
  rope->original_max_positions = original;
  if (s.Has("attention_factor")) {
    const double f = s.Number("attention_factor");
    if (!(f > 0.0)) s.Invalid("attention_factor", "a number > 0");
    rope->attention_factor = static_cast<float>(f);
  } else {
    // modeling_rope_utils' longrope default, from the ratio of the two lengths.
    const double factor = static_cast<double>(a.max_positions) / original;
    const double log_original = std::log(static_cast<double>(original));
    rope->attention_factor =
        static_cast<float>(factor <= 1.0 ? 1.0 : std::sqrt(1.0 + std::log(factor) / log_original));
  }
  spec.provenance.push_back({"rope attention_factor", Cat(rope->attention_factor)});
  return rope;
}

}  // namespace

ModelSpec ImportPhi3(const ConfigView& config, const Checkpoint& checkpoint) {
  ModelSpec spec = NewSpec(config, "phi3", fb::Family::Phi3, fb::Structure::DecoderOnly);
  fb::ArchitectureT& a = spec.architecture;
  ReadGatedRopeDecoder(config, 4096, 1e-5, a);
  fb::AttentionT& att = *a.attention;
  att.head_dim = ReadHeadDim(config, a);
  att.sliding_window = config.Has("sliding_window") ? config.Count("sliding_window") : 0;
  a.rope = ReadRope(config, a, spec);
  FinishArchitecture(config, spec);
  spec.provenance.push_back({"hidden_act", config.StringOr("hidden_act", "silu")});

  const std::string p = "model.";
  const uint32_t h = a.hidden_size, inter = a.intermediate_size;
  const uint32_t q_rows = att.num_heads * att.head_dim;
  const uint32_t kv_rows = att.num_kv_heads * att.head_dim;
  const std::vector<uint64_t> qkv_shape = {uint64_t{q_rows} + 2ull * kv_rows, h};
  spec.Map("token_embedding", {a.vocab_size, h}, p + "embed_tokens.weight");
  for (uint32_t i = 0; i < a.num_layers; ++i) {
    const std::string src = Cat(p, "layers.", i, ".");
    const std::string dst = Cat("layers.", i, ".");
    spec.Map(dst + "attn_norm.weight", {h}, src + "input_layernorm.weight");
    const std::string qkv = src + "self_attn.qkv_proj.weight";
    const struct {
      const char* name;
      uint32_t rows, first;
    } blocks[] = {{"attn.q.weight", q_rows, 0},
                  {"attn.k.weight", kv_rows, q_rows},
                  {"attn.v.weight", kv_rows, q_rows + kv_rows}};
    for (const auto& b : blocks) {
      TensorMapping& m = spec.Map(dst + b.name, {b.rows, h}, qkv);
      m.source_shape = qkv_shape;
      m.first_row = b.first;
    }
    spec.Map(dst + "attn.o.weight", {h, q_rows}, src + "self_attn.o_proj.weight");
    spec.Map(dst + "ffn_norm.weight", {h}, src + "post_attention_layernorm.weight");
    const std::string gate_up = src + "mlp.gate_up_proj.weight";
    TensorMapping& gate = spec.Map(dst + "ffn.gate.weight", {inter, h}, gate_up);
    gate.parts = 2;
    gate.part = 0;
    TensorMapping& up = spec.Map(dst + "ffn.up.weight", {inter, h}, gate_up);
    up.parts = 2;
    up.part = 1;
    spec.Map(dst + "ffn.down.weight", {h, inter}, src + "mlp.down_proj.weight");
  }
  spec.Map("final_norm.weight", {h}, p + "norm.weight");
  MapLmHead(spec, p);
  spec.ignore = IgnoreRotaryInvFreq(p);
  return spec;
}

}  // namespace convert
}  // namespace octet
