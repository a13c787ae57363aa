// octet bench: times prefill over a synthetic batch and reports speed and
// memory (docs/design.md §5). With --json, exactly one JSON object on stdout.
// Written on the public API alone (octet.h and its C++ wrapper): the runs and
// steps are the ones an app makes, the facts come from its diagnostics.
#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/api_util.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/format_util.h"
#include "cli/int8_peak.h"
#include "cli/json.h"
#include "cli/tool_main.h"
#include "common/alloc_counter.h"
#include "octet/octet.hpp"

namespace octet {
namespace cli {
namespace {

constexpr char kUsage[] =
    R"(Usage: octet bench MODEL [--seq 128] [--batch 1] [--decode 128] [--threads N]
                   [--runs R] [--json] [--profile]

Times a forward pass (prefill) over a batch of synthetic token ids: one warm-up
run, then R timed runs; reports the median. Decoder models with transformer
layers then take --decode steps of one token per sequence with the KV cache
after each timed prefill; those steps are timed apart (decode_tokens_per_s,
from the median run).

Options:
  --seq N       tokens per sequence, 1 to 1048576 (default 128)
  --batch N     sequences, 1 to 4096 (default 1)
  --decode N    decoder steps to time after each prefill, 0 to 1048576 (default 128;
                decoder and encoder-decoder models with layers; otherwise
                decode_tokens_per_s is null and "notes" says why)
  --threads N   threads, 0 to 256 (default 0: the machine's fast cores)
  --runs R      timed runs, 1 to 100000 (default 10)
  --json        print one JSON object instead of a table
  --profile     then R more runs (and their decode steps) timed per operation kind
                (embed, norm, linear, attention, local_attention: the layers with a
                sliding window, rope, activation, residual, head), the attention
                tiles visited, the linear layers' int8 GOPS, and the machine's int8
                peak measured on the same number of threads (the GEMM's fraction of it)
  -h, --help    show this help

JSON fields: prefill_ms (median), prefill_ms_min, prefill_ms_max,
prefill_tokens_per_s, decode_tokens_per_s (null when not measured), arena_bytes
(the session plan: activation_bytes + scratch_bytes + kv_cache_bytes, each also
given), weights_bytes, decode_weight_bytes_per_step and decode_weight_gb_per_s (the weights a
decode step reads, and at what rate), load_ms (octet_model_load: mapping and verifying the
file, setting up its tokenizer), peak_rss_bytes, heap_allocs_during_run (heap allocations made
during the timed runs; 0 is the contract), notes, and the settings used. With
--profile, "profile": {"prefill_ms": {kind: ms per prefill}, "decode_ms": {kind:
ms per decode step}, attention_tiles: {kind: {visited, full}} per prefill (a tile is
16 queries against one tile of keys, per head; full: with every key visible),
linear_gops, head_gops, int8_peak_gops, int8_peak_probe, linear_dtype,
linear_fraction_of_peak (null for fp32 products)}.

Exit status: 0 on success, 2 for a wrong command line, 1 for any other failure
(one line on stderr).
)";

// Tokens per batch beyond which a benchmark is a typo rather than a measurement.
constexpr uint64_t kMaxBatchTokens = uint64_t{1} << 24;

struct BenchSettings {
  std::string model_path;
  uint32_t seq = 128;
  uint32_t batch = 1;
  uint32_t decode = 128;
  uint32_t threads = 0;  // 0: the machine's fast cores
  uint32_t runs = 10;
  bool json = false;
  bool profile = false;
};

// Time and calls per operation kind, summed over profiled runs (or steps).
struct ProfileTotals {
  std::vector<std::string> kinds;  // octet_profile.kind, in its order
  std::vector<uint64_t> nanos;
  std::vector<uint64_t> calls;
  double linear_ops = 0;
  double head_ops = 0;
  double tiles_visited[2] = {0, 0};  // attention, local_attention
  double tiles_full[2] = {0, 0};

  void Add(const octet_profile& p) {
    if (kinds.empty()) {
      for (uint32_t k = 0; k < p.num_kinds; ++k) kinds.emplace_back(p.kind[k]);
      nanos.assign(p.num_kinds, 0);
      calls.assign(p.num_kinds, 0);
    }
    for (uint32_t k = 0; k < p.num_kinds && k < kinds.size(); ++k) {
      nanos[k] += p.nanos[k];
      calls[k] += p.calls[k];
    }
    linear_ops += p.linear_ops;
    head_ops += p.head_ops;
    tiles_visited[0] += p.attention_tiles_visited;
    tiles_full[0] += p.attention_tiles_full;
    tiles_visited[1] += p.local_attention_tiles_visited;
    tiles_full[1] += p.local_attention_tiles_full;
  }
  // Nanoseconds of one kind; 0 when absent.
  uint64_t Nanos(const char* kind) const {
    for (size_t k = 0; k < kinds.size(); ++k) {
      if (kinds[k] == kind) return nanos[k];
    }
    return 0;
  }
};

struct BenchResult {
  double prefill_ms = 0;  // median
  double prefill_ms_min = 0;
  double prefill_ms_max = 0;
  double prefill_tokens_per_s = 0;
  bool decoded = false;            // decode steps were timed
  double decode_tokens_per_s = 0;  // batch * decode / median decode time
  uint64_t heap_allocs = 0;
  bool heap_counter_active = false;
  uint64_t peak_rss_bytes = 0;
  // --profile: per operation kind, summed over the profiled runs
  bool profiled = false;
  ProfileTotals prefill_profile;
  ProfileTotals decode_profile;
  uint64_t decode_steps_profiled = 0;
  double int8_peak_gops = 0;  // 0: no probe for this ISA
  std::string int8_peak_probe;
};

// What the C API says about the model, the session and this build.
struct BenchFacts {
  octet_model_info model{};
  octet_session_info session{};
  octet_runtime_info runtime{};
};

struct SessionFree {
  void operator()(octet_session* session) const { octet_session_free(session); }
};
using SessionHandle = std::unique_ptr<octet_session, SessionFree>;

BenchSettings ParseSettings(const ParsedArgs& args) {
  BenchSettings s;
  s.model_path = args.positionals[0];
  const auto get = [&args](const char* flag, uint32_t fallback, uint64_t min, uint64_t max) {
    if (!args.Has(flag)) return fallback;
    return static_cast<uint32_t>(ParseUint(flag, args.Value(flag), min, max));
  };
  s.seq = get("--seq", s.seq, 1, 1u << 20);
  s.batch = get("--batch", s.batch, 1, 4096);
  s.decode = get("--decode", s.decode, 0, 1u << 20);
  s.threads = get("--threads", s.threads, 0, 256);
  s.runs = get("--runs", s.runs, 1, 100000);
  s.json = args.Switch("--json");
  s.profile = args.Switch("--profile");
  return s;
}

int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint64_t PeakRssBytes() {
  struct rusage usage = {};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // Linux and Android report KiB
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// "message (kind)" for the calling thread's last failing call.
std::string DescribeFailure(octet_status status) {
  return std::string(octet_last_error()) + " (" + octet_status_name(status) + ")";
}

// The per-kind counters of the runs since the last profile start.
octet_profile ReadProfile(const octet_session* session) {
  octet_profile profile;
  const api::Status st = api::GetProfile(session, &profile);
  if (!st.ok()) throw Failure("cannot read the profile: " + st.message);
  return profile;
}

BenchResult Measure(const BenchSettings& s, const octet_model_info& info, octet_session* session) {
  const uint32_t vocab = info.vocab_size;
  // ids [batch, seq]: deterministic, spread over the vocabulary.
  std::vector<int32_t> ids(static_cast<size_t>(s.batch) * s.seq);
  for (size_t i = 0; i < ids.size(); ++i) {
    ids[i] = static_cast<int32_t>((i * 7919 + 13) % vocab);
  }
  const std::vector<uint32_t> lengths(s.batch, s.seq);
  std::vector<int64_t> nanos(s.runs);  // sized before the timed runs: they must not allocate
  // Encoder-decoder models: the same ids on both sides.
  const bool enc_dec = info.structure == OCTET_ENCODER_DECODER;
  auto forward = [&]() {
    return enc_dec ? octet_session_run_encoder_decoder(session, ids.data(), lengths.data(), s.seq,
                                                       ids.data(), lengths.data(), s.seq, s.batch)
                   : octet_session_run(session, ids.data(), lengths.data(), s.batch, s.seq);
  };

  // Decode steps: one token per sequence, deterministic ids.
  const bool decoder = info.structure != OCTET_ENCODER_ONLY;
  const bool has_layers = info.num_layers + info.num_decoder_layers > 0;
  const bool decodes = decoder && s.decode > 0 && has_layers;
  std::vector<int32_t> next(s.batch);
  std::vector<int64_t> decode_nanos(s.runs);
  auto decode = [&]() {
    octet_status st = OCTET_OK;
    for (uint32_t t = 0; t < s.decode && st == OCTET_OK; ++t) {
      for (uint32_t b = 0; b < s.batch; ++b) {
        next[b] = static_cast<int32_t>((t * 31 + b * 17 + 5) % vocab);
      }
      st = octet_session_step(session, next.data(), s.batch);
    }
    return st;
  };

  octet_status status = forward();  // warm-up
  if (status == OCTET_OK && decodes) status = decode();
  if (status != OCTET_OK) throw Failure("forward pass failed: " + DescribeFailure(status));

  BenchResult result;
  const uint64_t allocs_before = HeapAllocationCount();
  for (uint32_t r = 0; r < s.runs && status == OCTET_OK; ++r) {
    const int64_t start = NowNanos();
    status = forward();
    nanos[r] = NowNanos() - start;
    if (status == OCTET_OK && decodes) {
      const int64_t decode_start = NowNanos();
      status = decode();
      decode_nanos[r] = NowNanos() - decode_start;
    }
  }
  const uint64_t allocs_after = HeapAllocationCount();
  if (status != OCTET_OK) throw Failure("forward pass failed: " + DescribeFailure(status));
  if (decodes) {
    std::vector<double> seconds(s.runs);
    for (uint32_t r = 0; r < s.runs; ++r) seconds[r] = static_cast<double>(decode_nanos[r]) / 1e9;
    const double median = Median(seconds);
    result.decoded = true;
    result.decode_tokens_per_s =
        median > 0 ? static_cast<double>(s.batch) * s.decode / median : 0;
  }

  std::vector<double> ms(s.runs);
  for (uint32_t r = 0; r < s.runs; ++r) ms[r] = static_cast<double>(nanos[r]) / 1e6;
  result.prefill_ms = Median(ms);
  result.prefill_ms_min = *std::min_element(ms.begin(), ms.end());
  result.prefill_ms_max = *std::max_element(ms.begin(), ms.end());
  const double tokens = static_cast<double>(s.batch) * s.seq;
  result.prefill_tokens_per_s = result.prefill_ms > 0 ? tokens / (result.prefill_ms * 1e-3) : 0;
  result.heap_allocs = allocs_after - allocs_before;
  if (s.profile) {
    // Apart from the timed runs, which the clock reads would slow down. Each
    // start zeroes the session's counters: the sums are kept here.
    for (uint32_t r = 0; r < s.runs && status == OCTET_OK; ++r) {
      octet_session_profile_start(session);
      status = forward();
      octet_session_profile_stop(session);
      result.prefill_profile.Add(ReadProfile(session));
      if (status == OCTET_OK && decodes) {
        octet_session_profile_start(session);
        status = decode();
        octet_session_profile_stop(session);
        result.decode_profile.Add(ReadProfile(session));
        result.decode_steps_profiled += s.decode;
      }
    }
    if (status != OCTET_OK) throw Failure("forward pass failed: " + DescribeFailure(status));
    result.profiled = true;
    // The peak on as many threads as the session runs on.
    octet_session_info session_info;
    api::Status st = api::GetSessionInfo(session, &session_info);
    Int8Peak peak;
    std::string error = st.message;
    if (!st.ok() || !MeasureInt8Peak(session_info.threads, &peak, &error)) {
      throw Failure("cannot measure the int8 peak: " + error);
    }
    result.int8_peak_gops = peak.gops;
    result.int8_peak_probe = peak.probe;
  }
  result.heap_counter_active = HeapAllocationCounterActive();
  result.peak_rss_bytes = PeakRssBytes();
  return result;
}

// The schema's name of a family ("Llama"): octet_model_info's, capitalized.
std::string FamilyText(const char* family) {
  std::string text = family == nullptr ? "" : family;
  if (!text.empty()) text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  return text;
}

JsonValue Report(const BenchSettings& s, const BenchFacts& facts, const BenchResult& r) {
  const octet_model_info& model = facts.model;
  const octet_session_info& session = facts.session;
  const bool decoder = model.structure != OCTET_ENCODER_ONLY;

  JsonValue notes = JsonValue::Array();
  if (!decoder) {
    notes.Append("encoder-only model: --decode does not apply");
  } else if (s.decode > 0 && !r.decoded) {
    notes.Append("decode not measured: the model has no transformer layers (no KV cache)");
  }
  if (!r.heap_counter_active) notes.Append("heap allocation counter unavailable in this build");
  // fp32 products: on XNNPACK's operators, or on the reference GEMM (and why).
  if (session.f32_operators > 0) {
    char note[160];
    std::snprintf(note, sizeof(note), "fp32 products on XNNPACK: %u matrices in %u operators, "
                  "%.1f MiB of packed weight copies", session.f32_matrices, session.f32_operators,
                  static_cast<double>(session.f32_packed_bytes) / (1 << 20));
    notes.Append(note);
  } else if (session.f32_products != 0 && session.f32_note != nullptr) {
    notes.Append(std::string("fp32 products on the slow reference GEMM (f32_gemm__ref): ") +
                 session.f32_note);
  }

  const uint64_t arena_bytes = static_cast<uint64_t>(session.activation_bytes) +
                               session.scratch_bytes + session.kv_cache_bytes;
  JsonValue json = JsonValue::Object();
  json.Set("model", s.model_path);
  json.Set("family", FamilyText(model.family));
  json.Set("structure", StructureName(model.structure));
  json.Set("batch", s.batch);
  json.Set("seq", s.seq);
  json.Set("decode", decoder ? s.decode : 0u);
  json.Set("threads", session.threads);
  json.Set("runs", s.runs);
  json.Set("prefill_ms", r.prefill_ms);
  json.Set("prefill_ms_min", r.prefill_ms_min);
  json.Set("prefill_ms_max", r.prefill_ms_max);
  json.Set("prefill_tokens_per_s", r.prefill_tokens_per_s);
  json.Set("decode_tokens_per_s", r.decoded ? JsonValue(r.decode_tokens_per_s) : JsonValue());
  // The weights a step streams, per second (batch 1: one pass over them per token).
  const double step_bytes = static_cast<double>(session.decode_weight_bytes);
  json.Set("decode_weight_bytes_per_step", session.decode_weight_bytes);
  json.Set("decode_weight_gb_per_s",
           r.decoded ? JsonValue(step_bytes * r.decode_tokens_per_s / s.batch / 1e9) : JsonValue());
  json.Set("arena_bytes", arena_bytes);
  json.Set("activation_bytes", static_cast<uint64_t>(session.activation_bytes));
  json.Set("scratch_bytes", static_cast<uint64_t>(session.scratch_bytes));
  json.Set("kv_cache_bytes", static_cast<uint64_t>(session.kv_cache_bytes));
  json.Set("weights_bytes", model.weights_bytes);
  json.Set("peak_rss_bytes", r.peak_rss_bytes);
  json.Set("heap_allocs_during_run",
           r.heap_counter_active ? JsonValue(r.heap_allocs) : JsonValue());
  json.Set("kernel", facts.runtime.int8_gemm_kernel);
  json.Set("packed_kernel", facts.runtime.int8_packed_gemm_kernel);
  json.Set("cpu_features", facts.runtime.cpu_features);
  if (r.profiled) {
    JsonValue profile = JsonValue::Object();
    const auto per_kind = [](const ProfileTotals& p, double divisor) {
      JsonValue kinds = JsonValue::Object();
      for (size_t k = 0; k < p.kinds.size(); ++k) {
        kinds.Set(p.kinds[k], divisor > 0 ? static_cast<double>(p.nanos[k]) / 1e6 / divisor : 0.0);
      }
      return kinds;
    };
    const double runs = s.runs;
    profile.Set("prefill_ms", per_kind(r.prefill_profile, runs));
    if (r.decode_steps_profiled > 0) {
      profile.Set("decode_ms", per_kind(r.decode_profile,
                                        static_cast<double>(r.decode_steps_profiled)));
    }
    const auto gops = [](double ops, uint64_t nanos) {
      return nanos > 0 ? ops / static_cast<double>(nanos) : 0.0;  // ops per ns = GOPS
    };
    const double linear_gops =
        gops(r.prefill_profile.linear_ops, r.prefill_profile.Nanos("linear"));
    // Attention tiles per prefill, by kind (octet_profile's attention_tiles_*).
    JsonValue tiles = JsonValue::Object();
    const char* tile_kinds[2] = {"attention", "local_attention"};
    for (int k = 0; k < 2; ++k) {
      if (r.prefill_profile.tiles_full[k] == 0) continue;
      JsonValue kind = JsonValue::Object();
      kind.Set("visited", r.prefill_profile.tiles_visited[k] / runs);
      kind.Set("full", r.prefill_profile.tiles_full[k] / runs);
      tiles.Set(tile_kinds[k], std::move(kind));
    }
    profile.Set("attention_tiles", std::move(tiles));
    profile.Set("linear_gops", linear_gops);
    profile.Set("head_gops", gops(r.prefill_profile.head_ops, r.prefill_profile.Nanos("head")));
    profile.Set("int8_peak_gops", r.int8_peak_gops);
    profile.Set("int8_peak_probe", r.int8_peak_probe);
    // The int8 peak means nothing to fp32 products: no fraction for them.
    const bool int8_products = session.f32_products == 0;
    profile.Set("linear_dtype", int8_products ? "int8" : "fp32");
    profile.Set("linear_fraction_of_peak", r.int8_peak_gops > 0 && int8_products
                                               ? JsonValue(linear_gops / r.int8_peak_gops)
                                               : JsonValue());
    json.Set("profile", std::move(profile));
  }
  json.Set("notes", std::move(notes));
  return json;
}

void PrintTable(const JsonValue& report) {
  const auto text = [&report](const char* key) { return report.Find(key)->ToText(); };
  const auto bytes = [&report](const char* key) {
    const JsonValue* v = report.Find(key);
    if (v->is_null()) return std::string("n/a");
    return FormatBytes(v->AsUint()) + " (" + v->ToText() + " bytes)";
  };
  const auto number = [&report](const char* key, const char* format) {
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), format, report.Find(key)->AsDouble());
    return std::string(buffer);
  };
  std::printf("octet bench %s (%s, %s)\n", text("model").c_str(), text("family").c_str(),
              text("structure").c_str());
  std::printf("  batch %s, seq %s, decode %s, threads %s, %s timed runs after 1 warm-up\n",
              text("batch").c_str(), text("seq").c_str(), text("decode").c_str(),
              text("threads").c_str(), text("runs").c_str());
  std::printf("  %-24s %s (min %s, max %s)\n", "prefill ms (median)",
              number("prefill_ms", "%.4f").c_str(), number("prefill_ms_min", "%.4f").c_str(),
              number("prefill_ms_max", "%.4f").c_str());
  std::printf("  %-24s %s\n", "prefill tokens/s", number("prefill_tokens_per_s", "%.1f").c_str());
  std::printf("  %-24s %s\n", "decode tokens/s",
              report.Find("decode_tokens_per_s")->is_null()
                  ? "not measured (see notes)"
                  : number("decode_tokens_per_s", "%.1f").c_str());
  if (!report.Find("decode_weight_gb_per_s")->is_null()) {
    std::printf("  %-24s %s GB/s of weights (%s bytes per step)\n", "decode streams",
                number("decode_weight_gb_per_s", "%.1f").c_str(),
                text("decode_weight_bytes_per_step").c_str());
  }
  std::printf("  %-24s %s\n", "load (map + verify) ms", number("load_ms", "%.2f").c_str());
  std::printf("  %-24s %s\n", "arena", bytes("arena_bytes").c_str());
  std::printf("  %-24s %s\n", "  activations", bytes("activation_bytes").c_str());
  std::printf("  %-24s %s\n", "  scratch", bytes("scratch_bytes").c_str());
  std::printf("  %-24s %s\n", "  kv cache", bytes("kv_cache_bytes").c_str());
  std::printf("  %-24s %s\n", "weights", bytes("weights_bytes").c_str());
  std::printf("  %-24s %s\n", "peak RSS", bytes("peak_rss_bytes").c_str());
  std::printf("  %-24s %s\n", "heap allocs during runs", text("heap_allocs_during_run").c_str());
  std::printf("  %-24s %s\n", "packed int8 GEMM", text("packed_kernel").c_str());
  std::printf("  %-24s %s (cpu: %s)\n", "kernel", text("kernel").c_str(),
              text("cpu_features").c_str());
  if (const JsonValue* profile = report.Find("profile")) {
    const JsonValue* prefill = profile->Find("prefill_ms");
    const JsonValue* decode = profile->Find("decode_ms");
    double prefill_total = 0, decode_total = 0;
    for (const auto& [kind, ms] : prefill->members()) {
      prefill_total += ms.AsDouble();
      if (decode != nullptr) decode_total += decode->Find(kind)->AsDouble();
    }
    std::printf("  profile                  prefill ms    %%   %s\n",
                decode != nullptr ? "decode ms/step    %" : "");
    for (const auto& [kind, ms] : prefill->members()) {
      const double p = ms.AsDouble();
      std::printf("    %-22s %10.3f %5.1f", kind.c_str(), p,
                  prefill_total > 0 ? 100 * p / prefill_total : 0);
      if (decode != nullptr) {
        const double d = decode->Find(kind)->AsDouble();
        std::printf("   %12.4f %5.1f", d, decode_total > 0 ? 100 * d / decode_total : 0);
      }
      std::printf("\n");
    }
    for (const auto& [kind, tiles] : profile->Find("attention_tiles")->members()) {
      const double visited = tiles.Find("visited")->AsDouble();
      const double full = tiles.Find("full")->AsDouble();
      const std::string label = kind + " tiles";
      std::printf("  %-24s %.0f of %.0f per prefill (%.1f %%; 16 queries x a tile of keys, "
                  "per head)\n",
                  label.c_str(), visited, full, full > 0 ? 100 * visited / full : 0.0);
    }
    const std::string linear_label = "linear layers, " + profile->Find("linear_dtype")->ToText();
    std::printf("  %-24s %.1f GOPS (head %.1f)\n", linear_label.c_str(),
                profile->Find("linear_gops")->AsDouble(), profile->Find("head_gops")->AsDouble());
    std::printf("  %-24s %.1f GOPS (%s, %s threads)\n", "int8 peak",
                profile->Find("int8_peak_gops")->AsDouble(),
                profile->Find("int8_peak_probe")->ToText().c_str(), text("threads").c_str());
    const JsonValue* fraction = profile->Find("linear_fraction_of_peak");
    if (!fraction->is_null()) {
      std::printf("  %-24s %.1f %%\n", "linear / peak", 100 * fraction->AsDouble());
    }
  }
  for (const JsonValue& note : report.Find("notes")->items()) {
    std::printf("  note: %s\n", note.ToText().c_str());
  }
}

}  // namespace

int BenchCommand(const std::vector<std::string>& args) {
  static const std::vector<OptionSpec> kOptions = {
      ValueOption("--seq"),     ValueOption("--batch"), ValueOption("--decode"),
      ValueOption("--threads"), ValueOption("--runs"),  SwitchOption("--json"),
      SwitchOption("--profile"),
  };
  const ParsedArgs parsed = ParseArgs("octet bench", kOptions, args, 1, 1, "MODEL");
  if (parsed.help) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  const BenchSettings settings = ParseSettings(parsed);
  const int64_t load_start = NowNanos();
  api::Model model;
  const api::Status loaded = model.Load(settings.model_path);
  const double load_ms = static_cast<double>(NowNanos() - load_start) / 1e6;
  if (!loaded.ok()) throw Failure(loaded.message);
  BenchFacts facts;
  facts.model.struct_size = sizeof(facts.model);
  if (octet_model_get_info(model.get(), &facts.model) != OCTET_OK) {
    throw Failure(std::string("cannot read the model's facts: ") + octet_last_error());
  }
  const octet_model_info& info = facts.model;
  const bool decoder = info.structure != OCTET_ENCODER_ONLY;

  octet_session_options options;
  octet_session_options_init(&options);
  options.max_batch = settings.batch;
  options.max_seq = settings.seq + (decoder ? settings.decode : 0);
  options.max_new_tokens = decoder ? settings.decode : 0;
  options.threads = settings.threads;
  // Prefill to the first token, as generation runs it (and the peers measure
  // it): logits of the last row only (no OCTET_SESSION_ALL_LOGITS), the prompt
  // in chunks.
  options.flags = 0;
  if (info.max_positions != 0 && options.max_seq > info.max_positions) {
    throw UsageError(std::string(decoder ? "--seq + --decode" : "--seq") + " = " +
                     std::to_string(options.max_seq) + " exceeds the model's max_positions " +
                     std::to_string(info.max_positions));
  }
  if (static_cast<uint64_t>(options.max_batch) * options.max_seq > kMaxBatchTokens) {
    throw UsageError("--batch x (" + std::string(decoder ? "--seq + --decode" : "--seq") + ") is " +
                     std::to_string(uint64_t{options.max_batch} * options.max_seq) +
                     " tokens; at most " + std::to_string(kMaxBatchTokens) + " per run");
  }
  octet_session* created = nullptr;
  const octet_status st =
      octet_session_create_with_options(model.get(), &options, nullptr, 0, &created);
  if (st != OCTET_OK) {
    throw Failure("cannot create a session for batch " + std::to_string(options.max_batch) +
                  ", sequence length " + std::to_string(options.max_seq) + ": " +
                  DescribeFailure(st));
  }
  const SessionHandle session(created);
  api::Status facts_status = api::GetSessionInfo(session.get(), &facts.session);
  if (facts_status.ok()) facts_status = api::GetRuntimeInfo(&facts.runtime);
  if (!facts_status.ok()) throw Failure("cannot read the session's facts: " + facts_status.message);

  const BenchResult result = Measure(settings, info, session.get());
  JsonValue report = Report(settings, facts, result);
  report.Set("load_ms", load_ms);
  if (settings.json) {
    std::printf("%s\n", report.Serialize().c_str());
  } else {
    PrintTable(report);
  }
  return kExitOk;
}

}  // namespace cli
}  // namespace octet
