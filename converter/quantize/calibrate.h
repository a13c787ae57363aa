// What the converter learns from calibration sequences by running models with
// the runtime itself (so every number is what the device will compute):
//   - the inputs of every matrix product (engine/forward.h ProductInput), for
//     the techniques of rounding.h;
//   - how far an int8 model's next-token distributions are from its fp32
//     twin's: perplexity ratio, mean KL divergence, top-1 agreement.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/forward.h"
#include "format/model.h"
#include "write/model_writer.h"
#include "quantize/report.h"
#include "quantize/rounding.h"

namespace octet {
namespace convert {

// A model written to memory and loaded with the runtime's loader (a 64-byte
// aligned copy), for the converter's measurements.
struct InMemoryModel {
  std::unique_ptr<uint8_t, void (*)(void*)> bytes{nullptr, nullptr};
  Model model;
};
std::unique_ptr<InMemoryModel> LoadInMemory(const ModelWriter& writer);

// One product input of a model: a layer's Q/K/V input, its O input, ...
struct ProductSite {
  LayerStack stack = LayerStack::kSingle;
  uint32_t layer = 0;
  ProductInput which = ProductInput::kAttention;
  bool operator<(const ProductSite& o) const {
    if (stack != o.stack) return stack < o.stack;
    if (layer != o.layer) return layer < o.layer;
    return which < o.which;
  }
};

// Runs `model` over the sequences and keeps, for every product input, each
// channel's max |x| over all rows and every stride-th row (stride chosen so
// that at most max_rows rows are kept per input).
std::map<ProductSite, ProductInputs> CaptureProductInputs(
    const Model& model, const std::vector<std::vector<int32_t>>& sequences, size_t max_rows);

// A block of a model (quantize/block_model.h) run over calibration sequences
// (encoder-decoders: teacher-forced on the ids shifted right behind the start
// token, as the calibration runs them). The stack's first block reads the ids;
// the others start their layer from `in` (per sequence, [length, hidden]: what
// the layers before made), through Session::SetLayerInput. A decoder layer's
// block of an encoder-decoder also takes `encoder_out`, the encoder's stream
// before its final norm. out: per sequence, the stream after the layer.
// max_rows > 0: also every product input, kept as CaptureProductInputs keeps them.
struct BlockFeed {
  const std::vector<std::vector<int32_t>>* ids = nullptr;
  LayerStack stack = LayerStack::kSingle;            // the block's layer's
  const std::vector<std::vector<float>>* in = nullptr;           // null: from the ids
  const std::vector<std::vector<float>>* encoder_out = nullptr;  // decoder blocks
};
struct BlockRun {
  std::vector<std::vector<float>> out;
  std::map<ProductSite, ProductInputs> inputs;
};
BlockRun RunBlock(const Model& block, const BlockFeed& feed, size_t max_rows);

// The int8 model against its fp32 twin on next-token prediction.
struct OutputMetrics {
  bool has_distribution = false;  // false for encoder-only models (hidden states out)
  size_t tokens = 0;              // scored positions
  double fp32_ppl = 0;            // perplexity of the sequences' own next tokens
  double int8_ppl = 0;
  double kld = 0;                 // mean KL(fp32 || int8) of the next-token distribution, nats
  double top1 = 0;                // fraction of positions whose argmax agrees
  double min_cosine = 1;          // worst position's output cosine
  double mean_cosine = 1;         // mean over positions (encoders: the embeddings' agreement)
  double noise_to_signal = 0;     // sum (int8 - fp32)^2 / sum fp32^2 over every output
  double ppl_ratio() const { return fp32_ppl > 0 ? int8_ppl / fp32_ppl : 1; }
};

// The fp32 model's outputs on a set of sequences, kept to score int8 candidates.
// stream: its sessions hold one layer's weights at a time, keeping keep_bytes
// of them packed (SessionLimits::stream_weights, stream_keep_bytes).
// Decoders keep, per scored position, not the logits but the distribution's
// most likely tokens (until they hold 99.9% of it, at least kMinTopTokens and
// at most kMaxTopTokens) and the mass of the rest: the KL divergence is then
// that of the distributions with the rest as one outcome (a lower bound that
// the top tokens make all but exact for a trained model), perplexity and top-1
// exact; a 150k-token vocabulary then costs at most 32 KiB a position instead
// of 600.
class OutputReference {
 public:
  OutputReference(const Model& fp32, std::vector<std::vector<int32_t>> sequences,
                  bool stream = false, uint64_t keep_bytes = 0);
  OutputMetrics Compare(const Model& int8) const;
  const std::vector<std::vector<int32_t>>& sequences() const { return sequences_; }

  static constexpr size_t kMinTopTokens = 256, kMaxTopTokens = 4096;
  static constexpr double kTopMass = 0.999;

 private:
  // A decoder position's reference distribution.
  struct Position {
    float target_logp = 0;           // log p of the token that follows
    int32_t argmax = 0;
    float rest = 0;                  // 1 - the top tokens' mass
    std::vector<int32_t> top_ids;    // the most likely tokens, most likely first
    std::vector<float> top_logp;
  };
  struct Sequence {
    std::vector<float> out;           // encoders: hidden states [positions, dim]
    std::vector<Position> positions;  // decoders: one per scored position
  };
  std::vector<std::vector<int32_t>> sequences_;
  std::vector<Sequence> outputs_;
  bool has_distribution_ = false;
  bool encoder_decoder_ = false;
  size_t dim_ = 0;
};

// A sample of text the fp32 model writes itself, for decoders given no
// calibration: `count` sequences of `length` ids, each started at the BOS
// token (or id 0) and sampled at temperature 1 (seeded: the same every run;
// each sequence draws from a stream of its own, so the first k sequences are
// the same whatever the count). stream: SessionLimits::stream_weights (the same sequences; one layer's
// weights in memory at a time), keeping keep_bytes of them packed.
Calibration GeneratedCalibration(const Model& fp32, size_t count, size_t length, uint64_t seed,
                                 bool stream = false, uint64_t keep_bytes = 0);

}  // namespace convert
}  // namespace octet
