#include "support/test_models.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

namespace octet {
namespace testing {
namespace {

// Int8 per-output-channel quantization of a [rows, cols] float matrix.
void AddMatrix(ModelWriter& writer, const std::string& name, uint32_t rows, uint32_t cols,
               bool int8, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> values(static_cast<size_t>(rows) * cols);
  for (float& v : values) v = normal(rng);
  if (!int8) {
    writer.AddTensorCopy(name, fb::DType::F32, {rows, cols}, values.data());
    return;
  }
  QuantParams quant;
  quant.scheme = fb::QuantScheme::PerChannel;
  quant.axis = 0;
  std::vector<int8_t> q(values.size());
  for (uint32_t r = 0; r < rows; ++r) {
    float max_abs = 0.0f;
    for (uint32_t c = 0; c < cols; ++c) max_abs = std::fmax(max_abs, std::fabs(values[r * cols + c]));
    const float scale = max_abs > 0.0f ? max_abs / 127.0f : 1.0f;
    quant.scales.push_back(scale);
    for (uint32_t c = 0; c < cols; ++c) {
      q[r * cols + c] = static_cast<int8_t>(std::lrint(values[r * cols + c] / scale));
    }
  }
  writer.AddTensorCopy(name, fb::DType::I8, {rows, cols}, q.data(), std::move(quant));
}

void AddVector(ModelWriter& writer, const std::string& name, uint32_t n, float value) {
  std::vector<float> values(n, value);
  writer.AddTensorCopy(name, fb::DType::F32, {n}, values.data());
}

}  // namespace

fb::ArchitectureT TinyArchitecture(const TinyModelOptions& o) {
  fb::ArchitectureT a;
  a.family = o.family;
  a.vocab_size = o.vocab;
  a.hidden_size = o.hidden;
  a.intermediate_size = o.hidden * 2;
  a.attention = std::make_unique<fb::AttentionT>();
  a.attention->num_heads = 2;
  a.attention->num_kv_heads = 2;
  a.attention->head_dim = o.hidden / 2;
  a.tied_embeddings = o.tied;
  switch (o.family) {
    case fb::Family::Bert:
      a.structure = fb::Structure::EncoderOnly;
      a.num_layers = o.layers;
      a.norm = fb::NormKind::LayerNorm;
      a.norm_placement = fb::NormPlacement::Post;
      a.norm_eps = 1e-12f;
      a.position = fb::PositionKind::Learned;
      a.max_positions = 64;
      a.type_vocab_size = 2;
      a.attention->qkv_bias = true;
      a.attention->out_bias = true;
      a.pad_token_id = 0;
      break;
    case fb::Family::T5:
    case fb::Family::Marian:
      a.structure = fb::Structure::EncoderDecoder;
      a.num_layers = o.layers;
      a.num_decoder_layers = o.layers;
      a.norm = fb::NormKind::RmsNorm;
      a.norm_eps = 1e-6f;
      a.activation = fb::Activation::Relu;
      a.position = fb::PositionKind::RelativeBias;
      a.attention->scale = 1.0f;
      a.attention->relative_buckets = 32;
      a.attention->relative_max_distance = 128;
      a.pad_token_id = 0;
      a.eos_token_id = 1;
      a.decoder_start_token_id = 0;
      break;
    default:
      a.structure = fb::Structure::DecoderOnly;
      a.num_layers = o.layers;
      a.norm = fb::NormKind::RmsNorm;
      a.norm_eps = 1e-5f;
      a.activation = fb::Activation::Silu;
      a.gated_ffn = true;
      a.position = fb::PositionKind::Rope;
      a.rope = std::make_unique<fb::RopeT>();
      a.max_positions = 2048;
      a.bos_token_id = 1;
      a.eos_token_id = 2;
      break;
  }
  return a;
}

ModelWriter MakeTinyModelWriter(const TinyModelOptions& o) {
  ModelWriter writer;
  const fb::ArchitectureT arch = TinyArchitecture(o);
  writer.SetArchitecture(arch);
  std::mt19937 rng(o.seed);
  const uint32_t h = o.hidden;
  AddMatrix(writer, "token_embedding", o.vocab, h, o.int8, rng);
  if (!o.tied) AddMatrix(writer, "lm_head", o.vocab, h, o.int8, rng);
  if (arch.position == fb::PositionKind::Learned) {
    AddMatrix(writer, "position_embedding", arch.max_positions, h, false, rng);
  }
  if (arch.type_vocab_size > 0) {
    AddMatrix(writer, "token_type_embedding", arch.type_vocab_size, h, false, rng);
  }
  const bool enc_dec = arch.structure == fb::Structure::EncoderDecoder;
  const std::vector<std::string> stacks =
      enc_dec ? std::vector<std::string>{"encoder.", "decoder."} : std::vector<std::string>{""};
  for (const std::string& stack : stacks) {
    for (uint32_t i = 0; i < o.layers; ++i) {
      const std::string p = stack + "layers." + std::to_string(i) + ".";
      for (const char* proj : {"attn.q", "attn.k", "attn.v", "attn.o"}) {
        AddMatrix(writer, p + proj + ".weight", h, h, o.int8, rng);
      }
      AddMatrix(writer, p + "ffn.up.weight", h * 2, h, o.int8, rng);
      AddMatrix(writer, p + "ffn.down.weight", h, h * 2, o.int8, rng);
      AddVector(writer, p + "attn_norm.weight", h, 1.0f);
      AddVector(writer, p + "ffn_norm.weight", h, 1.0f);
    }
  }
  AddVector(writer, "final_norm.weight", h, 1.0f);

  if (o.tokenizer) {
    const std::string json = R"({"version":"1.0","model":{"type":"BPE","vocab":{}}})";
    writer.SetTokenizerKind(fb::TokenizerKind::HfTokenizerJson);
    writer.AddTokenizerFile("tokenizer.json", json.data(), json.size());
  }
  fb::ProvenanceT provenance;
  provenance.source = "synthetic tiny model (tests/support/test_models.cc)";
  provenance.converter = "octet tests";
  provenance.quantization = o.int8 ? "int8 symmetric per output channel" : "fp32";
  auto error = std::make_unique<fb::LayerErrorT>();
  error->name = "token_embedding";
  error->sqnr_db = 38.5f;
  provenance.layer_errors.push_back(std::move(error));
  writer.SetProvenance(provenance);
  fb::MemoryPlanT plan;
  plan.max_batch = 1;
  plan.max_seq = 64;
  auto activations = std::make_unique<fb::ArenaPlanT>();
  activations->kind = fb::ArenaKind::Activations;
  activations->bytes = 64 * h * 4;
  plan.arenas.push_back(std::move(activations));
  writer.SetMemoryPlan(plan);
  return writer;
}

std::vector<uint8_t> MakeTinyModelBytes(const TinyModelOptions& options) {
  return MakeTinyModelWriter(options).WriteToBuffer();
}

AlignedBytes::AlignedBytes(size_t size) : size_(size) {
  data_ = static_cast<uint8_t*>(std::aligned_alloc(64, (size + 63) / 64 * 64 + 64));
  std::memset(data_, 0, (size + 63) / 64 * 64 + 64);
}

AlignedBytes::AlignedBytes(const std::vector<uint8_t>& bytes) : AlignedBytes(bytes.size()) {
  if (!bytes.empty()) std::memcpy(data_, bytes.data(), bytes.size());
}

AlignedBytes::~AlignedBytes() { std::free(data_); }

TempFile::TempFile(const std::string& suffix) {
  const char* dir = std::getenv("TMPDIR");
  std::string pattern = std::string(dir ? dir : "/tmp") + "/octet-test-XXXXXX" + suffix;
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  const int fd = mkstemps(buffer.data(), static_cast<int>(suffix.size()));
  if (fd >= 0) close(fd);
  path_ = buffer.data();
}

TempFile::~TempFile() { unlink(path_.c_str()); }

}  // namespace testing
}  // namespace octet
