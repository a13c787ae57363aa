// The C API's diagnostics (octet.h, last section): the model file described as
// JSON (what `octet inspect --json` prints), the runtime's and a session's
// facts and the per-op profile (what `octet bench` reports).
//
// The JSON is written straight into the caller's buffer by core/json_writer.h,
// which counts every byte whether it fits or not: one pass gives the text and
// the size it needs, with no allocation.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "api/internal.h"
#include "core/json_writer.h"
#include "engine/forward.h"
#include "kernels/kernel_table.h"
#include "ops/f32_fully_connected.h"
#include "platform/cpu.h"
#include "platform/thread_pool.h"

namespace octet {
namespace api {
namespace {

// ---- JSON text ---------------------------------------------------------------

// The one JSON writer (core/json_writer.h) with what the sections add: the
// file's flatbuffers strings and schema enums.
class DescribeWriter : public JsonWriter {
 public:
  DescribeWriter(char* out, size_t capacity) : JsonWriter(out, capacity) {}

  DescribeWriter& Key(const char* key, size_t n) {
    JsonWriter::Key(key, n);
    return *this;
  }
  DescribeWriter& Key(const char* key) { return Key(key, std::strlen(key)); }
  using JsonWriter::String;
  // A flatbuffers string; absent is "".
  void String(const flatbuffers::String* s) {
    if (s == nullptr) return String("", 0);
    String(s->c_str(), s->size());
  }
  // A schema enum's generated name, or "unknown(N)" for a value it does not name.
  template <typename E>
  void Enum(const char* (*name_of)(E), E value) {
    EnumText(name_of(value), static_cast<int>(value));
  }
  void EnumText(const char* name, int value) {
    if (name != nullptr && name[0] != '\0') return String(name);
    char text[32];
    std::snprintf(text, sizeof(text), "unknown(%d)", value);
    String(text);
  }
};

// ---- The model described -------------------------------------------------------
// Every section in the order and with the names `octet inspect --json` has
// always printed (the CLI adds "file.path": the API does not know it).

constexpr uint32_t kPlanSeq = 512;

void FileSection(const Model& model, DescribeWriter* w) {
  const fb::Model& root = model.root();
  char version[32];
  std::snprintf(version, sizeof(version), "%u.%u", static_cast<unsigned>(root.format_major()),
                static_cast<unsigned>(root.format_minor()));
  w->BeginObject();
  w->Key("size_bytes").Uint(model.file_size());
  w->Key("format_version").String(version);
  w->Key("format_major").Uint(root.format_major());
  w->Key("format_minor").Uint(root.format_minor());
  w->Key("data_offset").Uint(model.data_offset());
  w->Key("data_size").Uint(model.data_size());
  w->Key("data_alignment").Uint(root.data_alignment());
  w->Key("mapped").Bool(model.is_mapped());
  w->EndObject();
}

void AttentionSection(const fb::Attention& a, DescribeWriter* w) {
  w->BeginObject();
  w->Key("num_heads").Uint(a.num_heads());
  w->Key("num_kv_heads").Uint(a.num_kv_heads());
  w->Key("head_dim").Uint(a.head_dim());
  w->Key("scale").Float(a.scale());
  w->Key("sliding_window").Uint(a.sliding_window());
  w->Key("relative_buckets").Uint(a.relative_buckets());
  w->Key("relative_max_distance").Uint(a.relative_max_distance());
  w->Key("qkv_bias").Bool(a.qkv_bias());
  w->Key("out_bias").Bool(a.out_bias());
  w->Key("qk_norm").Bool(a.qk_norm());
  w->Key("logit_softcap").Float(a.logit_softcap());
  // Which layers slide, as their indices (a 60-layer list of booleans would bury the rest).
  w->Key("sliding_layers");
  if (a.sliding_layers() == nullptr || a.sliding_layers()->size() == 0) {
    w->Null();
  } else {
    w->BeginArray(true);
    for (uint32_t i = 0; i < a.sliding_layers()->size(); ++i) {
      if (a.sliding_layers()->Get(i)) w->Uint(i);
    }
    w->EndArray();
  }
  w->EndObject();
}

void FloatList(const flatbuffers::Vector<float>* list, DescribeWriter* w) {
  if (list == nullptr || list->size() == 0) return w->Null();
  w->BeginArray(true);
  for (const float f : *list) w->Float(f);
  w->EndArray();
}

void RopeSection(const fb::Rope* rope, DescribeWriter* w) {
  if (rope == nullptr) return w->Null();
  w->BeginObject();
  w->Key("theta").Float(rope->theta());
  w->Key("scaling").Enum(fb::EnumNameRopeScaling, rope->scaling());
  w->Key("factor").Float(rope->factor());
  w->Key("low_freq_factor").Float(rope->low_freq_factor());
  w->Key("high_freq_factor").Float(rope->high_freq_factor());
  w->Key("original_max_positions").Uint(rope->original_max_positions());
  w->Key("rotary_dim").Uint(rope->rotary_dim());
  w->Key("local_theta").Float(rope->local_theta());
  w->Key("short_factors");
  FloatList(rope->short_factors(), w);
  w->Key("long_factors");
  FloatList(rope->long_factors(), w);
  w->Key("attention_factor").Float(rope->attention_factor());
  w->EndObject();
}

// Every field of fb::Architecture, in schema order.
void ArchitectureSection(const fb::Architecture& a, DescribeWriter* w) {
  w->BeginObject();
  w->Key("family").Enum(fb::EnumNameFamily, a.family());
  w->Key("structure").Enum(fb::EnumNameStructure, a.structure());
  w->Key("vocab_size").Uint(a.vocab_size());
  w->Key("hidden_size").Uint(a.hidden_size());
  w->Key("intermediate_size").Uint(a.intermediate_size());
  w->Key("num_layers").Uint(a.num_layers());
  w->Key("num_decoder_layers").Uint(a.num_decoder_layers());
  w->Key("max_positions").Uint(a.max_positions());
  w->Key("norm").Enum(fb::EnumNameNormKind, a.norm());
  w->Key("norm_placement").Enum(fb::EnumNameNormPlacement, a.norm_placement());
  w->Key("norm_eps").Float(a.norm_eps());
  w->Key("activation").Enum(fb::EnumNameActivation, a.activation());
  w->Key("gated_ffn").Bool(a.gated_ffn());
  w->Key("attention");
  AttentionSection(*a.attention(), w);
  w->Key("position").Enum(fb::EnumNamePositionKind, a.position());
  w->Key("rope");
  RopeSection(a.rope(), w);
  w->Key("tied_embeddings").Bool(a.tied_embeddings());
  w->Key("embedding_scale").Float(a.embedding_scale());
  w->Key("logits_scale").Float(a.logits_scale());
  w->Key("type_vocab_size").Uint(a.type_vocab_size());
  w->Key("pad_token_id").Int(a.pad_token_id());
  w->Key("bos_token_id").Int(a.bos_token_id());
  w->Key("eos_token_id").Int(a.eos_token_id());
  w->Key("decoder_start_token_id").Int(a.decoder_start_token_id());
  w->Key("final_logit_softcap").Float(a.final_logit_softcap());
  w->Key("sandwich_norms").Bool(a.sandwich_norms());
  w->Key("position_offset").Uint(a.position_offset());
  // (format 1.9)
  w->Key("channel_mixer").Enum(fb::EnumNameChannelMixer, a.channel_mixer());
  w->Key("layer_norm_eps");
  FloatList(a.layer_norm_eps(), w);
  w->Key("final_norm_eps").Float(a.final_norm_eps());
  w->EndObject();
}

void QuantizationSection(const fb::Quantization* q, DescribeWriter* w) {
  if (q == nullptr) return w->Null();
  w->BeginObject();
  w->Key("scheme").Enum(fb::EnumNameQuantScheme, q->scheme());
  w->Key("axis").Uint(q->axis());
  w->Key("block_size").Uint(q->block_size());
  const auto* scales = q->scales();
  const uint32_t count = scales == nullptr ? 0 : scales->size();
  w->Key("num_scales").Uint(count);
  if (count > 0) {
    float min = scales->Get(0);
    float max = min;
    for (uint32_t i = 1; i < count; ++i) {
      const float s = scales->Get(i);
      if (s < min) min = s;
      if (max < s) max = s;
    }
    w->Key("min_scale").Float(min);
    w->Key("max_scale").Float(max);
  } else {
    w->Key("min_scale").Null();
    w->Key("max_scale").Null();
  }
  const auto* zero_points = q->zero_points();
  w->Key("num_zero_points").Uint(zero_points == nullptr ? 0u : zero_points->size());
  w->EndObject();
}

const char* DTypeText(fb::DType dtype, char* buffer, size_t size) {
  const char* name = fb::EnumNameDType(dtype);
  if (name != nullptr && name[0] != '\0') return name;
  std::snprintf(buffer, size, "unknown(%d)", static_cast<int>(dtype));
  return buffer;
}

// The tensor table in file order.
void TensorsSection(const fb::Model& root, DescribeWriter* w) {
  w->BeginArray(false);
  if (const auto* list = root.tensors()) {
    for (const fb::Tensor* t : *list) {
      w->BeginObject();
      w->Key("name").String(t->name());
      w->Key("dtype").Enum(fb::EnumNameDType, t->dtype());
      w->Key("layout").Enum(fb::EnumNameTensorLayout, t->layout());
      w->Key("input_bits").Uint(t->input_bits());
      w->Key("shape").BeginArray(true);
      if (t->shape() != nullptr) {
        for (uint32_t d : *t->shape()) w->Uint(d);
      }
      w->EndArray();
      w->Key("bytes").Uint(t->size());
      w->Key("offset").Uint(t->offset());
      w->Key("quantization");
      QuantizationSection(t->quant(), w);
      w->EndObject();
    }
  }
  w->EndArray();
}

// The weight bytes, in total and by dtype (dtypes by name, as a sorted map
// lists them).
void WeightsSection(const fb::Model& root, DescribeWriter* w) {
  constexpr size_t kDTypes = 256;  // DType is a ubyte
  uint64_t by_dtype[kDTypes] = {};
  bool present[kDTypes] = {};
  uint64_t total = 0;
  uint64_t count = 0;
  if (const auto* list = root.tensors()) {
    for (const fb::Tensor* t : *list) {
      const size_t d = static_cast<uint8_t>(t->dtype());
      by_dtype[d] += t->size();
      present[d] = true;
      total += t->size();
      ++count;
    }
  }
  w->BeginObject();
  w->Key("total_bytes").Uint(total);
  w->Key("tensor_count").Uint(count);
  w->Key("bytes_by_dtype").BeginObject();
  // Selection by name: each round writes the smallest name above the last one.
  char last[32] = "";
  bool any = false;
  for (;;) {
    int next = -1;
    char next_name[32] = "";
    for (size_t d = 0; d < kDTypes; ++d) {
      if (!present[d]) continue;
      char buffer[32];
      const char* name = DTypeText(static_cast<fb::DType>(d), buffer, sizeof(buffer));
      if (any && std::strcmp(name, last) <= 0) continue;
      if (next < 0 || std::strcmp(name, next_name) < 0) {
        next = static_cast<int>(d);
        std::snprintf(next_name, sizeof(next_name), "%s", name);
      }
    }
    if (next < 0) break;
    w->Key(next_name).Uint(by_dtype[next]);
    std::snprintf(last, sizeof(last), "%s", next_name);
    any = true;
  }
  w->EndObject();
  w->EndObject();
}

template <typename List, typename NameOf>
void StepNames(const List* list, NameOf name_of, DescribeWriter* w) {
  w->BeginArray(true);
  if (list != nullptr) {
    for (const auto* step : *list) {
      w->Enum(name_of, step->kind());
    }
  }
  w->EndArray();
}

void TokenizerSection(const fb::Tokenizer* tokenizer, DescribeWriter* w) {
  if (tokenizer == nullptr) return w->Null();
  w->BeginObject();
  w->Key("kind").Enum(fb::EnumNameTokenizerKind, tokenizer->kind());
  w->Key("files").BeginArray(false);
  if (const auto* list = tokenizer->files()) {
    for (const fb::Blob* blob : *list) {
      w->BeginObject();
      w->Key("name").String(blob->name());
      w->Key("bytes").Uint(blob->size());
      w->EndObject();
    }
  }
  w->EndArray();
  if (const fb::TokenizerSpec* spec = tokenizer->compiled()) {
    const fb::TokModel* m = spec->model();
    w->Key("compiled").BeginObject();
    w->Key("model").Enum(fb::EnumNameTokModelKind, m->kind());
    w->Key("vocab_size").Uint(m->vocab_size());
    w->Key("byte_level").Bool(m->byte_level());
    w->Key("byte_fallback").Bool(m->byte_fallback());
    w->Key("normalizers");
    StepNames(spec->normalizers(), fb::EnumNameNormalizerKind, w);
    w->Key("pre_tokenizers");
    StepNames(spec->pre_tokenizers(), fb::EnumNamePreTokenizerKind, w);
    w->Key("decoders");
    StepNames(spec->decoders(), fb::EnumNameDecoderKind, w);
    w->Key("added_tokens").Uint(spec->added_tokens() ? spec->added_tokens()->size() : 0u);
    w->Key("eos_ids").BeginArray(true);
    if (spec->eos_ids() != nullptr) {
      for (int32_t id : *spec->eos_ids()) w->Int(id);
    }
    w->EndArray();
    w->Key("chat_template")
        .Bool(spec->chat_template() != nullptr && spec->chat_template()->size() > 0);
    w->EndObject();
  }
  w->EndObject();
}

bool SameString(const flatbuffers::String* a, const flatbuffers::String* b) {
  const size_t na = a == nullptr ? 0 : a->size();
  const size_t nb = b == nullptr ? 0 : b->size();
  return na == nb && (na == 0 || std::memcmp(a->c_str(), b->c_str(), na) == 0);
}

void ProvenanceSection(const fb::Provenance* provenance, DescribeWriter* w) {
  if (provenance == nullptr) return w->Null();
  w->BeginObject();
  w->Key("source").String(provenance->source());
  w->Key("converter").String(provenance->converter());
  w->Key("quantization").String(provenance->quantization());
  w->Key("layer_errors").BeginArray(false);
  if (const auto* list = provenance->layer_errors()) {
    for (const fb::LayerError* e : *list) {
      w->BeginObject();
      w->Key("name").String(e->name());
      w->Key("sqnr_db").Float(e->sqnr_db());
      w->EndObject();
    }
  }
  w->EndArray();
  // An object: a key given twice appears once, where it first appears, with
  // its last value.
  w->Key("extra").BeginObject();
  if (const auto* list = provenance->extra()) {
    const uint32_t n = list->size();
    for (uint32_t i = 0; i < n; ++i) {
      const fb::KeyValue* kv = list->Get(i);
      bool seen = false;
      for (uint32_t j = 0; j < i && !seen; ++j) seen = SameString(list->Get(j)->key(), kv->key());
      if (seen) continue;
      const fb::KeyValue* last = kv;
      for (uint32_t j = i + 1; j < n; ++j) {
        if (SameString(list->Get(j)->key(), kv->key())) last = list->Get(j);
      }
      const flatbuffers::String* key = kv->key();
      w->Key(key == nullptr ? "" : key->c_str(), key == nullptr ? 0 : key->size())
          .String(last->value());
    }
  }
  w->EndObject();
  w->EndObject();
}

void StoredPlanSection(const fb::MemoryPlan* plan, DescribeWriter* w) {
  if (plan == nullptr) return w->Null();
  w->BeginObject();
  w->Key("max_batch").Uint(plan->max_batch());
  w->Key("max_seq").Uint(plan->max_seq());
  uint64_t total = 0;
  w->Key("arenas").BeginArray(false);
  if (const auto* list = plan->arenas()) {
    for (const fb::ArenaPlan* arena : *list) {
      w->BeginObject();
      w->Key("kind").Enum(fb::EnumNameArenaKind, arena->kind());
      w->Key("bytes").Uint(arena->bytes());
      w->EndObject();
      total += arena->bytes();
    }
  }
  w->EndArray();
  w->Key("total_bytes").Uint(total);
  w->EndObject();
}

// What a session on this build would plan for batch 1 and min(512,
// max_positions) tokens; a failure is reported in the section.
void SessionPlanSection(const Model& model, DescribeWriter* w) {
  const uint32_t max_positions = model.architecture().max_positions();
  SessionLimits limits;
  limits.max_batch = 1;
  limits.max_seq = max_positions == 0 || max_positions > kPlanSeq ? kPlanSeq : max_positions;
  limits.max_new_tokens = 0;
  w->BeginObject();
  w->Key("max_batch").Uint(limits.max_batch);
  w->Key("max_seq").Uint(limits.max_seq);
  const Result<SessionPlan> plan = Session::Plan(model, limits);
  if (!plan.ok()) {
    char error[Status::kMaxMessage + 64];
    std::snprintf(error, sizeof(error), "%s (%s)", plan.status().message(),
                  StatusCodeName(plan.status().code()));
    w->Key("error").String(error);
  } else {
    w->Key("activation_bytes").Uint(plan.value().activation_bytes);
    w->Key("scratch_bytes").Uint(plan.value().scratch_bytes);
    w->Key("kv_cache_bytes").Uint(plan.value().kv_cache_bytes);
    w->Key("total_bytes").Uint(plan.value().total());
    // Per sequence: KV rows of the attention layers + the fixed states of the others.
    w->Key("state_per_sequence");
    w->BeginObject();
    w->Key("kv_layers").Uint(plan.value().kv_layers);
    w->Key("kv_bytes_per_position").Uint(plan.value().kv_bytes_per_position);
    w->Key("fixed_state_layers").Uint(plan.value().fixed_state_layers);
    w->Key("fixed_state_bytes").Uint(plan.value().fixed_state_bytes);
    w->EndObject();
  }
  w->EndObject();
}

// The CPU's features as text, made once.
const char* CpuFeaturesText() {
  struct Text {
    char text[128];
    Text() { FormatCpuFeatures(GetCpuInfo().features, text, sizeof(text)); }
  };
  static const Text features;
  return features.text;
}

void CpuSection(DescribeWriter* w) {
  const KernelTable& kernels = GetKernelTable();
  w->BeginObject();
  w->Key("features").String(CpuFeaturesText());
  w->Key("qs8_gemm_kernel").String(kernels.qs8_gemm_name);
  w->Key("qu8s8_pv_kernel").String(kernels.qu8s8_pv_name);
  w->EndObject();
}

void Describe(const Model& model, DescribeWriter* w) {
  const fb::Model& root = model.root();
  w->BeginObject();
  w->Key("file");
  FileSection(model, w);
  w->Key("architecture");
  ArchitectureSection(model.architecture(), w);
  w->Key("tensors");
  TensorsSection(root, w);
  w->Key("weights");
  WeightsSection(root, w);
  w->Key("tokenizer");
  TokenizerSection(root.tokenizer(), w);
  w->Key("provenance");
  ProvenanceSection(root.provenance(), w);
  w->Key("memory_plan");
  StoredPlanSection(root.memory_plan(), w);
  w->Key("session_plan");
  SessionPlanSection(model, w);
  w->Key("cpu");
  CpuSection(w);
  w->EndObject();
}

// ---- Sessions ------------------------------------------------------------------

// Threads for a count of 0: the machine's fast cores, as sessions resolve it.
uint32_t DefaultThreads() {
  const uint32_t n = DefaultThreadCount();
  return n < kMaxSessionThreads ? n : kMaxSessionThreads;
}

// True when the model multiplies by an F32 matrix: a layer's or the head's
// (every F32 matrix but the looked-up tables: embeddings, T5's relative bias;
// or a tied F32 head).
bool HasF32Products(const Model& model) {
  const fb::Architecture& a = model.architecture();
  for (size_t i = 0; i < model.num_tensors(); ++i) {
    const TensorView& t = model.tensor(i);
    if (t.dtype != fb::DType::F32 || t.rank != 2) continue;
    const bool table = std::strstr(t.name, "embedding") != nullptr ||
                       std::strstr(t.name, "relative_bias") != nullptr;
    const bool head = a.tied_embeddings() && a.structure() != fb::Structure::EncoderOnly &&
                      std::strcmp(t.name, "token_embedding") == 0;
    if (!table || head) return true;
  }
  return false;
}

// Bytes of weights one decode step reads: every tensor but the looked-up
// embedding tables (the head's table when tied: the step reads all of it).
uint64_t DecodeWeightBytes(const Model& model) {
  uint64_t total = 0;
  for (size_t i = 0; i < model.num_tensors(); ++i) {
    const TensorView& t = model.tensor(i);
    const bool table = std::strstr(t.name, "embedding") != nullptr;
    const bool head =
        model.architecture().tied_embeddings() && std::strcmp(t.name, "token_embedding") == 0;
    if (!table || head) total += t.size;
  }
  return total;
}

static_assert(static_cast<size_t>(OpKind::kCount) <= OCTET_PROFILE_MAX_KINDS,
              "octet_profile holds every OpKind");

}  // namespace
}  // namespace api
}  // namespace octet

using octet::api::Fail;

extern "C" {

OCTET_API octet_status octet_model_describe(const octet_model* model, char* json, size_t capacity,
                                            size_t* json_len) {
  if (model == nullptr || json_len == nullptr) {
    return Fail(OCTET_INVALID_ARGUMENT,
                "octet_model_describe: model and json_len must not be null");
  }
  *json_len = 0;
  if (json == nullptr && capacity > 0) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_model_describe: json is null");
  }
  octet::api::DescribeWriter writer(json, capacity);
  octet::api::Describe(model->model, &writer);
  if (!writer.ok()) return Fail(OCTET_INTERNAL, "octet_model_describe: malformed JSON (a bug)");
  *json_len = writer.size();
  if (writer.size() > capacity) {
    return Fail(OCTET_BUFFER_TOO_SMALL, "the description takes %zu bytes; the buffer holds %zu",
                writer.size(), capacity);
  }
  return OCTET_OK;
}

OCTET_API octet_status octet_get_runtime_info(octet_runtime_info* info) {
  if (info == nullptr) return Fail(OCTET_INVALID_ARGUMENT, "octet_get_runtime_info: info is null");
  if (info->struct_size < sizeof(size_t)) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_runtime_info.struct_size is %zu (unset?)",
                info->struct_size);
  }
  const octet::KernelTable& kernels = octet::GetKernelTable();
  octet_runtime_info i;
  std::memset(&i, 0, sizeof(i));
  i.struct_size = sizeof(i);
  i.cpu_features = octet::api::CpuFeaturesText();
  i.int8_gemm_kernel = kernels.qs8_gemm_name;
  i.int8_packed_gemm_kernel = kernels.qs8_packed_gemm_name;
  i.int8_pv_kernel = kernels.qu8s8_pv_name;
  i.default_threads = octet::api::DefaultThreads();
  octet::api::CopyOut(i, info);
  return OCTET_OK;
}

OCTET_API octet_status octet_session_get_info(const octet_session* session,
                                              octet_session_info* info) {
  const octet_status checked =
      octet::api::CheckSession("octet_session_get_info", session, {{info, "info"}});
  if (checked != OCTET_OK) return checked;
  if (info->struct_size < sizeof(size_t)) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_session_info.struct_size is %zu (unset?)",
                info->struct_size);
  }
  const octet::Session& s = session->session;
  const octet::Model& model = session->model->model;
  octet_session_info i;
  std::memset(&i, 0, sizeof(i));
  i.struct_size = sizeof(i);
  i.threads = s.threads();
  i.max_batch = s.limits().max_batch;
  i.max_seq = s.limits().max_seq;
  i.max_new_tokens = s.limits().max_new_tokens;
  i.activation_bytes = s.plan().activation_bytes;
  i.scratch_bytes = s.plan().scratch_bytes;
  i.kv_cache_bytes = s.plan().kv_cache_bytes;
  const bool f32 = octet::api::HasF32Products(model);
  i.f32_products = f32 ? 1 : 0;
  if (const octet::F32FullyConnectedSet* set = s.f32_products()) {
    i.f32_matrices = static_cast<uint32_t>(set->matrices());
    i.f32_operators = static_cast<uint32_t>(set->operators());
    i.f32_packed_bytes = set->packed_bytes();
  }
  i.f32_note = f32 && i.f32_operators == 0 ? octet::F32FullyConnectedUnavailable() : nullptr;
  i.decode_weight_bytes = octet::api::DecodeWeightBytes(model);
  octet::api::CopyOut(i, info);
  return OCTET_OK;
}

OCTET_API octet_status octet_session_profile_start(octet_session* session) {
  const octet_status checked = octet::api::CheckSession("octet_session_profile_start", session);
  if (checked != OCTET_OK) return checked;
  session->profile.Clear();
  session->session.SetProfile(&session->profile);
  return OCTET_OK;
}

OCTET_API octet_status octet_session_profile_stop(octet_session* session) {
  const octet_status checked = octet::api::CheckSession("octet_session_profile_stop", session);
  if (checked != OCTET_OK) return checked;
  session->session.SetProfile(nullptr);
  return OCTET_OK;
}

OCTET_API octet_status octet_session_profile(const octet_session* session, octet_profile* out) {
  const octet_status checked =
      octet::api::CheckSession("octet_session_profile", session, {{out, "out"}});
  if (checked != OCTET_OK) return checked;
  if (out->struct_size < sizeof(size_t)) {
    return Fail(OCTET_INVALID_ARGUMENT, "octet_profile.struct_size is %zu (unset?)",
                out->struct_size);
  }
  const octet::ForwardProfile& p = session->profile;
  octet_profile o;
  std::memset(&o, 0, sizeof(o));
  o.struct_size = sizeof(o);
  o.num_kinds = static_cast<uint32_t>(octet::OpKind::kCount);
  for (uint32_t k = 0; k < o.num_kinds; ++k) {
    o.kind[k] = octet::OpKindName(static_cast<octet::OpKind>(k));
    o.nanos[k] = p.nanos[k] > 0 ? static_cast<uint64_t>(p.nanos[k]) : 0;
    o.calls[k] = p.calls[k];
  }
  o.linear_ops = p.linear_ops;
  o.head_ops = p.head_ops;
  o.attention_tiles_visited = p.attention_tiles.visited;
  o.attention_tiles_full = p.attention_tiles.full;
  o.local_attention_tiles_visited = p.local_attention_tiles.visited;
  o.local_attention_tiles_full = p.local_attention_tiles.full;
  octet::api::CopyOut(o, out);
  return OCTET_OK;
}

}  // extern "C"
