// octet run --generate: the prompts in one pass, then one token per step, as
// ids (models without a tokenizer) or as text streamed while it is made.
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/model_util.h"
#include "cli/run.h"
#include "platform/clock.h"

namespace octet {
namespace cli {
namespace {

uint64_t PeakRssBytes() {
  struct rusage usage = {};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // Linux and Android report KiB
}

double PerSecond(uint64_t tokens, double seconds) {
  return seconds > 0 ? static_cast<double>(tokens) / seconds : 0.0;
}

}  // namespace

uint32_t Pad(const std::vector<std::vector<int32_t>>& batch, int32_t pad,
             std::vector<int32_t>* ids, std::vector<uint32_t>* lengths) {
  uint32_t seq = 0;
  for (const auto& s : batch) seq = std::max(seq, static_cast<uint32_t>(s.size()));
  ids->assign(batch.size() * seq, pad);
  lengths->resize(batch.size());
  for (size_t b = 0; b < batch.size(); ++b) {
    std::copy(batch[b].begin(), batch[b].end(), ids->begin() + static_cast<ptrdiff_t>(b * seq));
    (*lengths)[b] = static_cast<uint32_t>(batch[b].size());
  }
  return seq;
}

std::string JoinIds(const int32_t* ids, size_t n) {
  std::string text;
  for (size_t i = 0; i < n; ++i) {
    if (i != 0) text += ',';
    text += std::to_string(ids[i]);
  }
  return text;
}

EosSet::EosSet(const Model& model, const TextCodec* codec)
    : arch_eos_(model.architecture().eos_token_id()) {
  if (codec != nullptr && codec->spec().eos_ids() != nullptr &&
      codec->spec().eos_ids()->size() > 0) {
    codec_ = codec;
  }
}

bool EosSet::Contains(int32_t id) const {
  return codec_ != nullptr ? codec_->tokenizer().IsEos(id) : id >= 0 && id == arch_eos_;
}

double SecondsSince(int64_t start_nanos) {
  return static_cast<double>(MonotonicNanos() - start_nanos) * 1e-9;
}

void PrintStats(const GenerationStats& s) {
  const uint64_t rss = PeakRssBytes();
  std::fprintf(stderr,
               "octet: prompt %llu tokens, generated %llu tokens; prefill %.1f tokens/s, "
               "decode %.1f tokens/s; arena %llu bytes (%s), peak RSS %llu bytes (%s)\n",
               static_cast<unsigned long long>(s.prompt_tokens),
               static_cast<unsigned long long>(s.generated_tokens),
               PerSecond(s.prompt_tokens, s.prefill_seconds),
               PerSecond(s.decode_tokens, s.decode_seconds),
               static_cast<unsigned long long>(s.arena_bytes), HumanBytes(s.arena_bytes).c_str(),
               static_cast<unsigned long long>(rss), HumanBytes(rss).c_str());
}

// The prompts in one Run (encoder-decoder models: the sources and the decoder
// start token in one RunEncoderDecoder), then sample -> Step until every
// sequence has r.generate tokens or has stopped at an eos id.
void Generate(const RunRequest& r, const Model& model, TextCodec* codec) {
  const fb::Architecture& arch = model.architecture();
  const bool enc_dec = arch.structure() == fb::Structure::EncoderDecoder;
  const auto batch = static_cast<uint32_t>(r.ids.size());
  const int32_t pad = std::max(arch.pad_token_id(), 0);
  const EosSet eos(model, codec);
  std::vector<int32_t> ids;
  std::vector<uint32_t> lengths;
  const uint32_t seq = Pad(r.ids, pad, &ids, &lengths);
  const auto steps = static_cast<uint32_t>(r.generate);
  // Encoder-decoder: the decoder input of every sequence is the start token.
  const std::vector<int32_t> start(batch, arch.decoder_start_token_id());
  const std::vector<uint32_t> start_lengths(batch, 1);

  SessionLimits limits;
  limits.max_batch = batch;
  limits.max_seq = seq;  // >= 1: also holds the decoder start token
  limits.max_new_tokens = steps;
  limits.threads = r.threads;
  limits.last_logits_only = true;  // sampling reads each sequence's last row only
  Session session = CreateSession(model, limits);
  SamplingParams params;
  params.temperature = static_cast<float>(r.temperature);
  params.top_k = static_cast<uint32_t>(std::min<uint64_t>(r.top_k, UINT32_MAX));
  params.top_p = static_cast<float>(r.top_p);
  uint64_t rng = r.seed;

  // One sequence with a tokenizer: its text streamed (a decoder-only model's
  // prompt first, then each token as it is sampled). A batch is printed when done.
  std::unique_ptr<TextStream> stream;
  if (codec != nullptr && batch == 1) {
    stream.reset(new TextStream(codec->tokenizer(), /*skip_special_tokens=*/true, stdout));
    if (!enc_dec) {
      for (int32_t id : r.ids[0]) stream->Push(id);
    }
  }

  GenerationStats stats;
  stats.arena_bytes = session.plan().total();
  for (const auto& s : r.ids) stats.prompt_tokens += s.size();
  std::vector<int32_t> generated(static_cast<size_t>(batch) * steps);  // [batch, steps]
  std::vector<uint32_t> count(batch, 0);
  std::vector<bool> done(batch, false);
  std::vector<int32_t> next(batch), feed(batch);
  int64_t start_time = MonotonicNanos();
  Status status = enc_dec ? session.RunEncoderDecoder(ids.data(), lengths.data(), seq,
                                                      start.data(), start_lengths.data(), 1, batch)
                          : session.Run(ids.data(), lengths.data(), batch, seq);
  bool first = true;
  while (status.ok()) {
    status = session.Sample(params, &rng, next.data());
    if (!status.ok()) break;
    if (first) {
      stats.prefill_seconds = SecondsSince(start_time);
      start_time = MonotonicNanos();
      first = false;
    }
    bool all_done = true;
    for (uint32_t b = 0; b < batch; ++b) {
      feed[b] = done[b] ? pad : next[b];  // finished sequences feed padding (ignored)
      if (done[b]) continue;
      generated[static_cast<size_t>(b) * steps + count[b]++] = next[b];
      ++stats.generated_tokens;
      if (stream) stream->Push(next[b]);
      if (count[b] == steps || eos.Contains(next[b])) done[b] = true;
      if (!done[b]) ++stats.decode_tokens;
      all_done = all_done && done[b];
    }
    if (all_done) break;
    status = enc_dec ? session.StepEncoderDecoder(feed.data(), batch)
                     : session.Step(feed.data(), batch);
  }
  if (!status.ok()) throw Failure("generation failed: " + DescribeStatus(status));
  if (!first) stats.decode_seconds = SecondsSince(start_time);

  if (stream) {
    stream->Finish();
    WriteText(stdout, "\n", 1);
  }
  for (uint32_t b = 0; b < batch; ++b) {
    const int32_t* out = generated.data() + static_cast<size_t>(b) * steps;
    if (r.verbose || codec == nullptr) {
      std::fprintf(codec == nullptr ? stdout : stderr, "sequence %u: %s -> %s\n", b,
                   JoinIds(r.ids[b]).c_str(), JoinIds(out, count[b]).c_str());
    }
    if (codec == nullptr || stream) continue;
    std::vector<int32_t> all = enc_dec ? std::vector<int32_t>() : r.ids[b];
    all.insert(all.end(), out, out + count[b]);
    const std::string text = "sequence " + std::to_string(b) + ": " +
                             codec->Decode(all, /*skip_special_tokens=*/true) + "\n";
    WriteText(stdout, text);
  }
  std::fflush(stdout);
  PrintStats(stats);
}

}  // namespace cli
}  // namespace octet
