// octet run --generate: the prompts in one pass, then one token per step, as
// ids (models without a tokenizer) or as text streamed while it is made.
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <chrono>

#include "cli/api_util.h"
#include "cli/args.h"
#include "cli/format_util.h"
#include "cli/run.h"

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

int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double SecondsSince(int64_t start_nanos) {
  return static_cast<double>(NowNanos() - start_nanos) * 1e-9;
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
               static_cast<unsigned long long>(s.arena_bytes), FormatBytes(s.arena_bytes).c_str(),
               static_cast<unsigned long long>(rss), FormatBytes(rss).c_str());
}

// octet_generate: the prompts in one run (encoder-decoder models: the
// sources, and the decoder start token), then sample -> step until every
// sequence has r.generate tokens or has stopped at an eos id. One sequence
// with a tokenizer: its text streamed (a decoder-only model's prompt first,
// then each token's text as the callback gets it). A batch is printed when done.
void Generate(const RunRequest& r, const api::Model& model, TextCodec* codec) {
  const octet_model_info info = model.info();
  const bool enc_dec = info.structure == OCTET_ENCODER_DECODER;
  const auto batch = static_cast<uint32_t>(r.ids.size());
  const int32_t pad = std::max(info.pad_token_id, 0);
  std::vector<int32_t> ids;
  std::vector<uint32_t> lengths;
  const uint32_t seq = Pad(r.ids, pad, &ids, &lengths);
  const auto steps = static_cast<uint32_t>(r.generate);

  octet_session_options limits = api::SessionOptions();
  limits.max_batch = batch;
  limits.max_seq = seq;  // >= 1: also holds the decoder start token
  limits.max_new_tokens = steps;
  limits.threads = r.threads;
  api::Session session = OpenSession(model, limits);
  octet_generate_options options = api::GenerateOptions();
  options.max_new_tokens = steps;
  options.temperature = static_cast<float>(r.temperature);
  options.top_k = static_cast<uint32_t>(std::min<uint64_t>(r.top_k, UINT32_MAX));
  options.top_p = static_cast<float>(r.top_p);
  options.seed = r.seed;

  // One sequence with a tokenizer: the prompt's text first (what a stream of
  // its ids gives; octet_generate's pieces continue that stream).
  const bool stream = codec != nullptr && batch == 1;
  if (stream && !enc_dec) {
    TextStream prompt(model, /*skip_special_tokens=*/true, stdout);
    for (int32_t id : r.ids[0]) prompt.Push(id);
  }

  GenerationStats stats;
  stats.arena_bytes = session.arena_bytes();
  for (const auto& s : r.ids) stats.prompt_tokens += s.size();
  std::vector<std::vector<int32_t>> generated(batch);
  int64_t start_time = NowNanos();
  bool first = true;
  const api::Status status = session.Generate(
      ids, lengths, seq, options, [&](const octet_token_event& e) {
        if (first) {
          stats.prefill_seconds = SecondsSince(start_time);
          start_time = NowNanos();
          first = false;
        }
        if (e.id >= 0) generated[e.sequence].push_back(e.id);
        if (stream && e.text_len > 0) {
          WriteText(stdout, e.text, e.text_len);
          std::fflush(stdout);
        }
        return true;
      });
  Check(status, "generation");
  if (!first) stats.decode_seconds = SecondsSince(start_time);
  for (const auto& g : generated) {
    stats.generated_tokens += g.size();
    if (!g.empty()) stats.decode_tokens += g.size() - 1;  // the last one is not fed back
  }

  if (stream) WriteText(stdout, "\n", 1);
  for (uint32_t b = 0; b < batch; ++b) {
    if (r.verbose || codec == nullptr) {
      std::fprintf(codec == nullptr ? stdout : stderr, "sequence %u: %s -> %s\n", b,
                   JoinIds(r.ids[b]).c_str(), JoinIds(generated[b]).c_str());
    }
    if (codec == nullptr || stream) continue;
    std::vector<int32_t> all = enc_dec ? std::vector<int32_t>() : r.ids[b];
    all.insert(all.end(), generated[b].begin(), generated[b].end());
    const std::string text = "sequence " + std::to_string(b) + ": " +
                             codec->Decode(all, /*skip_special_tokens=*/true) + "\n";
    WriteText(stdout, text);
  }
  std::fflush(stdout);
  PrintStats(stats);
}

}  // namespace cli
}  // namespace octet
