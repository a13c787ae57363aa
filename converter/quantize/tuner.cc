#include "quantize/tuner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "format/model.h"
#include "format/tensor_roles.h"
#include "import/error.h"
#include "memory.h"
#include "quantize/block_model.h"
#include "quantize/linalg.h"
#include "quantize/rounding.h"

namespace octet {
namespace convert {
namespace {

// The matrices that read one product input, and where smoothing factors can
// be folded (the norm before it, or the rows of the matrix that writes it).
struct Group {
  ProductSite site;
  std::vector<std::string> matrices;  // canonical weight names
  enum class Fold { kNone, kNorm, kRows } fold = Fold::kNone;
  std::string fold_weight;  // the norm's weight, or the writing matrix
  std::string fold_bias;    // its bias, when the file has one
  uint32_t tie_heads = 1;   // O input under GQA: query heads sharing one V head
  uint32_t head_dim = 0;
};

// The file name of `role`'s tensor in layer `layer` of `stack` (model-level
// roles: the name alone).
std::string SiteTensorName(const RoleInfo& role, LayerStack stack, uint32_t layer) {
  char name[kMaxTensorNameLength];
  RoleTensorName(name, sizeof(name), role, stack, layer);
  return name;
}

// The row that goes with `role` (its bias), or null when none does.
const RoleInfo* BiasOf(Role role) {
  for (const RoleInfo& r : RolesOf(GetRole(role).group)) {
    if (r.with == role && r.role != role) return &r;
  }
  return nullptr;
}

// Where the smoothing factors of a product input can be folded: into the
// norm that writes it (pre-norm models), or into the rows of the matrix that
// writes it, where the input is linear in that matrix's output.
struct InputWriter {
  Group::Fold fold = Group::Fold::kNone;
  Role role = Role::kAttnNorm;  // the norm's weight or the writing matrix
};

InputWriter WriterOf(ProductInput which, const fb::ArchitectureT& a) {
  using F = Group::Fold;
  switch (which) {
    case ProductInput::kAttention: return {F::kNorm, Role::kAttnNorm};
    case ProductInput::kAttentionOutput: return {F::kRows, Role::kAttnV};
    case ProductInput::kCrossQuery: return {F::kNorm, Role::kCrossAttnNorm};
    case ProductInput::kCrossOutput: return {F::kRows, Role::kCrossV};
    case ProductInput::kCrossKv: return {};  // the encoder's output
    case ProductInput::kFfn: return {F::kNorm, Role::kFfnNorm};
    case ProductInput::kFfnHidden:  // act(gate) * up: linear in up's rows when gated
      return a.gated_ffn ? InputWriter{F::kRows, Role::kFfnUp} : InputWriter{};
    case ProductInput::kHead: return {F::kNorm, Role::kFinalNorm};
    case ProductInput::kConvOutput: return {};  // c * conv(b * x): c is a third of in_proj's rows
    case ProductInput::kLinearOutput: return {};  // RMSNorm(o) * w * silu(z): not linear in z
    // RWKV: each product reads its own mix of the normed row and the previous
    // one (per channel, not a norm's output), or a gated or squared output.
    case ProductInput::kRwkvKey:
    case ProductInput::kRwkvValue:
    case ProductInput::kRwkvReceptance:
    case ProductInput::kRwkvOutput:
    case ProductInput::kRwkvChannelKey:
    case ProductInput::kRwkvChannelReceptance:
    case ProductInput::kRwkvChannelValue: return {};
  }
  return {};
}

// The tuner's view of the model: every canonical tensor's F32 values (as
// smoothing leaves them), shapes, and the groups of matrices per input.
class Workbench {
 public:
  Workbench(const ModelSpec& spec, const Checkpoint& checkpoint)
      : spec_(spec), checkpoint_(checkpoint) {
    for (const TensorMapping& m : spec.tensors) {
      shapes_[m.name] = m.shape;
      mappings_[m.name] = &m;
    }
  }

  bool Has(const std::string& name) const { return shapes_.count(name) > 0; }
  // A tensor's values, read when first asked for (what the steps never touch,
  // a block's stand-ins and embeddings, is never read).
  std::vector<float>& Values(const std::string& name) {
    auto it = values_.find(name);
    if (it == values_.end()) {
      it = values_.emplace(name, ModelSpec::ReadValues(*mappings_.at(name), checkpoint_)).first;
    }
    return it->second;
  }
  uint32_t Rows(const std::string& name) const { return shapes_.at(name)[0]; }
  uint32_t Cols(const std::string& name) const { return shapes_.at(name)[1]; }

  // Groups for the captured sites of this architecture: the role table's
  // product matrices of each site's input, and where its factors fold.
  // Only `matrices` are read (a block's stand-ins are not).
  std::vector<Group> Groups(const std::map<ProductSite, ProductInputs>& sites,
                            const std::vector<std::string>& matrices) const {
    const fb::ArchitectureT& a = spec_.architecture;
    const bool pre = a.norm_placement == fb::NormPlacement::Pre;
    std::vector<Group> groups;
    for (const auto& [site, inputs] : sites) {
      (void)inputs;
      Group g;
      g.site = site;
      const LayerStack st = site.stack;
      const uint32_t l = site.layer;
      // A tied head is the embedding table the lookups read too: left as it
      // is (the last step may keep it F32).
      if (site.which == ProductInput::kHead && a.tied_embeddings) continue;
      for (size_t i = 0; i < kRoleCount; ++i) {
        const RoleInfo& r = GetRole(static_cast<Role>(i));
        if (r.storage != RoleStorage::kProduct || r.input != site.which) continue;
        const std::string name = SiteTensorName(r, st, l);
        if (Has(name) && std::find(matrices.begin(), matrices.end(), name) != matrices.end()) {
          g.matrices.push_back(name);
        }
      }
      if (g.matrices.empty()) continue;
      const InputWriter writer = WriterOf(site.which, a);
      const std::string w = SiteTensorName(GetRole(writer.role), st, l);
      if (writer.fold != Group::Fold::kNone && (pre || writer.fold != Group::Fold::kNorm) &&
          Has(w)) {
        g.fold = writer.fold;
        g.fold_weight = w;
        if (const RoleInfo* bias = BiasOf(writer.role)) {
          const std::string b = SiteTensorName(*bias, st, l);
          if (Has(b)) g.fold_bias = b;
        }
      }
      if (site.which == ProductInput::kAttentionOutput ||
          site.which == ProductInput::kCrossOutput) {
        g.tie_heads = a.attention->num_heads / a.attention->num_kv_heads;
        g.head_dim = a.attention->head_dim;
      }
      groups.push_back(g);
    }
    return groups;
  }

  // An in-memory int8 model with `overrides` and the smoothed values, loaded
  // by the runtime (the values lent to the writer, not copied). Borrows `overrides` (no copy of its int8 matrices: a head's can be tens of
  // MiB) and gives it back as it was. Every tensor the bench holds is lent,
  // smoothed or not, so the writer reads none of them again.
  // Looked-up tables no step changes (a block's token table, which in the last
  // block of an untied model is the size of the head) are rounded once and
  // lent as int8 too: a build reads no F32 table again.
  std::unique_ptr<InMemoryModel> Build(QuantOverrides& overrides) {
    std::vector<std::string> lent, added;  // added: those the overrides did not name
    for (auto& [name, v] : values_) {
      const bool named = overrides.values.count(name) > 0;
      if (!smoothed_.count(name) && (named || overrides.int8.count(name))) continue;
      lent.push_back(name);
      if (!named) added.push_back(name);
      overrides.values[name].swap(v);
    }
    std::vector<std::string> lent_int8;
    for (const auto& [name, m] : mappings_) {
      if (RoleOf(name).storage != RoleStorage::kLookup || m->shape.size() != 2 ||
          uint64_t{m->shape[0]} * m->shape[1] < kRoundOnceElements || values_.count(name) ||
          overrides.int8.count(name) || overrides.values.count(name) ||
          overrides.keep_f32.count(name)) {
        continue;
      }
      auto it = tables_.find(name);
      if (it == tables_.end()) {
        const std::vector<float> v = ModelSpec::ReadValues(*m, checkpoint_);
        it = tables_.emplace(name, QuantizeRows(v.data(), m->shape[0], m->shape[1], false)).first;
      }
      lent_int8.push_back(name);
      std::swap(overrides.int8[name], it->second);
    }
    std::unique_ptr<InMemoryModel> model;
    {
      ModelWriter writer;
      writer.SetArchitecture(spec_.architecture);
      spec_.Emit(checkpoint_, writer, true, &overrides, /*hold_int8=*/false);
      model = LoadInMemory(writer);
    }
    for (const std::string& name : lent) overrides.values.at(name).swap(values_.at(name));
    for (const std::string& name : added) overrides.values.erase(name);
    for (const std::string& name : lent_int8) {
      std::swap(overrides.int8.at(name), tables_.at(name));
      overrides.int8.erase(name);
    }
    return model;
  }

  // Smoothing changes these canonical tensors (Values holds them changed).
  void MarkSmoothed(const std::string& name) { smoothed_.insert(name); }
  // ... and, for matrices, by what: columns multiplied by col[j], rows divided
  // by row[i] (an fp32 product later needs the smoothed values again).
  void RecordFactors(const std::string& name, const std::vector<float>* col,
                     const std::vector<float>* row) {
    auto compose = [](std::vector<float>& into, const std::vector<float>& f) {
      if (into.empty()) into.assign(f.size(), 1.0f);
      for (size_t i = 0; i < f.size(); ++i) into[i] *= f[i];
    };
    if (col != nullptr) compose(factors_[name].col, *col);
    if (row != nullptr) compose(factors_[name].row, *row);
  }
  const std::map<std::string, MatrixSmoothing>& factors() const { return factors_; }
  // Undoes all smoothing: the changed tensors are read again from the checkpoint.
  void ForgetSmoothing() {
    for (const std::string& name : smoothed_) values_.erase(name);
    smoothed_.clear();
    factors_.clear();
  }
  // The smoothed tensors' values, moved out (the bench is done with).
  std::map<std::string, std::vector<float>> TakeSmoothed() {
    std::map<std::string, std::vector<float>> out;
    for (const std::string& name : smoothed_) out[name] = std::move(values_.at(name));
    return out;
  }

 private:
  const ModelSpec& spec_;
  const Checkpoint& checkpoint_;
  std::map<std::string, std::vector<uint32_t>> shapes_;
  std::map<std::string, const TensorMapping*> mappings_;
  std::map<std::string, std::vector<float>> values_;  // those read so far
  // Build's int8 tables; smaller ones are read as the writer reaches them.
  static constexpr uint64_t kRoundOnceElements = uint64_t{1} << 20;
  std::map<std::string, QuantizedMatrix> tables_;
  std::set<std::string> smoothed_;
  std::map<std::string, MatrixSmoothing> factors_;
};

// A sample of at most `max` rows of x (every stride-th), for error measurements.
ProductInputs Subsample(const ProductInputs& x, size_t max) {
  if (x.n() <= max) return x;
  ProductInputs s;
  s.k = x.k;
  s.abs_max = x.abs_max;
  const size_t stride = (x.n() + max - 1) / max;
  for (size_t i = 0; i < x.n(); i += stride) {
    s.rows.insert(s.rows.end(), x.rows.begin() + i * x.k, x.rows.begin() + (i + 1) * x.k);
  }
  return s;
}

// The loss a step must lower: mean KL divergence for decoders, noise / signal
// of the output for encoders.
double Loss(const OutputMetrics& m) {
  return m.has_distribution ? m.kld : m.noise_to_signal;
}

bool TargetMet(const OutputMetrics& m, const TuneOptions& o) {
  return m.has_distribution && m.ppl_ratio() <= o.target_ppl_ratio;
}

std::string Count(size_t n, size_t of, const char* what) {
  return std::to_string(n) + " of " + std::to_string(of) + " " + what;
}

}  // namespace

bool GlobMatch(const std::string& pattern, const std::string& name) {
  // Iterative matcher with one backtrack point for the last '*'.
  size_t p = 0, n = 0, star = std::string::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (star != std::string::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}
namespace {

// Every int8 tensor a --keep-fp32 pattern names; each pattern must name one.
std::set<std::string> KeepFp32Matches(const ModelSpec& spec, const TuneOptions& options) {
  std::set<std::string> keep;
  for (const std::string& pattern : options.keep_fp32) {
    bool any = false;
    for (const TensorMapping& m : spec.tensors) {
      if (QuantizedAsInt8(m.name) && GlobMatch(pattern, m.name)) {
        keep.insert(m.name);
        any = true;
      }
    }
    if (!any) {
      Fail("--keep-fp32 '", pattern,
           "' matches no int8 tensor (names as `octet inspect` lists them, e.g. "
           "'layers.*.ffn.down.weight')");
    }
  }
  return keep;
}

// An int8 matrix that takes 16-bit inputs from the start (WideInputByDefault),
// unless it is kept F32.
void AddDefaultWideInput(const std::string& name, QuantOverrides& o) {
  if (QuantizedAsInt8(name) && WideInputByDefault(name) && o.keep_f32.count(name) == 0) {
    o.wide_input.insert(name);
  }
}

// Why the tuner does not run, or an empty string when it does.
// (Layer by layer, the tuner holds one layer at a time: it runs for every size.)
std::string WhyUntuned(const TuneOptions& options) {
  return options.enabled ? "" : "tuning off (--no-tune)";
}

// The result when the tuner does not run: round to nearest, nothing measured.
TuneResult UntunedResult(const ModelSpec& spec, std::set<std::string> keep_f32,
                         const std::string& detail) {
  TuneResult result;
  result.overrides.keep_f32 = std::move(keep_f32);
  for (const TensorMapping& m : spec.tensors) AddDefaultWideInput(m.name, result.overrides);
  result.skipped = true;
  result.steps.push_back({"round to nearest", detail, OutputMetrics(), true});
  for (const TensorMapping& m : spec.tensors) {
    if (QuantizedAsInt8(m.name)) {
      ++result.total_matrices;
      if (result.overrides.keep_f32.count(m.name) == 0) ++result.int8_matrices;
    }
  }
  for (const std::string& n : result.overrides.keep_f32) result.fp32_matrices.push_back(n);
  return result;
}

// Every int8 matrix a product reads (the linear layers and the head).
std::vector<std::string> ProductMatrices(const ModelSpec& spec) {
  std::vector<std::string> matrices;
  for (const TensorMapping& m : spec.tensors) {
    if (!QuantizedAsInt8(m.name)) continue;
    // A tied head is the token embedding: lookups and the head's product read it.
    const bool tied_head = RoleOf(m.name).role == Role::kTokenEmbedding &&
                           spec.architecture.tied_embeddings &&
                           spec.architecture.structure != fb::Structure::EncoderOnly;
    if (PackedForGemm(m.name) || tied_head) matrices.push_back(m.name);
  }
  return matrices;
}

// The model `writer` makes, written to `path`, mapped, and the file removed
// (the mapping keeps it until the Model goes): file pages, which the runtime
// lets go once it has packed them (Model::ReleasePages).
Model LoadMapped(const ModelWriter& writer, const std::string& path) {
  struct Remove {
    const std::string& path;
    ~Remove() { std::remove(path.c_str()); }
  } remove{path};
  try {
    writer.Write(path);
  } catch (const Error&) {
    throw;
  } catch (const std::runtime_error& e) {
    Fail(e.what());
  }
  Result<Model> loaded = Model::Load(path.c_str());
  if (!loaded.ok()) Fail("internal: a block does not load: ", loaded.status().message());
  return std::move(loaded).value();
}

// The fp32 twin, loaded by the runtime: the reference outputs and the
// calibration inputs come from it.
std::unique_ptr<InMemoryModel> LoadFp32Twin(const ModelSpec& spec, const Checkpoint& checkpoint) {
  ModelWriter writer;
  writer.SetArchitecture(spec.architecture);
  spec.Emit(checkpoint, writer, false);
  return LoadInMemory(writer);
}

// Scores an int8 model (or block) built with a step's overrides.
using MeasureFn = std::function<OutputMetrics(const Model& int8)>;

// The per-matrix techniques on one unit of a model: a layer (the
// layer-by-layer pass: `spec` is its block, quantize/block_model.h) or the
// whole model (encoder-decoders). Each step builds the unit with what it
// changed, scores it with `measure` and keeps the change only where the loss
// falls; each returns true once the target is met (never for a layer, whose
// measure has no distribution).
class StepTuner {
 public:
  StepTuner(const ModelSpec& spec, const Checkpoint& checkpoint,
            std::map<ProductSite, ProductInputs> inputs, std::vector<std::string> matrices,
            MeasureFn measure, const TuneOptions& options, std::set<std::string> keep_f32)
      : options_(options),
        bench_(spec, checkpoint),
        matrices_(std::move(matrices)),
        measure_(std::move(measure)),
        inputs_(std::move(inputs)),
        groups_(bench_.Groups(inputs_, matrices_)) {
    result_.overrides.keep_f32 = std::move(keep_f32);
    for (const std::string& m : matrices_) AddDefaultWideInput(m, result_.overrides);
    result_.total_matrices = matrices_.size();
    for (const Group& g : groups_) {
      for (const std::string& m : g.matrices) group_of_[m] = &g;
    }
  }

  // Step 0: symmetric per-channel scales, as the file holds without tuning.
  bool RoundToNearest() {
    best_ = Measure(result_.overrides);
    result_.steps.push_back({"round to nearest",
                             "symmetric per-channel scales, max|w| / 127", best_, true});
    if (TargetMet(best_, options_)) return true;
    // Error samples per site (at most 1024 rows) for the per-layer choices.
    for (const auto& [site, x] : inputs_) samples_[site] = Subsample(x, 1024);
    return false;
  }

  // Step 1: smoothing. Per group, the alpha of the lowest summed product
  // error, kept where it beats no smoothing. The captured inputs are divided
  // by the factors, as the folded model's would be.
  // (The first step to change values: undone by reading them again.)
  bool Smoothing() {
    const auto saved_inputs = inputs_;
    const auto saved_samples = samples_;
    size_t smoothed = 0, eligible = 0;
    for (const Group& g : groups_) {
      if (g.fold == Group::Fold::kNone) continue;
      bool frozen = false;
      for (const std::string& m : g.matrices) frozen = frozen || result_.overrides.keep_f32.count(m);
      if (frozen) continue;
      ++eligible;
      const std::vector<float> s = BestSmoothingFactors(g);
      if (s.empty()) continue;
      ++smoothed;
      ApplySmoothing(g, s);
    }
    const OutputMetrics m = Measure(result_.overrides);
    const bool kept = smoothed > 0 && (Loss(m) < Loss(best_) || options_.keep_all);
    result_.steps.push_back({"smoothing", Count(smoothed, eligible, "inputs smoothed"), m, kept});
    if (kept) {
      best_ = m;
      return TargetMet(best_, options_);
    }
    bench_.ForgetSmoothing();
    inputs_ = saved_inputs;
    samples_ = saved_samples;
    return false;
  }

  // Before steps 2 and 3: each tunable matrix rounded to nearest (with the
  // smoothing kept: what the file would hold anyway) into the overrides, and
  // its product error.
  void StartPerMatrixRounding() {
    for (const std::string& m : matrices_) {
      if (group_of_.count(m) && result_.overrides.keep_f32.count(m) == 0) tunable_.push_back(m);
    }
    for (const std::string& m : tunable_) {
      const std::vector<float>& w = bench_.Values(m);
      QuantizedMatrix& q = result_.overrides.int8[m];
      q = QuantizeRows(w.data(), bench_.Rows(m), bench_.Cols(m));
      current_err_[m] = MatrixProductError(m, q, nullptr, w);
    }
  }

  // Step 2: clipping, per-row scales that minimize the product error.
  bool Clipping() {
    TryPerMatrixStep("clipping", [&](const std::string& m, const std::vector<float>& w,
                                     const QuantizedMatrix&) {
      const std::vector<float> scales =
          ClipScales(w.data(), bench_.Rows(m), bench_.Cols(m), ClipHessian(m), ClipSample(m), 0.5,
                     26);
      return RoundWithScales(w.data(), bench_.Rows(m), bench_.Cols(m), scales);
    });
    return TargetMet(best_, options_);
  }

  // Step 3: compensated rounding with the scales the file holds by now.
  bool CompensatedRounding() {
    TryPerMatrixStep("compensated rounding", [&](const std::string& m, const std::vector<float>& w,
                                                 const QuantizedMatrix& now) {
      return convert::CompensatedRounding(w.data(), bench_.Rows(m), bench_.Cols(m), now.scales,
                                          Hessian(m).data());
    });
    return TargetMet(best_, options_);
  }

  // What the escalation (quantize/tuner.h) ranks each matrix by, as a share
  // of the signal ‖x·Wᵀ‖² of its product on the samples: wide, the part of
  // its product's error its 8-bit input makes (what 16-bit inputs remove);
  // fp32, its whole error (what an fp32 product removes).
  void Scores(std::map<std::string, double>* wide, std::map<std::string, double>* fp32) {
    if (samples_.empty()) {
      for (const auto& [site, x] : inputs_) samples_[site] = Subsample(x, 1024);
    }
    MeasureSignal();
    for (const std::string& m : matrices_) {
      if (result_.overrides.keep_f32.count(m)) continue;
      if (!group_of_.count(m)) {
        (*fp32)[m] = 0;
        continue;
      }
      const std::vector<float>& w = bench_.Values(m);
      const auto q = result_.overrides.int8.find(m);
      const bool held = q != result_.overrides.int8.end();
      const QuantizedMatrix rounded =
          held ? QuantizedMatrix() : QuantizeRows(w.data(), bench_.Rows(m), bench_.Cols(m));
      const QuantizedMatrix& now = held ? q->second : rounded;
      const ProductInputs& x = samples_.at(group_of_.at(m)->site);
      const double with8 = ProductError(x, w.data(), bench_.Rows(m), now, nullptr, true);
      const double weights_only = ProductError(x, w.data(), bench_.Rows(m), now, nullptr, false);
      const double signal = signal_.at(m);
      (*wide)[m] = signal > 0 ? (with8 - weights_only) / signal : 0;
      (*fp32)[m] = signal > 0 ? with8 / signal : 0;
    }
  }

  // Every tunable matrix's int8 form into the result (round to nearest of
  // its values as smoothing left them, where no step rounded it), so the
  // unit's matrices need nothing more from the checkpoint.
  void CompleteInt8() {
    for (const std::string& m : matrices_) {
      if (result_.overrides.keep_f32.count(m) || result_.overrides.int8.count(m)) continue;
      if (!group_of_.count(m)) continue;
      const std::vector<float>& w = bench_.Values(m);
      result_.overrides.int8[m] = QuantizeRows(w.data(), bench_.Rows(m), bench_.Cols(m));
    }
  }

  const Workbench& bench() const { return bench_; }
  const OutputMetrics& best() const { return best_; }

  // The report: every decision, the last measurement and the counts.
  TuneResult Finish() {
    for (auto& [name, v] : bench_.TakeSmoothed()) result_.overrides.values[name] = std::move(v);
    result_.final_metrics = best_;
    result_.target_met = TargetMet(best_, options_);
    for (const std::string& name : matrices_) {
      if (result_.overrides.keep_f32.count(name) == 0) ++result_.int8_matrices;
    }
    for (const std::string& name : result_.overrides.keep_f32) {
      result_.fp32_matrices.push_back(name);
    }
    for (const std::string& name : result_.overrides.wide_input) {
      result_.wide_input_matrices.push_back(name);
    }
    return std::move(result_);
  }

 private:
  OutputMetrics Measure(QuantOverrides& o) { return measure_(bench_.Build(o)->model); }

  double MatrixProductError(const std::string& name, const QuantizedMatrix& q,
                            const std::vector<float>* inv_smooth, const std::vector<float>& w) {
    const Group& g = *group_of_.at(name);
    return ProductError(samples_.at(g.site), w.data(), bench_.Rows(name), q,
                        inv_smooth != nullptr ? inv_smooth->data() : nullptr);
  }

  // The smoothing factors of the alpha with the lowest summed product error
  // of `g`'s matrices, or none when no alpha beats no smoothing.
  std::vector<float> BestSmoothingFactors(const Group& g) {
    const ProductInputs& x = samples_.at(g.site);
    std::vector<float> w_max(x.k, 0.0f);
    for (const std::string& m : g.matrices) {
      const std::vector<float> c = ColumnAbsMax(bench_.Values(m).data(), bench_.Rows(m), x.k);
      for (size_t j = 0; j < x.k; ++j) w_max[j] = std::max(w_max[j], c[j]);
    }
    std::vector<float> x_max = inputs_.at(g.site).abs_max;
    if (g.tie_heads > 1) {  // one factor per (kv head, dim): V's rows are shared
      const size_t hd = g.head_dim, kv = x.k / (hd * g.tie_heads);
      for (size_t v = 0; v < kv; ++v) {
        for (size_t d = 0; d < hd; ++d) {
          float mx = 0, mw = 0;
          for (size_t t = 0; t < g.tie_heads; ++t) {
            const size_t j = (v * g.tie_heads + t) * hd + d;
            mx = std::max(mx, x_max[j]);
            mw = std::max(mw, w_max[j]);
          }
          for (size_t t = 0; t < g.tie_heads; ++t) {
            const size_t j = (v * g.tie_heads + t) * hd + d;
            x_max[j] = mx;
            w_max[j] = mw;
          }
        }
      }
    }
    double base = 0;
    for (const std::string& m : g.matrices) {
      const std::vector<float>& w = bench_.Values(m);
      base += MatrixProductError(m, QuantizeRows(w.data(), bench_.Rows(m), x.k, false), nullptr,
                                 w);
    }
    double best_err = base;
    std::vector<float> best_s;
    for (double alpha : {0.3, 0.4, 0.5, 0.6, 0.7, 0.8}) {
      const std::vector<float> s = SmoothingFactors(x_max, w_max, alpha);
      std::vector<float> inv(x.k);
      for (size_t j = 0; j < x.k; ++j) inv[j] = 1.0f / s[j];
      double err = 0;
      for (const std::string& m : g.matrices) {
        std::vector<float> ws = bench_.Values(m);
        const size_t rows = bench_.Rows(m);
        for (size_t r = 0; r < rows; ++r) {
          for (size_t j = 0; j < x.k; ++j) ws[r * x.k + j] *= s[j];
        }
        err += MatrixProductError(m, QuantizeRows(ws.data(), rows, x.k, false), &inv,
                                  bench_.Values(m));
      }
      if (err < best_err) {
        best_err = err;
        best_s = s;
      }
    }
    return best_s;
  }

  // Folds factors `s` into `g`: W diag(s) for the readers, 1/s into the
  // writer, and the captured inputs divided by s.
  void ApplySmoothing(const Group& g, const std::vector<float>& s) {
    const size_t k = samples_.at(g.site).k;
    for (const std::string& m : g.matrices) {
      std::vector<float>& w = bench_.Values(m);
      const size_t rows = bench_.Rows(m);
      for (size_t r = 0; r < rows; ++r) {
        for (size_t j = 0; j < k; ++j) w[r * k + j] *= s[j];
      }
      bench_.MarkSmoothed(m);
      bench_.RecordFactors(m, &s, nullptr);
    }
    // The writer's output channel j (a norm weight, a row of V or up)
    // and its bias: divided by s_j. For O, channel j of the input is
    // query head h's dim d, written by V's row (h / tie) * hd + d.
    auto writer_channel = [&](size_t j) {
      if (g.tie_heads <= 1) return j;
      const size_t hd = g.head_dim, h = j / hd;
      return (h / g.tie_heads) * hd + j % hd;
    };
    std::vector<float> divisor(g.fold == Group::Fold::kNorm ? k : bench_.Rows(g.fold_weight),
                               0.0f);
    for (size_t j = 0; j < k; ++j) divisor[writer_channel(j)] = s[j];
    if (g.fold == Group::Fold::kNorm) {
      std::vector<float>& nw = bench_.Values(g.fold_weight);
      for (size_t j = 0; j < k; ++j) nw[j] /= divisor[j];
    } else {
      std::vector<float>& w = bench_.Values(g.fold_weight);
      const size_t cols = bench_.Cols(g.fold_weight);
      for (size_t r = 0; r < divisor.size(); ++r) {
        for (size_t c = 0; c < cols; ++c) w[r * cols + c] /= divisor[r];
      }
      bench_.RecordFactors(g.fold_weight, nullptr, &divisor);
    }
    bench_.MarkSmoothed(g.fold_weight);
    if (!g.fold_bias.empty()) {
      std::vector<float>& b = bench_.Values(g.fold_bias);
      for (size_t r = 0; r < b.size(); ++r) b[r] /= divisor[r];
      bench_.MarkSmoothed(g.fold_bias);
    }
    for (auto* set : {&inputs_, &samples_}) {
      ProductInputs& in = set->at(g.site);
      for (size_t i = 0; i < in.n(); ++i) {
        for (size_t j = 0; j < in.k; ++j) in.rows[i * in.k + j] /= s[j];
      }
      for (size_t j = 0; j < in.k; ++j) in.abs_max[j] /= s[j];
    }
  }

  // Clipping scores a row's error eᵀ H e as ‖X e‖² on the samples when they
  // have fewer rows than the input has channels (the smaller product), else
  // with the Hessian.
  const ProductInputs* ClipSample(const std::string& m) {
    const ProductInputs& x = samples_.at(group_of_.at(m)->site);
    return x.n() < x.k ? &x : nullptr;
  }
  const float* ClipHessian(const std::string& m) {
    return ClipSample(m) != nullptr ? nullptr : Hessian(m).data();
  }

  // The Hessian of the input `m` reads (computed once per input).
  const std::vector<float>& Hessian(const std::string& m) {
    const ProductSite& site = group_of_.at(m)->site;
    auto it = hessians_.find(site);
    if (it == hessians_.end()) it = hessians_.emplace(site, InputHessian(inputs_.at(site))).first;
    return it->second;
  }

  // Steps 2 and 3: `make` rounds each tunable matrix anew, kept per matrix
  // where it lowers the product's error on the calibration, and as a whole
  // where it lowers the loss. The product error is against the (smoothed)
  // weights with the (smoothed) inputs: the same product as the original.
  // The matrices it improves are swapped into the overrides in place, and
  // swapped back when the block's output says no: no int8 matrix is copied.
  template <typename Make>
  void TryPerMatrixStep(const char* name, Make make) {
    std::map<std::string, QuantizedMatrix> changed;  // then: what they replaced
    std::map<std::string, double> changed_err;
    for (const std::string& m : tunable_) {
      const std::vector<float>& w = bench_.Values(m);
      QuantizedMatrix q = make(m, w, result_.overrides.int8.at(m));
      const double err = MatrixProductError(m, q, nullptr, w);
      if (err < current_err_.at(m)) {
        changed[m] = std::move(q);
        changed_err[m] = err;
      }
    }
    auto swap_in = [&] {
      for (auto& [m, q] : changed) {
        std::swap(result_.overrides.int8.at(m), q);
        std::swap(current_err_.at(m), changed_err.at(m));
      }
    };
    swap_in();
    const OutputMetrics metrics = !changed.empty() ? Measure(result_.overrides) : best_;
    const bool kept = !changed.empty() && (Loss(metrics) < Loss(best_) || options_.keep_all);
    result_.steps.push_back({name, Count(changed.size(), tunable_.size(), "matrices changed"),
                             metrics, kept});
    if (kept) {
      best_ = metrics;
    } else {
      swap_in();  // the replaced matrices back
    }
  }

  // Per matrix: ‖x·Wᵀ‖² on the samples (once, for the scores of steps 4 and 5).
  void MeasureSignal() {
    if (signal_measured_) return;
    signal_measured_ = true;
    for (const std::string& m : matrices_) {
      if (!group_of_.count(m)) continue;
      const ProductInputs& x = samples_.at(group_of_.at(m)->site);
      const std::vector<float>& w = bench_.Values(m);
      const size_t rows = bench_.Rows(m), block = std::min<size_t>(rows, 4096);
      std::vector<float> y(x.n() * block);  // a block of rows at a time: heads are wide
      double sum = 0;
      for (size_t r0 = 0; r0 < rows; r0 += block) {
        const size_t n = std::min(block, rows - r0);
        MatMulNT(x.n(), n, x.k, x.rows.data(), w.data() + r0 * x.k, y.data());
        for (size_t i = 0; i < x.n() * n; ++i) sum += static_cast<double>(y[i]) * y[i];
      }
      signal_[m] = sum;
    }
  }

  const TuneOptions& options_;
  Workbench bench_;
  const std::vector<std::string> matrices_;      // every int8 matrix a product reads
  const MeasureFn measure_;
  std::map<ProductSite, ProductInputs> inputs_;  // calibration inputs per product (smoothed)
  std::map<ProductSite, ProductInputs> samples_;  // at most 1024 rows of each
  const std::vector<Group> groups_;
  std::map<std::string, const Group*> group_of_;  // matrix -> the group that reads its input
  TuneResult result_;
  OutputMetrics best_;  // the last kept measurement
  // Steps 2 and 3: the matrices they round, what the file holds for each and its error.
  std::vector<std::string> tunable_;
  std::map<std::string, double> current_err_;
  std::map<ProductSite, std::vector<float>> hessians_;  // per product input
  std::map<std::string, double> signal_;                 // Scores
  bool signal_measured_ = false;
};

// The whole int8 model built with `o`, scored against the fp32 reference.
class ModelMeasure {
 public:
  ModelMeasure(const ModelSpec& spec, const Checkpoint& checkpoint,
               const std::vector<std::vector<int32_t>>& evaluation, const Model* fp32_twin,
               const TuneOptions& options)
      : spec_(spec), checkpoint_(checkpoint) {
    std::unique_ptr<InMemoryModel> twin;
    if (fp32_twin == nullptr) twin = LoadFp32Twin(spec, checkpoint);
    reference_ = std::make_unique<OutputReference>(
        fp32_twin != nullptr ? *fp32_twin : twin->model, evaluation, fp32_twin != nullptr,
        options.twin_keep_bytes);
  }
  // The model's pages go back to the system after (memory.h): its blocks of
  // every size would otherwise stay with the heap beside the next one's.
  OutputMetrics operator()(const QuantOverrides& o) const {
    std::unique_ptr<InMemoryModel> model;
    {
      ModelWriter writer;  // rounds what it writes: no int8 copies held beside the model
      writer.SetArchitecture(spec_.architecture);
      spec_.Emit(checkpoint_, writer, true, &o, /*hold_int8=*/false);
      model = LoadInMemory(writer);
    }
    const OutputMetrics m = reference_->Compare(model->model);
    model.reset();
    ReturnFreedMemory();
    return m;
  }

 private:
  const ModelSpec& spec_;
  const Checkpoint& checkpoint_;
  std::unique_ptr<OutputReference> reference_;
};

// One rung of the escalation: candidates in order of estimated gain per cost
// (score / cost), taken in batches measured end to end: a batch that lowers
// the loss is kept and the next one is twice as large; one that does not is
// retried at half the size, and a single matrix that does not is passed over
// (after four of those in a row the rung ends: the scores have stopped
// predicting). Stops when the target is met. Each taken matrix's cost is
// charged to *budget (candidates it cannot pay for are passed over).
// removes_int8: `apply` takes a matrix out of int8 (its int8 form is kept
// aside to undo).
void EscalationRung(const char* step, const std::map<std::string, double>& score,
                    const std::function<double(const std::string&)>& cost,
                    const std::function<void(QuantOverrides&, const std::string&)>& apply,
                    bool removes_int8,
                    const std::function<OutputMetrics(const QuantOverrides&)>& measure,
                    const TuneOptions& options, uint64_t* budget, TuneResult& result,
                    OutputMetrics& best) {
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& [m, r] : score) {
    if (r > 0 && cost(m) > 0) ranked.push_back({r / cost(m), m});
  }
  std::sort(ranked.rbegin(), ranked.rend());
  std::vector<std::string> chosen;
  size_t pos = 0, batch = 1, passed_over = 0;
  while (pos < ranked.size() && !TargetMet(best, options) && passed_over < 4) {
    std::vector<std::string> take;
    uint64_t spend = 0;
    size_t end = pos;
    for (; end < ranked.size() && take.size() < batch; ++end) {
      const std::string& m = ranked[end].second;
      const auto c = static_cast<uint64_t>(cost(m));
      if (budget != nullptr && spend + c > *budget) continue;  // cannot pay: passed over
      take.push_back(m);
      spend += c;
    }
    if (take.empty()) break;
    // Applied in place (the overrides hold every int8 matrix: no copy),
    // undone from what the batch's matrices had when it does not help.
    struct Saved {
      std::string name;
      bool had_int8, wide, keep, had_values;
      QuantizedMatrix int8;
    };
    std::vector<Saved> saved;
    QuantOverrides& o = result.overrides;
    for (const std::string& m : take) {
      Saved v{m, o.int8.count(m) > 0, o.wide_input.count(m) > 0, o.keep_f32.count(m) > 0,
              o.values.count(m) > 0, QuantizedMatrix()};
      if (v.had_int8 && removes_int8) v.int8 = std::move(o.int8.at(m));
      saved.push_back(std::move(v));
      apply(o, m);
    }
    const OutputMetrics metrics = measure(o);
    if (Loss(metrics) < Loss(best)) {
      best = metrics;
      chosen.insert(chosen.end(), take.begin(), take.end());
      if (budget != nullptr) *budget -= spend;
      pos = end;
      batch *= 2;
      passed_over = 0;
      continue;
    }
    for (Saved& v : saved) {
      if (v.had_int8 && removes_int8) o.int8[v.name] = std::move(v.int8);
      if (!v.wide) o.wide_input.erase(v.name);
      if (v.wide) o.wide_input.insert(v.name);
      if (!v.keep) o.keep_f32.erase(v.name);
      if (!v.had_values) o.values.erase(v.name);
    }
    if (batch > 1) {
      batch /= 2;
    } else {
      pos = end;
      ++passed_over;
    }
  }
  if (!chosen.empty()) {
    std::string names;
    for (const std::string& m : chosen) names += (names.empty() ? "" : ", ") + m;
    result.steps.push_back({step, std::to_string(chosen.size()) + " matrices: " + names, best,
                            true});
  }
}

// Steps 4 and 5 on the whole model (decoders: they pick by the output
// distribution): 16-bit inputs (cost: the product's work), then fp32 products
// (cost: the bytes they add, within options.max_extra_bytes). fp32_values(m):
// the F32 values an fp32 product of m reads (smoothing folded in); sizes: each
// matrix's [rows, cols].
void Escalate(const std::map<std::string, double>& wide, const std::map<std::string, double>& fp32,
              const std::map<std::string, std::pair<uint64_t, uint64_t>>& sizes,
              const std::function<std::vector<float>(const std::string&)>& fp32_values,
              const std::function<OutputMetrics(const QuantOverrides&)>& measure,
              const TuneOptions& options, TuneResult& result, OutputMetrics& best) {
  if (!best.has_distribution || TargetMet(best, options)) return;
  auto elements = [&](const std::string& m) {
    const auto it = sizes.find(m);
    return it == sizes.end() ? 0.0 : static_cast<double>(it->second.first * it->second.second);
  };
  std::map<std::string, double> narrow = wide;  // those not wide already
  for (const std::string& m : result.overrides.wide_input) narrow.erase(m);
  if (options.wide_inputs) {
    EscalationRung(
        "16-bit inputs", narrow, elements,
        [](QuantOverrides& o, const std::string& m) { o.wide_input.insert(m); }, false, measure,
        options, nullptr, result, best);
  }
  if (options.fp32_fallback) {
    uint64_t budget = options.max_extra_bytes;
    EscalationRung(
        "fp32 products", fp32,
        [&](const std::string& m) { return 3.0 * elements(m); },  // 4 bytes a weight instead of 1
        [&](QuantOverrides& o, const std::string& m) {
          o.keep_f32.insert(m);
          o.int8.erase(m);
          o.wide_input.erase(m);
          if (o.values.count(m) == 0) {
            std::vector<float> v = fp32_values(m);
            if (!v.empty()) o.values[m] = std::move(v);
          }
        },
        true, measure, options, &budget, result, best);
  }
}

// Each matrix's [rows, cols].
std::map<std::string, std::pair<uint64_t, uint64_t>> MatrixSizes(const ModelSpec& spec) {
  std::map<std::string, std::pair<uint64_t, uint64_t>> sizes;
  for (const TensorMapping& m : spec.tensors) {
    if (m.shape.size() == 2) sizes[m.name] = {m.shape[0], m.shape[1]};
  }
  return sizes;
}

// The counts and lists of the result, from its overrides.
void FinishResult(const std::vector<std::string>& matrices, TuneResult& result,
                  const OutputMetrics& best, const TuneOptions& options) {
  result.final_metrics = best;
  result.target_met = TargetMet(best, options);
  result.total_matrices = matrices.size();
  result.int8_matrices = 0;
  for (const std::string& name : matrices) {
    if (result.overrides.keep_f32.count(name) == 0) ++result.int8_matrices;
  }
  result.fp32_matrices.assign(result.overrides.keep_f32.begin(), result.overrides.keep_f32.end());
  result.wide_input_matrices.assign(result.overrides.wide_input.begin(),
                                    result.overrides.wide_input.end());
}

// Layer by layer (quantize/tuner.h): each layer's block
// runs on the stream the int8 layers before it made, its product inputs and
// fp32 output are captured there, its steps are scored on its own output, and
// its int8 output feeds the next layer. Memory: one layer's F32 weights and
// product inputs, the calibration's streams and the int8 matrices so far.
class LayerwiseTuner {
 public:
  LayerwiseTuner(const ModelSpec& spec, const Checkpoint& checkpoint,
                 const Calibration& calibration,
                 const std::vector<std::vector<int32_t>>& evaluation, const Model* fp32_twin,
                 const TuneOptions& options, std::set<std::string> keep_f32)
      : spec_(spec),
        checkpoint_(checkpoint),
        calibration_(calibration),
        options_(options),
        matrices_(ProductMatrices(spec)),
        measure_(spec, checkpoint, evaluation, fp32_twin, options) {
    result_.overrides.keep_f32 = std::move(keep_f32);
    for (const std::string& m : matrices_) AddDefaultWideInput(m, result_.overrides);
    result_.total_matrices = matrices_.size();
  }

  TuneResult Run() {
    best_ = measure_(result_.overrides);
    result_.steps.push_back(
        {"round to nearest", "symmetric per-channel scales, max|w| / 127", best_, true});
    if (TargetMet(best_, options_)) return Finish();
    const TuneResult rtn = result_;
    // Layer by layer, the encoder's then the decoder's (or the only stack's).
    const fb::ArchitectureT& a = spec_.architecture;
    std::vector<std::pair<LayerStack, uint32_t>> order;
    if (a.structure == fb::Structure::EncoderDecoder) {
      for (uint32_t l = 0; l < a.num_layers; ++l) order.push_back({LayerStack::kEncoder, l});
      for (uint32_t l = 0; l < a.num_decoder_layers; ++l) order.push_back({LayerStack::kDecoder, l});
    } else {
      for (uint32_t l = 0; l < a.num_layers; ++l) order.push_back({LayerStack::kSingle, l});
    }
    const size_t layers = order.size();
    for (size_t i = 0; i < layers; ++i) {
      if (options_.progress) options_.progress("tuning layer", i, layers);
      TuneLayer(order[i].first, order[i].second);
      ReturnFreedMemory();  // this layer's inputs, Hessians and blocks
    }
    if (options_.progress) options_.progress("tuning layer", layers, layers);
    if (kept_.empty()) {  // no technique on: the layers gave the escalation its scores
      result_ = rtn;
      Escalate(wide_, fp32_, MatrixSizes(spec_), [](const std::string&) { return std::vector<float>(); },
               [&](const QuantOverrides& o) { return measure_(o); }, options_, result_, best_);
      return Finish();
    }
    const OutputMetrics m = measure_(result_.overrides);
    const bool kept = Loss(m) < Loss(best_) || options_.keep_all;
    std::string detail;
    for (const auto& [step, count] : kept_) {
      detail += (detail.empty() ? "" : ", ") + step + " kept in " + std::to_string(count) +
                " of " + std::to_string(layers) + " layers";
    }
    result_.steps.push_back({"layer by layer", detail, m, kept});
    if (kept) {
      best_ = m;
    } else {
      std::vector<TuneStep> steps = std::move(result_.steps);
      result_ = rtn;
      result_.steps = std::move(steps);
    }
    size_t measured = 0;
    Escalate(wide_, fp32_, MatrixSizes(spec_),
             [&](const std::string& name) { return Fp32Values(name); },
             [&](const QuantOverrides& o) {
               if (options_.progress) options_.progress("escalation, measurement", ++measured, 0);
               return measure_(o);
             },
             options_, result_, best_);
    return Finish();
  }

 private:
  TuneResult Finish() {
    FinishResult(matrices_, result_, best_, options_);
    return std::move(result_);
  }

  // Matrix m's F32 values with the smoothing its layer kept.
  std::vector<float> Fp32Values(const std::string& m) const {
    const auto f = result_.smoothing.find(m);
    if (f == result_.smoothing.end()) return {};
    std::vector<float> v;
    for (const TensorMapping& t : spec_.tensors) {
      if (t.name == m) v = ModelSpec::ReadValues(t, checkpoint_);
    }
    ApplyMatrixSmoothing(f->second, &v);
    return v;
  }

  void TuneLayer(LayerStack stack, uint32_t l) {
    const BlockCut cut = CutBlock(spec_, stack, l, &calibration_.sequences);
    const std::vector<std::vector<int32_t>> ids = BlockIds(cut, calibration_.sequences);
    if (stack == LayerStack::kDecoder && cut.first) {
      encoder_out_ = std::move(stream_);  // the encoder's output, before its final norm
      stream_.clear();
    }
    std::map<std::string, std::string> from_block;
    for (const auto& [full, block] : cut.to_block) from_block[block] = full;
    std::vector<std::string> matrices;  // the block's own (not its stand-ins), block names
    std::set<std::string> keep;
    for (const std::string& m : ProductMatrices(cut.spec)) {
      const auto it = from_block.find(m);
      if (it == from_block.end()) continue;
      matrices.push_back(m);
      if (result_.overrides.keep_f32.count(it->second)) keep.insert(m);
    }
    BlockFeed feed;
    feed.ids = &ids;
    feed.stack = stack;
    feed.in = cut.first ? nullptr : &stream_;
    feed.encoder_out = stack == LayerStack::kDecoder ? &encoder_out_ : nullptr;
    // The fp32 block on the int8 stream: the product inputs and the output to match.
    BlockRun fp32_run;
    {
      ModelWriter writer;
      writer.SetArchitecture(cut.spec.architecture);
      cut.spec.Emit(checkpoint_, writer, false);
      if (cut.last && !options_.scratch_file.empty()) {
        // Mapped: the head's pages go as the session packs it (tuner.h scratch_file).
        fp32_run = RunBlock(LoadMapped(writer, options_.scratch_file), feed, options_.max_rows);
      } else {
        fp32_run = RunBlock(LoadInMemory(writer)->model, feed, options_.max_rows);
      }
    }
    const std::vector<std::vector<float>> want = std::move(fp32_run.out);
    auto score = [&](const Model& block) {
      const BlockRun got = RunBlock(block, feed, 0);
      OutputMetrics m;
      double signal = 0, noise = 0;
      for (size_t s = 0; s < want.size(); ++s) {
        for (size_t i = 0; i < want[s].size(); ++i) {
          const double x = want[s][i], e = got.out[s][i] - x;
          signal += x * x;
          noise += e * e;
        }
      }
      m.noise_to_signal = signal > 0 ? noise / signal : 0;
      return m;
    };
    StepTuner tuner(cut.spec, checkpoint_, std::move(fp32_run.inputs), matrices, score, options_,
                    keep);
    tuner.RoundToNearest();
    if (options_.smoothing) tuner.Smoothing();
    tuner.StartPerMatrixRounding();
    if (options_.clipping) tuner.Clipping();
    if (options_.compensation) tuner.CompensatedRounding();
    std::map<std::string, double> wide, fp32;
    tuner.Scores(&wide, &fp32);
    tuner.CompleteInt8();
    for (const auto& [m, f] : tuner.bench().factors()) {
      if (from_block.count(m)) result_.smoothing[from_block.at(m)] = f;
    }
    TuneResult block = tuner.Finish();
    for (const TuneStep& step : block.steps) {
      if (step.name == "round to nearest") continue;
      auto it = std::find_if(kept_.begin(), kept_.end(),
                             [&](const auto& k) { return k.first == step.name; });
      if (it == kept_.end()) it = kept_.insert(kept_.end(), {step.name, 0});
      if (step.kept) ++it->second;
    }
    // The int8 block as kept: its output is the next layer's input (the
    // model's last layer has none to feed).
    if (!cut.last) {
      ModelWriter writer;
      writer.SetArchitecture(cut.spec.architecture);
      cut.spec.Emit(checkpoint_, writer, true, &block.overrides);
      stream_ = RunBlock(LoadInMemory(writer)->model, feed, 0).out;
    }
    for (auto& [m, q] : block.overrides.int8) {
      if (from_block.count(m)) result_.overrides.int8[from_block.at(m)] = std::move(q);
    }
    for (auto& [name, v] : block.overrides.values) {
      const auto it = from_block.find(name);
      if (it == from_block.end() || result_.overrides.int8.count(it->second)) continue;
      if (RoleOf(name).storage == RoleStorage::kF32) result_.overrides.values[it->second] = std::move(v);
    }
    for (const auto& [m, v] : wide) {
      if (from_block.count(m)) wide_[from_block.at(m)] = v;
    }
    for (const auto& [m, v] : fp32) {
      if (from_block.count(m)) fp32_[from_block.at(m)] = v;
    }
  }

  const ModelSpec& spec_;
  const Checkpoint& checkpoint_;
  const Calibration& calibration_;
  const TuneOptions& options_;
  const std::vector<std::string> matrices_;
  const ModelMeasure measure_;
  TuneResult result_;
  OutputMetrics best_;
  std::vector<std::vector<float>> stream_;  // per calibration sequence: the next layer's input
  std::vector<std::vector<float>> encoder_out_;  // encoder-decoders: the int8 encoder's output
  // Each step the layers tried, in order, and how many kept it.
  std::vector<std::pair<std::string, size_t>> kept_;
  std::map<std::string, double> wide_, fp32_;  // escalation scores
};

}  // namespace

void ApplyMatrixSmoothing(const MatrixSmoothing& s, std::vector<float>* values) {
  std::vector<float>& v = *values;
  if (v.empty() || (s.col.empty() && s.row.empty())) return;
  const size_t rows = !s.row.empty() ? s.row.size() : v.size() / s.col.size();
  const size_t cols = v.size() / rows;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) {
      if (!s.col.empty()) v[r * cols + c] *= s.col[c];
      if (!s.row.empty()) v[r * cols + c] /= s.row[r];
    }
  }
}

TuneResult TuneQuantization(const ModelSpec& spec, const Checkpoint& checkpoint,
                            const Calibration& calibration,
                            const std::vector<std::vector<int32_t>>& evaluation,
                            const TuneOptions& options, const Model* fp32_twin) {
  std::set<std::string> keep_f32 = KeepFp32Matches(spec, options);
  const std::string untuned = WhyUntuned(options);
  if (!untuned.empty()) return UntunedResult(spec, std::move(keep_f32), untuned);
  return LayerwiseTuner(spec, checkpoint, calibration, evaluation, fp32_twin, options,
                        std::move(keep_f32))
      .Run();
}

}  // namespace convert
}  // namespace octet
