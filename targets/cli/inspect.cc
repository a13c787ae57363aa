// octet inspect: everything a .octet file says about itself, plus what this
// machine would do with it (session plan, CPU features, selected kernel).
// The report is built once as a JSON tree; --json prints it as is, the text
// renderer below lays the same content out for people.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/json.h"
#include "cli/model_util.h"
#include "cli/tool_main.h"
#include "engine/session.h"
#include "format/model.h"
#include "kernels/kernel_table.h"
#include "platform/cpu.h"

namespace octet {
namespace cli {
namespace {

constexpr char kUsage[] = R"(Usage: octet inspect MODEL [--json]

Prints what a .octet model holds: file and format version, the architecture
(every field, including attention and RoPE), the tensor table (dtype, layout, input
bits when 16, shape, bytes, offset, quantization scheme and scale range), weight bytes by dtype, the
tokenizer files, provenance (source, converter, per-layer quantization error),
the stored memory plan, and for this machine: the session plan for batch 1 at
min(max_positions, 512) tokens, the CPU features and the selected int8 kernel.

Options:
  --json       print one JSON object with the same content
  -h, --help   show this help

A file the loader rejects gives one line on stderr naming the problem, exit 1.
)";

constexpr uint32_t kPlanSeq = 512;

// Generated enum names, or "unknown(N)" for values the schema does not name.
template <typename E>
std::string Name(const char* (*enum_name)(E), E value) {
  return EnumText(enum_name(value), static_cast<int>(value));
}

std::string String(const flatbuffers::String* s) { return s == nullptr ? "" : s->str(); }

JsonValue FileSection(const std::string& path, const Model& model) {
  const fb::Model& root = model.root();
  JsonValue file = JsonValue::Object();
  file.Set("path", path);
  file.Set("size_bytes", model.file_size());
  file.Set("format_version",
           std::to_string(root.format_major()) + "." + std::to_string(root.format_minor()));
  file.Set("format_major", root.format_major());
  file.Set("format_minor", root.format_minor());
  file.Set("data_offset", model.data_offset());
  file.Set("data_size", model.data_size());
  file.Set("data_alignment", root.data_alignment());
  file.Set("mapped", model.is_mapped());
  return file;
}

JsonValue AttentionSection(const fb::Attention& a) {
  JsonValue json = JsonValue::Object();
  json.Set("num_heads", a.num_heads());
  json.Set("num_kv_heads", a.num_kv_heads());
  json.Set("head_dim", a.head_dim());
  json.Set("scale", a.scale());
  json.Set("sliding_window", a.sliding_window());
  json.Set("relative_buckets", a.relative_buckets());
  json.Set("relative_max_distance", a.relative_max_distance());
  json.Set("qkv_bias", a.qkv_bias());
  json.Set("out_bias", a.out_bias());
  return json;
}

JsonValue RopeSection(const fb::Rope* rope) {
  if (rope == nullptr) return JsonValue();
  JsonValue json = JsonValue::Object();
  json.Set("theta", rope->theta());
  json.Set("scaling", Name(fb::EnumNameRopeScaling, rope->scaling()));
  json.Set("factor", rope->factor());
  json.Set("low_freq_factor", rope->low_freq_factor());
  json.Set("high_freq_factor", rope->high_freq_factor());
  json.Set("original_max_positions", rope->original_max_positions());
  json.Set("rotary_dim", rope->rotary_dim());
  return json;
}

// Every field of fb::Architecture, in schema order.
JsonValue ArchitectureSection(const fb::Architecture& a) {
  JsonValue json = JsonValue::Object();
  json.Set("family", Name(fb::EnumNameFamily, a.family()));
  json.Set("structure", Name(fb::EnumNameStructure, a.structure()));
  json.Set("vocab_size", a.vocab_size());
  json.Set("hidden_size", a.hidden_size());
  json.Set("intermediate_size", a.intermediate_size());
  json.Set("num_layers", a.num_layers());
  json.Set("num_decoder_layers", a.num_decoder_layers());
  json.Set("max_positions", a.max_positions());
  json.Set("norm", Name(fb::EnumNameNormKind, a.norm()));
  json.Set("norm_placement", Name(fb::EnumNameNormPlacement, a.norm_placement()));
  json.Set("norm_eps", a.norm_eps());
  json.Set("activation", Name(fb::EnumNameActivation, a.activation()));
  json.Set("gated_ffn", a.gated_ffn());
  json.Set("attention", AttentionSection(*a.attention()));
  json.Set("position", Name(fb::EnumNamePositionKind, a.position()));
  json.Set("rope", RopeSection(a.rope()));
  json.Set("tied_embeddings", a.tied_embeddings());
  json.Set("embedding_scale", a.embedding_scale());
  json.Set("logits_scale", a.logits_scale());
  json.Set("type_vocab_size", a.type_vocab_size());
  json.Set("pad_token_id", a.pad_token_id());
  json.Set("bos_token_id", a.bos_token_id());
  json.Set("eos_token_id", a.eos_token_id());
  json.Set("decoder_start_token_id", a.decoder_start_token_id());
  return json;
}

JsonValue QuantizationSection(const fb::Quantization* q) {
  if (q == nullptr) return JsonValue();
  JsonValue json = JsonValue::Object();
  json.Set("scheme", Name(fb::EnumNameQuantScheme, q->scheme()));
  json.Set("axis", q->axis());
  json.Set("block_size", q->block_size());
  const auto* scales = q->scales();
  const uint32_t count = scales == nullptr ? 0 : scales->size();
  json.Set("num_scales", count);
  if (count > 0) {
    const auto [min, max] = std::minmax_element(scales->begin(), scales->end());
    json.Set("min_scale", static_cast<float>(*min));
    json.Set("max_scale", static_cast<float>(*max));
  } else {
    json.Set("min_scale", JsonValue());
    json.Set("max_scale", JsonValue());
  }
  const auto* zero_points = q->zero_points();
  json.Set("num_zero_points", zero_points == nullptr ? 0u : zero_points->size());
  return json;
}

// The tensor table in file order, and the weight bytes by dtype.
void TensorSections(const Model& model, JsonValue* tensors, JsonValue* weights) {
  std::map<std::string, uint64_t> by_dtype;
  uint64_t total = 0;
  uint64_t count = 0;
  if (const auto* list = model.root().tensors()) {
    for (const fb::Tensor* t : *list) {
      JsonValue json = JsonValue::Object();
      json.Set("name", String(t->name()));
      json.Set("dtype", Name(fb::EnumNameDType, t->dtype()));
      json.Set("layout", Name(fb::EnumNameTensorLayout, t->layout()));
      json.Set("input_bits", static_cast<uint32_t>(t->input_bits()));
      JsonValue shape = JsonValue::Array();
      for (uint32_t d : *t->shape()) shape.Append(d);
      json.Set("shape", std::move(shape));
      json.Set("bytes", t->size());
      json.Set("offset", t->offset());
      json.Set("quantization", QuantizationSection(t->quant()));
      tensors->Append(std::move(json));
      by_dtype[Name(fb::EnumNameDType, t->dtype())] += t->size();
      total += t->size();
      ++count;
    }
  }
  weights->Set("total_bytes", total);
  weights->Set("tensor_count", count);
  JsonValue dtypes = JsonValue::Object();
  for (const auto& [dtype, bytes] : by_dtype) dtypes.Set(dtype, bytes);
  weights->Set("bytes_by_dtype", std::move(dtypes));
}

JsonValue TokenizerSection(const fb::Tokenizer* tokenizer) {
  if (tokenizer == nullptr) return JsonValue();
  JsonValue json = JsonValue::Object();
  json.Set("kind", Name(fb::EnumNameTokenizerKind, tokenizer->kind()));
  JsonValue files = JsonValue::Array();
  if (const auto* list = tokenizer->files()) {
    for (const fb::Blob* blob : *list) {
      JsonValue file = JsonValue::Object();
      file.Set("name", String(blob->name()));
      file.Set("bytes", blob->size());
      files.Append(std::move(file));
    }
  }
  json.Set("files", std::move(files));
  if (const fb::TokenizerSpec* spec = tokenizer->compiled()) {
    JsonValue c = JsonValue::Object();
    const fb::TokModel* m = spec->model();
    c.Set("model", Name(fb::EnumNameTokModelKind, m->kind()));
    c.Set("vocab_size", m->vocab_size());
    c.Set("byte_level", m->byte_level());
    c.Set("byte_fallback", m->byte_fallback());
    const auto steps = [](const auto* list, auto name_of) {
      JsonValue a = JsonValue::Array();
      if (list) {
        for (const auto* s : *list) a.Append(name_of(s->kind()));
      }
      return a;
    };
    c.Set("normalizers", steps(spec->normalizers(), [](fb::NormalizerKind k) { return Name(fb::EnumNameNormalizerKind, k); }));
    c.Set("pre_tokenizers", steps(spec->pre_tokenizers(), [](fb::PreTokenizerKind k) { return Name(fb::EnumNamePreTokenizerKind, k); }));
    c.Set("decoders", steps(spec->decoders(), [](fb::DecoderKind k) { return Name(fb::EnumNameDecoderKind, k); }));
    c.Set("added_tokens", spec->added_tokens() ? spec->added_tokens()->size() : 0u);
    JsonValue eos = JsonValue::Array();
    if (spec->eos_ids()) {
      for (int32_t id : *spec->eos_ids()) eos.Append(id);
    }
    c.Set("eos_ids", std::move(eos));
    c.Set("chat_template", spec->chat_template() != nullptr && spec->chat_template()->size() > 0);
    json.Set("compiled", std::move(c));
  }
  return json;
}

JsonValue ProvenanceSection(const fb::Provenance* provenance) {
  if (provenance == nullptr) return JsonValue();
  JsonValue json = JsonValue::Object();
  json.Set("source", String(provenance->source()));
  json.Set("converter", String(provenance->converter()));
  json.Set("quantization", String(provenance->quantization()));
  JsonValue errors = JsonValue::Array();
  if (const auto* list = provenance->layer_errors()) {
    for (const fb::LayerError* e : *list) {
      JsonValue error = JsonValue::Object();
      error.Set("name", String(e->name()));
      error.Set("sqnr_db", e->sqnr_db());
      errors.Append(std::move(error));
    }
  }
  json.Set("layer_errors", std::move(errors));
  JsonValue extra = JsonValue::Object();
  if (const auto* list = provenance->extra()) {
    for (const fb::KeyValue* kv : *list) extra.Set(String(kv->key()), String(kv->value()));
  }
  json.Set("extra", std::move(extra));
  return json;
}

JsonValue StoredPlanSection(const fb::MemoryPlan* plan) {
  if (plan == nullptr) return JsonValue();
  JsonValue json = JsonValue::Object();
  json.Set("max_batch", plan->max_batch());
  json.Set("max_seq", plan->max_seq());
  JsonValue arenas = JsonValue::Array();
  uint64_t total = 0;
  if (const auto* list = plan->arenas()) {
    for (const fb::ArenaPlan* arena : *list) {
      JsonValue entry = JsonValue::Object();
      entry.Set("kind", Name(fb::EnumNameArenaKind, arena->kind()));
      entry.Set("bytes", arena->bytes());
      arenas.Append(std::move(entry));
      total += arena->bytes();
    }
  }
  json.Set("arenas", std::move(arenas));
  json.Set("total_bytes", total);
  return json;
}

// What a session on this build would plan; a failure is reported, not thrown.
JsonValue SessionPlanSection(const Model& model) {
  const uint32_t max_positions = model.architecture().max_positions();
  SessionLimits limits;
  limits.max_batch = 1;
  limits.max_seq = max_positions == 0 ? kPlanSeq : std::min(max_positions, kPlanSeq);
  limits.max_new_tokens = 0;
  JsonValue json = JsonValue::Object();
  json.Set("max_batch", limits.max_batch);
  json.Set("max_seq", limits.max_seq);
  const Result<SessionPlan> plan = Session::Plan(model, limits);
  if (!plan.ok()) {
    json.Set("error", DescribeStatus(plan.status()));
    return json;
  }
  json.Set("activation_bytes", plan->activation_bytes);
  json.Set("scratch_bytes", plan->scratch_bytes);
  json.Set("kv_cache_bytes", plan->kv_cache_bytes);
  json.Set("total_bytes", plan->total());
  return json;
}

JsonValue CpuSection() {
  char features[128];
  FormatCpuFeatures(GetCpuInfo().features, features, sizeof(features));
  JsonValue json = JsonValue::Object();
  json.Set("features", std::string(features));
  json.Set("qs8_gemm_kernel", GetKernelTable().qs8_gemm_name);
  json.Set("qu8s8_pv_kernel", GetKernelTable().qu8s8_pv_name);
  return json;
}

JsonValue BuildReport(const std::string& path, const Model& model) {
  JsonValue report = JsonValue::Object();
  report.Set("file", FileSection(path, model));
  report.Set("architecture", ArchitectureSection(model.architecture()));
  JsonValue tensors = JsonValue::Array();
  JsonValue weights = JsonValue::Object();
  TensorSections(model, &tensors, &weights);
  report.Set("tensors", std::move(tensors));
  report.Set("weights", std::move(weights));
  report.Set("tokenizer", TokenizerSection(model.root().tokenizer()));
  report.Set("provenance", ProvenanceSection(model.root().provenance()));
  report.Set("memory_plan", StoredPlanSection(model.root().memory_plan()));
  report.Set("session_plan", SessionPlanSection(model));
  report.Set("cpu", CpuSection());
  return report;
}

// ---- Text rendering of the report -----------------------------------------

const JsonValue& Get(const JsonValue& object, const char* key) {
  static const JsonValue kNull;
  const JsonValue* value = object.Find(key);
  return value == nullptr ? kNull : *value;
}

// "2240 (2.2 KiB)"; small counts stay plain.
std::string Bytes(const JsonValue& value) {
  if (value.AsUint() < 1024) return value.ToText();
  return value.ToText() + " (" + HumanBytes(value.AsUint()) + ")";
}

// "key   value" lines; nested objects print as "parent.key".
void PrintFields(const JsonValue& object, const std::string& prefix, int width) {
  for (const auto& [key, value] : object.members()) {
    if (value.kind() == JsonValue::Kind::kObject) {
      PrintFields(value, prefix + key + ".", width);
    } else {
      std::printf("  %-*s %s\n", width, (prefix + key).c_str(), value.ToText().c_str());
    }
  }
}

std::string Shape(const JsonValue& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.items().size(); ++i) {
    if (i > 0) text += ", ";
    text += shape.items()[i].ToText();
  }
  return text + "]";
}

std::string QuantText(const JsonValue& q) {
  if (q.is_null()) return "-";
  std::string text = Get(q, "scheme").ToText();
  const std::string scheme = text;
  if (scheme == "PerChannel") text += " axis " + Get(q, "axis").ToText();
  if (scheme == "PerBlock") text += " block " + Get(q, "block_size").ToText();
  text += ", " + Get(q, "num_scales").ToText() + " scale(s)";
  if (!Get(q, "min_scale").is_null()) {
    text += " in [" + Get(q, "min_scale").ToText() + ", " + Get(q, "max_scale").ToText() + "]";
  }
  text += Get(q, "num_zero_points").AsUint() == 0
              ? ", symmetric"
              : ", " + Get(q, "num_zero_points").ToText() + " zero point(s)";
  return text;
}

void PrintTensors(const JsonValue& tensors) {
  struct Row {
    std::string name, dtype, shape, bytes, offset, quant;
  };
  std::vector<Row> rows = {{"name", "dtype", "shape", "bytes", "offset", "quantization"}};
  for (const JsonValue& t : tensors.items()) {
    const std::string layout = Get(t, "layout").ToText();
    const std::string bits = Get(t, "input_bits").ToText();
    rows.push_back({OneLine(Get(t, "name").ToText()),
                    Get(t, "dtype").ToText() + (layout == "RowMajor" ? "" : " " + layout) +
                        (bits == "8" ? "" : " input_bits " + bits),
                    Shape(Get(t, "shape")), Get(t, "bytes").ToText(), Get(t, "offset").ToText(),
                    QuantText(Get(t, "quantization"))});
  }
  size_t w[5] = {0, 0, 0, 0, 0};
  for (const Row& row : rows) {
    w[0] = std::max(w[0], row.name.size());
    w[1] = std::max(w[1], row.dtype.size());
    w[2] = std::max(w[2], row.shape.size());
    w[3] = std::max(w[3], row.bytes.size());
    w[4] = std::max(w[4], row.offset.size());
  }
  for (const Row& row : rows) {
    std::printf("  %-*s  %-*s  %-*s  %*s  %*s  %s\n", static_cast<int>(w[0]), row.name.c_str(),
                static_cast<int>(w[1]), row.dtype.c_str(), static_cast<int>(w[2]),
                row.shape.c_str(), static_cast<int>(w[3]), row.bytes.c_str(),
                static_cast<int>(w[4]), row.offset.c_str(), row.quant.c_str());
  }
}

void PrintText(const JsonValue& report) {
  const JsonValue& file = Get(report, "file");
  std::printf("file\n");
  std::printf("  %-24s %s\n", "path", OneLine(Get(file, "path").ToText()).c_str());
  std::printf("  %-24s %s\n", "size", Bytes(Get(file, "size_bytes")).c_str());
  std::printf("  %-24s %s\n", "format version", Get(file, "format_version").ToText().c_str());
  std::printf("  %-24s %s bytes at offset %s, %s-byte aligned, %s\n", "data segment",
              Get(file, "data_size").ToText().c_str(), Get(file, "data_offset").ToText().c_str(),
              Get(file, "data_alignment").ToText().c_str(),
              Get(file, "mapped").ToText() == "true" ? "mapped" : "read into memory");

  std::printf("\narchitecture\n");
  PrintFields(Get(report, "architecture"), "", 32);

  const JsonValue& tensors = Get(report, "tensors");
  std::printf("\ntensors (%zu)\n", tensors.items().size());
  PrintTensors(tensors);

  const JsonValue& weights = Get(report, "weights");
  std::printf("\nweights\n");
  std::printf("  %-24s %s\n", "total", Bytes(Get(weights, "total_bytes")).c_str());
  for (const auto& [dtype, bytes] : Get(weights, "bytes_by_dtype").members()) {
    std::printf("  %-24s %s\n", dtype.c_str(), Bytes(bytes).c_str());
  }

  const JsonValue& tokenizer = Get(report, "tokenizer");
  std::printf("\ntokenizer\n");
  if (tokenizer.is_null()) {
    std::printf("  none\n");
  } else {
    std::printf("  %-24s %s\n", "kind", Get(tokenizer, "kind").ToText().c_str());
    for (const JsonValue& f : Get(tokenizer, "files").items()) {
      std::printf("  %-24s %s bytes\n", OneLine(Get(f, "name").ToText()).c_str(),
                  Get(f, "bytes").ToText().c_str());
    }
    const JsonValue& c = Get(tokenizer, "compiled");
    if (c.is_null()) {
      std::printf("  %-24s %s\n", "compiled", "none (ids only)");
    } else {
      for (const char* key : {"model", "vocab_size", "byte_level", "byte_fallback", "normalizers",
                              "pre_tokenizers", "decoders", "added_tokens", "eos_ids",
                              "chat_template"}) {
        std::printf("  %-24s %s\n", key, OneLine(Get(c, key).ToText()).c_str());
      }
    }
  }

  const JsonValue& provenance = Get(report, "provenance");
  std::printf("\nprovenance\n");
  if (provenance.is_null()) {
    std::printf("  none\n");
  } else {
    for (const char* key : {"source", "converter", "quantization"}) {
      std::printf("  %-24s %s\n", key, OneLine(Get(provenance, key).ToText()).c_str());
    }
    const JsonValue& errors = Get(provenance, "layer_errors");
    if (!errors.items().empty()) {
      std::printf("  quantization report (%zu entries; SQNR in dB of the weight tensors, then of "
                  "each layer's output against the fp32 model on the calibration)\n",
                  errors.items().size());
    }
    for (const JsonValue& e : errors.items()) {
      std::printf("    %-40s %6.1f dB\n", OneLine(Get(e, "name").ToText()).c_str(),
                  std::strtod(Get(e, "sqnr_db").ToText().c_str(), nullptr));
    }
    const JsonValue& extra = Get(provenance, "extra");
    if (!extra.members().empty()) std::printf("  extra\n");
    for (const auto& [key, value] : extra.members()) {
      std::printf("    %-40s %s\n", OneLine(key).c_str(), OneLine(value.ToText()).c_str());
    }
  }

  const JsonValue& stored = Get(report, "memory_plan");
  std::printf("\nmemory plan (stored in the file)\n");
  if (stored.is_null()) {
    std::printf("  none\n");
  } else {
    std::printf("  %-24s batch %s, seq %s\n", "limits", Get(stored, "max_batch").ToText().c_str(),
                Get(stored, "max_seq").ToText().c_str());
    for (const JsonValue& arena : Get(stored, "arenas").items()) {
      std::printf("  %-24s %s\n", Get(arena, "kind").ToText().c_str(),
                  Bytes(Get(arena, "bytes")).c_str());
    }
    std::printf("  %-24s %s\n", "total", Bytes(Get(stored, "total_bytes")).c_str());
  }

  const JsonValue& plan = Get(report, "session_plan");
  std::printf("\nsession plan (this build, batch %s, seq %s)\n",
              Get(plan, "max_batch").ToText().c_str(), Get(plan, "max_seq").ToText().c_str());
  if (plan.Find("error") != nullptr) {
    std::printf("  unavailable: %s\n", OneLine(Get(plan, "error").ToText()).c_str());
  } else {
    std::printf("  %-24s %s\n", "activations", Bytes(Get(plan, "activation_bytes")).c_str());
    std::printf("  %-24s %s\n", "scratch", Bytes(Get(plan, "scratch_bytes")).c_str());
    std::printf("  %-24s %s\n", "kv cache", Bytes(Get(plan, "kv_cache_bytes")).c_str());
    std::printf("  %-24s %s\n", "total", Bytes(Get(plan, "total_bytes")).c_str());
  }

  const JsonValue& cpu = Get(report, "cpu");
  std::printf("\ncpu\n");
  std::printf("  %-24s %s\n", "features", Get(cpu, "features").ToText().c_str());
  std::printf("  %-24s %s\n", "qs8_gemm kernel", Get(cpu, "qs8_gemm_kernel").ToText().c_str());
  std::printf("  %-24s %s\n", "qu8s8_pv kernel", Get(cpu, "qu8s8_pv_kernel").ToText().c_str());
}

}  // namespace

int InspectCommand(const std::vector<std::string>& args) {
  static const std::vector<OptionSpec> kOptions = {SwitchOption("--json")};
  const ParsedArgs parsed = ParseArgs("octet inspect", kOptions, args, 1, 1, "MODEL");
  if (parsed.help) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  const std::string& path = parsed.positionals[0];
  const Model model = LoadModel(path);
  const JsonValue report = BuildReport(path, model);
  if (parsed.Switch("--json")) {
    std::printf("%s\n", report.Serialize().c_str());
  } else {
    PrintText(report);
  }
  return kExitOk;
}

}  // namespace cli
}  // namespace octet
