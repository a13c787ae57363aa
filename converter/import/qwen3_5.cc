// qwen3_5, qwen3_5_text, qwen3_next: Qwen3.5's language model (from the published
// Qwen3_5ForConditionalGeneration checkpoints, whose text_config and
// model.language_model.* tensors it takes, skipping the vision tower and the
// multi-token-prediction layer; or a text-only Qwen3_5ForCausalLM save) and
// Qwen3-Next's dense layout, as transformers' modeling_qwen3_5.py /
// modeling_qwen3_next.py define them.
//
// A pre-norm decoder whose norms scale by (1 + w) (folded into the stored
// weights) with a dense SwiGLU MLP; layer i is a Gated DeltaNet
// (TokenMixer.GatedDeltaNet, engine/mixer_gated_deltanet.cc) or gated full
// attention (Attention.output_gate: q_proj's rows hold each head's query then
// its gate; Q/K norms; partial RoPE over head_dim * partial_rotary_factor
// dimensions, rotate-half; text-only M-RoPE is plain RoPE), by layer_types or
// every full_attention_interval-th layer.
//
//   P = model.language_model. (the multimodal checkpoint), model. or none
//   P.embed_tokens.weight                          token_embedding
//   P.layers.{i}.input_layernorm.weight            layers.{i}.attn_norm.weight     (+1)
//   P.layers.{i}.post_attention_layernorm.weight   layers.{i}.ffn_norm.weight      (+1)
//   P.layers.{i}.mlp.{gate,up,down}_proj.weight    layers.{i}.ffn.{gate,up,down}.weight
//   P.layers.{i}.self_attn.q_proj.weight           layers.{i}.attn.q / attn.gate   (rows of
//                                                  each head: query, then gate)
//   P.layers.{i}.self_attn.{k,v,o}_proj.weight     layers.{i}.attn.{k,v,o}.weight
//   P.layers.{i}.self_attn.{q,k}_norm.weight       layers.{i}.attn.{q,k}_norm.weight (+1)
//   P.layers.{i}.linear_attn.in_proj_qkv.weight    layers.{i}.lin.in_qkv.weight
//   P.layers.{i}.linear_attn.in_proj_{z,b,a}.weight layers.{i}.lin.in_{z,b,a}.weight
//     (qwen3_next: in_proj_qkvz and in_proj_ba, grouped per key head, split by rows)
//   P.layers.{i}.linear_attn.conv1d.weight [C,1,K] layers.{i}.lin.conv.weight [C, K]
//   P.layers.{i}.linear_attn.{A_log,dt_bias}       layers.{i}.lin.{a_log,dt_bias}
//   P.layers.{i}.linear_attn.norm.weight           layers.{i}.lin.norm.weight (as stored)
//   P.layers.{i}.linear_attn.out_proj.weight       layers.{i}.lin.out.weight
//   P.norm.weight                                  final_norm.weight               (+1)
//   lm_head.weight                                 lm_head (untied)
#include <string>
#include <vector>

#include "import/common.h"
#include "import/error.h"
#include "import/importer.h"

namespace octet {
namespace convert {
namespace {

// Layer i is full attention (true) or a Gated DeltaNet (false).
std::vector<bool> ReadFullLayers(const ConfigView& c, uint32_t layers) {
  std::vector<bool> full(layers, false);
  if (const nlohmann::json* types = c.Find("layer_types")) {
    if (!types->is_array() || types->size() != layers) {
      c.Invalid("layer_types", Cat("a list of ", layers, " layer kinds"));
    }
    for (uint32_t i = 0; i < layers; ++i) {
      const nlohmann::json& t = (*types)[i];
      const std::string kind = t.is_string() ? t.get<std::string>() : std::string();
      if (kind == "full_attention") {
        full[i] = true;
      } else if (kind != "linear_attention") {
        c.Unsupported("layer_types", "supported: linear_attention, full_attention");
      }
    }
    return full;
  }
  const uint32_t every = c.CountOr("full_attention_interval", 4);
  if (every == 0) c.Invalid("full_attention_interval", "at least 1");
  for (uint32_t i = 0; i < layers; ++i) full[i] = (i + 1) % every == 0;
  return full;
}

// Rows [first + h * stride, first + h * stride + n) for h < count.
std::vector<uint32_t> StridedRows(uint32_t count, uint32_t stride, uint32_t first, uint32_t n) {
  std::vector<uint32_t> rows;
  for (uint32_t h = 0; h < count; ++h) {
    for (uint32_t r = 0; r < n; ++r) rows.push_back(h * stride + first + r);
  }
  return rows;
}

}  // namespace

ModelSpec ImportQwen35(const ConfigView& top, const Checkpoint& checkpoint) {
  const std::string type = top.StringOr("model_type", "qwen3_5_text");
  // The language model's keys: the wrapper's text_config.
  const nlohmann::json* nested = type == "qwen3_5" ? top.Object("text_config") : nullptr;
  if (type == "qwen3_5" && nested == nullptr) {
    top.Invalid("text_config", "the language model's settings (a Qwen3_5ForConditionalGeneration "
                               "config)");
  }
  const ConfigView config = nested != nullptr ? ConfigView(*nested, top.where() + ": text_config")
                                              : top;
  const bool next = type == "qwen3_next";
  ModelSpec spec = NewSpec(config, type, fb::Family::Qwen35, fb::Structure::DecoderOnly);
  fb::ArchitectureT& a = spec.architecture;
  if (next) {
    // Qwen3NextConfig is a mixture of experts unless num_experts is 0 or every
    // layer is in mlp_only_layers.
    if (!config.Has("num_experts")) {
      Fail(config.where(), ": num_experts is absent, which Qwen3NextConfig takes as a mixture of "
           "512 experts; octet runs Qwen3-Next's dense layout (num_experts 0)");
    }
    if (config.Number("num_experts") != 0.0) {
      config.Unsupported("num_experts", "octet runs Qwen3-Next's dense layout (num_experts 0); its "
                                        "mixture-of-experts layers are not supported");
    }
  } else if (config.Has("num_experts")) {
    config.Unsupported("num_experts", "octet runs the dense Qwen3.5 (qwen3_5_moe is another "
                                      "model_type)");
  }
  if (config.Contains("attn_output_gate") && !config.BoolOr("attn_output_gate", true)) {
    config.Unsupported("attn_output_gate", "transformers always builds the gate: true");
  }
  RejectTrue(config, "attention_bias", "the published Qwen3.5 and Qwen3-Next have none");
  ReadGatedRopeDecoder(config, 32768, 1e-6, a);
  a.tied_embeddings = top.BoolOr("tie_word_embeddings", config.BoolOr("tie_word_embeddings", false));
  fb::AttentionT& att = *a.attention;
  att.head_dim = ReadHeadDim(config, a, 256);
  att.qk_norm = true;
  att.output_gate = true;

  // RoPE: rope_parameters (theta, partial_rotary_factor; mrope_section is text-only plain
  // RoPE), else the old keys.
  double theta = config.NumberOr("rope_theta", 10000.0);
  double partial = config.NumberOr("partial_rotary_factor", 0.25);
  if (const nlohmann::json* params = config.Object("rope_parameters")) {
    const ConfigView p(*params, config.where() + ": rope_parameters");
    const std::string rope_type = p.StringOr("rope_type", "default");
    if (rope_type != "default") p.Unsupported("rope_type", "supported: default");
    theta = p.NumberOr("rope_theta", theta);
    partial = p.NumberOr("partial_rotary_factor", partial);
  } else if (config.Has("rope_scaling")) {
    config.Unsupported("rope_scaling", "octet reads the default RoPE of Qwen3.5");
  }
  if (!(theta > 1.0)) config.Invalid("rope_theta", "a number > 1");
  const uint32_t rotary = static_cast<uint32_t>(att.head_dim * partial);
  if (!(partial > 0.0 && partial <= 1.0) || rotary == 0 || rotary % 2 != 0) {
    config.Invalid("partial_rotary_factor", Cat("a factor giving an even rotary dimension of ",
                                                att.head_dim));
  }
  a.rope = std::make_unique<fb::RopeT>();
  a.rope->theta = static_cast<float>(theta);
  a.rope->rotary_dim = rotary == att.head_dim ? 0 : rotary;

  const std::vector<bool> full = ReadFullLayers(config, a.num_layers);
  bool any_linear = false;
  for (uint32_t i = 0; i < a.num_layers; ++i) {
    a.layer_mixers.push_back(full[i] ? fb::TokenMixer::Attention : fb::TokenMixer::GatedDeltaNet);
    any_linear = any_linear || !full[i];
  }
  uint32_t hk = 0, hv = 0, dk = 0, dv = 0, taps = 0;
  if (any_linear) {
    hk = config.Count("linear_num_key_heads");
    hv = config.Count("linear_num_value_heads");
    dk = config.Count("linear_key_head_dim");
    dv = config.Count("linear_value_head_dim");
    taps = config.CountOr("linear_conv_kernel_dim", 4);
    if (hv % hk != 0) {
      config.Invalid("linear_num_value_heads", Cat("a multiple of linear_num_key_heads = ", hk));
    }
    if (taps < 2 || taps > 64) config.Invalid("linear_conv_kernel_dim", "2 to 64 taps");
    a.linear_attention = std::make_unique<fb::LinearAttentionT>();
    a.linear_attention->key_heads = hk;
    a.linear_attention->value_heads = hv;
    a.linear_attention->key_dim = dk;
    a.linear_attention->value_dim = dv;
    a.linear_attention->conv_kernel = taps;
  }
  FinishArchitecture(config, spec);
  spec.provenance.push_back({"rope", Cat("theta ", theta, ", rotary dimensions ", rotary, " of ",
                                         att.head_dim)});

  const std::string p =
      DetectPrefix(checkpoint, {"model.language_model.", "model.", ""}, {"embed_tokens.weight"});
  const uint32_t h = a.hidden_size, inter = a.intermediate_size, hd = att.head_dim;
  const uint32_t q_rows = att.num_heads * hd, kv_rows = att.num_kv_heads * hd;
  const uint32_t key_dim = hk * dk, value_dim = hv * dv, channels = 2 * key_dim + value_dim;
  const auto norm = [&](const std::string& dst, const std::string& src, uint32_t n) {
    spec.Map(dst, {n}, src).add = 1.0f;  // zero-centred: x / rms(x) * (1 + w)
  };
  spec.Map("token_embedding", {a.vocab_size, h}, p + "embed_tokens.weight");
  for (uint32_t i = 0; i < a.num_layers; ++i) {
    const std::string src = Cat(p, "layers.", i, ".");
    const std::string dst = Cat("layers.", i, ".");
    norm(dst + "attn_norm.weight", src + "input_layernorm.weight", h);
    norm(dst + "ffn_norm.weight", src + "post_attention_layernorm.weight", h);
    MapLinear(spec, dst, src, "ffn.gate", "mlp.gate_proj", inter, h, false);
    MapLinear(spec, dst, src, "ffn.up", "mlp.up_proj", inter, h, false);
    MapLinear(spec, dst, src, "ffn.down", "mlp.down_proj", h, inter, false);
    if (full[i]) {
      // q_proj: per head, hd rows of query then hd rows of gate.
      const std::vector<uint64_t> q_shape = {2ull * q_rows, h};
      TensorMapping& q = spec.Map(dst + "attn.q.weight", {q_rows, h}, src + "self_attn.q_proj.weight");
      q.source_shape = q_shape;
      q.rows = StridedRows(att.num_heads, 2 * hd, 0, hd);
      TensorMapping& g = spec.Map(dst + "attn.gate.weight", {q_rows, h},
                                  src + "self_attn.q_proj.weight");
      g.source_shape = q_shape;
      g.rows = StridedRows(att.num_heads, 2 * hd, hd, hd);
      MapLinear(spec, dst, src, "attn.k", "self_attn.k_proj", kv_rows, h, false);
      MapLinear(spec, dst, src, "attn.v", "self_attn.v_proj", kv_rows, h, false);
      MapLinear(spec, dst, src, "attn.o", "self_attn.o_proj", h, q_rows, false);
      norm(dst + "attn.q_norm.weight", src + "self_attn.q_norm.weight", hd);
      norm(dst + "attn.k_norm.weight", src + "self_attn.k_norm.weight", hd);
      continue;
    }
    const std::string lin = src + "linear_attn.";
    if (next) {
      // in_proj_qkvz: per key head g, q_g [dk] | k_g [dk] | v of its r value heads | z of them.
      const uint32_t r = hv / hk, block = 2 * dk + 2 * r * dv;
      const std::vector<uint64_t> qkvz_shape = {static_cast<uint64_t>(hk) * block, h};
      TensorMapping& qkv = spec.Map(dst + "lin.in_qkv.weight", {channels, h},
                                    lin + "in_proj_qkvz.weight");
      qkv.source_shape = qkvz_shape;
      for (uint32_t part : {0u, 1u}) {  // all q heads, then all k heads
        const std::vector<uint32_t> rows = StridedRows(hk, block, part * dk, dk);
        qkv.rows.insert(qkv.rows.end(), rows.begin(), rows.end());
      }
      const std::vector<uint32_t> v_rows = StridedRows(hk, block, 2 * dk, r * dv);
      qkv.rows.insert(qkv.rows.end(), v_rows.begin(), v_rows.end());
      TensorMapping& zm = spec.Map(dst + "lin.in_z.weight", {value_dim, h},
                                   lin + "in_proj_qkvz.weight");
      zm.source_shape = qkvz_shape;
      zm.rows = StridedRows(hk, block, 2 * dk + r * dv, r * dv);
      // in_proj_ba: per key head, b of its r value heads, then a of them.
      const std::vector<uint64_t> ba_shape = {2ull * hv, h};
      TensorMapping& bm = spec.Map(dst + "lin.in_b.weight", {hv, h}, lin + "in_proj_ba.weight");
      bm.source_shape = ba_shape;
      bm.rows = StridedRows(hk, 2 * r, 0, r);
      TensorMapping& am = spec.Map(dst + "lin.in_a.weight", {hv, h}, lin + "in_proj_ba.weight");
      am.source_shape = ba_shape;
      am.rows = StridedRows(hk, 2 * r, r, r);
    } else {
      spec.Map(dst + "lin.in_qkv.weight", {channels, h}, lin + "in_proj_qkv.weight");
      spec.Map(dst + "lin.in_z.weight", {value_dim, h}, lin + "in_proj_z.weight");
      spec.Map(dst + "lin.in_b.weight", {hv, h}, lin + "in_proj_b.weight");
      spec.Map(dst + "lin.in_a.weight", {hv, h}, lin + "in_proj_a.weight");
    }
    TensorMapping& conv = spec.Map(dst + "lin.conv.weight", {channels, taps}, lin + "conv1d.weight");
    conv.source_shape = {channels, 1, taps};  // Conv1d's [out, in / groups, kernel]
    spec.Map(dst + "lin.a_log", {hv}, lin + "A_log");
    spec.Map(dst + "lin.dt_bias", {hv}, lin + "dt_bias");
    spec.Map(dst + "lin.norm.weight", {dv}, lin + "norm.weight");
    spec.Map(dst + "lin.out.weight", {h, value_dim}, lin + "out_proj.weight");
  }
  norm("final_norm.weight", p + "norm.weight", h);
  MapLmHeadOrTied(spec, p + "embed_tokens.weight");
  // The vision tower and the multi-token-prediction layer are not the text model's.
  size_t vision = 0, mtp = 0;
  for (const Tensor* t : checkpoint.All()) {
    if (t->name.rfind("model.visual.", 0) == 0) ++vision;
    if (t->name.rfind("mtp.", 0) == 0 || t->name.rfind("model.mtp.", 0) == 0) ++mtp;
  }
  if (vision > 0) {
    const std::string what = Cat("the vision tower (", vision, " tensors, model.visual.*)");
    spec.provenance.push_back({"skipped", what});
    spec.warnings.push_back("skipped " + what + ": octet converts the text model");
  }
  if (mtp > 0) {
    const std::string what = Cat("the multi-token-prediction layer (", mtp, " tensors, mtp.*)");
    spec.provenance.push_back({"skipped", what});
    spec.warnings.push_back("skipped " + what);
  }
  spec.ignore = [](const std::string& name) {
    return name.rfind("model.visual.", 0) == 0 || name.rfind("mtp.", 0) == 0 ||
           name.rfind("model.mtp.", 0) == 0;
  };
  return spec;
}

}  // namespace convert
}  // namespace octet
