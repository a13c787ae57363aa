#include "import/importer.h"

#include <memory>

#include "format/model.h"
#include "import/error.h"

namespace octet {
namespace convert {

const char kSupportedModelTypes[] =
    "bert, distilbert, roberta, xlm-roberta, gpt2, llama, qwen2, qwen3, mistral, phi3, gemma, "
    "gemma2, gemma3_text, marian, t5, modernbert, lfm2, qwen3_5, qwen3_5_text, qwen3_next, rwkv";

std::string SupportedModelType(const ConfigView& config) {
  const nlohmann::json* type = config.Find("model_type");
  if (type == nullptr) {
    Fail(config.where(), " has no model_type (expected one of: ", kSupportedModelTypes, ")");
  }
  if (!type->is_string()) config.Invalid("model_type", "a string");
  const std::string t = type->get<std::string>();
  for (const char* known : {"bert", "distilbert", "roberta", "xlm-roberta", "gpt2", "llama",
                            "qwen2", "qwen3", "mistral", "phi3", "gemma", "gemma2",
                            "gemma3_text", "marian", "t5", "modernbert", "lfm2", "qwen3_5",
                            "qwen3_5_text", "qwen3_next", "rwkv"}) {
    if (t == known) return t;
  }
  Fail(config.where(), ": model_type '", t, "' is not supported (supported: ", kSupportedModelTypes,
       ")");
}

ModelSpec Import(const ConfigView& config, const Checkpoint& checkpoint) {
  const std::string t = SupportedModelType(config);
  if (t == "bert") return ImportBert(config, checkpoint);
  if (t == "distilbert") return ImportDistilBert(config, checkpoint);
  if (t == "roberta" || t == "xlm-roberta") return ImportRoberta(config, checkpoint, t);
  if (t == "gpt2") return ImportGpt2(config, checkpoint);
  if (t == "marian") return ImportMarian(config, checkpoint);
  if (t == "t5") return ImportT5(config, checkpoint);
  if (t == "phi3") return ImportPhi3(config, checkpoint);
  if (t == "modernbert") return ImportModernBert(config, checkpoint);
  if (t == "lfm2") return ImportLfm2(config, checkpoint);
  if (t == "rwkv") return ImportRwkv(config, checkpoint);
  if (t == "qwen3_5" || t == "qwen3_5_text" || t == "qwen3_next") {
    return ImportQwen35(config, checkpoint);
  }
  if (t == "gemma" || t == "gemma2" || t == "gemma3_text") return ImportGemma(config, checkpoint);
  return ImportLlama(config, checkpoint);  // llama, qwen2, qwen3, mistral
}

const char kSupportedActivations[] =
    "gelu, gelu_new, gelu_pytorch_tanh, gelu_fast, relu, silu, swish";

bool ActivationFromName(const std::string& name, fb::Activation* activation) {
  if (name == "gelu") {
    *activation = fb::Activation::GeluErf;
  } else if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") {
    // gelu_fast is the same tanh approximation, written differently.
    *activation = fb::Activation::GeluTanh;
  } else if (name == "relu") {
    *activation = fb::Activation::Relu;
  } else if (name == "silu" || name == "swish") {
    *activation = fb::Activation::Silu;
  } else {
    return false;
  }
  return true;
}

fb::Activation ActivationFromConfig(const ConfigView& config, const std::string& key,
                                    const std::string& fallback) {
  fb::Activation activation = fb::Activation::GeluErf;
  if (!ActivationFromName(config.StringOr(key, fallback), &activation)) {
    config.Unsupported(key, Cat("supported: ", kSupportedActivations));
  }
  return activation;
}

void FinishArchitecture(const ConfigView& config, ModelSpec& spec) {
  fb::ArchitectureT& a = spec.architecture;
  const fb::AttentionT& att = *a.attention;
  const struct {
    const char* what;
    uint64_t value;
    uint64_t limit;
  } limits[] = {
      {"vocabulary size", a.vocab_size, kMaxVocab},
      {"hidden size", a.hidden_size, kMaxHidden},
      {"feed-forward size", a.intermediate_size, kMaxIntermediate},
      {"layer count", a.num_layers, kMaxLayers},
      {"decoder layer count", a.num_decoder_layers, kMaxLayers},
      {"max positions", a.max_positions, kMaxPositions},
      {"attention head count", att.num_heads, kMaxHeads},
      {"attention head size", att.head_dim, kMaxHeadDim},
      {"relative attention buckets", att.relative_buckets, 4096},
      {"token type count", a.type_vocab_size, 1024},
  };
  for (const auto& l : limits) {
    if (l.value > l.limit) {
      Fail(config.where(), ": the ", l.what, " ", l.value, " is over octet's limit of ", l.limit);
    }
  }
  const auto read = [&](const char* key) -> int32_t {
    const int64_t id = config.TokenIdOr(key);
    if (id >= 0 && static_cast<uint64_t>(id) >= a.vocab_size) {
      spec.warnings.push_back(Cat(config.where(), ": ", key, " ", id,
                                  " is outside the vocabulary (", a.vocab_size, "); dropped"));
      return -1;
    }
    return static_cast<int32_t>(id);
  };
  a.pad_token_id = read("pad_token_id");
  a.bos_token_id = read("bos_token_id");
  a.eos_token_id = read("eos_token_id");
  if (a.structure == fb::Structure::EncoderDecoder) {
    a.decoder_start_token_id = read("decoder_start_token_id");
  }
  if (const nlohmann::json* eos = config.Find("eos_token_id"); eos && eos->is_array()) {
    spec.provenance.push_back({"eos_token_ids", eos->dump()});
  }
}

std::string DetectPrefix(const Checkpoint& checkpoint, const std::vector<std::string>& prefixes,
                         const std::vector<std::string>& probes) {
  for (const std::string& p : prefixes) {
    for (const std::string& probe : probes) {
      if (checkpoint.Find(p + probe) != nullptr) return p;
    }
  }
  return prefixes.front();
}

ModelSpec NewSpec(const ConfigView& config, const std::string& model_type, fb::Family family,
                  fb::Structure structure) {
  ModelSpec spec;
  spec.model_type = model_type;
  spec.architecture.family = family;
  spec.architecture.structure = structure;
  spec.architecture.attention = std::make_unique<fb::AttentionT>();
  // ALiBi is an engine feature for synthetic models; no supported family's config turns it on.
  RejectTrue(config, "alibi", Cat("not part of ", model_type));
  spec.provenance.push_back({"model_type", model_type});
  if (const nlohmann::json* archs = config.Find("architectures");
      archs && archs->is_array() && !archs->empty() && (*archs)[0].is_string()) {
    spec.provenance.push_back({"architectures", (*archs)[0].get<std::string>()});
  }
  for (const char* key : {"transformers_version", "torch_dtype"}) {
    if (const nlohmann::json* v = config.Find(key); v && v->is_string()) {
      spec.provenance.push_back({key, v->get<std::string>()});
    }
  }
  return spec;
}

double StoredTableTolerance(const std::string& dtype) {
  if (dtype == "F16") return 1.0 / 2048;
  if (dtype == "BF16") return 1.0 / 256;
  return 1e-6;
}

void RejectTrue(const ConfigView& config, const std::string& key, const std::string& why) {
  if (config.BoolOr(key, false)) config.Unsupported(key, why);
}

}  // namespace convert
}  // namespace octet
