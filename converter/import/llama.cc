// llama, qwen2, qwen3, mistral: LlamaForCausalLM and its relatives ("model."
// prefix or none). Pre-norm decoder with RMSNorm, RoPE (rotate-half, rope_theta,
// rope_scaling linear or llama3), SwiGLU feed-forward, grouped-query attention
// (K/V keep num_key_value_heads heads: nothing is repeated per query head).
// Biases: qwen2 has them on Q/K/V; llama on all four projections when
// attention_bias is set (llama, qwen3); mistral has none. mistral's
// sliding_window (and qwen2's or qwen3's, when every layer uses it) becomes
// Attention.sliding_window. qwen3 adds an RMSNorm over each head of Q and of K
// (Attention.qk_norm), and its head_dim defaults to 128 (Qwen3Config's).
//
//   [model.]embed_tokens.weight                    token_embedding
//   [model.]layers.{i}.input_layernorm.weight      layers.{i}.attn_norm.weight
//   [model.]layers.{i}.self_attn.{q,k,v,o}_proj.*  layers.{i}.attn.{q,k,v,o}.*
//   [model.]layers.{i}.self_attn.{q,k}_norm.weight  layers.{i}.attn.{q,k}_norm.weight (qwen3)
//   [model.]layers.{i}.post_attention_layernorm.weight  layers.{i}.ffn_norm.weight
//   [model.]layers.{i}.mlp.{gate,up,down}_proj.weight   layers.{i}.ffn.{gate,up,down}.weight
//   [model.]norm.weight                            final_norm.weight
//   lm_head.weight                                 lm_head (untied; when tied it must equal
//   embed_tokens)
// Ignored: old checkpoints' self_attn.rotary_emb.inv_freq buffers.
#include <memory>
#include <string>

#include "import/common.h"
#include "import/error.h"
#include "import/importer.h"

namespace octet {
namespace convert {

std::unique_ptr<fb::RopeT> ReadRope(const ConfigView& config, uint32_t head_dim, ModelSpec& spec) {
  auto rope = std::make_unique<fb::RopeT>();
  const nlohmann::json* parameters = config.Object("rope_parameters");
  const nlohmann::json* scaling = parameters ? parameters : config.Object("rope_scaling");
  const std::string where = config.where() + (parameters ? ": rope_parameters" : ": rope_scaling");
  const nlohmann::json empty = nlohmann::json::object();
  const ConfigView s(scaling ? *scaling : empty, where);
  rope->theta = static_cast<float>(
      parameters ? s.NumberOr("rope_theta", config.NumberOr("rope_theta", 10000.0))
                 : config.NumberOr("rope_theta", 10000.0));
  if (!(rope->theta > 1.0f)) config.Invalid("rope_theta", "a number > 1");
  if (scaling != nullptr) {
    spec.provenance.push_back({parameters ? "rope_parameters" : "rope_scaling", scaling->dump()});
    const std::string type_key = s.Has("rope_type") ? "rope_type" : "type";
    const std::string type = s.StringOr(type_key, "default");
    if (type == "linear") {
      rope->scaling = fb::RopeScaling::Linear;
      rope->factor = static_cast<float>(s.Number("factor"));
    } else if (type == "llama3") {
      rope->scaling = fb::RopeScaling::Llama3;
      rope->factor = static_cast<float>(s.Number("factor"));
      rope->low_freq_factor = static_cast<float>(s.Number("low_freq_factor"));
      rope->high_freq_factor = static_cast<float>(s.Number("high_freq_factor"));
      rope->original_max_positions = s.Count("original_max_position_embeddings");
      if (!(rope->high_freq_factor > rope->low_freq_factor)) {
        s.Invalid("high_freq_factor", "greater than low_freq_factor");
      }
    } else if (type != "default") {
      s.Unsupported(type_key, "supported: default, linear, llama3");
    }
    if (rope->factor <= 0.0f) s.Invalid("factor", "a number > 0");
  }
  const double partial = config.NumberOr("partial_rotary_factor", 1.0);
  if (!(partial > 0.0 && partial <= 1.0)) config.Invalid("partial_rotary_factor", "in (0, 1]");
  if (partial < 1.0) {
    const uint32_t dim = static_cast<uint32_t>(head_dim * partial);
    if (dim == 0 || dim % 2 != 0) {
      config.Invalid("partial_rotary_factor",
                     Cat("a factor giving an even rotary dimension of ", head_dim));
    }
    rope->rotary_dim = dim;
  }
  return rope;
}

namespace {

// Attention.sliding_window: mistral's sliding_window; qwen2's when it applies to
// every layer. Mixed full/sliding layers cannot be expressed.
uint32_t ReadSlidingWindow(const ConfigView& config, const std::string& type, uint32_t layers) {
  if (const nlohmann::json* types = config.Find("layer_types")) {
    if (!types->is_array()) config.Invalid("layer_types", "a list");
    size_t sliding = 0;
    for (const nlohmann::json& t : *types) {
      if (t == "sliding_attention") {
        ++sliding;
      } else if (t != "full_attention") {
        config.Unsupported("layer_types", "supported: full_attention, sliding_attention");
      }
    }
    if (sliding == 0) return 0;
    if (sliding != types->size()) {
      config.Unsupported("layer_types", "octet needs the same attention in every layer");
    }
    return config.Count("sliding_window");
  }
  if (type == "mistral") {
    // MistralConfig's default when the key is absent; null disables it.
    if (!config.Contains("sliding_window")) return 4096;
    return config.Has("sliding_window") ? config.Count("sliding_window") : 0;
  }
  if ((type == "qwen2" || type == "qwen3") && config.BoolOr("use_sliding_window", false) &&
      config.Has("sliding_window")) {
    const uint32_t first = config.CountOr("max_window_layers", 0);
    if (first >= layers) return 0;  // no layer reaches the sliding ones
    if (first > 0) {
      config.Unsupported("max_window_layers",
                         "octet needs the same attention in every layer; with "
                         "use_sliding_window it must be 0 or >= num_hidden_layers");
    }
    return config.Count("sliding_window");
  }
  return 0;
}

}  // namespace

ModelSpec ImportLlama(const ConfigView& config, const Checkpoint& checkpoint) {
  const std::string type = config.StringOr("model_type", "llama");
  const fb::Family family = type == "qwen2"     ? fb::Family::Qwen2
                            : type == "qwen3"   ? fb::Family::Qwen3
                            : type == "mistral" ? fb::Family::Mistral
                                                : fb::Family::Llama;
  ModelSpec spec = NewSpec(config, type, family, fb::Structure::DecoderOnly);
  fb::ArchitectureT& a = spec.architecture;
  RejectTrue(config, "mlp_bias", "octet's llama feed-forward has no biases");

  ReadGatedRopeDecoder(config, 0, 1e-6, a);
  fb::AttentionT& att = *a.attention;
  att.head_dim = ReadHeadDim(config, a, family == fb::Family::Qwen3 ? 128 : 0);
  if (family == fb::Family::Qwen2) {
    att.qkv_bias = true;
  } else if (family == fb::Family::Llama || family == fb::Family::Qwen3) {
    att.qkv_bias = att.out_bias = config.BoolOr("attention_bias", false);
  }
  att.qk_norm = family == fb::Family::Qwen3;
  att.sliding_window = ReadSlidingWindow(config, type, a.num_layers);
  a.rope = ReadRope(config, att.head_dim, spec);
  FinishArchitecture(config, spec);
  spec.provenance.push_back({"hidden_act", config.StringOr("hidden_act", "silu")});

  const std::string p = DetectPrefix(checkpoint, {"model.", ""}, {"embed_tokens.weight"});
  const uint32_t h = a.hidden_size, inter = a.intermediate_size;
  const uint32_t q_rows = att.num_heads * att.head_dim;
  const uint32_t kv_rows = att.num_kv_heads * att.head_dim;
  spec.Map("token_embedding", {a.vocab_size, h}, p + "embed_tokens.weight");
  for (uint32_t i = 0; i < a.num_layers; ++i) {
    const std::string src = Cat(p, "layers.", i, ".");
    const std::string dst = Cat("layers.", i, ".");
    const auto linear = [&](const std::string& to, const std::string& from, uint32_t out,
                            uint32_t in, bool bias) {
      MapLinear(spec, dst, src, to, from, out, in, bias);
    };
    spec.Map(dst + "attn_norm.weight", {h}, src + "input_layernorm.weight");
    linear("attn.q", "self_attn.q_proj", q_rows, h, att.qkv_bias);
    linear("attn.k", "self_attn.k_proj", kv_rows, h, att.qkv_bias);
    linear("attn.v", "self_attn.v_proj", kv_rows, h, att.qkv_bias);
    linear("attn.o", "self_attn.o_proj", h, q_rows, att.out_bias);
    if (att.qk_norm) {
      spec.Map(dst + "attn.q_norm.weight", {att.head_dim}, src + "self_attn.q_norm.weight");
      spec.Map(dst + "attn.k_norm.weight", {att.head_dim}, src + "self_attn.k_norm.weight");
    }
    spec.Map(dst + "ffn_norm.weight", {h}, src + "post_attention_layernorm.weight");
    linear("ffn.gate", "mlp.gate_proj", inter, h, false);
    linear("ffn.up", "mlp.up_proj", inter, h, false);
    linear("ffn.down", "mlp.down_proj", h, inter, false);
  }
  spec.Map("final_norm.weight", {h}, p + "norm.weight");
  MapLmHead(spec, p);
  spec.ignore = IgnoreRotaryInvFreq(p);
  return spec;
}

}  // namespace convert
}  // namespace octet
