// Generator: text generation on a Session (engine/session.h). The prompts in
// one run (encoder-decoder models: the sources, and the decoder start token),
// then sample (engine/sampling.h) -> report -> step until every sequence ends:
// an eos id, max_new_tokens, the caller's callback, or a cancel. With a
// tokenizer each token's text is streamed, decoded in the context of its
// prompt. The C API's octet_generate is this class behind the C structs.
//
// Creation allocates the per-sequence arrays and text streams for max_batch
// sequences; Generate and Continue allocate nothing.
//
// One Generator serves one Session at a time, on one thread; Cancel may be
// called from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/alloc.h"
#include "core/result.h"
#include "engine/sampling.h"
#include "engine/session.h"
#include "format/model.h"
#include "text/tokenizer.h"

namespace octet {

// True when `id` ends a sequence: the tokenizer's eos ids when it lists any,
// else the architecture's eos_token_id. tokenizer may be null.
bool IsEosToken(const Model& model, const text::Tokenizer* tokenizer, int32_t id);

struct GenerateParams {
  uint32_t max_new_tokens = 128;  // >= 1; tokens per sequence, eos included
  SamplingParams sampling;        // its logits hook may stop the generation (kCancelled)
  uint64_t seed = 0;              // the random state's start
  bool ignore_eos = false;        // an eos id is a token like the others
  bool keep_special = false;      // special tokens' text in the stream
};

// One token (or, id -1, the text held back at the end) of one sequence.
struct TokenEvent {
  uint32_t sequence = 0;
  int32_t id = -1;
  uint32_t index = 0;          // tokens this sequence generated before this one
  bool is_eos = false;         // id ends the sequence (its text is empty)
  const char* text = nullptr;  // the UTF-8 the token completes; null without a
  size_t text_len = 0;         // tokenizer. Valid during the call.
};

struct GenerateCallbacks {
  void* user = nullptr;
  // After the prompts ran, before the first sample (may be null).
  void (*on_prompt)(void* user) = nullptr;
  // Each event as it happens (may be null); nonzero ends the whole generation,
  // which then returns ok.
  int (*on_token)(void* user, const TokenEvent& event) = nullptr;
};

class Generator {
 public:
  // For sessions of `model` with up to max_batch sequences. tokenizer (may be
  // null: no text) must outlive the generator.
  static Result<Generator> Create(const Model& model, const text::Tokenizer* tokenizer,
                                  uint32_t max_batch);

  Generator(Generator&&) noexcept;
  Generator& operator=(Generator&&) noexcept;
  ~Generator();

  // The number of the generation that starts next, for Cancel. Generate and
  // Continue take one when they start; a caller that checks its own arguments
  // first may take it earlier (a cancel during those checks is then not lost)
  // and pass it.
  uint64_t Begin();

  // Generates from a batch of prompts: ids [batch, seq] row-major, lengths[b]
  // real. The session must be of this generator's model and hold the prompts
  // (max_seq) and max_new_tokens - 1 steps (max_new_tokens). out_counts[batch]
  // (may be null) receives the tokens each sequence generated, eos included.
  // kCancelled when Cancel or the logits hook stopped it.
  Status Generate(Session* session, const int32_t* ids, const uint32_t* lengths, uint32_t batch,
                  uint32_t seq, const GenerateParams& params, const GenerateCallbacks& callbacks,
                  uint32_t* out_counts, uint64_t generation);
  Status Generate(Session* session, const int32_t* ids, const uint32_t* lengths, uint32_t batch,
                  uint32_t seq, const GenerateParams& params, const GenerateCallbacks& callbacks,
                  uint32_t* out_counts) {
    return Generate(session, ids, lengths, batch, seq, params, callbacks, out_counts, Begin());
  }

  // Decoder-only models: generates after what the session holds (a Run,
  // Extend or LoadState: its last output gives the first token), stepping each
  // token but the last into the cache, for the output's batch of sequences.
  // The text streams start empty (no prompt context). The session must hold
  // max_new_tokens - 1 more positions per sequence (a step beyond fails).
  // rng_state (may be null: params.seed) is the random state, advanced as
  // Session::Sample advances it: a chat's answers draw from one stream.
  Status Continue(Session* session, const GenerateParams& params,
                  const GenerateCallbacks& callbacks, uint64_t* rng_state, uint32_t* out_counts,
                  uint64_t generation);
  Status Continue(Session* session, const GenerateParams& params,
                  const GenerateCallbacks& callbacks, uint64_t* rng_state, uint32_t* out_counts) {
    return Continue(session, params, callbacks, rng_state, out_counts, Begin());
  }

  // Stops the generation started last before its next step (it returns
  // kCancelled); with none running, nothing. Safe from any thread.
  void Cancel();

  uint32_t max_batch() const { return max_batch_; }

 private:
  struct Stream;
  Generator() = default;
  // The text streams for batch sequences, primed with the prompts (ids null: empty).
  Status StartStreams(const GenerateParams& params, const int32_t* ids, const uint32_t* lengths,
                      uint32_t batch, uint32_t seq);
  // sample -> report -> step until every sequence ends.
  Status Loop(Session* session, uint32_t batch, const GenerateParams& params,
              const GenerateCallbacks& callbacks, uint64_t* rng, uint64_t generation);
  // The text still held back (a character cut short by the end); stopped
  // when the callback asked to stop.
  Status Flush(uint32_t batch, const GenerateCallbacks& callbacks);

  const Model* model_ = nullptr;
  const text::Tokenizer* tokenizer_ = nullptr;
  uint32_t max_batch_ = 0;
  int32_t pad_ = 0;
  bool enc_dec_ = false;
  // Per sequence, [max_batch] each.
  OwnedArray<uint32_t> counts_;  // tokens generated
  OwnedArray<uint8_t> done_;
  OwnedArray<int32_t> next_;     // sampled
  OwnedArray<int32_t> feed_;     // fed to the step
  OwnedArray<uint32_t> ones_;    // decoder lengths of the start token
  std::unique_ptr<Stream[]> streams_;  // with a tokenizer (Stream: through Allocate)
  bool stopped_ = false;               // the callback asked to stop
  // Cancel: Begin hands out numbers, Cancel marks the last one handed out. On
  // the heap, so that moving the Generator keeps it in place.
  struct Cancellation {
    std::atomic<uint64_t> handed_out{0};
    std::atomic<uint64_t> cancelled{0};
  };
  Owned<Cancellation> cancel_;
};

}  // namespace octet
