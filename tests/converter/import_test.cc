// Each importer end to end: a synthetic Hugging Face checkpoint is converted
// with the real pipeline, loaded with the runtime's loader, and its
// architecture and tensors compared with the source (transposes, splits and
// F16/BF16 widening exact to the bit).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "convert.h"
#include "converter/hf_fixtures.h"
#include "converter/test_util.h"
#include "format/model.h"
#include "quantize/report.h"

namespace octet {
namespace {

using testing::ErrorOf;
using testing::Has;
using testing::HfCheckpoint;
using testing::HfOptions;
using testing::MakeHfCheckpoint;
using testing::TempDir;

// A converted model that lives as long as its directory.
struct Converted {
  TempDir dir;
  Model model;
  convert::ConvertResult result;
};

// Writes `c` as `dtype` in `shards` files, converts it and loads the result.
std::unique_ptr<Converted> Convert(const HfCheckpoint& c, const std::string& dtype = "F32",
                                   int shards = 1) {
  auto out = std::make_unique<Converted>();
  const std::filesystem::path src = out->dir.path() / "tiny-checkpoint";
  std::filesystem::create_directory(src);
  c.Write(src, dtype, shards);
  const std::filesystem::path file = out->dir.path() / "model.octet";
  out->result = convert::ConvertCheckpoint(src, file, testing::Fp32Options());
  Result<Model> loaded = Model::Load(file.c_str());
  REQUIRE_MESSAGE(loaded.ok(), loaded.status().message());
  out->model = std::move(loaded).value();
  return out;
}

// The conversion's one-line error.
std::string ConvertError(const HfCheckpoint& c, const std::string& dtype = "F32") {
  TempDir dir;
  c.Write(dir.path(), dtype);
  const std::filesystem::path file = dir.path() / "model.octet";
  const std::string e =
      ErrorOf([&] { convert::ConvertCheckpoint(dir.path(), file, testing::Fp32Options()); });
  CHECK_FALSE(std::filesystem::exists(file));
  return e;
}

std::vector<float> Values(const Model& m, const std::string& name) {
  const TensorView* t = m.Find(name.c_str());
  REQUIRE_MESSAGE(t != nullptr, "missing " << name);
  REQUIRE(t->dtype == fb::DType::F32);
  std::vector<float> v(t->numel);
  std::memcpy(v.data(), t->data, t->size);
  return v;
}

std::vector<uint32_t> Shape(const Model& m, const std::string& name) {
  const TensorView* t = m.Find(name.c_str());
  REQUIRE_MESSAGE(t != nullptr, "missing " << name);
  return std::vector<uint32_t>(t->shape, t->shape + t->rank);
}

// The canonical tensor holds exactly the source's values (same order).
void CheckCopied(const Model& m, const std::string& name, const HfCheckpoint& c,
                 const std::string& source) {
  CAPTURE(name);
  const std::vector<float> got = Values(m, name);
  const std::vector<float>& want = c.Get(source).values;
  REQUIRE(got.size() == want.size());
  CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
}

std::string Extra(const Model& m, const std::string& key) {
  const fb::Provenance* p = m.root().provenance();
  REQUIRE(p != nullptr);
  REQUIRE(p->extra() != nullptr);
  for (const fb::KeyValue* kv : *p->extra()) {
    if (kv->key()->str() == key) return kv->value() ? kv->value()->str() : "";
  }
  return "<absent>";
}

TEST_CASE("bert: BertForPreTraining layout (bert. prefix, pooler, cls heads, I64 position_ids)") {
  HfOptions o;
  const HfCheckpoint c = MakeHfCheckpoint("bert", o);
  const auto conv = Convert(c);
  const Model& m = conv->model;
  const fb::Architecture& a = m.architecture();
  CHECK(a.family() == fb::Family::Bert);
  CHECK(a.structure() == fb::Structure::EncoderOnly);
  CHECK(a.vocab_size() == 64);
  CHECK(a.hidden_size() == 32);
  CHECK(a.intermediate_size() == 48);
  CHECK(a.num_layers() == 2);
  CHECK(a.max_positions() == 16);
  CHECK(a.norm() == fb::NormKind::LayerNorm);
  CHECK(a.norm_placement() == fb::NormPlacement::Post);
  CHECK(a.norm_eps() == doctest::Approx(1e-12));
  CHECK(a.activation() == fb::Activation::GeluErf);
  CHECK_FALSE(a.gated_ffn());
  CHECK(a.position() == fb::PositionKind::Learned);
  CHECK(a.type_vocab_size() == 2);
  CHECK(a.pad_token_id() == 0);
  CHECK(a.bos_token_id() == -1);
  CHECK(a.attention()->num_heads() == 4);
  CHECK(a.attention()->num_kv_heads() == 4);
  CHECK(a.attention()->head_dim() == 8);
  CHECK(a.attention()->scale() == 0.0f);
  CHECK(a.attention()->qkv_bias());
  CHECK(a.attention()->out_bias());
  CHECK(m.Find("lm_head") == nullptr);
  CheckCopied(m, "token_embedding", c, "bert.embeddings.word_embeddings.weight");
  CheckCopied(m, "position_embedding", c, "bert.embeddings.position_embeddings.weight");
  CheckCopied(m, "token_type_embedding", c, "bert.embeddings.token_type_embeddings.weight");
  CheckCopied(m, "embedding_norm.bias", c, "bert.embeddings.LayerNorm.bias");
  CheckCopied(m, "layers.1.attn.k.weight", c, "bert.encoder.layer.1.attention.self.key.weight");
  CheckCopied(m, "layers.1.attn.o.bias", c, "bert.encoder.layer.1.attention.output.dense.bias");
  CheckCopied(m, "layers.0.attn_norm.weight", c,
              "bert.encoder.layer.0.attention.output.LayerNorm.weight");
  CheckCopied(m, "layers.0.ffn.up.weight", c, "bert.encoder.layer.0.intermediate.dense.weight");
  CheckCopied(m, "layers.1.ffn.down.weight", c, "bert.encoder.layer.1.output.dense.weight");
  CheckCopied(m, "layers.1.ffn_norm.bias", c, "bert.encoder.layer.1.output.LayerNorm.bias");
  CHECK(Shape(m, "layers.0.ffn.down.weight") == std::vector<uint32_t>{32, 48});
  // 5 model-level + 16 per layer.
  CHECK(m.num_tensors() == 5 + 2 * 16);
  CHECK(conv->result.num_tensors == m.num_tensors());

  const fb::Provenance* p = m.root().provenance();
  REQUIRE(p != nullptr);
  CHECK(p->source()->str() == "tiny-checkpoint");
  CHECK(p->converter()->str().rfind("octet-convert ", 0) == 0);
  CHECK(p->quantization()->str() == "fp32");
  CHECK(Extra(m, "model_type") == "bert");
  CHECK(Extra(m, "architectures") == "BertForPreTraining");
  CHECK(Extra(m, "source_dtypes") == "F32");
  CHECK(m.root().tokenizer() == nullptr);
}

TEST_CASE("bert: BertModel layout without prefix, old gamma/beta LayerNorm names") {
  HfOptions o;
  o.prefix = false;
  o.layers = 1;
  HfCheckpoint c = MakeHfCheckpoint("bert", o);
  c.Rename("embeddings.LayerNorm.weight", "embeddings.LayerNorm.gamma");
  c.Rename("embeddings.LayerNorm.bias", "embeddings.LayerNorm.beta");
  const auto conv = Convert(c);
  CheckCopied(conv->model, "token_embedding", c, "embeddings.word_embeddings.weight");
  CheckCopied(conv->model, "embedding_norm.weight", c, "embeddings.LayerNorm.gamma");
  CheckCopied(conv->model, "embedding_norm.bias", c, "embeddings.LayerNorm.beta");
}

TEST_CASE(
    "roberta, xlm-roberta: BERT's layout, positions offset by pad_token_id + 1, heads ignored") {
  for (const char* type : {"roberta", "xlm-roberta"}) {
    CAPTURE(type);
    HfOptions o;
    o.prefix = std::string(type) == "roberta";  // RobertaForMaskedLM; XLMRobertaModel (pooler)
    const HfCheckpoint c = MakeHfCheckpoint(type, o);
    const auto conv = Convert(c, "BF16");
    const Model& m = conv->model;
    const fb::Architecture& a = m.architecture();
    CHECK(a.family() == (o.prefix ? fb::Family::Roberta : fb::Family::XlmRoberta));
    CHECK(a.structure() == fb::Structure::EncoderOnly);
    CHECK(a.position() == fb::PositionKind::Learned);
    CHECK(a.position_offset() == 2);
    CHECK(a.max_positions() == 16);  // the table's 18 rows minus the offset
    CHECK(a.type_vocab_size() == 1);
    CHECK(a.norm_eps() == doctest::Approx(1e-5));
    CHECK(a.pad_token_id() == 1);
    CHECK(a.bos_token_id() == 0);
    CHECK(a.eos_token_id() == 2);
    const std::string p = o.prefix ? "roberta." : "";
    CHECK(Shape(m, "position_embedding") == std::vector<uint32_t>{18, 32});
    CheckCopied(m, "position_embedding", c, p + "embeddings.position_embeddings.weight");
    CheckCopied(m, "embedding_norm.weight", c, p + "embeddings.LayerNorm.weight");
    CheckCopied(m, "layers.1.attn.v.bias", c, p + "encoder.layer.1.attention.self.value.bias");
    CheckCopied(m, "layers.0.ffn_norm.weight", c, p + "encoder.layer.0.output.LayerNorm.weight");
    CHECK(m.num_tensors() == 5 + 2 * 16);
    CHECK(Extra(m, "model_type") == type);
  }
}

TEST_CASE("roberta: config values that change the math are refused by name") {
  HfCheckpoint c = MakeHfCheckpoint("roberta", HfOptions());
  c.config["position_embedding_type"] = "relative_key_query";
  CHECK(ConvertError(c) ==
        "config.json: position_embedding_type = \"relative_key_query\" is not supported (only "
        "absolute)");
  c = MakeHfCheckpoint("roberta", HfOptions());
  c.config["is_decoder"] = true;
  CHECK(ConvertError(c) ==
        "config.json: is_decoder = true is not supported (octet's roberta is an encoder)");
  c = MakeHfCheckpoint("xlm-roberta", HfOptions());
  c.config["add_cross_attention"] = true;
  CHECK(ConvertError(c) ==
        "config.json: add_cross_attention = true is not supported (octet's "
        "xlm-roberta is an encoder)");
  // Positions start at pad_token_id + 1: the table must have a row past it.
  c = MakeHfCheckpoint("roberta", HfOptions());
  c.config["pad_token_id"] = 17;
  CHECK(Has(ConvertError(c),
            "config.json: pad_token_id = 17 must be an id below "
            "max_position_embeddings - 1 = 17"));
  // A table that is not max_position_embeddings rows long is named with its shape.
  c = MakeHfCheckpoint("roberta", HfOptions());
  c.Remove("roberta.embeddings.position_embeddings.weight");
  c.Add("roberta.embeddings.position_embeddings.weight", {16, 32});
  CHECK(Has(ConvertError(c),
            "roberta.embeddings.position_embeddings.weight (-> "
            "position_embedding) is [16, 32], expected [18, 32]"));
}

TEST_CASE("distilbert: DistilBertForMaskedLM layout, heads ignored, no token types, eps 1e-12") {
  HfOptions o;
  const HfCheckpoint c = MakeHfCheckpoint("distilbert", o);
  const auto conv = Convert(c, "F16");
  const Model& m = conv->model;
  const fb::Architecture& a = m.architecture();
  CHECK(a.family() == fb::Family::DistilBert);
  CHECK(a.structure() == fb::Structure::EncoderOnly);
  CHECK(a.hidden_size() == 32);
  CHECK(a.intermediate_size() == 48);
  CHECK(a.num_layers() == 2);
  CHECK(a.max_positions() == 16);
  CHECK(a.position_offset() == 0);
  CHECK(a.type_vocab_size() == 0);
  CHECK(a.norm() == fb::NormKind::LayerNorm);
  CHECK(a.norm_placement() == fb::NormPlacement::Post);
  CHECK(a.norm_eps() == doctest::Approx(1e-12));
  CHECK(a.activation() == fb::Activation::GeluErf);
  CHECK(a.attention()->num_heads() == 4);
  CHECK(a.attention()->head_dim() == 8);
  CHECK(a.attention()->qkv_bias());
  CHECK(a.attention()->out_bias());
  CHECK(m.Find("token_type_embedding") == nullptr);
  CheckCopied(m, "position_embedding", c, "distilbert.embeddings.position_embeddings.weight");
  CheckCopied(m, "embedding_norm.bias", c, "distilbert.embeddings.LayerNorm.bias");
  CheckCopied(m, "layers.1.attn.o.weight", c,
              "distilbert.transformer.layer.1.attention.out_lin.weight");
  CheckCopied(m, "layers.0.attn.k.bias", c, "distilbert.transformer.layer.0.attention.k_lin.bias");
  CheckCopied(m, "layers.0.attn_norm.weight", c,
              "distilbert.transformer.layer.0.sa_layer_norm.weight");
  CheckCopied(m, "layers.1.ffn.up.weight", c, "distilbert.transformer.layer.1.ffn.lin1.weight");
  CheckCopied(m, "layers.1.ffn.down.bias", c, "distilbert.transformer.layer.1.ffn.lin2.bias");
  CheckCopied(m, "layers.1.ffn_norm.bias", c,
              "distilbert.transformer.layer.1.output_layer_norm.bias");
  // token, position, 2 norm + 16 per layer.
  CHECK(m.num_tensors() == 4 + 2 * 16);
}

// create_sinusoidal_embeddings, written here from its definition.
std::vector<float> DistilBertSinusoids(uint32_t rows, uint32_t dim) {
  std::vector<float> t(static_cast<size_t>(rows) * dim);
  for (uint32_t pos = 0; pos < rows; ++pos) {
    for (uint32_t j = 0; j < dim; ++j) {
      const double angle = pos / std::pow(10000.0, 2.0 * (j / 2) / dim);
      t[static_cast<size_t>(pos) * dim + j] =
          static_cast<float>(j % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  }
  return t;
}

TEST_CASE("distilbert: sinusoidal_pos_embds tables are checked when stored, computed when not") {
  HfOptions o;
  o.prefix = false;
  o.layers = 1;
  HfCheckpoint c = MakeHfCheckpoint("distilbert", o);
  c.config["sinusoidal_pos_embds"] = true;
  c.config["activation"] = "relu";
  const std::vector<float> table = DistilBertSinusoids(16, 32);
  c.Find("embeddings.position_embeddings.weight")->values = table;
  {
    const auto conv = Convert(c);
    CHECK(conv->model.architecture().activation() == fb::Activation::Relu);
    CHECK(Values(conv->model, "position_embedding") == table);
  }
  c.Find("embeddings.position_embeddings.weight")->values[3 * 32 + 7] += 1e-4f;
  CHECK(Has(ConvertError(c),
            "distilbert: tensor embeddings.position_embeddings.weight is not "
            "the sinusoidal table sinusoidal_pos_embds asks for: [3, 7]"));
  c.Remove("embeddings.position_embeddings.weight");
  const auto conv = Convert(c);
  CHECK(Values(conv->model, "position_embedding") == table);

  // Without sinusoidal_pos_embds the table is learned: it must be there.
  c.config["sinusoidal_pos_embds"] = false;
  CHECK(Has(ConvertError(c), "distilbert: missing tensor embeddings.position_embeddings.weight"));
  c = MakeHfCheckpoint("distilbert", o);
  c.config["activation"] = "quick_gelu";
  CHECK(Has(ConvertError(c), "config.json: activation = \"quick_gelu\" is not supported"));
  c = MakeHfCheckpoint("distilbert", o);
  c.config["n_heads"] = 5;
  CHECK(Has(ConvertError(c), "config.json: n_heads = 5 must be a divisor of dim 32"));
}

TEST_CASE("gpt2: Conv1D weights transposed, c_attn split into Q/K/V exactly, tied head") {
  HfOptions o;
  const HfCheckpoint c = MakeHfCheckpoint("gpt2", o);
  const auto conv = Convert(c);
  const Model& m = conv->model;
  const fb::Architecture& a = m.architecture();
  CHECK(a.family() == fb::Family::Gpt2);
  CHECK(a.structure() == fb::Structure::DecoderOnly);
  CHECK(a.norm_placement() == fb::NormPlacement::Pre);
  CHECK(a.norm_eps() == doctest::Approx(1e-5));
  CHECK(a.activation() == fb::Activation::GeluTanh);
  CHECK(a.position() == fb::PositionKind::Learned);
  CHECK(a.max_positions() == 16);
  CHECK(a.tied_embeddings());
  CHECK(a.bos_token_id() == 63);
  CHECK(a.eos_token_id() == 63);
  CHECK(a.attention()->qkv_bias());
  CHECK(m.Find("lm_head") == nullptr);
  CheckCopied(m, "token_embedding", c, "transformer.wte.weight");
  CheckCopied(m, "final_norm.weight", c, "transformer.ln_f.weight");

  const uint32_t H = 32, I = 48;
  for (int layer = 0; layer < 2; ++layer) {
    const std::string src = "transformer.h." + std::to_string(layer) + ".";
    const std::string dst = "layers." + std::to_string(layer) + ".";
    const std::vector<float>& c_attn = c.Get(src + "attn.c_attn.weight").values;  // [H, 3H]
    const std::vector<float>& c_attn_b = c.Get(src + "attn.c_attn.bias").values;  // [3H]
    const char* parts[] = {"attn.q", "attn.k", "attn.v"};
    for (uint32_t part = 0; part < 3; ++part) {
      CAPTURE(parts[part]);
      const std::vector<float> w = Values(m, dst + parts[part] + ".weight");  // [H, H]
      CHECK(Shape(m, dst + parts[part] + ".weight") == std::vector<uint32_t>{H, H});
      for (uint32_t r = 0; r < H; ++r) {
        for (uint32_t col = 0; col < H; ++col) {
          REQUIRE(w[r * H + col] == c_attn[col * 3 * H + part * H + r]);
        }
      }
      const std::vector<float> b = Values(m, dst + parts[part] + ".bias");
      for (uint32_t r = 0; r < H; ++r) REQUIRE(b[r] == c_attn_b[part * H + r]);
    }
    const std::vector<float>& fc = c.Get(src + "mlp.c_fc.weight").values;  // [H, I]
    const std::vector<float> up = Values(m, dst + "ffn.up.weight");        // [I, H]
    CHECK(Shape(m, dst + "ffn.up.weight") == std::vector<uint32_t>{I, H});
    for (uint32_t r = 0; r < I; ++r) {
      for (uint32_t col = 0; col < H; ++col) REQUIRE(up[r * H + col] == fc[col * I + r]);
    }
    const std::vector<float>& proj = c.Get(src + "mlp.c_proj.weight").values;  // [I, H]
    const std::vector<float> down = Values(m, dst + "ffn.down.weight");        // [H, I]
    for (uint32_t r = 0; r < H; ++r) {
      for (uint32_t col = 0; col < I; ++col) REQUIRE(down[r * I + col] == proj[col * H + r]);
    }
    const std::vector<float>& o_proj = c.Get(src + "attn.c_proj.weight").values;
    const std::vector<float> o_w = Values(m, dst + "attn.o.weight");
    for (uint32_t r = 0; r < H; ++r) {
      for (uint32_t col = 0; col < H; ++col) REQUIRE(o_w[r * H + col] == o_proj[col * H + r]);
    }
    CheckCopied(m, dst + "attn.o.bias", c, src + "attn.c_proj.bias");
    CheckCopied(m, dst + "ffn.up.bias", c, src + "mlp.c_fc.bias");
  }
}

TEST_CASE("gpt2: no prefix, a stored lm_head must equal wte when tied, untied keeps it") {
  HfOptions o;
  o.prefix = false;
  o.layers = 1;
  HfCheckpoint c = MakeHfCheckpoint("gpt2", o);
  c.AddCopy("lm_head.weight", "wte.weight");
  {
    const auto conv = Convert(c);
    CHECK(conv->model.Find("lm_head") == nullptr);
    CheckCopied(conv->model, "token_embedding", c, "wte.weight");
  }
  c.Find("lm_head.weight")->values[3] += 0.5f;
  CHECK(Has(ConvertError(c), "gpt2: tensor lm_head.weight differs from wte.weight"));
  c.config["tie_word_embeddings"] = false;
  const auto conv = Convert(c);
  CHECK_FALSE(conv->model.architecture().tied_embeddings());
  CheckCopied(conv->model, "lm_head", c, "lm_head.weight");
}

TEST_CASE("llama: GQA shapes, RoPE, RMSNorm, SwiGLU, untied head") {
  HfOptions o;
  o.heads = 4;
  o.kv_heads = 2;
  HfCheckpoint c = MakeHfCheckpoint("llama", o);
  c.config["rope_theta"] = 500000.0;
  c.config["eos_token_id"] = nlohmann::json::array({2, 3});
  const auto conv = Convert(c);
  const Model& m = conv->model;
  const fb::Architecture& a = m.architecture();
  CHECK(a.family() == fb::Family::Llama);
  CHECK(a.norm() == fb::NormKind::RmsNorm);
  CHECK(a.norm_placement() == fb::NormPlacement::Pre);
  CHECK(a.norm_eps() == doctest::Approx(1e-6));
  CHECK(a.activation() == fb::Activation::Silu);
  CHECK(a.gated_ffn());
  CHECK(a.position() == fb::PositionKind::Rope);
  REQUIRE(a.rope() != nullptr);
  CHECK(a.rope()->theta() == 500000.0f);
  CHECK(a.rope()->scaling() == fb::RopeScaling::None);
  CHECK(a.rope()->rotary_dim() == 0);
  CHECK_FALSE(a.tied_embeddings());
  CHECK(a.attention()->num_heads() == 4);
  CHECK(a.attention()->num_kv_heads() == 2);
  CHECK(a.attention()->head_dim() == 8);
  CHECK_FALSE(a.attention()->qkv_bias());
  CHECK(a.attention()->sliding_window() == 0);
  CHECK(a.bos_token_id() == 1);
  CHECK(a.eos_token_id() == 2);
  CHECK(Extra(m, "eos_token_ids") == "[2,3]");
  CHECK(Shape(m, "layers.1.attn.k.weight") == std::vector<uint32_t>{16, 32});
  CHECK(Shape(m, "layers.1.attn.o.weight") == std::vector<uint32_t>{32, 32});
  CheckCopied(m, "layers.1.attn.v.weight", c, "model.layers.1.self_attn.v_proj.weight");
  CheckCopied(m, "layers.0.ffn.gate.weight", c, "model.layers.0.mlp.gate_proj.weight");
  CheckCopied(m, "layers.0.ffn.up.weight", c, "model.layers.0.mlp.up_proj.weight");
  CheckCopied(m, "layers.0.ffn.down.weight", c, "model.layers.0.mlp.down_proj.weight");
  CheckCopied(m, "layers.0.attn_norm.weight", c, "model.layers.0.input_layernorm.weight");
  CheckCopied(m, "layers.0.ffn_norm.weight", c, "model.layers.0.post_attention_layernorm.weight");
  CheckCopied(m, "final_norm.weight", c, "model.norm.weight");
  CheckCopied(m, "lm_head", c, "lm_head.weight");
  CHECK(m.Find("final_norm.bias") == nullptr);
}

TEST_CASE("llama: rope_scaling linear and llama3, tied head, attention_bias, partial rotary") {
  HfOptions o;
  o.tied = true;
  o.layers = 1;
  HfCheckpoint c = MakeHfCheckpoint("llama", o);
  c.config["rope_scaling"] = {{"rope_type", "llama3"},
                              {"factor", 8.0},
                              {"low_freq_factor", 1.0},
                              {"high_freq_factor", 4.0},
                              {"original_max_position_embeddings", 8192}};
  {
    const auto conv = Convert(c);
    const fb::Architecture& a = conv->model.architecture();
    CHECK(a.tied_embeddings());
    CHECK(conv->model.Find("lm_head") == nullptr);
    CHECK(a.rope()->scaling() == fb::RopeScaling::Llama3);
    CHECK(a.rope()->factor() == 8.0f);
    CHECK(a.rope()->low_freq_factor() == 1.0f);
    CHECK(a.rope()->high_freq_factor() == 4.0f);
    CHECK(a.rope()->original_max_positions() == 8192);
  }
  c.config["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
  c.config["partial_rotary_factor"] = 0.5;
  {
    const auto conv = Convert(c);
    CHECK(conv->model.architecture().rope()->scaling() == fb::RopeScaling::Linear);
    CHECK(conv->model.architecture().rope()->factor() == 2.0f);
    CHECK(conv->model.architecture().rope()->rotary_dim() == 4);
  }
  c.config.erase("partial_rotary_factor");
  c.config["rope_scaling"] = {{"rope_type", "default"}};
  c.config["attention_bias"] = true;
  for (const char* p : {"q", "k", "v", "o"}) {
    c.Add(std::string("model.layers.0.self_attn.") + p + "_proj.bias", {32});
  }
  const auto conv = Convert(c);
  CHECK(conv->model.architecture().rope()->scaling() == fb::RopeScaling::None);
  CHECK(conv->model.architecture().attention()->qkv_bias());
  CHECK(conv->model.architecture().attention()->out_bias());
  CheckCopied(conv->model, "layers.0.attn.o.bias", c, "model.layers.0.self_attn.o_proj.bias");
}

TEST_CASE("qwen2: Q/K/V biases and no output bias, mistral: sliding window") {
  HfOptions o;
  o.kv_heads = 1;
  o.layers = 1;
  const HfCheckpoint q = MakeHfCheckpoint("qwen2", o);
  {
    const auto conv = Convert(q);
    const fb::Architecture& a = conv->model.architecture();
    CHECK(a.family() == fb::Family::Qwen2);
    CHECK(a.attention()->qkv_bias());
    CHECK_FALSE(a.attention()->out_bias());
    CHECK(a.attention()->num_kv_heads() == 1);
    CheckCopied(conv->model, "layers.0.attn.k.bias", q, "model.layers.0.self_attn.k_proj.bias");
    CHECK(conv->model.Find("layers.0.attn.o.bias") == nullptr);
  }
  HfCheckpoint m = MakeHfCheckpoint("mistral", o);
  {
    const auto conv = Convert(m);
    CHECK(conv->model.architecture().family() == fb::Family::Mistral);
    CHECK(conv->model.architecture().attention()->sliding_window() == 8);
    CHECK_FALSE(conv->model.architecture().attention()->qkv_bias());
  }
  m.config["sliding_window"] = nullptr;
  CHECK(Convert(m)->model.architecture().attention()->sliding_window() == 0);
}

// The canonical norm holds 1 + the source's values (Gemma's RMSNorm scales by 1 + w).
void CheckPlusOne(const Model& m, const std::string& name, const HfCheckpoint& c,
                  const std::string& source) {
  CAPTURE(name);
  const std::vector<float> got = Values(m, name);
  const std::vector<float>& want = c.Get(source).values;
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == 1.0f + want[i]);
}

TEST_CASE("gemma: (1 + w) norms folded, sqrt(hidden) embedding scale, GeGLU, tied head") {
  HfOptions o;
  o.kv_heads = 1;
  o.tied = true;
  HfCheckpoint g = MakeHfCheckpoint("gemma", o);
  g.config["hidden_act"] = "gelu";  // Gemma 1.0's configs: hidden_activation wins
  g.AddCopy("lm_head.weight", "model.embed_tokens.weight");
  for (const char* dtype : {"F32", "BF16"}) {
    CAPTURE(dtype);
    const auto conv = Convert(g, dtype);
    const Model& m = conv->model;
    const fb::Architecture& a = m.architecture();
    CHECK(a.family() == fb::Family::Gemma);
    CHECK(a.activation() == fb::Activation::GeluTanh);
    CHECK(a.gated_ffn());
    CHECK(a.tied_embeddings());
    CHECK(a.embedding_scale() == static_cast<float>(std::sqrt(32.0)));
    CHECK_FALSE(a.sandwich_norms());
    CHECK(a.attention()->num_kv_heads() == 1);
    CHECK(a.attention()->scale() == 0.0f);  // 1 / sqrt(head_dim)
    CHECK(m.Find("lm_head") == nullptr);
    if (std::string(dtype) == "F32") {
      CheckPlusOne(m, "layers.1.attn_norm.weight", g, "model.layers.1.input_layernorm.weight");
      CheckPlusOne(m, "layers.0.ffn_norm.weight", g,
                   "model.layers.0.post_attention_layernorm.weight");
      CheckPlusOne(m, "final_norm.weight", g, "model.norm.weight");
      CheckCopied(m, "token_embedding", g, "model.embed_tokens.weight");
    }
  }
  g.config.erase("hidden_activation");
  CHECK(Convert(g)->model.architecture().activation() == fb::Activation::GeluErf);
  g.config.erase("hidden_act");
  CHECK(Convert(g)->model.architecture().activation() == fb::Activation::GeluTanh);
}

TEST_CASE("gemma2: sandwich norms, softcaps, query_pre_attn_scalar, sliding layers") {
  HfOptions o;
  o.layers = 3;
  o.kv_heads = 2;
  HfCheckpoint g = MakeHfCheckpoint("gemma2", o);
  {
    const auto conv = Convert(g);
    const Model& m = conv->model;
    const fb::Architecture& a = m.architecture();
    CHECK(a.family() == fb::Family::Gemma2);
    CHECK(a.sandwich_norms());
    CHECK(a.final_logit_softcap() == 30.0f);  // Gemma2Config's defaults
    CHECK(a.attention()->logit_softcap() == 50.0f);
    CHECK(a.attention()->scale() == static_cast<float>(1.0 / std::sqrt(8.0)));
    CHECK(a.attention()->sliding_window() == 8);
    const auto* sliding = a.attention()->sliding_layers();
    REQUIRE(sliding != nullptr);
    REQUIRE(sliding->size() == 3);
    CHECK(sliding->Get(0));  // the published default: even layers slide
    CHECK_FALSE(sliding->Get(1));
    CHECK(sliding->Get(2));
    CheckPlusOne(m, "layers.2.post_attn_norm.weight", g,
                 "model.layers.2.post_attention_layernorm.weight");
    CheckPlusOne(m, "layers.2.ffn_norm.weight", g,
                 "model.layers.2.pre_feedforward_layernorm.weight");
    CheckPlusOne(m, "layers.2.post_ffn_norm.weight", g,
                 "model.layers.2.post_feedforward_layernorm.weight");
    CheckCopied(m, "lm_head", g, "lm_head.weight");
  }
  g.config["attn_logit_softcapping"] = nullptr;
  g.config["final_logit_softcapping"] = nullptr;
  g.config["layer_types"] = {"full_attention", "sliding_attention", "full_attention"};
  {
    const auto conv = Convert(g);
    const fb::Architecture& a = conv->model.architecture();
    CHECK(a.final_logit_softcap() == 0.0f);
    CHECK(a.attention()->logit_softcap() == 0.0f);
    const auto* sliding = a.attention()->sliding_layers();
    REQUIRE(sliding != nullptr);
    CHECK_FALSE(sliding->Get(0));
    CHECK(sliding->Get(1));
  }
  g.config["layer_types"] = {"full_attention", "full_attention", "full_attention"};
  CHECK(Convert(g)->model.architecture().attention()->sliding_window() == 0);
  g.config.erase("layer_types");
  g.config["sliding_window"] = nullptr;
  CHECK(Convert(g)->model.architecture().attention()->sliding_window() == 0);
}

TEST_CASE("gemma3_text: Q/K norms (1 + w), sliding_window_pattern, local RoPE base, no softcaps") {
  HfOptions o;
  o.layers = 4;
  o.kv_heads = 2;
  HfCheckpoint g = MakeHfCheckpoint("gemma3_text", o);
  g.config["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 8.0}};
  {
    const auto conv = Convert(g);
    const Model& m = conv->model;
    const fb::Architecture& a = m.architecture();
    CHECK(a.family() == fb::Family::Gemma3);
    CHECK(a.sandwich_norms());
    CHECK(a.attention()->qk_norm());
    CHECK(a.final_logit_softcap() == 0.0f);  // Gemma3TextConfig's defaults: none
    CHECK(a.attention()->logit_softcap() == 0.0f);
    CHECK(a.attention()->sliding_window() == 8);
    const auto* sliding = a.attention()->sliding_layers();
    REQUIRE(sliding != nullptr);
    REQUIRE(sliding->size() == 4);
    CHECK(sliding->Get(0));  // pattern 2: (i + 1) % 2 != 0 slides
    CHECK_FALSE(sliding->Get(1));
    CHECK(sliding->Get(2));
    CHECK_FALSE(sliding->Get(3));
    CHECK(a.rope()->theta() == 1000000.0f);
    CHECK(a.rope()->local_theta() == 10000.0f);
    CHECK(a.rope()->scaling() == fb::RopeScaling::Linear);
    CHECK(a.rope()->factor() == 8.0f);
    CheckPlusOne(m, "layers.3.attn.q_norm.weight", g, "model.layers.3.self_attn.q_norm.weight");
    CheckPlusOne(m, "layers.0.attn.k_norm.weight", g, "model.layers.0.self_attn.k_norm.weight");
  }
  g.config.erase("sliding_window_pattern");  // Gemma3TextConfig's 6: only layer 5 would be global
  g.config.erase("rope_theta");
  {
    const auto conv = Convert(g);
    const auto* sliding = conv->model.architecture().attention()->sliding_layers();
    REQUIRE(sliding != nullptr);
    for (uint32_t i = 0; i < 4; ++i) CHECK(sliding->Get(i));
    CHECK(conv->model.architecture().rope()->theta() == 1000000.0f);
  }
}

TEST_CASE("qwen3: Q/K norms per head, explicit head_dim, attention_bias, tied or not") {
  HfOptions o;
  o.kv_heads = 2;
  HfCheckpoint c = MakeHfCheckpoint("qwen3", o);
  {
    const auto conv = Convert(c, "BF16");
    const fb::Architecture& a = conv->model.architecture();
    CHECK(a.family() == fb::Family::Qwen3);
    CHECK(a.structure() == fb::Structure::DecoderOnly);
    CHECK(a.attention()->qk_norm());
    CHECK(a.attention()->head_dim() == 16);  // != hidden 32 / 4 heads
    CHECK(a.attention()->num_kv_heads() == 2);
    CHECK_FALSE(a.attention()->qkv_bias());
    CHECK_FALSE(a.attention()->out_bias());
    CHECK(a.attention()->sliding_window() == 0);
    CHECK_FALSE(a.tied_embeddings());
    CheckCopied(conv->model, "layers.1.attn.q_norm.weight", c,
                "model.layers.1.self_attn.q_norm.weight");
    CheckCopied(conv->model, "layers.0.attn.k_norm.weight", c,
                "model.layers.0.self_attn.k_norm.weight");
    CheckCopied(conv->model, "layers.0.attn.q.weight", c, "model.layers.0.self_attn.q_proj.weight");
    CheckCopied(conv->model, "lm_head", c, "lm_head.weight");
  }
  // attention_bias: biases on all four projections; a missing head_dim is Qwen3Config's 128.
  c.config["attention_bias"] = true;
  for (const char* p : {"q", "k", "v", "o"}) {
    const std::string w = std::string("model.layers.0.self_attn.") + p + "_proj.";
    const std::string w1 = std::string("model.layers.1.self_attn.") + p + "_proj.";
    c.Add(w + "bias", {c.Get(w + "weight").shape[0]});
    c.Add(w1 + "bias", {c.Get(w1 + "weight").shape[0]});
  }
  {
    const auto conv = Convert(c);
    CHECK(conv->model.architecture().attention()->qkv_bias());
    CHECK(conv->model.architecture().attention()->out_bias());
    CheckCopied(conv->model, "layers.1.attn.o.bias", c, "model.layers.1.self_attn.o_proj.bias");
  }
  c.config.erase("head_dim");
  CHECK(Has(ConvertError(c), "512, 32"));  // q_proj expected [4 heads x 128, hidden]
  o.tied = true;
  const auto tied = Convert(MakeHfCheckpoint("qwen3", o));
  CHECK(tied->model.architecture().tied_embeddings());
  CHECK(tied->model.Find("lm_head") == nullptr);
}

// Rows [first, first + count) of a [rows, cols] source.
std::vector<float> RowBlock(const HfCheckpoint& c, const std::string& source, uint64_t first,
                            uint64_t count) {
  const testing::HfTensor& t = c.Get(source);
  const uint64_t cols = t.shape[1];
  return std::vector<float>(t.values.begin() + first * cols,
                            t.values.begin() + (first + count) * cols);
}

TEST_CASE("phi3: fused qkv_proj split in unequal row blocks (GQA), gate_up_proj in halves") {
  HfOptions o;
  o.kv_heads = 2;  // Q 4 x 8 rows, K and V 2 x 8 rows each
  for (const char* dtype : {"F32", "F16", "BF16"}) {
    CAPTURE(dtype);
    const HfCheckpoint c = MakeHfCheckpoint("phi3", o);
    const auto conv = Convert(c, dtype);
    const Model& m = conv->model;
    const fb::Architecture& a = m.architecture();
    CHECK(a.family() == fb::Family::Phi3);
    CHECK(a.structure() == fb::Structure::DecoderOnly);
    CHECK(a.gated_ffn());
    CHECK(a.attention()->num_kv_heads() == 2);
    CHECK(a.attention()->head_dim() == 8);
    CHECK(a.attention()->sliding_window() == 6);
    CHECK(a.rope()->rotary_dim() == 4);
    CHECK(a.rope()->scaling() == fb::RopeScaling::None);
    for (uint32_t l = 0; l < 2; ++l) {
      const std::string src = "model.layers." + std::to_string(l) + ".";
      const std::string dst = "layers." + std::to_string(l) + ".";
      const std::string qkv = src + "self_attn.qkv_proj.weight";
      const std::string gate_up = src + "mlp.gate_up_proj.weight";
      const std::pair<std::string, std::vector<float>> blocks[] = {
          {dst + "attn.q.weight", RowBlock(c, qkv, 0, 32)},
          {dst + "attn.k.weight", RowBlock(c, qkv, 32, 16)},
          {dst + "attn.v.weight", RowBlock(c, qkv, 48, 16)},
          {dst + "ffn.gate.weight", RowBlock(c, gate_up, 0, 48)},
          {dst + "ffn.up.weight", RowBlock(c, gate_up, 48, 48)},
      };
      for (const auto& [name, want] : blocks) {
        CAPTURE(name);
        const std::vector<float> got = Values(m, name);
        REQUIRE(got.size() == want.size());
        CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
      }
      CheckCopied(m, dst + "attn.o.weight", c, src + "self_attn.o_proj.weight");
      CheckCopied(m, dst + "ffn.down.weight", c, src + "mlp.down_proj.weight");
    }
    CheckCopied(m, "lm_head", c, "lm_head.weight");
  }
}

TEST_CASE("phi3: longrope factors, original_max_position_embeddings and attention_factor") {
  HfOptions o;
  o.max_positions = 64;
  HfCheckpoint c = MakeHfCheckpoint("phi3", o);
  c.config["original_max_position_embeddings"] = 16;
  c.config["rope_scaling"] = {{"type", "su"},
                              {"short_factor", {1.0, 2.0}},
                              {"long_factor", {3.0, 5.5}}};
  {
    const auto conv = Convert(c);
    const fb::Rope& r = *conv->model.architecture().rope();
    CHECK(r.scaling() == fb::RopeScaling::LongRope);
    CHECK(r.original_max_positions() == 16);
    REQUIRE(r.short_factors()->size() == 2);
    REQUIRE(r.long_factors()->size() == 2);
    CHECK(r.short_factors()->Get(1) == 2.0f);
    CHECK(r.long_factors()->Get(1) == 5.5f);
    // sqrt(1 + ln(64 / 16) / ln(16)) = sqrt(1.5)
    CHECK(r.attention_factor() == static_cast<float>(std::sqrt(1.5)));
  }
  c.config["rope_scaling"] = {{"rope_type", "longrope"},
                              {"short_factor", {1.0, 2.0}},
                              {"long_factor", {3.0, 5.5}},
                              {"attention_factor", 1.125}};
  CHECK(Convert(c)->model.architecture().rope()->attention_factor() == 1.125f);
  c.config["max_position_embeddings"] = 16;  // no extension: attention_factor 1
  c.config["rope_scaling"].erase("attention_factor");
  CHECK(Convert(c)->model.architecture().rope()->attention_factor() == 1.0f);
  // transformers 5.x: rope_parameters holds rope_theta and the scaling.
  c.config.erase("rope_scaling");
  c.config.erase("rope_theta");
  c.config["rope_parameters"] = {{"rope_type", "longrope"},
                                 {"rope_theta", 500.0},
                                 {"short_factor", {1.0, 2.0}},
                                 {"long_factor", {3.0, 5.5}}};
  {
    const auto conv = Convert(c);
    const fb::Rope& r = *conv->model.architecture().rope();
    CHECK(r.scaling() == fb::RopeScaling::LongRope);
    CHECK(r.theta() == 500.0f);
    CHECK(r.long_factors()->Get(0) == 3.0f);
  }
  c.config["rope_parameters"] = {{"rope_type", "yarn"}, {"rope_theta", 500.0}};
  CHECK(Has(ConvertError(c), "config.json: rope_parameters: rope_type = \"yarn\" is not supported"));
}

TEST_CASE("marian: shared embeddings, sinusoidal positions checked not stored, final_logits_bias") {
  HfOptions o;
  const HfCheckpoint c = MakeHfCheckpoint("marian", o);
  const auto conv = Convert(c);
  const Model& m = conv->model;
  const fb::Architecture& a = m.architecture();
  CHECK(a.family() == fb::Family::Marian);
  CHECK(a.structure() == fb::Structure::EncoderDecoder);
  CHECK(a.num_layers() == 2);
  CHECK(a.num_decoder_layers() == 2);
  CHECK(a.norm() == fb::NormKind::LayerNorm);
  CHECK(a.norm_placement() == fb::NormPlacement::Post);
  CHECK(a.activation() == fb::Activation::Silu);
  CHECK(a.position() == fb::PositionKind::SinusoidalSplit);
  CHECK(a.max_positions() == 16);
  CHECK(a.embedding_scale() == doctest::Approx(std::sqrt(32.0)));
  CHECK(a.logits_scale() == 1.0f);
  CHECK(a.tied_embeddings());
  CHECK(a.pad_token_id() == 63);
  CHECK(a.eos_token_id() == 0);
  CHECK(a.decoder_start_token_id() == 63);
  CHECK(m.Find("position_embedding") == nullptr);
  CHECK(m.Find("lm_head") == nullptr);
  CheckCopied(m, "token_embedding", c, "model.shared.weight");
  CHECK(Shape(m, "final_logits_bias") == std::vector<uint32_t>{64});
  CheckCopied(m, "final_logits_bias", c, "final_logits_bias");
  CheckCopied(m, "encoder.layers.1.attn.o.weight", c,
              "model.encoder.layers.1.self_attn.out_proj.weight");
  CheckCopied(m, "encoder.layers.0.attn_norm.bias", c,
              "model.encoder.layers.0.self_attn_layer_norm.bias");
  CheckCopied(m, "decoder.layers.1.cross_attn.k.weight", c,
              "model.decoder.layers.1.encoder_attn.k_proj.weight");
  CheckCopied(m, "decoder.layers.0.cross_attn_norm.weight", c,
              "model.decoder.layers.0.encoder_attn_layer_norm.weight");
  CheckCopied(m, "decoder.layers.0.ffn.up.bias", c, "model.decoder.layers.0.fc1.bias");
  CheckCopied(m, "decoder.layers.1.ffn_norm.weight", c,
              "model.decoder.layers.1.final_layer_norm.weight");
  // 2 model-level; encoder layers 16 tensors; decoder layers 26.
  CHECK(m.num_tensors() == 2 + 2 * 16 + 2 * 26);
}

TEST_CASE("marian: a stored position table must be Marian's, final_logits_bias defaults to zeros") {
  HfOptions o;
  o.layers = 1;
  HfCheckpoint c = MakeHfCheckpoint("marian", o);
  c.Remove("final_logits_bias");
  c.Remove("model.decoder.embed_positions.weight");
  {
    const auto conv = Convert(c);
    CHECK(Values(conv->model, "final_logits_bias") == std::vector<float>(64, 0.0f));
  }
  // F16 checkpoints hold the table rounded to F16: accepted.
  Convert(c, "F16");
  Convert(c, "BF16");
  c.Find("model.encoder.embed_positions.weight")->values[5 * 32 + 20] += 1e-4f;
  const std::string e = ConvertError(c);
  CHECK(Has(e,
            "marian: tensor model.encoder.embed_positions.weight is not Marian's sinusoidal "
            "table: [5, 20]"));
  c.Find("model.encoder.embed_positions.weight")->shape = {8, 64};
  CHECK(Has(ConvertError(c), "is [8, 64], expected [16, 32]"));
}

TEST_CASE("marian: separate embeddings and vocabularies are refused") {
  HfOptions o;
  o.layers = 1;
  HfCheckpoint c = MakeHfCheckpoint("marian", o);
  c.Find("model.decoder.embed_tokens.weight")->values[0] = 0.75f;
  CHECK(Has(ConvertError(c),
            "marian: tensor model.decoder.embed_tokens.weight differs from "
            "model.shared.weight"));
  c = MakeHfCheckpoint("marian", o);
  c.config["decoder_vocab_size"] = 100;
  CHECK(Has(ConvertError(c), "config.json: decoder_vocab_size = 100 is not supported"));
  c = MakeHfCheckpoint("marian", o);
  c.config["decoder_ffn_dim"] = 100;
  CHECK(Has(ConvertError(c), "config.json: decoder_ffn_dim = 100 is not supported"));
}

TEST_CASE("t5: relative bias from block 0, no 1/sqrt(d) scale, tied head rescaled") {
  HfOptions o;
  o.tied = true;
  const HfCheckpoint c = MakeHfCheckpoint("t5", o);
  const auto conv = Convert(c);
  const Model& m = conv->model;
  const fb::Architecture& a = m.architecture();
  CHECK(a.family() == fb::Family::T5);
  CHECK(a.structure() == fb::Structure::EncoderDecoder);
  CHECK(a.norm() == fb::NormKind::RmsNorm);
  CHECK(a.norm_placement() == fb::NormPlacement::Pre);
  CHECK(a.norm_eps() == doctest::Approx(1e-6));
  CHECK(a.activation() == fb::Activation::Relu);
  CHECK_FALSE(a.gated_ffn());
  CHECK(a.position() == fb::PositionKind::RelativeBias);
  CHECK(a.max_positions() == 0);
  CHECK(a.tied_embeddings());
  CHECK(a.logits_scale() == doctest::Approx(1.0 / std::sqrt(32.0)));
  CHECK(a.attention()->scale() == 1.0f);
  CHECK(a.attention()->head_dim() == 6);
  CHECK(a.attention()->relative_buckets() == 8);
  CHECK(a.attention()->relative_max_distance() == 20);
  CHECK(a.pad_token_id() == 0);
  CHECK(a.eos_token_id() == 1);
  CHECK(a.decoder_start_token_id() == 0);
  CHECK(Shape(m, "encoder.relative_bias") == std::vector<uint32_t>{8, 4});
  CheckCopied(m, "encoder.relative_bias", c,
              "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight");
  CheckCopied(m, "decoder.relative_bias", c,
              "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight");
  CHECK(Shape(m, "encoder.layers.0.attn.q.weight") == std::vector<uint32_t>{24, 32});
  CHECK(Shape(m, "encoder.layers.0.attn.o.weight") == std::vector<uint32_t>{32, 24});
  CheckCopied(m, "decoder.layers.1.cross_attn.v.weight", c,
              "decoder.block.1.layer.1.EncDecAttention.v.weight");
  CheckCopied(m, "decoder.layers.1.cross_attn_norm.weight", c,
              "decoder.block.1.layer.1.layer_norm.weight");
  CheckCopied(m, "decoder.layers.1.ffn.up.weight", c,
              "decoder.block.1.layer.2.DenseReluDense.wi.weight");
  CheckCopied(m, "decoder.layers.1.ffn_norm.weight", c,
              "decoder.block.1.layer.2.layer_norm.weight");
  CheckCopied(m, "encoder.layers.1.ffn.down.weight", c,
              "encoder.block.1.layer.1.DenseReluDense.wo.weight");
  CheckCopied(m, "encoder.final_norm.weight", c, "encoder.final_layer_norm.weight");
  CheckCopied(m, "decoder.final_norm.weight", c, "decoder.final_layer_norm.weight");
  CHECK(m.Find("lm_head") == nullptr);
}

TEST_CASE("t5: gated-gelu feed-forward (v1.1) with an untied head") {
  HfOptions o;
  o.tied = false;
  o.layers = 1;
  HfCheckpoint c = MakeHfCheckpoint("t5", o);
  c.config["feed_forward_proj"] = "gated-gelu";
  for (const std::string stack : {"encoder", "decoder"}) {
    const std::string ffn =
        stack + ".block.0.layer." + (stack == "encoder" ? "1" : "2") + ".DenseReluDense.";
    c.Rename(ffn + "wi.weight", ffn + "wi_0.weight");
    c.Add(ffn + "wi_1.weight", {48, 32});
  }
  const auto conv = Convert(c);
  const fb::Architecture& a = conv->model.architecture();
  CHECK(a.gated_ffn());
  CHECK(a.activation() == fb::Activation::GeluTanh);
  CHECK(a.logits_scale() == 1.0f);
  CheckCopied(conv->model, "lm_head", c, "lm_head.weight");
  CheckCopied(conv->model, "decoder.layers.0.ffn.gate.weight", c,
              "decoder.block.0.layer.2.DenseReluDense.wi_0.weight");
  CheckCopied(conv->model, "decoder.layers.0.ffn.up.weight", c,
              "decoder.block.0.layer.2.DenseReluDense.wi_1.weight");
  c.config["feed_forward_proj"] = "gated-silu";
  CHECK(Convert(c)->model.architecture().activation() == fb::Activation::Silu);
  c.config["feed_forward_proj"] = "gated-tanh";
  CHECK(Has(ConvertError(c), "config.json: feed_forward_proj = \"gated-tanh\" is not supported"));
}

TEST_CASE("rwkv: time and channel mixes, pre_ln as the embedding norm, rescaling as epsilons") {
  HfOptions o;
  o.layers = 3;
  HfCheckpoint c = MakeHfCheckpoint("rwkv", o);
  c.config["rescale_every"] = 2;
  c.config["layer_norm_epsilon"] = 1e-6;
  const auto conv = Convert(c, "BF16");
  const Model& m = conv->model;
  const fb::Architecture& a = m.architecture();
  CHECK(a.family() == fb::Family::Rwkv);
  CHECK(a.structure() == fb::Structure::DecoderOnly);
  CHECK(a.norm() == fb::NormKind::LayerNorm);
  CHECK(a.norm_placement() == fb::NormPlacement::Pre);
  CHECK(a.position() == fb::PositionKind::None);
  CHECK(a.intermediate_size() == 4 * o.hidden);  // null: 4 x hidden
  CHECK(a.channel_mixer() == fb::ChannelMixer::RwkvChannelMix);
  REQUIRE(a.layer_mixers() != nullptr);
  REQUIRE(a.layer_mixers()->size() == 3);
  for (uint32_t i = 0; i < 3; ++i) CHECK(a.layer_mixers()->Get(i) == fb::TokenMixer::RwkvTimeMix);
  // Block i reads the stream divided by 2^(i // 2): its norms at eps x 4^(i // 2); ln_out
  // (1e-5 whatever layer_norm_epsilon says) at 1e-5 x 4^(3 // 2).
  CHECK(a.norm_eps() == 1e-6f);
  REQUIRE(a.layer_norm_eps() != nullptr);
  REQUIRE(a.layer_norm_eps()->size() == 3);
  CHECK(a.layer_norm_eps()->Get(0) == 1e-6f);
  CHECK(a.layer_norm_eps()->Get(1) == 1e-6f);
  CHECK(a.layer_norm_eps()->Get(2) == static_cast<float>(4e-6));
  CHECK(a.final_norm_eps() == static_cast<float>(4e-5));
  CHECK(Extra(m, "rescale_every") == "2");
  // The format's attention table is a placeholder no layer reads: no attention tensors.
  CHECK(a.attention()->num_heads() == 1);
  CHECK(m.Find("layers.0.attn.q.weight") == nullptr);
  CHECK(m.Find("layers.0.ffn.up.weight") == nullptr);
  CheckCopied(m, "embedding_norm.weight", c, "rwkv.blocks.0.pre_ln.weight");
  CheckCopied(m, "embedding_norm.bias", c, "rwkv.blocks.0.pre_ln.bias");
  CheckCopied(m, "layers.2.attn_norm.bias", c, "rwkv.blocks.2.ln1.bias");
  CheckCopied(m, "layers.1.ffn_norm.weight", c, "rwkv.blocks.1.ln2.weight");
  CheckCopied(m, "layers.1.time_mix.mix_v", c, "rwkv.blocks.1.attention.time_mix_value");
  CHECK(Shape(m, "layers.1.time_mix.mix_v") == std::vector<uint32_t>{32});
  CheckCopied(m, "layers.0.time_mix.decay", c, "rwkv.blocks.0.attention.time_decay");
  CheckCopied(m, "layers.0.time_mix.first", c, "rwkv.blocks.0.attention.time_first");
  CheckCopied(m, "layers.2.time_mix.output.weight", c, "rwkv.blocks.2.attention.output.weight");
  CheckCopied(m, "layers.2.channel_mix.mix_r", c, "rwkv.blocks.2.feed_forward.time_mix_receptance");
  CheckCopied(m, "layers.0.channel_mix.key.weight", c, "rwkv.blocks.0.feed_forward.key.weight");
  CheckCopied(m, "layers.0.channel_mix.value.weight", c,
              "rwkv.blocks.0.feed_forward.value.weight");
  CheckCopied(m, "final_norm.bias", c, "rwkv.ln_out.bias");
  CheckCopied(m, "lm_head", c, "head.weight");
  // rescale_every <= 0: no rescaling, the configured epsilon everywhere.
  c.config["rescale_every"] = 0;
  const auto plain = Convert(c);
  const fb::Architecture& p = plain->model.architecture();
  CHECK((p.layer_norm_eps() == nullptr || p.layer_norm_eps()->size() == 0));
  CHECK(p.final_norm_eps() == 1e-5f);
  // Tied: no head.weight needed; one that differs from the embeddings is refused.
  HfCheckpoint tied = MakeHfCheckpoint("rwkv", o);
  tied.config["tie_word_embeddings"] = true;
  tied.Remove("head.weight");
  CHECK(Convert(tied)->model.architecture().tied_embeddings());
  tied.Add("head.weight", {o.vocab, o.hidden});
  CHECK(Has(ConvertError(tied), "head.weight differs from rwkv.embeddings.weight"));
}

TEST_CASE("F16 and BF16 checkpoints widen exactly, special values included") {
  HfOptions o;
  o.layers = 1;
  HfCheckpoint c = MakeHfCheckpoint("gpt2", o);
  // Exact in F16: the smallest subnormal, a larger subnormal, the largest finite, -0.
  std::vector<float>& ln = c.Find("transformer.h.0.ln_1.weight")->values;
  ln[0] = std::ldexp(1.0f, -24);
  ln[1] = std::ldexp(1000.0f, -24);
  ln[2] = 65504.0f;
  ln[3] = -0.0f;
  for (const char* dtype : {"F16", "BF16"}) {
    CAPTURE(dtype);
    HfCheckpoint d = c;
    if (std::string(dtype) == "BF16") ln[2] = 65536.0f;  // exact in BF16 (65504 is not)
    d.Find("transformer.h.0.ln_1.weight")->values = ln;
    const auto conv = Convert(d, dtype);
    CheckCopied(conv->model, "layers.0.attn_norm.weight", d, "transformer.h.0.ln_1.weight");
    CHECK(std::signbit(Values(conv->model, "layers.0.attn_norm.weight")[3]));
    CheckCopied(conv->model, "token_embedding", d, "transformer.wte.weight");
    const std::vector<float> q = Values(conv->model, "layers.0.attn.q.weight");
    const std::vector<float>& c_attn = d.Get("transformer.h.0.attn.c_attn.weight").values;
    for (uint32_t r = 0; r < 32; ++r) {
      for (uint32_t col = 0; col < 32; ++col) REQUIRE(q[r * 32 + col] == c_attn[col * 96 + r]);
    }
    CHECK(Extra(conv->model, "source_dtypes") == dtype);
  }
}

TEST_CASE("sharded checkpoints convert like single files") {
  HfOptions o;
  o.kv_heads = 2;
  const HfCheckpoint c = MakeHfCheckpoint("llama", o);
  for (const char* dtype : {"F32", "BF16"}) {
    CAPTURE(dtype);
    const auto conv = Convert(c, dtype, 3);
    CHECK(Extra(conv->model, "source_files") == "3");
    CheckCopied(conv->model, "layers.1.attn.q.weight", c, "model.layers.1.self_attn.q_proj.weight");
    CheckCopied(conv->model, "layers.0.ffn.down.weight", c, "model.layers.0.mlp.down_proj.weight");
    CheckCopied(conv->model, "lm_head", c, "lm_head.weight");
  }
}

TEST_CASE("tokenizer files are carried verbatim, with their kind") {
  HfOptions o;
  o.layers = 1;
  const HfCheckpoint c = MakeHfCheckpoint("gpt2", o);
  TempDir dir;
  c.Write(dir.path());
  testing::WriteText(dir.path() / "vocab.json", "{\"a\": 0}");
  testing::WriteText(dir.path() / "merges.txt", "#version: 0.2\na b\n");
  testing::WriteText(dir.path() / "README.md", "not a tokenizer file");
  const std::filesystem::path out = dir.path() / "m.octet";
  const convert::ConvertResult r =
      convert::ConvertCheckpoint(dir.path(), out, testing::Fp32Options());
  CHECK(r.num_tokenizer_files == 2);
  Result<Model> m = Model::Load(out.c_str());
  REQUIRE(m.ok());
  const fb::Tokenizer* tok = m.value().root().tokenizer();
  REQUIRE(tok != nullptr);
  CHECK(tok->kind() == fb::TokenizerKind::Gpt2Bpe);
  REQUIRE(tok->files()->size() == 2);
  CHECK(tok->files()->Get(0)->name()->str() == "vocab.json");
  uint64_t size = 0;
  const uint8_t* bytes = m.value().blob(1, &size);
  CHECK(std::string(reinterpret_cast<const char*>(bytes), size) == "#version: 0.2\na b\n");

  // A tokenizer.json is compiled too (a malformed one fails the conversion).
  testing::WriteText(dir.path() / "tokenizer.json", "{}");
  CHECK_THROWS_AS(convert::ConvertCheckpoint(dir.path(), out, testing::Fp32Options()), convert::Error);
  testing::WriteText(dir.path() / "tokenizer.json",
                     R"({"model": {"type": "WordLevel", "vocab": {"a": 0, "[UNK]": 1},
                         "unk_token": "[UNK]"}})");
  testing::WriteText(dir.path() / "tokenizer_config.json", "{}");
  convert::ConvertCheckpoint(dir.path(), out, testing::Fp32Options());
  Result<Model> m2 = Model::Load(out.c_str());
  REQUIRE(m2.ok());
  CHECK(m2.value().root().tokenizer()->kind() == fb::TokenizerKind::HfTokenizerJson);
  CHECK(m2.value().root().tokenizer()->files()->size() == 4);
  CHECK(m2.value().tokenizer_spec() != nullptr);
  CHECK(m.value().tokenizer_spec() == nullptr);  // vocab.json + merges.txt that do not compile

  TempDir sp;
  MakeHfCheckpoint("marian", o).Write(sp.path());
  testing::WriteText(sp.path() / "source.spm", "spm");
  testing::WriteText(sp.path() / "target.spm", "spm");
  convert::ConvertCheckpoint(sp.path(), sp.path() / "m.octet", testing::Fp32Options());
  Result<Model> m3 = Model::Load((sp.path() / "m.octet").c_str());
  REQUIRE(m3.ok());
  CHECK(m3.value().root().tokenizer()->kind() == fb::TokenizerKind::SentencePiece);
}

// --dtype int8: every matrix (embeddings, linear layers, head) int8 with one
// scale per row equal to max|row| / 127 and values rint(w / scale) (the
// runtime's core/quant.h definition, re-derived here); vectors and the T5
// relative bias stay F32; the report (weights, then layer outputs) is in the
// provenance; the file is about a quarter of the fp32 one.
TEST_CASE("convert: int8 quantizes every matrix per output channel and stores the report") {
  for (const char* family : {"llama", "bert", "t5"}) {
    CAPTURE(family);
    HfOptions o;
    o.tied = std::string(family) == "t5";
    const HfCheckpoint c = MakeHfCheckpoint(family, o);
    TempDir dir;
    c.Write(dir.path(), "F32");
    convert::ConvertOptions int8;
    int8.weights = convert::WeightType::kInt8;
    // Round to nearest alone (the tuner's steps off): the per-channel contract.
    int8.tune.smoothing = int8.tune.clipping = int8.tune.compensation = false;
    int8.tune.fp32_fallback = int8.tune.wide_inputs = false;
    const convert::ConvertResult r =
        convert::ConvertCheckpoint(dir.path(), dir.path() / "int8.octet", int8);
    REQUIRE(r.tuning.steps.size() == 1);
    CHECK(r.tuning.steps[0].name == "round to nearest");
    convert::ConvertCheckpoint(dir.path(), dir.path() / "fp32.octet", testing::Fp32Options());
    Result<Model> q = Model::Load((dir.path() / "int8.octet").c_str());
    Result<Model> f = Model::Load((dir.path() / "fp32.octet").c_str());
    REQUIRE(q.ok());
    REQUIRE(f.ok());
    REQUIRE(q->num_tensors() == f->num_tensors());
    size_t matrices = 0;
    for (size_t i = 0; i < f->num_tensors(); ++i) {
      const TensorView& ft = f->tensor(i);
      const TensorView& qt = *q->Find(ft.name);
      CAPTURE(ft.name);
      const std::string name = ft.name;
      const bool matrix = ft.rank == 2 && name.find("relative_bias") == std::string::npos;
      if (!matrix) {
        CHECK(qt.dtype == fb::DType::F32);
        CHECK(std::memcmp(qt.data, ft.data, ft.size) == 0);
        continue;
      }
      ++matrices;
      REQUIRE(qt.dtype == fb::DType::I8);
      REQUIRE(qt.quant != nullptr);
      CHECK(qt.quant->scheme() == fb::QuantScheme::PerChannel);
      CHECK(qt.quant->axis() == 0);
      const uint32_t rows = ft.shape[0], cols = ft.shape[1];
      const float* w = static_cast<const float*>(ft.data);
      // Products' matrices are packed for the GEMM, a decoder's tied table too
      // (its head); the other embeddings stay row-major for lookups: unpack
      // them here, index by index.
      const fb::Architecture& arch = q->architecture();
      const bool tied_table = name == "token_embedding" && arch.tied_embeddings() &&
                              arch.structure() != fb::Structure::EncoderOnly;
      const bool packed = name.find("embedding") == std::string::npos || tied_table;
      CHECK(qt.layout == (packed ? fb::TensorLayout::PackedQs8N16K4 : fb::TensorLayout::RowMajor));
      std::vector<int8_t> unpacked(static_cast<size_t>(rows) * cols);
      const int8_t* raw = static_cast<const int8_t*>(qt.data);
      if (packed) {
        const size_t kp = (cols + 3) / 4 * 4, tile = 64 + 16 * kp;
        REQUIRE(qt.size == (rows + 15) / 16 * tile);
        for (uint32_t row = 0; row < rows; ++row) {
          for (uint32_t k = 0; k < cols; ++k) {
            unpacked[static_cast<size_t>(row) * cols + k] =
                raw[row / 16 * tile + 64 + (k / 4) * 64 + (row % 16) * 4 + k % 4];
          }
        }
      }
      const int8_t* v = packed ? unpacked.data() : raw;
      for (uint32_t row = 0; row < rows; ++row) {
        float max_abs = 0;
        for (uint32_t k = 0; k < cols; ++k)
          max_abs = std::fmax(max_abs, std::fabs(w[row * cols + k]));
        const float scale = max_abs > 0 ? max_abs / 127.0f : 1.0f;
        REQUIRE(qt.quant->scales()->Get(row) == scale);
        for (uint32_t k = 0; k < cols; ++k) {
          REQUIRE(v[row * cols + k] ==
                  static_cast<int8_t>(std::nearbyint(w[row * cols + k] * (1.0f / scale))));
        }
      }
    }
    CHECK(matrices == r.tensor_errors.size());
    const fb::Provenance* p = q->root().provenance();
    REQUIRE(p != nullptr);
    CHECK(Has(p->quantization()->str(), "int8"));
    REQUIRE(p->layer_errors() != nullptr);
    CHECK(p->layer_errors()->size() == r.tensor_errors.size() + r.layer_errors.size());
    CHECK(r.layer_errors.back().name == "output");
    for (const convert::LayerReport& l : r.layer_errors) {
      CAPTURE(l.name);
      // The fixtures' weights are arbitrary (accuracy is the goldens' business:
      // tests/engine golden_int8.*); this checks the report measures something sane.
      CHECK(l.sqnr_db > 5.0);
      CHECK(l.min_cosine > 0.5);
      CHECK(l.min_cosine <= 1.0);
    }
    const double ratio =
        static_cast<double>(q->file_size()) / static_cast<double>(f->file_size());
    MESSAGE(std::string(family) << ": int8 file / fp32 file = " << ratio);
    // tiny: F32 norms, 64-byte alignment and the packed tiles' padding (16
    // channels, 4 k, 64 bytes of row sums per tile) weigh more than in real
    // models (W2: int8 / fp32 = 0.25)
    CHECK(ratio < 0.45);
  }
}

// The report's static-scale figure needs every layer's rows (its scale is
// their maximum): the converter spills them to a file instead of holding them.
// Spilled or in memory, the report is the same to the bit, and the file goes.
TEST_CASE("convert: the report's rows spilled to a file give the in-memory report exactly") {
  for (const char* family : {"llama", "t5"}) {
    CAPTURE(family);
    const HfCheckpoint c = MakeHfCheckpoint(family, HfOptions());
    TempDir dir;
    c.Write(dir.path(), "F32");
    convert::ConvertOptions int8;
    int8.weights = convert::WeightType::kInt8;
    int8.tune.enabled = false;
    convert::ConvertCheckpoint(dir.path(), dir.path() / "int8.octet", int8);
    convert::ConvertCheckpoint(dir.path(), dir.path() / "fp32.octet", testing::Fp32Options());
    Result<Model> q = Model::Load((dir.path() / "int8.octet").c_str());
    Result<Model> f = Model::Load((dir.path() / "fp32.octet").c_str());
    REQUIRE(q.ok());
    REQUIRE(f.ok());
    convert::Calibration calibration = convert::DefaultCalibration(
        f->architecture().vocab_size(), f->architecture().max_positions());
    calibration.sequences.pop_back();  // sequences of different lengths
    calibration.sequences.back().resize(calibration.sequences.back().size() / 2);
    const auto memory = convert::MeasureLayers(*f, *q, calibration);
    const std::filesystem::path rows = dir.path() / "rows.tmp";
    const auto spilled = convert::MeasureLayers(*f, *q, calibration, true, 0, rows);
    CHECK_FALSE(std::filesystem::exists(rows));
    REQUIRE(memory.size() == spilled.size());
    REQUIRE(memory.size() > 2);
    for (size_t i = 0; i < memory.size(); ++i) {
      CAPTURE(memory[i].name);
      CHECK(memory[i].name == spilled[i].name);
      CHECK(memory[i].sqnr_db == spilled[i].sqnr_db);
      CHECK(memory[i].min_cosine == spilled[i].min_cosine);
      CHECK(memory[i].act_dynamic_db == spilled[i].act_dynamic_db);
      if (memory[i].name == "output") {
        CHECK(std::isnan(memory[i].act_static_db));
        CHECK(std::isnan(spilled[i].act_static_db));
      } else {
        CHECK(std::isfinite(memory[i].act_static_db));
        CHECK(memory[i].act_static_db == spilled[i].act_static_db);
      }
    }
    // A spill file that cannot be made: one clear error.
    CHECK_THROWS_WITH(
        convert::MeasureLayers(*f, *q, calibration, true, 0, dir.path() / "no" / "rows.tmp"),
        doctest::Contains("cannot create"));
  }
}

}  // namespace
}  // namespace octet
