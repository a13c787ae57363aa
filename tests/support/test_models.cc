#include "support/test_models.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

#include "format/tensor_names.h"
#include "kernels/qs8_packed_gemm.h"

namespace octet {
namespace testing {
namespace {

// Int8 per-output-channel quantization of a [rows, cols] float matrix.
// packed (int8 only): in the GEMM's packed tiles, as octet-convert stores the
// matrices that products read.
void AddMatrix(ModelWriter& writer, const std::string& name, uint32_t rows, uint32_t cols,
               bool int8, std::mt19937& rng, float stddev = 0.02f, bool packed = false) {
  std::normal_distribution<float> normal(0.0f, stddev);
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
  if (packed) {
    std::vector<int8_t> packed(qs8_pack_weights_size(rows, cols));
    qs8_pack_weights__ref(rows, cols, q.data(), cols, packed.data());
    writer.AddPackedQs8Copy(name, {rows, cols}, packed.data(), packed.size(), std::move(quant));
    return;
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
    case fb::Family::DistilBert:
    case fb::Family::Roberta:
    case fb::Family::XlmRoberta:
      a.structure = fb::Structure::EncoderOnly;
      a.num_layers = o.layers;
      a.norm = fb::NormKind::LayerNorm;
      a.norm_placement = fb::NormPlacement::Post;
      a.norm_eps = 1e-12f;
      a.position = fb::PositionKind::Learned;
      a.max_positions = 64;
      a.type_vocab_size = o.family == fb::Family::DistilBert ? 0 : 2;
      a.position_offset = o.position_offset;
      a.attention->qkv_bias = true;
      a.attention->out_bias = true;
      a.pad_token_id =
          o.family == fb::Family::Roberta || o.family == fb::Family::XlmRoberta ? 1 : 0;
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
    case fb::Family::Gemma2:
      // Llama's decoder with Gemma 2's extras: sandwich norms, soft-capped
      // attention and final logits (caps small enough to bend this model's
      // logits), sliding layers alternating with global ones.
      a.structure = fb::Structure::DecoderOnly;
      a.num_layers = o.layers;
      a.norm = fb::NormKind::RmsNorm;
      a.norm_eps = 1e-6f;
      a.activation = fb::Activation::GeluTanh;
      a.gated_ffn = true;
      a.position = fb::PositionKind::Rope;
      a.rope = std::make_unique<fb::RopeT>();
      a.max_positions = 2048;
      a.embedding_scale = 4.0f;
      a.sandwich_norms = true;
      a.final_logit_softcap = 0.05f;
      a.attention->logit_softcap = 0.02f;
      a.attention->sliding_window = 3;
      for (uint32_t i = 0; i < o.layers; ++i) a.attention->sliding_layers.push_back(i % 2 == 0);
      a.bos_token_id = 2;
      a.eos_token_id = 1;
      break;
    case fb::Family::Qwen35:
      // Gated DeltaNets in even layers, gated attention with Q/K norms and a partial
      // RoPE (half of each head) in odd ones.
      a.structure = fb::Structure::DecoderOnly;
      a.num_layers = o.layers;
      a.norm = fb::NormKind::RmsNorm;
      a.norm_eps = 1e-6f;
      a.activation = fb::Activation::Silu;
      a.gated_ffn = true;
      a.position = fb::PositionKind::Rope;
      a.rope = std::make_unique<fb::RopeT>();
      a.rope->theta = 10000000.0f;
      a.rope->rotary_dim = a.attention->head_dim / 2;
      a.max_positions = 2048;
      a.attention->qk_norm = true;
      a.attention->output_gate = true;
      for (uint32_t i = 0; i < o.layers; ++i) {
        a.layer_mixers.push_back(i % 2 == 1 ? fb::TokenMixer::Attention
                                            : fb::TokenMixer::GatedDeltaNet);
      }
      a.bos_token_id = 1;
      a.eos_token_id = 2;
      break;
    case fb::Family::Rwkv:
      // RWKV-4: LayerNorms (the embeddings' too), time mixes and channel mixes
      // in every layer, per-layer norm epsilons as a rescaling every 2 layers
      // leaves them; the attention table is a placeholder no layer reads.
      a.structure = fb::Structure::DecoderOnly;
      a.num_layers = o.layers;
      a.norm = fb::NormKind::LayerNorm;
      a.norm_eps = 1e-5f;
      a.activation = fb::Activation::Relu;
      a.position = fb::PositionKind::None;
      a.attention->num_heads = 1;
      a.attention->num_kv_heads = 1;
      a.attention->head_dim = 8;
      a.channel_mixer = fb::ChannelMixer::RwkvChannelMix;
      for (uint32_t i = 0; i < o.layers; ++i) {
        a.layer_mixers.push_back(fb::TokenMixer::RwkvTimeMix);
        a.layer_norm_eps.push_back(1e-5f * static_cast<float>(1u << (2 * (i / 2))));
      }
      a.final_norm_eps = 1e-5f * static_cast<float>(1u << (2 * (o.layers / 2)));
      a.bos_token_id = 0;
      a.eos_token_id = 0;
      break;
    case fb::Family::Lfm2:
      // Llama's decoder with Q/K norms in its attention layers and short
      // convolutions in the others.
      a.structure = fb::Structure::DecoderOnly;
      a.num_layers = o.layers;
      a.norm = fb::NormKind::RmsNorm;
      a.norm_eps = 1e-5f;
      a.activation = fb::Activation::Silu;
      a.gated_ffn = true;
      a.position = fb::PositionKind::Rope;
      a.rope = std::make_unique<fb::RopeT>();
      a.rope->theta = 1000000.0f;
      a.max_positions = 2048;
      a.attention->qk_norm = true;
      for (uint32_t i = 0; i < o.layers; ++i) {
        a.layer_mixers.push_back(i % 2 == 0 ? fb::TokenMixer::ShortConv : fb::TokenMixer::Attention);
      }
      a.bos_token_id = 1;
      a.eos_token_id = 7;
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
  if (o.max_positions != 0 && a.max_positions != 0) a.max_positions = o.max_positions;
  if (!o.mixers.empty()) a.layer_mixers = o.mixers;
  if (o.set_channel_mixer) a.channel_mixer = o.channel_mixer;
  for (fb::TokenMixer m : a.layer_mixers) {
    if (m == fb::TokenMixer::ShortConv && a.short_conv == nullptr) {
      a.short_conv = std::make_unique<fb::ShortConvT>();
      a.short_conv->kernel = o.conv_kernel;
      a.short_conv->bias = o.conv_bias;
    }
    if (m == fb::TokenMixer::GatedDeltaNet && a.linear_attention == nullptr) {
      // Two key heads, each read by two value heads.
      a.linear_attention = std::make_unique<fb::LinearAttentionT>();
      a.linear_attention->key_heads = 2;
      a.linear_attention->value_heads = 4;
      a.linear_attention->key_dim = o.hidden / 4;
      a.linear_attention->value_dim = o.hidden / 4;
      a.linear_attention->conv_kernel = 4;
    }
  }
  return a;
}

ModelWriter MakeTinyModelWriter(const TinyModelOptions& o) {
  ModelWriter writer;
  const fb::ArchitectureT arch = TinyArchitecture(o);
  writer.SetArchitecture(arch);
  std::mt19937 rng(o.seed);
  const uint32_t h = o.hidden;
  const bool packed = o.packed && o.layers > 0;  // layer-free tests read the head row-major
  // A decoder's tied table is its head too: packed, as octet-convert writes it.
  const bool packed_table = packed && o.tied && arch.structure != fb::Structure::EncoderOnly;
  AddMatrix(writer, "token_embedding", o.vocab, h, o.int8, rng, 0.02f, packed_table);
  if (!o.tied) AddMatrix(writer, "lm_head", o.vocab, h, o.int8, rng, 0.02f, packed);
  const bool two_digits = o.int8 && o.two_digit_inputs;
  if (two_digits) {
    const bool head = arch.structure != fb::Structure::EncoderOnly;
    if (head) writer.SetInputBits(o.tied ? "token_embedding" : "lm_head", 16);
  }
  if (arch.position == fb::PositionKind::Learned) {
    AddMatrix(writer, "position_embedding", arch.position_offset + arch.max_positions, h, false,
              rng);
  }
  if (arch.type_vocab_size > 0) {
    AddMatrix(writer, "token_type_embedding", arch.type_vocab_size, h, false, rng);
  }
  // Complete, correctly shaped layers (runtime/format/tensor_names.h): biases
  // exactly where the architecture has them, cross-attention in the decoder
  // layers of encoder-decoders, the gate of gated feed-forwards.
  const bool enc_dec = arch.structure == fb::Structure::EncoderDecoder;
  const bool layer_norm = arch.norm == fb::NormKind::LayerNorm;
  const bool ffn_bias = FamilyHasFfnBias(o.family);
  const uint32_t inter = arch.intermediate_size;
  const uint32_t q_rows = arch.attention->num_heads * arch.attention->head_dim;
  const uint32_t kv_rows = arch.attention->num_kv_heads * arch.attention->head_dim;
  std::normal_distribution<float> small(0.0f, 0.02f);
  auto add_norm = [&](const std::string& name) {
    AddVector(writer, name + ".weight", h, 1.0f);
    if (layer_norm) AddVector(writer, name + ".bias", h, small(rng));
  };
  auto add_linear = [&](const std::string& name, uint32_t rows, uint32_t cols, bool bias) {
    AddMatrix(writer, name + ".weight", rows, cols, o.int8, rng, o.layer_stddev, packed);
    if (two_digits) writer.SetInputBits(name + ".weight", 16);
    if (bias) AddVector(writer, name + ".bias", rows, small(rng));
  };
  auto add_attention = [&](const std::string& block) {
    add_linear(block + ".q", q_rows, h, arch.attention->qkv_bias);
    add_linear(block + ".k", kv_rows, h, arch.attention->qkv_bias);
    add_linear(block + ".v", kv_rows, h, arch.attention->qkv_bias);
    add_linear(block + ".o", h, q_rows, arch.attention->out_bias);
  };
  // A layer's token mixer (decoder-only and encoder-only stacks).
  auto mixer_of = [&](uint32_t layer) {
    return layer < arch.layer_mixers.size() ? arch.layer_mixers[layer]
                                            : fb::TokenMixer::Attention;
  };
  auto add_gated_deltanet = [&](const std::string& p) {
    const fb::LinearAttentionT& l = *arch.linear_attention;
    const uint32_t channels = 2 * l.key_heads * l.key_dim + l.value_heads * l.value_dim;
    const uint32_t values = l.value_heads * l.value_dim;
    add_linear(p + "lin.in_qkv", channels, h, false);
    add_linear(p + "lin.in_z", values, h, false);
    add_linear(p + "lin.in_b", l.value_heads, h, false);
    add_linear(p + "lin.in_a", l.value_heads, h, false);
    AddMatrix(writer, p + "lin.conv.weight", channels, l.conv_kernel, false, rng, 0.5f);
    // Decays from slow to fast over the heads.
    std::vector<float> a_log(l.value_heads), dt_bias(l.value_heads);
    for (uint32_t v = 0; v < l.value_heads; ++v) {
      a_log[v] = std::log(0.05f + 0.4f * static_cast<float>(v));
      dt_bias[v] = -0.5f + 0.25f * static_cast<float>(v);
    }
    writer.AddTensorCopy(p + "lin.a_log", fb::DType::F32, {l.value_heads}, a_log.data());
    writer.AddTensorCopy(p + "lin.dt_bias", fb::DType::F32, {l.value_heads}, dt_bias.data());
    AddVector(writer, p + "lin.norm.weight", l.value_dim, 1.0f);
    add_linear(p + "lin.out", h, values, false);
  };
  // RWKV's mixes in [0, 1], decay speeds from slow to fast, bonuses around log(0.3).
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  auto add_mixes = [&](const std::string& p, std::initializer_list<const char*> names) {
    for (const char* name : names) {
      std::vector<float> mix(h);
      for (float& m : mix) m = unit(rng);
      writer.AddTensorCopy(p + name, fb::DType::F32, {h}, mix.data());
    }
  };
  auto add_time_mix = [&](const std::string& p) {
    add_mixes(p, {"time_mix.mix_k", "time_mix.mix_v", "time_mix.mix_r"});
    std::vector<float> decay(h), first(h);
    for (uint32_t i = 0; i < h; ++i) {
      decay[i] = -5.0f + 8.0f * static_cast<float>(i) / static_cast<float>(h - 1);
      first[i] = -1.2f + 0.5f * static_cast<float>(static_cast<int>((i + 1) % 3) - 1);
    }
    writer.AddTensorCopy(p + "time_mix.decay", fb::DType::F32, {h}, decay.data());
    writer.AddTensorCopy(p + "time_mix.first", fb::DType::F32, {h}, first.data());
    for (const char* m : {"key", "value", "receptance", "output"}) {
      add_linear(p + "time_mix." + m, h, h, false);
    }
  };
  auto add_short_conv = [&](const std::string& p) {
    const uint32_t taps = arch.short_conv->kernel;
    add_linear(p + "conv.in_proj", 3 * h, h, arch.short_conv->bias);
    // Taps of O(1): the gates' products stay O(1) too.
    AddMatrix(writer, p + "conv.conv.weight", h, taps, false, rng, 0.6f);
    if (arch.short_conv->bias) AddVector(writer, p + "conv.conv.bias", h, small(rng));
    add_linear(p + "conv.out_proj", h, h, arch.short_conv->bias);
  };
  const std::vector<std::string> stacks =
      enc_dec ? std::vector<std::string>{"encoder.", "decoder."} : std::vector<std::string>{""};
  for (const std::string& stack : stacks) {
    for (uint32_t i = 0; i < o.layers; ++i) {
      const std::string p = stack + "layers." + std::to_string(i) + ".";
      add_norm(p + "attn_norm");
      const fb::TokenMixer mixer = enc_dec ? fb::TokenMixer::Attention : mixer_of(i);
      if (mixer == fb::TokenMixer::Attention) {
        add_attention(p + "attn");
        if (arch.attention->qk_norm) {
          AddVector(writer, p + "attn.q_norm.weight", arch.attention->head_dim, 1.0f);
          AddVector(writer, p + "attn.k_norm.weight", arch.attention->head_dim, 1.0f);
        }
        if (arch.attention->output_gate) add_linear(p + "attn.gate", q_rows, h, false);
      } else if (mixer == fb::TokenMixer::ShortConv) {
        add_short_conv(p);
      } else if (mixer == fb::TokenMixer::GatedDeltaNet) {
        add_gated_deltanet(p);
      } else if (mixer == fb::TokenMixer::RwkvTimeMix) {
        add_time_mix(p);
      }
      if (stack == "decoder.") {
        add_norm(p + "cross_attn_norm");
        add_attention(p + "cross_attn");
      }
      if (arch.sandwich_norms) add_norm(p + "post_attn_norm");
      add_norm(p + "ffn_norm");
      if (arch.sandwich_norms) add_norm(p + "post_ffn_norm");
      if (arch.channel_mixer == fb::ChannelMixer::RwkvChannelMix) {
        add_mixes(p, {"channel_mix.mix_k", "channel_mix.mix_r"});
        add_linear(p + "channel_mix.key", inter, h, false);
        add_linear(p + "channel_mix.receptance", h, h, false);
        add_linear(p + "channel_mix.value", h, inter, false);
        continue;
      }
      if (arch.gated_ffn) add_linear(p + "ffn.gate", inter, h, false);
      add_linear(p + "ffn.up", inter, h, ffn_bias);
      add_linear(p + "ffn.down", h, inter, ffn_bias);
    }
  }
  // Model-level norms and tables. (Layer-free BERT models keep no embedding
  // norm: tests check their raw embeddings.)
  if ((FamilyIsBertLike(o.family) || o.family == fb::Family::Rwkv) && o.layers > 0) {
    add_norm("embedding_norm");
  }
  if (enc_dec) {
    add_norm("encoder.final_norm");
    add_norm("decoder.final_norm");
  } else if (o.family == fb::Family::Rwkv) {
    add_norm("final_norm");
  } else {
    AddVector(writer, "final_norm.weight", h, 1.0f);
  }
  if (arch.position == fb::PositionKind::RelativeBias) {
    for (const char* table : {"encoder.relative_bias", "decoder.relative_bias"}) {
      AddMatrix(writer, table, arch.attention->relative_buckets, arch.attention->num_heads, false,
                rng);
    }
  }
  if (o.family == fb::Family::Marian) AddVector(writer, "final_logits_bias", o.vocab, 0.01f);

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
