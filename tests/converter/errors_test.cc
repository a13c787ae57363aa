// Malformed and unsupported checkpoints: each stops the conversion with one
// line that names the tensor, file or config field, and leaves no output file.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <random>

#include "convert.h"
#include "converter/hf_fixtures.h"
#include "converter/test_util.h"

namespace octet {
namespace {

using testing::ErrorOf;
using testing::Has;
using testing::HfCheckpoint;
using testing::HfOptions;
using testing::MakeHfCheckpoint;
using testing::TempDir;

std::string ConvertError(const HfCheckpoint& c) {
  TempDir dir;
  c.Write(dir.path());
  const std::filesystem::path file = dir.path() / "model.octet";
  const std::string e =
      ErrorOf([&] { convert::ConvertCheckpoint(dir.path(), file, testing::Fp32Options()); });
  CHECK_FALSE(std::filesystem::exists(file));
  // No partial file either.
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    CHECK_MESSAGE(entry.path().filename().string().find("model.octet") == std::string::npos,
                  entry.path().filename().string());
  }
  return e;
}

HfCheckpoint Llama() {
  HfOptions o;
  o.hidden = 32;
  o.intermediate = 64;
  return MakeHfCheckpoint("llama", o);
}

TEST_CASE("a missing tensor names the checkpoint name, the canonical name and the shape") {
  HfCheckpoint c = Llama();
  c.Remove("model.layers.1.mlp.up_proj.weight");
  CHECK(ConvertError(c) ==
        "llama: missing tensor model.layers.1.mlp.up_proj.weight (-> layers.1.ffn.up.weight) "
        "[64, 32]");
  HfCheckpoint t = MakeHfCheckpoint("t5", HfOptions());
  t.Remove("decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight");
  CHECK(Has(ConvertError(t),
            "t5: missing tensor decoder.block.0.layer.0.SelfAttention."
            "relative_attention_bias.weight (-> decoder.relative_bias) [8, 4]"));
  HfCheckpoint g = MakeHfCheckpoint("gpt2", HfOptions());
  g.Remove("transformer.h.0.attn.c_attn.bias");
  CHECK(Has(ConvertError(g),
            "gpt2: missing tensor transformer.h.0.attn.c_attn.bias "
            "(-> layers.0.attn.q.bias) [96]"));
}

TEST_CASE("a wrong shape names both shapes") {
  HfCheckpoint c = Llama();
  c.Find("model.layers.0.self_attn.q_proj.weight")->shape = {16, 64};
  CHECK(ConvertError(c) ==
        "llama: tensor model.layers.0.self_attn.q_proj.weight (-> layers.0.attn.q.weight) is "
        "[16, 64], expected [32, 32]");
  HfCheckpoint g = MakeHfCheckpoint("gpt2", HfOptions());
  g.Find("transformer.h.1.attn.c_attn.weight")->shape = {96, 32};  // stored [out, in]: wrong
  CHECK(Has(ConvertError(g), "is [96, 32], expected [32, 96]"));
}

TEST_CASE("an unknown tensor in the checkpoint is named, not dropped") {
  HfCheckpoint c = Llama();
  c.Add("model.layers.0.self_attn.q_norm.weight", {8});
  CHECK(ConvertError(c) ==
        "llama: the checkpoint has tensors that are not part of the llama architecture: "
        "model.layers.0.self_attn.q_norm.weight");
  HfCheckpoint b = MakeHfCheckpoint("bert", HfOptions());
  b.Add("classifier.weight", {2, 32});
  b.Add("classifier.bias", {2});
  CHECK(Has(ConvertError(b), "classifier.bias, classifier.weight"));
  HfCheckpoint t = MakeHfCheckpoint("t5", HfOptions());
  t.Add("encoder.block.1.layer.0.SelfAttention.relative_attention_bias.weight", {8, 4});
  CHECK(Has(ConvertError(t), "encoder.block.1.layer.0.SelfAttention.relative_attention_bias"));
  // A layer beyond num_hidden_layers.
  HfCheckpoint extra = Llama();
  extra.config["num_hidden_layers"] = 1;
  CHECK(Has(ConvertError(extra), "model.layers.1."));
}

TEST_CASE("a stored non-float weight is refused by name") {
  HfCheckpoint c = Llama();
  c.Remove("model.norm.weight");
  c.raw_extras.push_back({"model.norm.weight", "I32", {32}, std::vector<uint8_t>(128, 0)});
  CHECK(ConvertError(c) ==
        "llama: tensor model.norm.weight in model.safetensors is I32; octet-convert reads F32, "
        "F16 and BF16 tensors");
}

TEST_CASE("config.json: bad JSON, missing or unknown model_type, missing and invalid fields") {
  TempDir dir;
  Llama().Write(dir.path());
  const auto error_with_config = [&](const std::string& text) {
    testing::WriteText(dir.path() / "config.json", text);
    return ErrorOf([&] {
      convert::ConvertCheckpoint(dir.path(), dir.path() / "m.octet", testing::Fp32Options());
    });
  };
  std::string e = error_with_config("{\"model_type\": \"llama\",");
  CHECK(Has(e, "config.json is not valid JSON: "));
  CHECK(Has(e, "line 1"));
  CHECK(Has(error_with_config("[]"), "config.json is not a JSON object"));
  CHECK(Has(error_with_config("{}"), "config.json has no model_type"));
  CHECK(error_with_config("{\"model_type\": \"bart\"}") ==
        "config.json: model_type 'bart' is not supported (supported: bert, distilbert, roberta, "
        "xlm-roberta, gpt2, llama, qwen2, qwen3, mistral, phi3, gemma, gemma2, gemma3_text, "
        "marian, t5, modernbert, lfm2, qwen3_5, qwen3_5_text, qwen3_next, rwkv)");
  HfCheckpoint c = Llama();
  c.config.erase("hidden_size");
  CHECK(ConvertError(c) == "config.json: hidden_size is missing (a positive integer)");
  c = Llama();
  c.config["num_hidden_layers"] = "two";
  CHECK(ConvertError(c) == "config.json: num_hidden_layers = \"two\" must be a positive integer");
  c = Llama();
  c.config["num_key_value_heads"] = 3;
  CHECK(Has(ConvertError(c), "num_key_value_heads = 3 must be a divisor of num_attention_heads 4"));
  c = Llama();
  c.config["rms_norm_eps"] = "small";
  CHECK(Has(ConvertError(c), "rms_norm_eps = \"small\" must be a finite number"));
}

TEST_CASE("unsupported config values name the field and the value") {
  HfCheckpoint c = Llama();
  c.config["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  CHECK(ConvertError(c) ==
        "config.json: rope_scaling: rope_type = \"yarn\" is not supported (supported: default, "
        "linear, llama3)");
  c = Llama();
  c.config["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}};
  CHECK(Has(ConvertError(c), "config.json: rope_scaling: low_freq_factor is missing"));
  c = Llama();
  c.config["hidden_act"] = "quick_gelu";
  CHECK(Has(ConvertError(c), "config.json: hidden_act = \"quick_gelu\" is not supported"));
  c = Llama();
  c.config["alibi"] = true;
  CHECK(ConvertError(c) == "config.json: alibi = true is not supported (not part of llama)");
  c = Llama();
  c.config["mlp_bias"] = true;
  CHECK(Has(ConvertError(c), "config.json: mlp_bias = true is not supported"));

  HfCheckpoint g = MakeHfCheckpoint("gpt2", HfOptions());
  g.config["scale_attn_by_inverse_layer_idx"] = true;
  CHECK(
      Has(ConvertError(g), "config.json: scale_attn_by_inverse_layer_idx = true is not supported"));
  HfCheckpoint b = MakeHfCheckpoint("bert", HfOptions());
  b.config["position_embedding_type"] = "relative_key";
  CHECK(Has(ConvertError(b),
            "config.json: position_embedding_type = \"relative_key\" is not supported"));
  HfCheckpoint q = MakeHfCheckpoint("qwen2", HfOptions());
  q.config["use_sliding_window"] = true;
  q.config["sliding_window"] = 8;
  q.config["max_window_layers"] = 1;
  CHECK(Has(ConvertError(q), "config.json: max_window_layers = 1 is not supported"));

  // qwen3: the same sliding-window rules, and llama's rope_scaling types.
  HfCheckpoint q3 = MakeHfCheckpoint("qwen3", HfOptions());
  q3.config["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  CHECK(ConvertError(q3) ==
        "config.json: rope_scaling: rope_type = \"yarn\" is not supported (supported: default, "
        "linear, llama3)");
  q3 = MakeHfCheckpoint("qwen3", HfOptions());
  q3.config["use_sliding_window"] = true;
  q3.config["sliding_window"] = 8;
  q3.config["max_window_layers"] = 1;
  CHECK(Has(ConvertError(q3), "config.json: max_window_layers = 1 is not supported"));
  q3 = MakeHfCheckpoint("qwen3", HfOptions());
  q3.config["layer_types"] = {"full_attention", "sliding_attention"};
  q3.config["sliding_window"] = 8;
  CHECK(Has(ConvertError(q3), "config.json: layer_types = "));
  CHECK(Has(ConvertError(q3), "octet needs the same attention in every layer"));
  q3 = MakeHfCheckpoint("qwen3", HfOptions());
  q3.config["mlp_bias"] = true;
  CHECK(Has(ConvertError(q3), "config.json: mlp_bias = true is not supported"));
  // phi3: rope_scaling types other than su/longrope, factor lists of the wrong length.
  HfCheckpoint p3 = MakeHfCheckpoint("phi3", HfOptions());
  p3.config["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}};
  CHECK(ConvertError(p3) ==
        "config.json: rope_scaling: type = \"yarn\" is not supported (supported: default, su, "
        "longrope)");
  p3.config["rope_scaling"] = {{"type", "longrope"}, {"short_factor", {1.0}},
                               {"long_factor", {1.0, 2.0}}};
  CHECK(Has(ConvertError(p3), "config.json: rope_scaling: short_factor = [1.0] must be a list "
                              "of 2 factors"));
  p3.config["rope_scaling"] = {{"type", "longrope"}, {"short_factor", {1.0, 2.0}}};
  CHECK(Has(ConvertError(p3), "config.json: rope_scaling: long_factor is missing"));
  p3.config["rope_scaling"] = {{"type", "longrope"}, {"short_factor", {1.0, -2.0}},
                               {"long_factor", {1.0, 2.0}}};
  CHECK(Has(ConvertError(p3), "short_factor = [1.0,-2.0] must be a list of finite factors > 0"));
  p3 = MakeHfCheckpoint("phi3", HfOptions());
  p3.config["partial_rotary_factor"] = 0.1;  // int(8 x 0.1) = 0 dimensions
  CHECK(Has(ConvertError(p3), "config.json: partial_rotary_factor = 0.1 must be a factor giving"));
  p3 = MakeHfCheckpoint("phi3", HfOptions());
  p3.Rename("model.layers.0.mlp.gate_up_proj.weight", "model.layers.0.mlp.up_proj.weight");
  CHECK(Has(ConvertError(p3), "missing tensor model.layers.0.mlp.gate_up_proj.weight"));

  q3 = MakeHfCheckpoint("qwen3", HfOptions());
  q3.Remove("model.layers.1.self_attn.k_norm.weight");
  CHECK(Has(ConvertError(q3), "model.layers.1.self_attn.k_norm.weight"));
}

TEST_CASE("gemma, gemma2, gemma3_text: unsupported config values name the field and the value") {
  HfCheckpoint g = MakeHfCheckpoint("gemma", HfOptions());
  g.config["hidden_activation"] = "quick_gelu";
  CHECK(Has(ConvertError(g), "config.json: hidden_activation = \"quick_gelu\" is not supported"));
  g = MakeHfCheckpoint("gemma", HfOptions());
  g.config.erase("hidden_activation");
  g.config["hidden_act"] = "gelu_10";
  CHECK(Has(ConvertError(g), "config.json: hidden_act = \"gelu_10\" is not supported"));
  g = MakeHfCheckpoint("gemma", HfOptions());
  g.config["use_bidirectional_attention"] = true;
  CHECK(Has(ConvertError(g), "config.json: use_bidirectional_attention = true is not supported"));
  g = MakeHfCheckpoint("gemma", HfOptions());
  g.config["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  CHECK(Has(ConvertError(g), "rope_type = \"yarn\" is not supported"));

  HfCheckpoint g2 = MakeHfCheckpoint("gemma2", HfOptions());
  g2.config["layer_types"] = {"sliding_attention", "chunked_attention"};
  CHECK(Has(ConvertError(g2), "config.json: layer_types = "));
  CHECK(Has(ConvertError(g2), "is not supported (supported: full_attention, sliding_attention)"));
  g2.config["layer_types"] = {"sliding_attention"};
  CHECK(Has(ConvertError(g2), "layer_types = [\"sliding_attention\"] must be a list of 2"));
  g2 = MakeHfCheckpoint("gemma2", HfOptions());
  g2.config["attn_logit_softcapping"] = -1.0;
  CHECK(Has(ConvertError(g2), "attn_logit_softcapping = -1"));
  HfCheckpoint g3 = MakeHfCheckpoint("gemma3_text", HfOptions());
  g3.config["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}};
  CHECK(ConvertError(g3) == "config.json: rope_scaling: rope_type = \"llama3\" is not supported "
                            "(supported for gemma3_text: default, linear)");
  g3 = MakeHfCheckpoint("gemma3_text", HfOptions());
  g3.config["rope_parameters"] = {{"full_attention", {{"rope_type", "default"}}}};
  CHECK(Has(ConvertError(g3), "config.json: rope_parameters = "));
  g3 = MakeHfCheckpoint("gemma3_text", HfOptions());
  g3.config["use_bidirectional_attention"] = true;
  CHECK(Has(ConvertError(g3), "use_bidirectional_attention = true is not supported"));
  g3 = MakeHfCheckpoint("gemma3_text", HfOptions());
  g3.Remove("model.layers.0.self_attn.k_norm.weight");
  CHECK(Has(ConvertError(g3), "missing tensor model.layers.0.self_attn.k_norm.weight"));

  g2 = MakeHfCheckpoint("gemma2", HfOptions());
  g2.Remove("model.layers.1.post_feedforward_layernorm.weight");
  CHECK(Has(ConvertError(g2), "missing tensor model.layers.1.post_feedforward_layernorm.weight"));
}

TEST_CASE("modernbert: unsupported config values name the field and the value") {
  HfOptions o;
  o.layers = 3;
  HfCheckpoint m = MakeHfCheckpoint("modernbert", o);
  m.config["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  CHECK(Has(ConvertError(m), "config.json: rope_scaling = "));
  m = MakeHfCheckpoint("modernbert", o);
  m.config["mlp_bias"] = true;
  CHECK(Has(ConvertError(m), "config.json: mlp_bias = true is not supported"));
  m = MakeHfCheckpoint("modernbert", o);
  m.config["is_causal"] = true;
  CHECK(Has(ConvertError(m), "config.json: is_causal = true is not supported"));
  m = MakeHfCheckpoint("modernbert", o);
  m.config["local_attention"] = 1;
  CHECK(Has(ConvertError(m), "config.json: local_attention = 1"));
  // layer_types that disagree with global_attn_every_n_layers (3: layer 0 global, 1 and 2 local).
  m = MakeHfCheckpoint("modernbert", o);
  m.config["layer_types"] = {"full_attention", "full_attention", "sliding_attention"};
  CHECK(Has(ConvertError(m), "layer 1 disagrees with global_attn_every_n_layers = 3"));
  m.config["layer_types"] = {"full_attention", "sliding_attention", "chunked_attention"};
  CHECK(Has(ConvertError(m), "(supported: full_attention, sliding_attention)"));
  m = MakeHfCheckpoint("modernbert", o);
  m.config["rope_parameters"] = {{"sliding_attention", {{"rope_type", "linear"}, {"factor", 2.0}}}};
  CHECK(Has(ConvertError(m), "rope_type = \"linear\" is not supported (supported for modernbert: "
                             "default)"));
  // Layer 0 has no attn_norm; the others must.
  m = MakeHfCheckpoint("modernbert", o);
  m.Remove("model.layers.2.attn_norm.weight");
  CHECK(Has(ConvertError(m), "missing tensor model.layers.2.attn_norm.weight"));
  m = MakeHfCheckpoint("modernbert", o);
  m.Add("model.layers.0.attn_norm.weight", {o.hidden});
  CHECK(Has(ConvertError(m), "model.layers.0.attn_norm.weight"));
}

TEST_CASE("lfm2: config values and tensors that do not fit name the field and the value") {
  HfOptions o;
  o.layers = 3;
  o.kv_heads = 2;
  HfCheckpoint m = MakeHfCheckpoint("lfm2", o);
  m.config["layer_types"] = {"conv", "sliding_attention", "conv"};
  CHECK(Has(ConvertError(m), "(supported for lfm2: full_attention, conv)"));
  m.config["layer_types"] = {"conv", "full_attention"};
  CHECK(Has(ConvertError(m), "config.json: layer_types"));
  // The legacy key: attention layers by index.
  m = MakeHfCheckpoint("lfm2", o);
  m.config.erase("layer_types");
  m.config["full_attn_idxs"] = {1, 3};
  CHECK(Has(ConvertError(m), "config.json: full_attn_idxs"));
  // A kernel the runtime does not run.
  m = MakeHfCheckpoint("lfm2", o);
  m.config["conv_L_cache"] = 65;
  CHECK(Has(ConvertError(m), "config.json: conv_L_cache = 65"));
  // The feed-forward width from w1 against what config.json computes (auto-adjusted: 2/3 of
  // 48 = 32, not the 48 rows of w1).
  m = MakeHfCheckpoint("lfm2", o);
  m.config["block_auto_adjust_ff_dim"] = true;
  m.config["block_ffn_dim_multiplier"] = nullptr;
  CHECK(Has(ConvertError(m), "has 48 rows but config.json's feed-forward settings"));
  CHECK(Has(ConvertError(m), "give 32"));
  // A conv layer without its convolution, an attention layer without its Q norm.
  m = MakeHfCheckpoint("lfm2", o);
  m.Remove("model.layers.2.conv.conv.weight");
  CHECK(Has(ConvertError(m), "missing tensor model.layers.2.conv.conv.weight"));
  m = MakeHfCheckpoint("lfm2", o);
  m.Remove("model.layers.1.self_attn.q_layernorm.weight");
  CHECK(Has(ConvertError(m), "missing tensor model.layers.1.self_attn.q_layernorm.weight"));
}

TEST_CASE("rwkv: config values and tensors that do not fit name the field and the value") {
  HfOptions o;
  o.layers = 2;
  HfCheckpoint m = MakeHfCheckpoint("rwkv", o);
  // A time mix narrower than the stream.
  m.config["attention_hidden_size"] = 16;
  CHECK(Has(ConvertError(m), "config.json: attention_hidden_size = 16 is not supported"));
  CHECK(Has(ConvertError(m), "as wide as the stream: hidden_size 32"));
  m = MakeHfCheckpoint("rwkv", o);
  m.config["rescale_every"] = 1.5;
  CHECK(Has(ConvertError(m), "config.json: rescale_every"));
  m.config["rescale_every"] = "six";
  CHECK(Has(ConvertError(m), "config.json: rescale_every"));
  m = MakeHfCheckpoint("rwkv", o);
  m.config["layer_norm_epsilon"] = 0;
  CHECK(Has(ConvertError(m), "config.json: layer_norm_epsilon"));
  // An intermediate_size that the key matrix does not have.
  m = MakeHfCheckpoint("rwkv", o);
  m.config["intermediate_size"] = 64;
  CHECK(Has(ConvertError(m), "tensor rwkv.blocks.0.feed_forward.key.weight"));
  CHECK(Has(ConvertError(m), "expected [64, 32]"));
  // Missing tensors: a decay, the embeddings' norm, the head of an untied model.
  m = MakeHfCheckpoint("rwkv", o);
  m.Remove("rwkv.blocks.1.attention.time_decay");
  CHECK(Has(ConvertError(m), "missing tensor rwkv.blocks.1.attention.time_decay"));
  m = MakeHfCheckpoint("rwkv", o);
  m.Remove("rwkv.blocks.0.pre_ln.bias");
  CHECK(Has(ConvertError(m), "missing tensor rwkv.blocks.0.pre_ln.bias"));
  m = MakeHfCheckpoint("rwkv", o);
  m.Remove("head.weight");
  CHECK(Has(ConvertError(m), "missing tensor head.weight"));
  // A pre_ln in another block is not part of RWKV-4.
  m = MakeHfCheckpoint("rwkv", o);
  m.Add("rwkv.blocks.1.pre_ln.weight", {o.hidden});
  CHECK(Has(ConvertError(m), "rwkv.blocks.1.pre_ln.weight"));
  // A rescaling whose epsilons leave float range.
  o.layers = 3;
  m = MakeHfCheckpoint("rwkv", o);
  m.config["layer_norm_epsilon"] = 1e38;
  CHECK(Has(ConvertError(m), "beyond float range"));
}

TEST_CASE("qwen3_5, qwen3_next: what octet does not run is named") {
  HfOptions o;
  o.layers = 2;
  o.kv_heads = 2;
  HfCheckpoint m = MakeHfCheckpoint("qwen3_5_text", o);
  m.config["layer_types"] = {"linear_attention", "sliding_attention"};
  CHECK(Has(ConvertError(m), "(supported: linear_attention, full_attention)"));
  m = MakeHfCheckpoint("qwen3_5_text", o);
  m.config["linear_num_value_heads"] = 3;
  CHECK(Has(ConvertError(m), "config.json: linear_num_value_heads = 3"));
  m = MakeHfCheckpoint("qwen3_5_text", o);
  m.config["attn_output_gate"] = false;
  CHECK(Has(ConvertError(m), "config.json: attn_output_gate = false is not supported"));
  m = MakeHfCheckpoint("qwen3_5_text", o);
  m.config["rope_parameters"]["rope_type"] = "yarn";
  CHECK(Has(ConvertError(m), "rope_type = \"yarn\" is not supported"));
  // Qwen3-Next is a mixture of experts unless num_experts is 0.
  m = MakeHfCheckpoint("qwen3_next", o);
  m.config.erase("num_experts");
  CHECK(Has(ConvertError(m), "num_experts is absent, which Qwen3NextConfig takes as a mixture"));
  m.config["num_experts"] = 64;
  CHECK(Has(ConvertError(m), "config.json: num_experts = 64 is not supported"));
  // The wrapper without its language model's settings.
  m = MakeHfCheckpoint("qwen3_5", o);
  m.config.erase("text_config");
  CHECK(Has(ConvertError(m), "config.json: text_config"));
  // A Gated DeltaNet without its conv.
  m = MakeHfCheckpoint("qwen3_5_text", o);
  m.Remove("model.layers.0.linear_attn.conv1d.weight");
  CHECK(Has(ConvertError(m), "missing tensor model.layers.0.linear_attn.conv1d.weight"));
}

TEST_CASE("token ids outside the vocabulary are dropped with a warning") {
  HfCheckpoint c = MakeHfCheckpoint("gpt2", HfOptions());
  c.config["bos_token_id"] = 50256;
  TempDir dir;
  c.Write(dir.path());
  const convert::ConvertResult r =
      convert::ConvertCheckpoint(dir.path(), dir.path() / "m.octet", testing::Fp32Options());
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0] == "config.json: bos_token_id 50256 is outside the vocabulary (64); dropped");
}

TEST_CASE("a tied head that differs from the embedding is refused") {
  HfOptions o;
  o.tied = true;
  HfCheckpoint c = MakeHfCheckpoint("llama", o);
  c.AddCopy("lm_head.weight", "model.embed_tokens.weight").values[0] += 0.25f;
  CHECK(ConvertError(c) ==
        "llama: tensor lm_head.weight differs from model.embed_tokens.weight (config.json ties "
        "the head to the embedding: tie_word_embeddings)");
}

TEST_CASE("a truncated safetensors file names the file") {
  TempDir dir;
  Llama().Write(dir.path());
  const std::filesystem::path st = dir.path() / "model.safetensors";
  std::filesystem::resize_file(st, std::filesystem::file_size(st) - 100);
  const std::string e = ErrorOf([&] {
    convert::ConvertCheckpoint(dir.path(), dir.path() / "m.octet", testing::Fp32Options());
  });
  CHECK(Has(e, "model.safetensors is truncated or corrupt: tensor '"));
}

TEST_CASE("the output is replaced only by a complete model") {
  TempDir dir;
  HfCheckpoint c = Llama();
  c.Write(dir.path());
  const std::filesystem::path out = dir.path() / "m.octet";
  testing::WriteText(out, "old");
  convert::ConvertCheckpoint(dir.path(), out, testing::Fp32Options());
  CHECK(std::filesystem::file_size(out) > 1000);
  c.Remove("model.norm.weight");
  c.Write(dir.path());
  testing::WriteText(out, "old");
  ErrorOf([&] { convert::ConvertCheckpoint(dir.path(), out, testing::Fp32Options()); });
  CHECK(std::filesystem::file_size(out) == 3);  // untouched
}

// Deterministic corruption of a valid checkpoint: every outcome is a
// successful conversion or a convert::Error, never a crash (run under ASan).
TEST_CASE("corrupted safetensors and config.json files fail cleanly") {
  HfOptions o;
  o.layers = 1;
  const HfCheckpoint c = MakeHfCheckpoint("gpt2", o);
  TempDir dir;
  c.Write(dir.path());
  const std::filesystem::path st = dir.path() / "model.safetensors";
  const std::filesystem::path config = dir.path() / "config.json";
  const auto read = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  };
  const std::vector<uint8_t> good_st = read(st);
  const std::vector<uint8_t> good_config = read(config);
  uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = (header << 8) | good_st[i];
  std::mt19937 rng(7);
  int failures = 0;
  for (int iteration = 0; iteration < 400; ++iteration) {
    std::vector<uint8_t> s = good_st, j = good_config;
    std::vector<uint8_t>& target = iteration % 4 == 3 ? j : s;
    const size_t span = &target == &s ? static_cast<size_t>(8 + header) : target.size();
    switch (rng() % 3) {
      case 0:  // overwrite a few bytes with digits, quotes, brackets or noise
        for (int k = 0; k < 3; ++k) {
          const char pool[] = "0123456789\"[]{},:-eE.x\x01\xff";
          target[rng() % span] = static_cast<uint8_t>(pool[rng() % (sizeof(pool) - 1)]);
        }
        break;
      case 1:  // truncate
        target.resize(rng() % target.size());
        break;
      default:  // duplicate a run of bytes
      {
        const size_t at = rng() % span, n = 1 + rng() % 16;
        const std::vector<uint8_t> run(
            target.begin() + static_cast<long>(at),
            target.begin() + static_cast<long>(std::min(at + n, target.size())));
        target.insert(target.begin() + static_cast<long>(at), run.begin(), run.end());
      } break;
    }
    testing::WriteFile(st, s);
    testing::WriteFile(config, j);
    try {
      convert::ConvertCheckpoint(dir.path(), dir.path() / "m.octet", testing::Fp32Options());
    } catch (const convert::Error& e) {
      ++failures;
      REQUIRE(std::string(e.what()).find('\n') == std::string::npos);
    }
  }
  CHECK(failures > 300);
}

}  // namespace
}  // namespace octet
