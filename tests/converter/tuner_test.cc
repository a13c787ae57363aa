// The int8 tuner (converter/quantize/tuner.h) on synthetic checkpoints:
// smoothing's folds leave the fp32 model unchanged (norms with and without
// biases, V rows under GQA, up rows of a gated FFN), and the last step keeps
// in fp32 the one matrix a constructed outlier ruins; what becomes int8 (and
// packed) is the role table's storage.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "convert.h"
#include "converter/hf_fixtures.h"
#include "converter/test_util.h"
#include "import/checkpoint.h"
#include "engine/session.h"
#include "quantize/block_model.h"
#include "quantize/calibrate.h"
#include "quantize/quantize.h"
#include "quantize/tuner.h"

namespace octet {
namespace {

using testing::HfCheckpoint;
using testing::HfOptions;
using testing::MakeHfCheckpoint;
using testing::TempDir;

struct Converted {
  convert::ModelSpec spec;
  std::unique_ptr<convert::Checkpoint> checkpoint;
};

Converted Import(const std::filesystem::path& dir) {
  const nlohmann::json config = convert::ReadConfig(dir);
  auto checkpoint = std::make_unique<convert::Checkpoint>(convert::Checkpoint::Open(dir));
  convert::ModelSpec spec = convert::ImportDirectory(config, *checkpoint);
  return {std::move(spec), std::move(checkpoint)};
}

std::unique_ptr<convert::InMemoryModel> Fp32(const Converted& c,
                                             const convert::QuantOverrides* overrides) {
  ModelWriter writer;
  writer.SetArchitecture(c.spec.architecture);
  c.spec.Emit(*c.checkpoint, writer, false, overrides);
  return convert::LoadInMemory(writer);
}

testing::HfTensor& Tensor(HfCheckpoint& c, const std::string& name) {
  for (testing::HfTensor& t : c.tensors) {
    if (t.name == name) return t;
  }
  FAIL("no tensor " << name);
  return c.tensors.front();
}

TEST_CASE("tuner: smoothing's folds leave the fp32 model as it was") {
  for (const char* family : {"llama", "gpt2", "bert"}) {
    CAPTURE(family);
    HfOptions o;
    o.kv_heads = 2;  // llama: GQA, two query heads per V head
    HfCheckpoint c = MakeHfCheckpoint(family, o);
    TempDir dir;
    c.Write(dir.path(), "F32");
    const Converted conv = Import(dir.path());
    const convert::Calibration calibration =
        convert::DefaultCalibration(o.vocab, conv.spec.architecture.max_positions);
    convert::TuneOptions t;
    t.target_ppl_ratio = 0.5;  // no target stops it
    t.clipping = t.compensation = t.wide_inputs = t.fp32_fallback = false;
    t.keep_all = true;  // the folds are checked whatever the step measured
    const convert::TuneResult r =
        convert::TuneQuantization(conv.spec, *conv.checkpoint, calibration,
                                  calibration.sequences, t);
    REQUIRE(r.steps.size() == 2);
    CHECK(r.steps[1].name == "layer by layer");
    CHECK(testing::Has(r.steps[1].detail, "smoothing kept in"));
    // Whether or not the step was kept, its folds must be exact: apply every
    // smoothed tensor the tuner would write (the norms' values, the matrices'
    // factors) and compare the fp32 outputs.
    const bool pre_norm = std::string(family) != "bert";
    if (!pre_norm) {
      // Post-norm: the normed stream is also the residual; nothing to fold into
      // but V (and its bias) and (gated FFNs) up: BERT's FFN is not gated.
      std::vector<std::string> changed;
      for (const auto& [name, v] : r.overrides.values) changed.push_back(name);
      for (const auto& [name, f] : r.smoothing) changed.push_back(name);
      for (const std::string& name : changed) {
        const bool v_or_o = name.find("attn.v") != std::string::npos ||
                            name.find("attn.o") != std::string::npos;
        CHECK_MESSAGE(v_or_o, name);
      }
    }
    convert::QuantOverrides folds;
    folds.values = r.overrides.values;
    for (const auto& [name, f] : r.smoothing) {
      for (const convert::TensorMapping& m : conv.spec.tensors) {
        if (m.name != name) continue;
        std::vector<float> v = convert::ModelSpec::ReadValues(m, *conv.checkpoint);
        convert::ApplyMatrixSmoothing(f, &v);
        folds.values[name] = std::move(v);
      }
    }
    const auto base = Fp32(conv, nullptr);
    const convert::OutputReference reference(base->model, calibration.sequences);
    const auto folded = Fp32(conv, &folds);
    const convert::OutputMetrics m = reference.Compare(folded->model);
    MESSAGE(std::string(family) << ": " << folds.values.size() << " tensors changed, fp32 noise/signal "
                   << m.noise_to_signal << ", KL " << m.kld);
    if (m.has_distribution) {  // decoders: the next-token distributions
      CHECK(m.tokens > 0);
      CHECK(std::fabs(m.kld) < 1e-6);  // the reference keeps log-probabilities in fp32
      CHECK(m.top1 == 1.0);
      CHECK(std::fabs(m.ppl_ratio() - 1.0) < 1e-6);
    } else {
      CHECK(m.noise_to_signal < 1e-9);
    }
    CHECK(r.steps[1].kept);
    CHECK(!r.smoothing.empty());
  }
}

// The layer-by-layer pass runs each layer as a model of its own
// (quantize/block_model.h): chained from the ids, the blocks must make every
// layer's stream exactly as the whole model does, whatever the layer's own
// settings (sliding and global layers alternating, sandwich norms, learned
// positions and token types, post-norm).
TEST_CASE("calibration: each generated sequence has its own random stream") {
  // A conversion generates 16 calibration sequences, or 24 when 8 more are held
  // out to measure on: the 16 must be the same either way, so the report of a
  // --no-tune file and of a tuned one run on the same text.
  HfOptions o;
  o.layers = 2;
  HfCheckpoint c = MakeHfCheckpoint("llama", o);
  TempDir dir;
  c.Write(dir.path(), "F32");
  const Converted conv = Import(dir.path());
  const auto fp32 = Fp32(conv, nullptr);
  const convert::Calibration few = convert::GeneratedCalibration(fp32->model, 3, 12, 1);
  const convert::Calibration more = convert::GeneratedCalibration(fp32->model, 5, 12, 1);
  const convert::Calibration other = convert::GeneratedCalibration(fp32->model, 3, 12, 2);
  REQUIRE(few.sequences.size() == 3);
  REQUIRE(more.sequences.size() == 5);
  for (size_t b = 0; b < 3; ++b) {
    CAPTURE(b);
    CHECK(few.sequences[b].size() == 12);
    CHECK(few.sequences[b] == more.sequences[b]);
  }
  // Not one sequence repeated, and another seed gives other text.
  CHECK(few.sequences[0] != few.sequences[1]);
  CHECK(few.sequences != other.sequences);
}

TEST_CASE("tuner: layer blocks chained give the whole model's streams bit for bit") {
  for (const char* family :
       {"llama", "gpt2", "bert", "gemma2", "gemma3_text", "mistral", "t5", "marian",
        "modernbert", "lfm2", "qwen3_5_text", "qwen3_5", "qwen3_next", "rwkv"}) {
    CAPTURE(family);
    HfOptions o;
    o.layers = 3;
    HfCheckpoint c = MakeHfCheckpoint(family, o);
    TempDir dir;
    c.Write(dir.path(), "F32");
    const Converted conv = Import(dir.path());
    const fb::ArchitectureT& a = conv.spec.architecture;
    const bool enc_dec = a.structure == fb::Structure::EncoderDecoder;
    const convert::Calibration calibration =
        convert::DefaultCalibration(o.vocab, a.max_positions);
    const auto whole = Fp32(conv, nullptr);
    // The whole model's stream after each layer, per (stack, layer), per sequence
    // (encoder-decoders teacher-forced on the ids shifted right, as the tuner runs them).
    using Streams = std::map<std::pair<LayerStack, uint32_t>, std::vector<std::vector<float>>>;
    Streams want;
    for (const std::vector<int32_t>& ids : calibration.sequences) {
      const auto len = static_cast<uint32_t>(ids.size());
      Result<Session> session = Session::Create(whole->model, SessionLimits{1, len, 0});
      REQUIRE(session.ok());
      session->SetLayerObserver(
          [](void* ctx, LayerStack stack, uint32_t layer, const float* x, size_t rows,
             size_t hidden) {
            (*static_cast<Streams*>(ctx))[{stack, layer}].emplace_back(x, x + rows * hidden);
          },
          &want);
      if (enc_dec) {
        std::vector<int32_t> dec(len);
        dec[0] = a.decoder_start_token_id >= 0 ? a.decoder_start_token_id : 0;
        for (size_t t = 1; t < len; ++t) dec[t] = ids[t - 1];
        REQUIRE(session->RunEncoderDecoder(ids.data(), &len, len, dec.data(), &len, len, 1).ok());
      } else {
        REQUIRE(session->Run(ids.data(), &len, 1, len).ok());
      }
    }
    std::vector<std::pair<LayerStack, uint32_t>> order;
    for (uint32_t l = 0; l < a.num_layers; ++l) {
      order.push_back({enc_dec ? LayerStack::kEncoder : LayerStack::kSingle, l});
    }
    for (uint32_t l = 0; l < a.num_decoder_layers; ++l) order.push_back({LayerStack::kDecoder, l});
    std::vector<std::vector<float>> stream, encoder_out;
    for (const auto& [stack, l] : order) {
      CAPTURE(static_cast<int>(stack));
      CAPTURE(l);
      // The first blocks are cut to the calibration's ids (unless they compute
      // the logits): fed the same ids renumbered, they give the same stream.
      const convert::BlockCut cut = convert::CutBlock(conv.spec, stack, l, &calibration.sequences);
      CHECK(cut.first == (l == 0));
      CHECK(cut.vocabulary.empty() == (!cut.first || cut.last));
      const std::vector<std::vector<int32_t>> ids = convert::BlockIds(cut, calibration.sequences);
      if (stack == LayerStack::kDecoder && l == 0) encoder_out = std::move(stream);
      ModelWriter writer;
      writer.SetArchitecture(cut.spec.architecture);
      cut.spec.Emit(*conv.checkpoint, writer, false);
      const auto block = convert::LoadInMemory(writer);
      convert::BlockFeed feed;
      feed.ids = &ids;
      feed.stack = stack;
      feed.in = l == 0 ? nullptr : &stream;
      feed.encoder_out = stack == LayerStack::kDecoder ? &encoder_out : nullptr;
      convert::BlockRun run = convert::RunBlock(block->model, feed, 0);
      const std::vector<std::vector<float>>& expected = want[{stack, l}];
      REQUIRE(run.out.size() == expected.size());
      for (size_t s = 0; s < run.out.size(); ++s) CHECK(run.out[s] == expected[s]);
      stream = std::move(run.out);
    }
  }
}

// GPT-2's FFN is not gated: its down projection's input cannot be smoothed
// (GELU is between). Hidden unit 5 of layer 1 is made 40x larger than the
// rest, so the per-row int8 quantization of that input rounds every other unit
// to a few levels: layers.1.ffn.down.weight is the first product to give 16-bit
// inputs or keep in fp32. max_extra_bytes: the fp32 step's budget.
convert::TuneResult TuneOutlierModel(bool wide_inputs, uint64_t max_extra_bytes = UINT64_MAX) {
  HfOptions o;
  HfCheckpoint c = MakeHfCheckpoint("gpt2", o);
  testing::HfTensor& fc = Tensor(c, "transformer.h.1.mlp.c_fc.weight");  // [hidden, inter]
  testing::HfTensor& fc_bias = Tensor(c, "transformer.h.1.mlp.c_fc.bias");
  for (uint32_t r = 0; r < o.hidden; ++r) fc.values[r * o.intermediate + 5] = 0.0f;
  fc_bias.values[5] = 40.0f;
  TempDir dir;
  c.Write(dir.path(), "F32");
  const Converted conv = Import(dir.path());
  const convert::Calibration calibration =
      convert::DefaultCalibration(o.vocab, conv.spec.architecture.max_positions);
  convert::TuneOptions t;
  t.target_ppl_ratio = 0.5;
  t.wide_inputs = wide_inputs;
  t.max_extra_bytes = max_extra_bytes;
  const convert::TuneResult r = convert::TuneQuantization(conv.spec, *conv.checkpoint,
                                                          calibration, calibration.sequences, t);
  for (const convert::TuneStep& s : r.steps) {
    MESSAGE(s.name << ": KL " << s.metrics.kld << std::string(s.kept ? "" : " (undone)") << "; "
                   << s.detail);
  }
  return r;
}

// The escalation takes matrices in order of estimated gain per cost, the
// first alone: with no target met it goes on while batches lower the loss.
TEST_CASE("tuner: the 16-bit input step picks the matrix an outlier ruins first") {
  const convert::TuneResult r = TuneOutlierModel(true);
  size_t step = 0;
  while (step < r.steps.size() && r.steps[step].name != "16-bit inputs") ++step;
  REQUIRE(step < r.steps.size());
  REQUIRE(step > 0);
  CHECK(testing::Has(r.steps[step].detail, "matrices: layers.1.ffn.down.weight"));
  CHECK(std::count(r.wide_input_matrices.begin(), r.wide_input_matrices.end(),
                   "layers.1.ffn.down.weight") == 1);
  // The input's rounding was most of that product's error: the KL divergence
  // drops by more than a third.
  CHECK(r.steps[step].metrics.kld < 0.67 * r.steps[step - 1].metrics.kld);
  CHECK(r.int8_matrices + r.fp32_matrices.size() == 13);
}

TEST_CASE("tuner: the fp32 step keeps the matrix an outlier ruins, within its size budget") {
  // A budget of one down projection's extra bytes (fp32 instead of int8): that one.
  HfOptions o;
  const uint64_t down_extra = 3ull * o.hidden * o.intermediate;
  const convert::TuneResult r = TuneOutlierModel(false, down_extra);
  REQUIRE(r.fp32_matrices.size() == 1);
  CHECK(r.fp32_matrices[0] == "layers.1.ffn.down.weight");
  CHECK(r.total_matrices == 13);
  CHECK(r.int8_matrices == 12);
  CHECK(r.steps.back().name == "fp32 products");
  CHECK(r.final_metrics.kld < 0.5 * r.steps.front().metrics.kld);
  CHECK_FALSE(r.target_met);
  // Unbounded: more, the outlier's first.
  const convert::TuneResult more = TuneOutlierModel(false);
  CHECK(more.fp32_matrices.size() > 1);
  CHECK(testing::Has(more.steps.back().detail, "matrices: layers.1.ffn.down.weight"));
  CHECK(more.final_metrics.kld <= r.final_metrics.kld);
}

TEST_CASE("quantize: what becomes int8, and packed, is the role table's storage") {
  for (size_t i = 0; i < kRoleCount; ++i) {
    const RoleInfo& role = GetRole(static_cast<Role>(i));
    for (LayerStack stack : {LayerStack::kSingle, LayerStack::kDecoder}) {
      char name[256];
      REQUIRE(RoleTensorName(name, sizeof(name), role, stack, 3));
      CAPTURE(name);
      CHECK(&convert::RoleOf(name) == &role);
      CHECK(convert::QuantizedAsInt8(name) == (role.storage != RoleStorage::kF32));
      CHECK(convert::PackedForGemm(name) == (role.storage == RoleStorage::kProduct));
    }
  }
  CHECK(convert::QuantizedAsInt8("token_embedding"));
  CHECK_FALSE(convert::PackedForGemm("token_embedding"));
  CHECK_FALSE(convert::QuantizedAsInt8("encoder.relative_bias"));
  CHECK(convert::PackedForGemm("lm_head"));
  CHECK_THROWS_WITH_AS(convert::QuantizedAsInt8("layers.0.attn.x.weight"),
                       doctest::Contains("has no tensor role"), convert::Error);
}

TEST_CASE("tuner: --keep-fp32 patterns must name an int8 tensor") {
  HfCheckpoint c = MakeHfCheckpoint("llama", HfOptions());
  TempDir dir;
  c.Write(dir.path(), "F32");
  const Converted conv = Import(dir.path());
  const convert::Calibration calibration = convert::DefaultCalibration(64, 16);
  convert::TuneOptions t;
  t.keep_fp32 = {"layers.*.attn_norm.weight"};  // a vector: never int8
  CHECK_THROWS_WITH_AS(convert::TuneQuantization(conv.spec, *conv.checkpoint, calibration,
                                                 calibration.sequences, t),
                       doctest::Contains("matches no int8 tensor"), convert::Error);
  t.keep_fp32 = {"layers.0.attn.?.weight"};
  const convert::TuneResult r = convert::TuneQuantization(conv.spec, *conv.checkpoint,
                                                          calibration, calibration.sequences, t);
  CHECK(r.fp32_matrices.size() >= 4);
  CHECK(r.overrides.keep_f32.count("layers.0.attn.o.weight") == 1);
  CHECK(r.overrides.keep_f32.count("layers.1.attn.o.weight") == 0);

  // Every step, on an encoder-decoder too (its layers one at a time, the
  // decoder's on the int8 encoder's output); the user's patterns still hold.
  t.target_ppl_ratio = 0.5;  // no target stops it
  HfCheckpoint t5 = MakeHfCheckpoint("t5", HfOptions());
  TempDir t5_dir;
  t5.Write(t5_dir.path(), "F32");
  const Converted t5_conv = Import(t5_dir.path());
  t.keep_fp32 = {"encoder.layers.0.attn.?.weight"};
  const convert::TuneResult t5_tuned = convert::TuneQuantization(
      t5_conv.spec, *t5_conv.checkpoint, calibration, calibration.sequences, t);
  CHECK_FALSE(t5_tuned.skipped);
  REQUIRE(t5_tuned.steps.size() >= 2);
  CHECK(t5_tuned.steps[1].name == "layer by layer");
  CHECK(t5_tuned.overrides.keep_f32.count("encoder.layers.0.attn.o.weight") == 1);
}

// RWKV-4's products read token-shift mixes (a mix of the normed row and the
// previous one per channel, not a norm's output), a gated WKV and a squared
// ReLU: smoothing folds nothing into them (the head, after ln_out, still gets
// its factors), and every step runs its layers.
TEST_CASE("tuner: RWKV-4's products are tuned with nothing folded into their inputs") {
  HfOptions o;
  o.layers = 2;
  HfCheckpoint c = MakeHfCheckpoint("rwkv", o);
  TempDir dir;
  c.Write(dir.path(), "F32");
  const Converted conv = Import(dir.path());
  const convert::Calibration calibration = convert::DefaultCalibration(o.vocab, 64);
  convert::TuneOptions t;
  t.target_ppl_ratio = 0.5;  // no target stops it
  t.clipping = t.compensation = t.wide_inputs = t.fp32_fallback = false;
  t.keep_all = true;
  const convert::TuneResult smoothed = convert::TuneQuantization(
      conv.spec, *conv.checkpoint, calibration, calibration.sequences, t);
  REQUIRE(smoothed.steps.size() == 2);
  CHECK(smoothed.steps[1].name == "layer by layer");
  CHECK(smoothed.smoothing.count("lm_head") == 1);
  for (const auto& [name, factors] : smoothed.smoothing) CHECK_MESSAGE(name == "lm_head", name);
  CHECK_FALSE(smoothed.overrides.values.empty());
  for (const auto& [name, values] : smoothed.overrides.values) {
    CHECK_MESSAGE((name == "final_norm.weight" || name == "final_norm.bias"), name);
  }
  // Every step: 2 layers x (4 time-mix + 3 channel-mix matrices) + the head,
  // each int8 or kept fp32.
  convert::TuneOptions all;
  all.target_ppl_ratio = 0.5;
  const convert::TuneResult r = convert::TuneQuantization(conv.spec, *conv.checkpoint,
                                                          calibration, calibration.sequences, all);
  CHECK_FALSE(r.skipped);
  REQUIRE(r.steps.size() >= 2);
  CHECK(r.total_matrices == 2 * 7 + 1);
  for (const char* m : {"time_mix.key", "time_mix.value", "time_mix.receptance",
                        "time_mix.output", "channel_mix.key", "channel_mix.receptance",
                        "channel_mix.value"}) {
    const std::string name = std::string("layers.1.") + m + ".weight";
    CHECK_MESSAGE(r.overrides.int8.count(name) + r.overrides.keep_f32.count(name) == 1, name);
  }
}

}  // namespace
}  // namespace octet
