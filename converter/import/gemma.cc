// gemma, gemma2, gemma3_text: GemmaForCausalLM, Gemma2ForCausalLM and
// Gemma3ForCausalLM ("model." prefix or none). Llama's layout with these
// differences (modeling_gemma.py, modeling_gemma2.py, modeling_gemma3.py):
//   - RMSNorm scales by (1 + w), in float32: the 1 is folded into every stored
//     norm weight here (TensorMapping::add), so the engine's RMSNorm and the
//     tuner's smoothing see the effective weight;
//   - embeddings times sqrt(hidden_size) (Architecture.embedding_scale; the tied
//     head reads the unscaled table);
//   - GeGLU feed-forward (tanh GELU, see ReadActivation); head_dim defaults to 256;
//   - gemma2: sandwich norms (post_attention_layernorm on the attention's output,
//     pre_/post_feedforward_layernorm around the MLP), logit scale
//     query_pre_attn_scalar^-0.5, tanh soft-capping of attention logits and
//     final logits, sliding-window layers alternating with global ones;
//   - gemma3_text: gemma2's layer with RMSNorm (1 + w) on each head of Q and K
//     before RoPE (Attention.qk_norm), no soft-capping by default, sliding layers
//     by sliding_window_pattern (or layer_types) with their own RoPE base
//     rope_local_base_freq (Rope.local_theta, unscaled) while global layers use
//     rope_theta with rope_scaling (linear only).
//
//   [model.]embed_tokens.weight                       token_embedding
//   [model.]layers.{i}.input_layernorm.weight         layers.{i}.attn_norm.weight       (1 + w)
//   [model.]layers.{i}.self_attn.{q,k,v,o}_proj.*     layers.{i}.attn.{q,k,v,o}.*
//   gemma:  [model.]layers.{i}.post_attention_layernorm.weight
//                                                     layers.{i}.ffn_norm.weight        (1 + w)
//   gemma2: [model.]layers.{i}.post_attention_layernorm.weight
//                                                     layers.{i}.post_attn_norm.weight  (1 + w)
//           [model.]layers.{i}.pre_feedforward_layernorm.weight
//                                                     layers.{i}.ffn_norm.weight        (1 + w)
//           [model.]layers.{i}.post_feedforward_layernorm.weight
//                                                     layers.{i}.post_ffn_norm.weight   (1 + w)
//   gemma3_text: [model.]layers.{i}.self_attn.{q,k}_norm.weight
//                                                     layers.{i}.attn.{q,k}_norm.weight (1 + w)
//   [model.]layers.{i}.mlp.{gate,up,down}_proj.weight layers.{i}.ffn.{gate,up,down}.weight
//   [model.]norm.weight                               final_norm.weight                 (1 + w)
//   lm_head.weight                                    lm_head (untied; when tied it must equal
//                                                     embed_tokens)
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

// The feed-forward activation. transformers 4.x reads hidden_activation and,
// when it is absent, uses the tanh GELU whatever hidden_act says (the Gemma 1.0
// configs say "gelu" but the models were trained with the tanh form); Gemma 1
// in later releases reads hidden_act. So: hidden_activation when set, else
// hidden_act for gemma, else the tanh GELU.
fb::Activation ReadActivation(const ConfigView& config, bool gemma1, ModelSpec& spec) {
  std::string key = "hidden_activation";
  if (!config.Has(key) && gemma1 && config.Has("hidden_act")) key = "hidden_act";
  const std::string name = config.StringOr(key, "gelu_pytorch_tanh");
  spec.provenance.push_back({"activation", key + "=" + name});
  return ActivationFromConfig(config, key, "gelu_pytorch_tanh");
}

// A soft-capping value: Gemma2Config's default when the key is absent, none when null.
float ReadSoftcap(const ConfigView& config, const std::string& key, double fallback) {
  if (!config.Contains(key)) return static_cast<float>(fallback);
  if (!config.Has(key)) return 0.0f;
  const double cap = config.Number(key);
  if (!(cap > 0.0 && cap < 1e30)) config.Invalid(key, "a number > 0");
  return static_cast<float>(cap);
}

// gemma2's and gemma3_text's per-layer attention: layer_types when given, else
// the published default: layer i slides unless (i + 1) is a multiple of
// `pattern` (gemma2: 2, gemma3_text: sliding_window_pattern, default 6).
std::vector<bool> ReadSlidingLayers(const ConfigView& config, uint32_t layers, uint32_t pattern) {
  std::vector<bool> sliding(layers);
  if (const nlohmann::json* types = config.Find("layer_types")) {
    if (!types->is_array() || types->size() != layers) {
      config.Invalid("layer_types", Cat("a list of ", layers, " attention kinds"));
    }
    for (uint32_t i = 0; i < layers; ++i) {
      const nlohmann::json& t = (*types)[i];
      if (t == "sliding_attention") {
        sliding[i] = true;
      } else if (t != "full_attention") {
        config.Unsupported("layer_types", "supported: full_attention, sliding_attention");
      }
    }
    return sliding;
  }
  for (uint32_t i = 0; i < layers; ++i) sliding[i] = (i + 1) % pattern != 0;
  return sliding;
}

}  // namespace

ModelSpec ImportGemma(const ConfigView& config, const Checkpoint& checkpoint) {
  const std::string type = config.StringOr("model_type", "gemma");
  const bool gemma3 = type == "gemma3_text";
  const bool gemma2 = type == "gemma2" || gemma3;  // gemma3_text: gemma2's layer and more
  ModelSpec spec = NewSpec(config, type,
                           gemma3   ? fb::Family::Gemma3
                           : gemma2 ? fb::Family::Gemma2
                                    : fb::Family::Gemma,
                           fb::Structure::DecoderOnly);
  fb::ArchitectureT& a = spec.architecture;
  RejectTrue(config, "use_bidirectional_attention", "octet's Gemma decoders are causal");

  ReadRmsDecoderSizes(config, 0, 1e-6, a);
  a.activation = ReadActivation(config, !gemma2, spec);
  a.gated_ffn = true;
  a.position = fb::PositionKind::Rope;
  a.tied_embeddings = config.BoolOr("tie_word_embeddings", true);
  // The published code rounds sqrt(hidden_size) to the activations' dtype: float32 here.
  a.embedding_scale = static_cast<float>(std::sqrt(static_cast<double>(a.hidden_size)));
  a.sandwich_norms = gemma2;

  fb::AttentionT& att = *a.attention;
  ReadHeadCounts(config, att);
  att.head_dim = config.CountOr("head_dim", 256);
  att.qkv_bias = att.out_bias = config.BoolOr("attention_bias", false);
  if (gemma2) {
    const double scalar = config.NumberOr("query_pre_attn_scalar", 256.0);
    if (!(scalar > 0.0)) config.Invalid("query_pre_attn_scalar", "a number > 0");
    att.scale = static_cast<float>(1.0 / std::sqrt(scalar));
    // Gemma3TextConfig's defaults are null: no soft-capping.
    att.logit_softcap = ReadSoftcap(config, "attn_logit_softcapping", gemma3 ? 0.0 : 50.0);
    a.final_logit_softcap = ReadSoftcap(config, "final_logit_softcapping", gemma3 ? 0.0 : 30.0);
    // Gemma2Config's default window; null turns it off.
    att.sliding_window = !config.Contains("sliding_window") ? 4096
                         : config.Has("sliding_window")     ? config.Count("sliding_window")
                                                            : 0;
    if (att.sliding_window != 0) {
      att.sliding_layers = ReadSlidingLayers(
          config, a.num_layers, gemma3 ? config.CountOr("sliding_window_pattern", 6) : 2);
      bool any = false;
      for (bool s : att.sliding_layers) any = any || s;
      if (!any) {
        att.sliding_window = 0;
        att.sliding_layers.clear();
      }
    }
  }
  if (gemma3) {
    // transformers 5.x writes one rope_parameters table per layer kind: not read yet.
    if (config.Has("rope_parameters")) {
      config.Unsupported("rope_parameters", "octet reads gemma3_text's rope_theta, "
                                            "rope_scaling and rope_local_base_freq");
    }
    att.qk_norm = true;
    if (const nlohmann::json* scaling = config.Object("rope_scaling")) {
      const ConfigView s(*scaling, config.where() + ": rope_scaling");
      const std::string key = s.Has("rope_type") ? "rope_type" : "type";
      const std::string kind = s.StringOr(key, "default");
      if (kind != "default" && kind != "linear") {
        s.Unsupported(key, "supported for gemma3_text: default, linear");
      }
    }
  }
  a.rope = ReadRope(config, att.head_dim, spec);
  if (gemma3) {
    if (!config.Has("rope_theta")) a.rope->theta = 1000000.0f;  // Gemma3TextConfig's default
    // Global layers: rope_theta with rope_scaling; sliding ones: the local base, unscaled.
    if (!att.sliding_layers.empty()) {
      const double local = config.NumberOr("rope_local_base_freq", 10000.0);
      if (!(local > 1.0)) config.Invalid("rope_local_base_freq", "a number > 1");
      a.rope->local_theta = static_cast<float>(local);
    }
  }
  FinishArchitecture(config, spec);

  const std::string p = DetectPrefix(checkpoint, {"model.", ""}, {"embed_tokens.weight"});
  const uint32_t h = a.hidden_size, inter = a.intermediate_size;
  const uint32_t q_rows = att.num_heads * att.head_dim;
  const uint32_t kv_rows = att.num_kv_heads * att.head_dim;
  spec.Map("token_embedding", {a.vocab_size, h}, p + "embed_tokens.weight");
  const auto norm = [&](const std::string& to, const std::string& from) {
    spec.Map(to, {h}, from).add = 1.0f;
  };
  for (uint32_t i = 0; i < a.num_layers; ++i) {
    const std::string src = Cat(p, "layers.", i, ".");
    const std::string dst = Cat("layers.", i, ".");
    const auto linear = [&](const std::string& to, const std::string& from, uint32_t out,
                            uint32_t in, bool bias) {
      MapLinear(spec, dst, src, to, from, out, in, bias);
    };
    norm(dst + "attn_norm.weight", src + "input_layernorm.weight");
    linear("attn.q", "self_attn.q_proj", q_rows, h, att.qkv_bias);
    linear("attn.k", "self_attn.k_proj", kv_rows, h, att.qkv_bias);
    linear("attn.v", "self_attn.v_proj", kv_rows, h, att.qkv_bias);
    linear("attn.o", "self_attn.o_proj", h, q_rows, att.out_bias);
    if (att.qk_norm) {
      spec.Map(dst + "attn.q_norm.weight", {att.head_dim}, src + "self_attn.q_norm.weight").add = 1;
      spec.Map(dst + "attn.k_norm.weight", {att.head_dim}, src + "self_attn.k_norm.weight").add = 1;
    }
    if (gemma2) {
      norm(dst + "post_attn_norm.weight", src + "post_attention_layernorm.weight");
      norm(dst + "ffn_norm.weight", src + "pre_feedforward_layernorm.weight");
      norm(dst + "post_ffn_norm.weight", src + "post_feedforward_layernorm.weight");
    } else {
      norm(dst + "ffn_norm.weight", src + "post_attention_layernorm.weight");
    }
    linear("ffn.gate", "mlp.gate_proj", inter, h, false);
    linear("ffn.up", "mlp.up_proj", inter, h, false);
    linear("ffn.down", "mlp.down_proj", h, inter, false);
  }
  norm("final_norm.weight", p + "norm.weight");
  MapLmHead(spec, p);
  return spec;
}

}  // namespace convert
}  // namespace octet
