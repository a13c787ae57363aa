#include "converter/hf_fixtures.h"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>

namespace octet {
namespace testing {
namespace {

uint64_t Numel(const std::vector<uint64_t>& shape) {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

RawTensor Encode(const HfTensor& t, const std::string& dtype) {
  RawTensor raw;
  raw.name = t.name;
  raw.dtype = dtype;
  raw.shape = t.shape;
  for (float v : t.values) {
    if (dtype == "F32") {
      const uint32_t u = FloatBits(v);
      for (int i = 0; i < 4; ++i) raw.bytes.push_back(static_cast<uint8_t>(u >> (8 * i)));
    } else {
      // Rounded to nearest even (the fixtures' random values are exact anyway).
      const uint32_t bits = FloatBits(v);
      const uint16_t h = dtype == "F16"
                             ? FloatToHalfBits(v)
                             : static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
      raw.bytes.push_back(static_cast<uint8_t>(h));
      raw.bytes.push_back(static_cast<uint8_t>(h >> 8));
    }
  }
  return raw;
}

}  // namespace

TempDir::TempDir() {
  const std::filesystem::path base = std::filesystem::temp_directory_path();
  static int counter = 0;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const std::filesystem::path p =
        base / ("octet-convert-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    if (std::filesystem::create_directory(p)) {
      path_ = p;
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary directory");
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::vector<uint8_t> SafetensorsBytes(const std::vector<RawTensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = {{"format", "pt"}};
  uint64_t offset = 0;
  for (const RawTensor& t : tensors) {
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::vector<uint8_t> out(8 + text.size() + offset);
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<uint8_t>(static_cast<uint64_t>(text.size()) >> (8 * i));
  }
  std::memcpy(out.data() + 8, text.data(), text.size());
  size_t at = 8 + text.size();
  for (const RawTensor& t : tensors) {
    if (!t.bytes.empty()) std::memcpy(out.data() + at, t.bytes.data(), t.bytes.size());
    at += t.bytes.size();
  }
  return out;
}

void WriteFile(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

void WriteText(const std::filesystem::path& path, const std::string& text) {
  WriteFile(path, std::vector<uint8_t>(text.begin(), text.end()));
}

HfTensor& HfCheckpoint::Add(const std::string& name, std::vector<uint64_t> shape) {
  HfTensor t;
  t.name = name;
  t.shape = std::move(shape);
  std::mt19937 rng(seed_++);
  std::uniform_int_distribution<int> k(-127, 127);
  t.values.resize(Numel(t.shape));
  for (float& v : t.values) v = static_cast<float>(k(rng)) / 128.0f;
  tensors.push_back(std::move(t));
  return tensors.back();
}

HfTensor& HfCheckpoint::AddCopy(const std::string& name, const std::string& other) {
  HfTensor t = Get(other);
  t.name = name;
  tensors.push_back(std::move(t));
  return tensors.back();
}

HfTensor* HfCheckpoint::Find(const std::string& name) {
  for (HfTensor& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const HfTensor& HfCheckpoint::Get(const std::string& name) const {
  for (const HfTensor& t : tensors) {
    if (t.name == name) return t;
  }
  throw std::runtime_error("fixture has no tensor " + name);
}

void HfCheckpoint::Remove(const std::string& name) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].name == name) {
      tensors.erase(tensors.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }
  throw std::runtime_error("fixture has no tensor " + name);
}

void HfCheckpoint::Rename(const std::string& from, const std::string& to) {
  HfTensor* t = Find(from);
  if (t == nullptr) throw std::runtime_error("fixture has no tensor " + from);
  t->name = to;
}

void HfCheckpoint::Write(const std::filesystem::path& dir, const std::string& dtype,
                         int shards) const {
  WriteText(dir / "config.json", config.dump(2));
  std::vector<std::vector<RawTensor>> files(static_cast<size_t>(shards));
  for (size_t i = 0; i < tensors.size(); ++i) {
    files[i % files.size()].push_back(Encode(tensors[i], dtype));
  }
  for (size_t i = 0; i < raw_extras.size(); ++i) files[i % files.size()].push_back(raw_extras[i]);
  if (shards == 1) {
    WriteFile(dir / "model.safetensors", SafetensorsBytes(files[0]));
    return;
  }
  nlohmann::json index = {{"metadata", {{"total_size", 0}}},
                          {"weight_map", nlohmann::json::object()}};
  for (size_t s = 0; s < files.size(); ++s) {
    char name[64];
    std::snprintf(name, sizeof(name), "model-%05zu-of-%05d.safetensors", s + 1, shards);
    WriteFile(dir / name, SafetensorsBytes(files[s]));
    for (const RawTensor& t : files[s]) index["weight_map"][t.name] = name;
  }
  WriteText(dir / "model.safetensors.index.json", index.dump(2));
}

std::vector<float> MarianSinusoids(uint32_t rows, uint32_t dim) {
  std::vector<float> table(static_cast<size_t>(rows) * dim);
  for (uint32_t pos = 0; pos < rows; ++pos) {
    for (uint32_t j = 0; j < dim / 2; ++j) {
      const double angle = pos / std::pow(10000.0, 2.0 * j / dim);
      table[pos * dim + j] = static_cast<float>(std::sin(angle));
      table[pos * dim + dim / 2 + j] = static_cast<float>(std::cos(angle));
    }
  }
  return table;
}

uint16_t FloatToHalfBits(float f) {
  const uint32_t u = FloatBits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const float a = std::fabs(f);
  if (std::isnan(f)) return static_cast<uint16_t>(sign | 0x7e00u);
  if (a >= 65520.0f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (a < std::ldexp(1.0f, -14)) {  // subnormal or zero: units of 2^-24, rounded to even
    const float units = a * std::ldexp(1.0f, 24);
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(units)));
  }
  int e = 0;
  const float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  // 11 significant bits: mantissa in [1024, 2048), rounded to even.
  uint32_t mant = static_cast<uint32_t>(std::nearbyint(std::ldexp(m, 11)));
  if (mant == 2048) {
    mant = 1024;
    ++e;
  }
  const uint32_t exponent = static_cast<uint32_t>(e - 1 + 15);
  if (exponent >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  return static_cast<uint16_t>(sign | (exponent << 10) | (mant - 1024));
}

HfCheckpoint MakeHfCheckpoint(const std::string& type, const HfOptions& o) {
  HfCheckpoint c;
  const uint64_t V = o.vocab, H = o.hidden, I = o.intermediate, P = o.max_positions;
  const uint64_t L = o.layers;
  if (type == "bert") {
    c.config = {{"model_type", "bert"},
                {"architectures", {"BertForPreTraining"}},
                {"vocab_size", V},
                {"hidden_size", H},
                {"num_hidden_layers", L},
                {"num_attention_heads", o.heads},
                {"intermediate_size", I},
                {"max_position_embeddings", P},
                {"type_vocab_size", 2},
                {"layer_norm_eps", 1e-12},
                {"hidden_act", "gelu"},
                {"pad_token_id", 0},
                {"position_embedding_type", "absolute"}};
    const std::string p = o.prefix ? "bert." : "";
    c.Add(p + "embeddings.word_embeddings.weight", {V, H});
    c.Add(p + "embeddings.position_embeddings.weight", {P, H});
    c.Add(p + "embeddings.token_type_embeddings.weight", {2, H});
    c.Add(p + "embeddings.LayerNorm.weight", {H});
    c.Add(p + "embeddings.LayerNorm.bias", {H});
    for (uint64_t i = 0; i < L; ++i) {
      const std::string l = p + "encoder.layer." + std::to_string(i) + ".";
      for (const char* m : {"attention.self.query", "attention.self.key", "attention.self.value",
                            "attention.output.dense"}) {
        c.Add(l + m + ".weight", {H, H});
        c.Add(l + m + ".bias", {H});
      }
      c.Add(l + "attention.output.LayerNorm.weight", {H});
      c.Add(l + "attention.output.LayerNorm.bias", {H});
      c.Add(l + "intermediate.dense.weight", {I, H});
      c.Add(l + "intermediate.dense.bias", {I});
      c.Add(l + "output.dense.weight", {H, I});
      c.Add(l + "output.dense.bias", {H});
      c.Add(l + "output.LayerNorm.weight", {H});
      c.Add(l + "output.LayerNorm.bias", {H});
    }
    c.Add(p + "pooler.dense.weight", {H, H});
    c.Add(p + "pooler.dense.bias", {H});
    if (o.prefix) {
      c.Add("cls.predictions.bias", {V});
      c.Add("cls.predictions.transform.dense.weight", {H, H});
      c.Add("cls.seq_relationship.weight", {2, H});
      RawTensor ids{p + "embeddings.position_ids", "I64", {1, P}, {}};
      for (uint64_t i = 0; i < P; ++i) {
        for (int b = 0; b < 8; ++b) ids.bytes.push_back(static_cast<uint8_t>(b == 0 ? i : 0));
      }
      c.raw_extras.push_back(ids);
    }
  } else if (type == "modernbert") {
    // ModernBertForMaskedLM, the original config style: layers 0, 3, ... global, the others
    // local with a band of |i - j| <= 2; LayerNorms without bias.
    c.config = {{"model_type", "modernbert"},
                {"architectures", {"ModernBertForMaskedLM"}},
                {"vocab_size", V},
                {"hidden_size", H},
                {"num_hidden_layers", L},
                {"num_attention_heads", o.heads},
                {"intermediate_size", I},
                {"max_position_embeddings", P},
                {"norm_eps", 1e-5},
                {"norm_bias", false},
                {"attention_bias", false},
                {"mlp_bias", false},
                {"hidden_activation", "gelu"},
                {"global_attn_every_n_layers", 3},
                {"local_attention", 4},
                {"global_rope_theta", 160000.0},
                {"local_rope_theta", 10000.0},
                {"pad_token_id", 0}};
    const std::string p = o.prefix ? "model." : "";
    c.Add(p + "embeddings.tok_embeddings.weight", {V, H});
    c.Add(p + "embeddings.norm.weight", {H});
    for (uint64_t i = 0; i < L; ++i) {
      const std::string l = p + "layers." + std::to_string(i) + ".";
      if (i > 0) c.Add(l + "attn_norm.weight", {H});
      c.Add(l + "attn.Wqkv.weight", {3 * H, H});
      c.Add(l + "attn.Wo.weight", {H, H});
      c.Add(l + "mlp_norm.weight", {H});
      c.Add(l + "mlp.Wi.weight", {2 * I, H});
      c.Add(l + "mlp.Wo.weight", {H, I});
    }
    c.Add(p + "final_norm.weight", {H});
    if (o.prefix) {
      c.Add("head.dense.weight", {H, H});
      c.Add("head.norm.weight", {H});
      c.Add("decoder.bias", {V});
    }
  } else if (type == "lfm2") {
    // Lfm2ForCausalLM: short convolutions (3 taps) in even layers, attention with Q/K norms
    // in odd ones; intermediate_size taken as the feed-forward width (no auto-adjust).
    std::vector<std::string> types;
    for (uint64_t i = 0; i < L; ++i) types.push_back(i % 2 == 0 ? "conv" : "full_attention");
    c.config = {{"model_type", "lfm2"},
                {"architectures", {"Lfm2ForCausalLM"}},
                {"vocab_size", V},
                {"hidden_size", H},
                {"num_hidden_layers", L},
                {"num_attention_heads", o.heads},
                {"num_key_value_heads", o.kv_heads},
                {"intermediate_size", I},
                {"block_auto_adjust_ff_dim", false},
                {"max_position_embeddings", P},
                {"norm_eps", 1e-5},
                {"conv_L_cache", 3},
                {"conv_bias", false},
                {"layer_types", types},
                {"rope_theta", 1000000.0},
                {"tie_embedding", o.tied},
                {"bos_token_id", 1},
                {"eos_token_id", 2}};
    const std::string p = o.prefix ? "model." : "";
    const uint64_t D = H / o.heads;
    c.Add(p + "embed_tokens.weight", {V, H});
    for (uint64_t i = 0; i < L; ++i) {
      const std::string l = p + "layers." + std::to_string(i) + ".";
      c.Add(l + "operator_norm.weight", {H});
      if (i % 2 == 0) {
        c.Add(l + "conv.in_proj.weight", {3 * H, H});
        c.Add(l + "conv.conv.weight", {H, 1, 3});
        c.Add(l + "conv.out_proj.weight", {H, H});
      } else {
        c.Add(l + "self_attn.q_proj.weight", {o.heads * D, H});
        c.Add(l + "self_attn.k_proj.weight", {o.kv_heads * D, H});
        c.Add(l + "self_attn.v_proj.weight", {o.kv_heads * D, H});
        c.Add(l + "self_attn.out_proj.weight", {H, o.heads * D});
        c.Add(l + "self_attn.q_layernorm.weight", {D});
        c.Add(l + "self_attn.k_layernorm.weight", {D});
      }
      c.Add(l + "ffn_norm.weight", {H});
      c.Add(l + "feed_forward.w1.weight", {I, H});
      c.Add(l + "feed_forward.w3.weight", {I, H});
      c.Add(l + "feed_forward.w2.weight", {H, I});
    }
    c.Add(p + "embedding_norm.weight", {H});
    if (!o.tied) c.Add("lm_head.weight", {V, H});
  } else if (type == "rwkv") {
    // RwkvForCausalLM (RWKV-4): rescale_every 1 (each layer's norms at 4x the last's),
    // intermediate_size null (4 x hidden), pre_ln in block 0 only; rwkv. prefix.
    c.config = {{"model_type", "rwkv"},
                {"architectures", {"RwkvForCausalLM"}},
                {"vocab_size", V},
                {"hidden_size", H},
                {"num_hidden_layers", L},
                {"attention_hidden_size", nullptr},
                {"intermediate_size", nullptr},
                {"context_length", P},
                {"layer_norm_epsilon", 1e-5},
                {"rescale_every", 1},
                {"tie_word_embeddings", o.tied},
                {"bos_token_id", 0},
                {"eos_token_id", 0}};
    const std::string p = o.prefix ? "rwkv." : "";
    const uint64_t F = 4 * H;
    c.Add(p + "embeddings.weight", {V, H});
    for (uint64_t i = 0; i < L; ++i) {
      const std::string l = p + "blocks." + std::to_string(i) + ".";
      if (i == 0) {
        c.Add(l + "pre_ln.weight", {H});
        c.Add(l + "pre_ln.bias", {H});
      }
      for (const char* ln : {"ln1", "ln2"}) {
        c.Add(l + ln + ".weight", {H});
        c.Add(l + ln + ".bias", {H});
      }
      c.Add(l + "attention.time_decay", {H});
      c.Add(l + "attention.time_first", {H});
      for (const char* m : {"key", "value", "receptance"}) {
        c.Add(l + "attention.time_mix_" + m, {1, 1, H});
      }
      for (const char* m : {"key", "value", "receptance", "output"}) {
        c.Add(l + "attention." + m + ".weight", {H, H});
      }
      c.Add(l + "feed_forward.time_mix_key", {1, 1, H});
      c.Add(l + "feed_forward.time_mix_receptance", {1, 1, H});
      c.Add(l + "feed_forward.key.weight", {F, H});
      c.Add(l + "feed_forward.receptance.weight", {H, H});
      c.Add(l + "feed_forward.value.weight", {H, F});
    }
    c.Add(p + "ln_out.weight", {H});
    c.Add(p + "ln_out.bias", {H});
    if (!o.tied) c.Add("head.weight", {V, H});
  } else if (type == "qwen3_5_text" || type == "qwen3_5" || type == "qwen3_next") {
    // Gated DeltaNets (2 key heads, 4 value heads of 8, a conv of 4 taps) with full attention
    // every second layer (q_proj twice as wide: each head's query, then its gate).
    // qwen3_5: the multimodal checkpoint (text_config, model.language_model., a vision tower and
    // an MTP layer); qwen3_next: the dense layout with fused in_proj_qkvz / in_proj_ba.
    const uint64_t D = H / o.heads, hk = 2, hv = 4, dk = 8, dv = 8;
    nlohmann::json text = {{"model_type", type == "qwen3_5" ? "qwen3_5_text" : type},
                           {"vocab_size", V},
                           {"hidden_size", H},
                           {"num_hidden_layers", L},
                           {"num_attention_heads", o.heads},
                           {"num_key_value_heads", o.kv_heads},
                           {"head_dim", D},
                           {"intermediate_size", I},
                           {"max_position_embeddings", P},
                           {"rms_norm_eps", 1e-6},
                           {"hidden_act", "silu"},
                           {"full_attention_interval", 2},
                           {"linear_num_key_heads", hk},
                           {"linear_num_value_heads", hv},
                           {"linear_key_head_dim", dk},
                           {"linear_value_head_dim", dv},
                           {"linear_conv_kernel_dim", 4},
                           {"tie_word_embeddings", o.tied},
                           {"bos_token_id", 1},
                           {"eos_token_id", 2}};
    if (type == "qwen3_next") {
      text["num_experts"] = 0;
      text["rope_theta"] = 10000.0;
      text["partial_rotary_factor"] = 0.25;
    } else {
      text["rope_parameters"] = {{"rope_type", "default"},
                                 {"rope_theta", 10000000.0},
                                 {"partial_rotary_factor", 0.25}};
    }
    if (type == "qwen3_5") {
      c.config = {{"model_type", "qwen3_5"},
                  {"architectures", {"Qwen3_5ForConditionalGeneration"}},
                  {"tie_word_embeddings", o.tied},
                  {"text_config", text},
                  {"vision_config", {{"depth", 1}}}};
    } else {
      c.config = text;
      c.config["architectures"] = {type == "qwen3_next" ? "Qwen3NextForCausalLM"
                                                       : "Qwen3_5ForCausalLM"};
    }
    const std::string p = type == "qwen3_5" ? "model.language_model." : (o.prefix ? "model." : "");
    const uint64_t channels = 2 * hk * dk + hv * dv;
    c.Add(p + "embed_tokens.weight", {V, H});
    for (uint64_t i = 0; i < L; ++i) {
      const std::string l = p + "layers." + std::to_string(i) + ".";
      c.Add(l + "input_layernorm.weight", {H});
      c.Add(l + "post_attention_layernorm.weight", {H});
      c.Add(l + "mlp.gate_proj.weight", {I, H});
      c.Add(l + "mlp.up_proj.weight", {I, H});
      c.Add(l + "mlp.down_proj.weight", {H, I});
      if ((i + 1) % 2 == 0) {
        c.Add(l + "self_attn.q_proj.weight", {2 * o.heads * D, H});
        c.Add(l + "self_attn.k_proj.weight", {o.kv_heads * D, H});
        c.Add(l + "self_attn.v_proj.weight", {o.kv_heads * D, H});
        c.Add(l + "self_attn.o_proj.weight", {H, o.heads * D});
        c.Add(l + "self_attn.q_norm.weight", {D});
        c.Add(l + "self_attn.k_norm.weight", {D});
        continue;
      }
      const std::string la = l + "linear_attn.";
      if (type == "qwen3_next") {
        c.Add(la + "in_proj_qkvz.weight", {2 * hk * dk + 2 * hv * dv, H});
        c.Add(la + "in_proj_ba.weight", {2 * hv, H});
      } else {
        c.Add(la + "in_proj_qkv.weight", {channels, H});
        c.Add(la + "in_proj_z.weight", {hv * dv, H});
        c.Add(la + "in_proj_b.weight", {hv, H});
        c.Add(la + "in_proj_a.weight", {hv, H});
      }
      c.Add(la + "conv1d.weight", {channels, 1, 4});
      c.Add(la + "A_log", {hv});
      c.Add(la + "dt_bias", {hv});
      c.Add(la + "norm.weight", {dv});
      c.Add(la + "out_proj.weight", {H, hv * dv});
    }
    c.Add(p + "norm.weight", {H});
    if (!o.tied) c.Add("lm_head.weight", {V, H});
    if (type == "qwen3_5") {
      c.Add("model.visual.patch_embed.proj.weight", {8, 3, 2, 2, 2});
      c.Add("model.visual.blocks.0.attn.qkv.weight", {24, 8});
      c.Add("mtp.fc.weight", {H, 2 * H});
    }
  } else if (type == "roberta" || type == "xlm-roberta") {
    // RobertaForMaskedLM: positions start at pad_token_id + 1 = 2, so the table has P + 2 rows.
    c.config = {{"model_type", type},
                {"architectures", {"RobertaForMaskedLM"}},
                {"vocab_size", V},
                {"hidden_size", H},
                {"num_hidden_layers", L},
                {"num_attention_heads", o.heads},
                {"intermediate_size", I},
                {"max_position_embeddings", P + 2},
                {"type_vocab_size", 1},
                {"layer_norm_eps", 1e-5},
                {"hidden_act", "gelu"},
                {"pad_token_id", 1},
                {"bos_token_id", 0},
                {"eos_token_id", 2},
                {"position_embedding_type", "absolute"}};
    const std::string p = o.prefix ? "roberta." : "";
    c.Add(p + "embeddings.word_embeddings.weight", {V, H});
    c.Add(p + "embeddings.position_embeddings.weight", {P + 2, H});
    c.Add(p + "embeddings.token_type_embeddings.weight", {1, H});
    c.Add(p + "embeddings.LayerNorm.weight", {H});
    c.Add(p + "embeddings.LayerNorm.bias", {H});
    for (uint64_t i = 0; i < L; ++i) {
      const std::string l = p + "encoder.layer." + std::to_string(i) + ".";
      for (const char* m : {"attention.self.query", "attention.self.key", "attention.self.value",
                            "attention.output.dense"}) {
        c.Add(l + m + ".weight", {H, H});
        c.Add(l + m + ".bias", {H});
      }
      c.Add(l + "attention.output.LayerNorm.weight", {H});
      c.Add(l + "attention.output.LayerNorm.bias", {H});
      c.Add(l + "intermediate.dense.weight", {I, H});
      c.Add(l + "intermediate.dense.bias", {I});
      c.Add(l + "output.dense.weight", {H, I});
      c.Add(l + "output.dense.bias", {H});
      c.Add(l + "output.LayerNorm.weight", {H});
      c.Add(l + "output.LayerNorm.bias", {H});
    }
    if (o.prefix) {
      c.Add("lm_head.dense.weight", {H, H});
      c.Add("lm_head.dense.bias", {H});
      c.Add("lm_head.layer_norm.weight", {H});
      c.Add("lm_head.bias", {V});
    } else {
      c.Add("pooler.dense.weight", {H, H});
      c.Add("pooler.dense.bias", {H});
    }
  } else if (type == "distilbert") {
    c.config = {{"model_type", "distilbert"},
                {"architectures", {"DistilBertForMaskedLM"}},
                {"vocab_size", V},
                {"dim", H},
                {"n_layers", L},
                {"n_heads", o.heads},
                {"hidden_dim", I},
                {"max_position_embeddings", P},
                {"activation", "gelu"},
                {"sinusoidal_pos_embds", false},
                {"pad_token_id", 0}};
    const std::string p = o.prefix ? "distilbert." : "";
    c.Add(p + "embeddings.word_embeddings.weight", {V, H});
    c.Add(p + "embeddings.position_embeddings.weight", {P, H});
    c.Add(p + "embeddings.LayerNorm.weight", {H});
    c.Add(p + "embeddings.LayerNorm.bias", {H});
    for (uint64_t i = 0; i < L; ++i) {
      const std::string l = p + "transformer.layer." + std::to_string(i) + ".";
      for (const char* m :
           {"attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin"}) {
        c.Add(l + m + ".weight", {H, H});
        c.Add(l + m + ".bias", {H});
      }
      c.Add(l + "sa_layer_norm.weight", {H});
      c.Add(l + "sa_layer_norm.bias", {H});
      c.Add(l + "ffn.lin1.weight", {I, H});
      c.Add(l + "ffn.lin1.bias", {I});
      c.Add(l + "ffn.lin2.weight", {H, I});
      c.Add(l + "ffn.lin2.bias", {H});
      c.Add(l + "output_layer_norm.weight", {H});
      c.Add(l + "output_layer_norm.bias", {H});
    }
    if (o.prefix) {
      c.Add("vocab_transform.weight", {H, H});
      c.Add("vocab_transform.bias", {H});
      c.Add("vocab_layer_norm.weight", {H});
      c.Add("vocab_layer_norm.bias", {H});
      c.Add("vocab_projector.bias", {V});
    }
  } else if (type == "gpt2") {
    c.config = {{"model_type", "gpt2"},
                {"architectures", {"GPT2LMHeadModel"}},
                {"vocab_size", V},
                {"n_embd", H},
                {"n_layer", L},
                {"n_head", o.heads},
                {"n_positions", P},
                {"n_inner", I},
                {"layer_norm_epsilon", 1e-5},
                {"activation_function", "gelu_new"},
                {"bos_token_id", V - 1},
                {"eos_token_id", V - 1}};
    const std::string p = o.prefix ? "transformer." : "";
    c.Add(p + "wte.weight", {V, H});
    c.Add(p + "wpe.weight", {P, H});
    for (uint64_t i = 0; i < L; ++i) {
      const std::string l = p + "h." + std::to_string(i) + ".";
      c.Add(l + "ln_1.weight", {H});
      c.Add(l + "ln_1.bias", {H});
      c.Add(l + "attn.c_attn.weight", {H, 3 * H});
      c.Add(l + "attn.c_attn.bias", {3 * H});
      c.Add(l + "attn.c_proj.weight", {H, H});
      c.Add(l + "attn.c_proj.bias", {H});
      c.Add(l + "attn.bias", {1, 1, P, P});
      c.Add(l + "attn.masked_bias", {});
      c.Add(l + "ln_2.weight", {H});
      c.Add(l + "ln_2.bias", {H});
      c.Add(l + "mlp.c_fc.weight", {H, I});
      c.Add(l + "mlp.c_fc.bias", {I});
      c.Add(l + "mlp.c_proj.weight", {I, H});
      c.Add(l + "mlp.c_proj.bias", {H});
    }
    c.Add(p + "ln_f.weight", {H});
    c.Add(p + "ln_f.bias", {H});
  } else if (type == "llama" || type == "qwen2" || type == "qwen3" || type == "mistral") {
    // qwen3: an explicit head_dim twice hidden / heads, as Qwen3's configs often have.
    const uint64_t hd = type == "qwen3" ? 2 * H / o.heads : H / o.heads;
    c.config = {{"model_type", type},
                {"vocab_size", V},
                {"hidden_size", H},
                {"intermediate_size", I},
                {"num_hidden_layers", L},
                {"num_attention_heads", o.heads},
                {"num_key_value_heads", o.kv_heads},
                {"max_position_embeddings", P},
                {"rms_norm_eps", 1e-6},
                {"rope_theta", 10000.0},
                {"hidden_act", "silu"},
                {"tie_word_embeddings", o.tied},
                {"bos_token_id", 1},
                {"eos_token_id", 2}};
    if (type == "mistral") c.config["sliding_window"] = 8;
    if (type == "qwen3") {
      c.config["head_dim"] = hd;
      c.config["attention_bias"] = false;
      c.config["use_sliding_window"] = false;
      c.config["sliding_window"] = nullptr;
      c.config["max_window_layers"] = L;
    }
    const std::string p = o.prefix ? "model." : "";
    c.Add(p + "embed_tokens.weight", {V, H});
    for (uint64_t i = 0; i < L; ++i) {
      const std::string l = p + "layers." + std::to_string(i) + ".";
      c.Add(l + "input_layernorm.weight", {H});
      c.Add(l + "self_attn.q_proj.weight", {o.heads * hd, H});
      c.Add(l + "self_attn.k_proj.weight", {o.kv_heads * hd, H});
      c.Add(l + "self_attn.v_proj.weight", {o.kv_heads * hd, H});
      if (type == "qwen2") {
        c.Add(l + "self_attn.q_proj.bias", {o.heads * hd});
        c.Add(l + "self_attn.k_proj.bias", {o.kv_heads * hd});
        c.Add(l + "self_attn.v_proj.bias", {o.kv_heads * hd});
      }
      c.Add(l + "self_attn.o_proj.weight", {H, o.heads * hd});
      if (type == "qwen3") {
        c.Add(l + "self_attn.q_norm.weight", {hd});
        c.Add(l + "self_attn.k_norm.weight", {hd});
      }
      c.Add(l + "post_attention_layernorm.weight", {H});
      c.Add(l + "mlp.gate_proj.weight", {I, H});
      c.Add(l + "mlp.up_proj.weight", {I, H});
      c.Add(l + "mlp.down_proj.weight", {H, I});
    }
    c.Add(p + "norm.weight", {H});
    if (!o.tied) c.Add("lm_head.weight", {V, H});
  } else if (type == "phi3") {
    // Fused projections: qkv_proj rows Q, K, V; gate_up_proj rows gate, up.
    const uint64_t hd = H / o.heads;
    c.config = {{"model_type", "phi3"},
                {"vocab_size", V},
                {"hidden_size", H},
                {"intermediate_size", I},
                {"num_hidden_layers", L},
                {"num_attention_heads", o.heads},
                {"num_key_value_heads", o.kv_heads},
                {"max_position_embeddings", P},
                {"original_max_position_embeddings", P},
                {"rms_norm_eps", 1e-5},
                {"rope_theta", 10000.0},
                {"rope_scaling", nullptr},
                {"partial_rotary_factor", 0.5},
                {"sliding_window", 6},
                {"hidden_act", "silu"},
                {"tie_word_embeddings", o.tied},
                {"bos_token_id", 1},
                {"eos_token_id", 2}};
    c.Add("model.embed_tokens.weight", {V, H});
    for (uint64_t i = 0; i < L; ++i) {
      const std::string l = "model.layers." + std::to_string(i) + ".";
      c.Add(l + "input_layernorm.weight", {H});
      c.Add(l + "self_attn.qkv_proj.weight", {(o.heads + 2 * o.kv_heads) * hd, H});
      c.Add(l + "self_attn.o_proj.weight", {H, o.heads * hd});
      c.Add(l + "post_attention_layernorm.weight", {H});
      c.Add(l + "mlp.gate_up_proj.weight", {2 * I, H});
      c.Add(l + "mlp.down_proj.weight", {H, I});
    }
    c.Add("model.norm.weight", {H});
    if (!o.tied) c.Add("lm_head.weight", {V, H});
  } else if (type == "gemma" || type == "gemma2" || type == "gemma3_text") {
    const bool sandwich = type != "gemma";
    const uint64_t hd = H / o.heads;
    c.config = {{"model_type", type},
                {"vocab_size", V},
                {"hidden_size", H},
                {"intermediate_size", I},
                {"num_hidden_layers", L},
                {"num_attention_heads", o.heads},
                {"num_key_value_heads", o.kv_heads},
                {"head_dim", hd},
                {"max_position_embeddings", P},
                {"rms_norm_eps", 1e-6},
                {"rope_theta", 10000.0},
                {"hidden_activation", "gelu_pytorch_tanh"},
                {"tie_word_embeddings", o.tied},
                {"bos_token_id", 2},
                {"eos_token_id", 1}};
    if (sandwich) {
      c.config["query_pre_attn_scalar"] = hd;
      c.config["sliding_window"] = 8;
    }
    if (type == "gemma3_text") {
      c.config["sliding_window_pattern"] = 2;
      c.config["rope_local_base_freq"] = 10000.0;
      c.config["rope_theta"] = 1000000.0;
    }
    const std::string p = o.prefix ? "model." : "";
    c.Add(p + "embed_tokens.weight", {V, H});
    for (uint64_t i = 0; i < L; ++i) {
      const std::string l = p + "layers." + std::to_string(i) + ".";
      c.Add(l + "input_layernorm.weight", {H});
      c.Add(l + "self_attn.q_proj.weight", {o.heads * hd, H});
      c.Add(l + "self_attn.k_proj.weight", {o.kv_heads * hd, H});
      c.Add(l + "self_attn.v_proj.weight", {o.kv_heads * hd, H});
      c.Add(l + "self_attn.o_proj.weight", {H, o.heads * hd});
      if (type == "gemma3_text") {
        c.Add(l + "self_attn.q_norm.weight", {hd});
        c.Add(l + "self_attn.k_norm.weight", {hd});
      }
      c.Add(l + "post_attention_layernorm.weight", {H});
      if (sandwich) {
        c.Add(l + "pre_feedforward_layernorm.weight", {H});
        c.Add(l + "post_feedforward_layernorm.weight", {H});
      }
      c.Add(l + "mlp.gate_proj.weight", {I, H});
      c.Add(l + "mlp.up_proj.weight", {I, H});
      c.Add(l + "mlp.down_proj.weight", {H, I});
    }
    c.Add(p + "norm.weight", {H});
    if (!o.tied) c.Add("lm_head.weight", {V, H});
  } else if (type == "marian") {
    c.config = {{"model_type", "marian"},
                {"vocab_size", V},
                {"d_model", H},
                {"encoder_layers", L},
                {"decoder_layers", L},
                {"encoder_attention_heads", o.heads},
                {"decoder_attention_heads", o.heads},
                {"encoder_ffn_dim", I},
                {"decoder_ffn_dim", I},
                {"max_position_embeddings", P},
                {"activation_function", "swish"},
                {"scale_embedding", true},
                {"pad_token_id", V - 1},
                {"eos_token_id", 0},
                {"decoder_start_token_id", V - 1}};
    const std::string p = o.prefix ? "model." : "";
    c.Add(p + "shared.weight", {V, H});
    c.AddCopy(p + "encoder.embed_tokens.weight", p + "shared.weight");
    c.AddCopy(p + "decoder.embed_tokens.weight", p + "shared.weight");
    c.Add(p + "encoder.embed_positions.weight", {P, H}).values =
        MarianSinusoids(o.max_positions, o.hidden);
    c.Add(p + "decoder.embed_positions.weight", {P, H}).values =
        MarianSinusoids(o.max_positions, o.hidden);
    for (const std::string stack : {"encoder", "decoder"}) {
      for (uint64_t i = 0; i < L; ++i) {
        const std::string l = p + stack + ".layers." + std::to_string(i) + ".";
        std::vector<std::string> attentions = {"self_attn"};
        if (stack == "decoder") attentions.push_back("encoder_attn");
        for (const std::string& a : attentions) {
          for (const char* proj : {"k_proj", "v_proj", "q_proj", "out_proj"}) {
            c.Add(l + a + "." + proj + ".weight", {H, H});
            c.Add(l + a + "." + proj + ".bias", {H});
          }
          c.Add(l + a + "_layer_norm.weight", {H});
          c.Add(l + a + "_layer_norm.bias", {H});
        }
        c.Add(l + "fc1.weight", {I, H});
        c.Add(l + "fc1.bias", {I});
        c.Add(l + "fc2.weight", {H, I});
        c.Add(l + "fc2.bias", {H});
        c.Add(l + "final_layer_norm.weight", {H});
        c.Add(l + "final_layer_norm.bias", {H});
      }
    }
    c.Add("final_logits_bias", {1, V});
    c.AddCopy("lm_head.weight", p + "shared.weight");
  } else if (type == "t5") {
    const uint64_t dkv = 6, inner = o.heads * dkv, buckets = 8;
    c.config = {{"model_type", "t5"},
                {"vocab_size", V},
                {"d_model", H},
                {"d_kv", dkv},
                {"d_ff", I},
                {"num_layers", L},
                {"num_decoder_layers", L},
                {"num_heads", o.heads},
                {"relative_attention_num_buckets", buckets},
                {"relative_attention_max_distance", 20},
                {"layer_norm_epsilon", 1e-6},
                {"feed_forward_proj", "relu"},
                {"tie_word_embeddings", o.tied},
                {"pad_token_id", 0},
                {"eos_token_id", 1},
                {"decoder_start_token_id", 0}};
    c.Add("shared.weight", {V, H});
    c.AddCopy("encoder.embed_tokens.weight", "shared.weight");
    c.AddCopy("decoder.embed_tokens.weight", "shared.weight");
    for (const std::string stack : {"encoder", "decoder"}) {
      for (uint64_t i = 0; i < L; ++i) {
        const std::string l = stack + ".block." + std::to_string(i) + ".layer.";
        for (const char* m : {"q", "k", "v"})
          c.Add(l + "0.SelfAttention." + m + ".weight", {inner, H});
        c.Add(l + "0.SelfAttention.o.weight", {H, inner});
        if (i == 0) c.Add(l + "0.SelfAttention.relative_attention_bias.weight", {buckets, o.heads});
        c.Add(l + "0.layer_norm.weight", {H});
        std::string ffn = "1";
        if (stack == "decoder") {
          for (const char* m : {"q", "k", "v"})
            c.Add(l + "1.EncDecAttention." + m + ".weight", {inner, H});
          c.Add(l + "1.EncDecAttention.o.weight", {H, inner});
          c.Add(l + "1.layer_norm.weight", {H});
          ffn = "2";
        }
        c.Add(l + ffn + ".DenseReluDense.wi.weight", {I, H});
        c.Add(l + ffn + ".DenseReluDense.wo.weight", {H, I});
        c.Add(l + ffn + ".layer_norm.weight", {H});
      }
      c.Add(stack + ".final_layer_norm.weight", {H});
    }
    if (!o.tied) c.Add("lm_head.weight", {V, H});
  } else {
    throw std::runtime_error("no fixture for model_type " + type);
  }
  return c;
}

}  // namespace testing
}  // namespace octet
