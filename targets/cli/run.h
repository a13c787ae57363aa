// `octet run` in pieces: the request parsed from the command line (run.cc),
// generation (generate.cc) and the chat loop (run_chat.cc). Host-side code:
// errors are thrown as UsageError / Failure (cli/args.h).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/text_codec.h"
#include "octet/octet.hpp"

namespace octet {
namespace cli {

struct RunRequest {
  std::string model_path;
  std::vector<std::vector<int32_t>> ids;          // one per sequence (--ids, or the encoded --prompt)
  std::vector<std::vector<int32_t>> decoder_ids;  // empty, or one per sequence
  std::string dump_path;                          // empty = print a summary
  uint32_t threads = 0;  // 0: the machine's fast cores
  std::vector<std::string> prompts;  // --prompt texts; encoded into `ids` once the model is loaded
  bool verbose = false;              // token ids on stderr
  // Generation.
  uint64_t generate = 0;  // 0 = one forward pass (with --chat: tokens per answer, 0 = default)
  double temperature = 1.0;
  uint64_t top_k = 0;  // 0 = no limit
  double top_p = 1.0;
  uint64_t seed = 0;
  // Chat.
  bool chat = false;
  bool has_system = false;
  std::string system;
  uint64_t context = 0;  // 0 = the default (min(2048, the model's positions))
  // Sentence embeddings (encoder-only).
  bool pooled = false;
  octet_pooling pooling = OCTET_POOLING_MEAN;
  // Attention map.
  std::string attention_map_path;  // empty = none
  int64_t layer = -1;     // -1 = the stack's last layer
  int64_t head = -1;      // -1 = all heads
  bool cross = false;     // the decoder's cross-attention (encoder-decoder)
  bool encoder_stack = false;  // encoder-decoder: the encoder's self-attention
  int64_t sequence = -1;  // -1 = not given (sequence 0 of a batch of one)
};

// ids [batch, seq] row-major, padded with `pad`, and the lengths of the
// sequences; returns seq.
uint32_t Pad(const std::vector<std::vector<int32_t>>& batch, int32_t pad,
             std::vector<int32_t>* ids, std::vector<uint32_t>* lengths);

std::string JoinIds(const int32_t* ids, size_t n);
inline std::string JoinIds(const std::vector<int32_t>& ids) {
  return JoinIds(ids.data(), ids.size());
}

// Timing and sizes of a generation, printed as one line on stderr.
struct GenerationStats {
  uint64_t prompt_tokens = 0;     // tokens of the prompts (prefill)
  uint64_t generated_tokens = 0;  // sampled tokens, eos included
  uint64_t decode_tokens = 0;     // tokens fed one at a time (Step)
  double prefill_seconds = 0;     // prompts through the model, first tokens sampled
  double decode_seconds = 0;      // the steps and their samples
  uint64_t arena_bytes = 0;       // the session's planned arenas
};
void PrintStats(const GenerationStats& stats);

// A monotonic clock in nanoseconds, and the seconds since a reading of it.
int64_t NowNanos();
double SecondsSince(int64_t start_nanos);

void Generate(const RunRequest& r, const api::Model& model, TextCodec* codec);
void Chat(const RunRequest& r, const api::Model& model, TextCodec& codec);

}  // namespace cli
}  // namespace octet
