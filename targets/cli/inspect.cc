// octet inspect: everything a .octet file says about itself, plus what this
// machine would do with it (session plan, CPU features, selected kernel).
// The report is the C API's description of the model (octet_model_describe),
// read into a JSON tree; --json prints it as is, the text renderer below lays
// the same content out for people.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/format_util.h"
#include "cli/json.h"
#include "cli/tool_main.h"
#include "octet/octet.hpp"

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

// The model's description (octet_model_describe) with the path in front of
// the "file" section: the file's name is the command line's, not the API's.
JsonValue BuildReport(const std::string& path, const octet_model* model) {
  std::string text;
  const api::Status st = api::DescribeModel(model, &text);
  if (!st.ok()) {
    throw Failure("cannot describe the model: " + st.message + " (" +
                  octet_status_name(st.code) + ")");
  }
  JsonValue report = JsonValue::Parse(text);
  const JsonValue* described = report.Find("file");
  if (described == nullptr || described->kind() != JsonValue::Kind::kObject) {
    throw Failure("the model's description has no \"file\" section");
  }
  JsonValue file = JsonValue::Object();
  file.Set("path", path);
  for (const auto& [key, value] : described->members()) file.Set(key, value);
  report.Set("file", std::move(file));
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
  return value.ToText() + " (" + FormatBytes(value.AsUint()) + ")";
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
    if (const JsonValue* state = plan.Find("state_per_sequence")) {
      // A decoder's memory per sequence: KV rows that grow with it, fixed states that do not.
      const std::string kv_layers = Get(*state, "kv_layers").ToText();
      const std::string fixed_layers = Get(*state, "fixed_state_layers").ToText();
      if (kv_layers != "0" || fixed_layers != "0") {
        std::printf("  %-24s KV %s B/position (%s attention layers) + fixed %s (%s layers)\n",
                    "per sequence", Get(*state, "kv_bytes_per_position").ToText().c_str(),
                    kv_layers.c_str(), Bytes(Get(*state, "fixed_state_bytes")).c_str(),
                    fixed_layers.c_str());
      }
    }
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
  api::Model model;
  const api::Status loaded = model.Load(path);
  if (!loaded.ok()) throw Failure(loaded.message);
  const JsonValue report = BuildReport(path, model.get());
  if (parsed.Switch("--json")) {
    std::printf("%s\n", report.Serialize().c_str());
  } else {
    PrintText(report);
  }
  return kExitOk;
}

}  // namespace cli
}  // namespace octet
