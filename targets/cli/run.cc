// octet run: one forward pass over a padded batch of token ids, or generation
// with the KV cache (docs/design.md §5); sentence embeddings of encoder-only models
// (--pooling) and heatmaps of one layer's attention (--attention-map).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/api_util.h"
#include "cli/args.h"
#include "cli/attention_map.h"
#include "cli/commands.h"
#include "cli/npy.h"
#include "cli/run.h"
#include "cli/tool_main.h"

namespace octet {
namespace cli {
namespace {

constexpr char kUsage[] =
    R"(Usage: octet run MODEL --ids 5,17,42 [--ids 7,8 ...] [--decoder-ids 0,5,9 ...]
                 [--dump OUT.npy] [--threads N]
       octet run MODEL (--ids IDS | --prompt TEXT) ... --generate N [--temperature T]
                 [--top-k K] [--top-p P] [--seed S]
       octet run MODEL --chat [--system TEXT] [--context N] [--generate N] [sampling flags]
       octet run BERT_MODEL (--ids IDS | --prompt TEXT) ... [--pooling cls|mean] [--dump OUT.npy]
       octet run MODEL (--ids IDS | --prompt TEXT) --attention-map OUT.png [--layer L]
                 [--head H] [--cross] [--stack encoder|decoder] [--sequence N]

One forward pass over a batch: one --ids (or --prompt) per sequence. Shorter
sequences are padded and masked; padded positions of the output may hold
anything finite.

Input:
  --ids IDS            comma-separated token ids of one sequence (repeat per sequence)
  --prompt TEXT        one sequence as text (repeat per sequence), encoded with the
                       model's tokenizer as Hugging Face's encode(text) does by
                       default (add_special_tokens: BOS/CLS... as the checkpoint's
                       template says); instead of --ids. Encoder-only models give
                       their sentence embeddings (--pooling, default mean)
  --decoder-ids IDS    encoder-decoder models (marian, t5): the decoder input of the
                       sequence given by the --ids at the same position, teacher-forced
                       and used as given (it starts with the decoder start token);
                       one per --ids; not with --generate
  --threads N          threads, 0 to 256; 0 (the default) = the machine's fast cores;
                       the output is bit-identical for every count

Output:
  --dump OUT.npy       write the output as a float32 .npy (little-endian, C order):
                         encoder-only (bert):          last hidden state [batch, seq, hidden]
                         decoder-only (gpt2, llama..): logits [batch, seq, vocab]
                         encoder-decoder (marian, t5): decoder logits [batch, decoder_seq, vocab]
                       without --dump: the output shape and, for decoders, the most
                       likely next token of each sequence
  --pooling cls|mean   encoder-only models: one sentence embedding per sequence,
                       [batch, hidden] with --dump: cls = the first token's hidden
                       state, mean = the mean over the real tokens (padding masked,
                       as sentence-transformers' mean pooling). With --prompt the
                       default is mean (what most sentence-transformers models use);
                       with --ids there is no default (the hidden states)
  --verbose            generation and chat: the token ids on stderr (generation:
                       "sequence B: PROMPT_IDS -> GENERATED_IDS"; chat: the ids in
                       the KV cache before each answer and the answer's ids)

Generation (decoders with layers: decoder-only, and encoder-decoder (marian, t5)):
  --generate N         generate up to N tokens (1 to 1000000) per sequence with the
                       KV cache: the prompts run in one pass, then one token per step.
                       Encoder-decoder models: each --ids is a source; its decoder
                       starts from the model's decoder start token (no --decoder-ids)
  --temperature T      sampling temperature, 0 to 100 (default 1; 0 = greedy: the
                       most likely token, the lowest id on ties)
  --top-k K            sample among the K most likely tokens (default 0 = no limit)
  --top-p P            then keep the smallest set of most likely tokens whose
                       probability is >= P, in (0, 1] (default 1 = all)
  --seed S             random seed, 0 to 2^64 - 1 (default 0): the same seed gives
                       the same tokens
                       Order: temperature, top-k, top-p, renormalize, then draw.
                       A sequence stops early at any id of the eos set (the
                       tokenizer's eos ids, else the model's eos_token_id).
                       Output, models with a tokenizer: text (special tokens left
                       out). One sequence: the prompt's text, then each token's
                       text as it is generated (flushed per token; a character
                       spread over several tokens appears once complete), then a
                       newline. A batch: when all are done, one
                         sequence B: TEXT
                       per sequence (the text may hold newlines). Encoder-decoder
                       models print the generated text only (the prompt is the
                       source). The text is decode(prompt ids + generated ids).
                       Models without a tokenizer, one line per sequence:
                         sequence B: PROMPT_IDS -> GENERATED_IDS
                       ids comma-separated; GENERATED_IDS ends with the eos id when
                       the sequence stopped there. Encoder-decoder models print the
                       source ids as PROMPT_IDS, and GENERATED_IDS leaves out the
                       decoder start token.
                       Then one line on stderr: prompt and generated tokens,
                       prefill and decode tokens/s, planned arena bytes, peak RSS.

Chat (decoder-only models with a chat template):
  --chat               user turns from stdin, one per line (empty lines skipped,
                       EOF ends the chat); each answer streamed to stdout, then a
                       newline. The model's chat template renders the whole
                       conversation (add_generation_prompt true); the KV cache is
                       kept between turns and only the new tokens are fed (when a
                       template rewrites earlier turns, the conversation is run
                       again, with a note on stderr). The text of a message is
                       plain text: a special token's string typed in a message is
                       not that token. Sampling flags as above; --generate N is
                       the most tokens per answer (default 512). At EOF, the stats
                       line of the whole chat on stderr.
  --system TEXT        a system message first
  --context N          tokens the conversation may hold, 1 to 1000000 (default: the
                       model's positions, at most 2048); a turn that does not fit
                       ends the chat with a message (exit 1), an answer is cut
                       where the context is full

Attention maps (one forward pass; not with --generate):
  --attention-map OUT.png   write a PNG heatmap of one layer's attention weights:
                       rows are queries, columns keys, labelled with the tokens'
                       text (spaces shown as U+2423) when the model has a
                       tokenizer, else with the ids;
                       masked keys (the future of a causal row, padding, outside
                       a sliding window) are black
  --layer L            layer to draw, from 0 (default: the last layer of the stack)
  --head H             head to draw, from 0 (default: all heads, tiled)
  --cross              encoder-decoder models: the decoder's cross-attention
                       (queries: --decoder-ids, keys: --ids)
  --stack S            encoder-decoder models: the self-attention of the encoder
                       or the decoder (default: decoder)
  --sequence N         the sequence of the batch to draw, from 0; needed when
                       there are several --ids (default: 0 for one)

  -h, --help           show this help

Exit status: 0 on success, 2 for a wrong command line, 1 for any other failure
(one line on stderr).
)";

constexpr uint64_t kMaxThreads = 256;  // octet_session_options.threads
// Bounds for parsing only: the model says what is in range.
constexpr uint64_t kMaxVocab = uint64_t{1} << 24;
constexpr uint64_t kMaxLayers = 1024;
constexpr uint64_t kMaxHeads = 1024;
constexpr uint64_t kMaxGenerate = 1000000;


const std::vector<OptionSpec>& Options() {
  static const std::vector<OptionSpec> kOptions = {
      RepeatedOption("--ids"),      RepeatedOption("--decoder-ids"), ValueOption("--dump"),
      ValueOption("--threads"),     ValueOption("--generate"),
      ValueOption("--temperature"), ValueOption("--top-k"),          ValueOption("--top-p"),
      ValueOption("--seed"),        ValueOption("--attention-map"),  ValueOption("--layer"),
      ValueOption("--head"),        ValueOption("--pooling"),        SwitchOption("--cross"),
      ValueOption("--stack"),       ValueOption("--sequence"),       RepeatedOption("--prompt"),
      SwitchOption("--chat"),       ValueOption("--system"),         ValueOption("--context"),
      SwitchOption("--verbose"),
  };
  return kOptions;
}

// Everything that can be checked without the model.
RunRequest ParseRequest(const ParsedArgs& args) {
  RunRequest r;
  r.model_path = args.positionals[0];
  for (const std::string& text : args.Values("--ids")) r.ids.push_back(ParseIdList("--ids", text));
  for (const std::string& text : args.Values("--decoder-ids")) {
    r.decoder_ids.push_back(ParseIdList("--decoder-ids", text));
  }
  if (args.Has("--threads")) {
    r.threads =
        static_cast<uint32_t>(ParseUint("--threads", args.Value("--threads"), 0, kMaxThreads));
  }
  if (args.Has("--dump")) {
    r.dump_path = args.Value("--dump");
    if (r.dump_path.empty()) throw UsageError("--dump needs a file name");
  }

  // Input: --ids, --prompt or --chat.
  r.prompts = args.Values("--prompt");
  r.chat = args.Switch("--chat");
  r.verbose = args.Switch("--verbose");
  for (const std::string& p : r.prompts) {
    if (p.empty()) throw UsageError("--prompt is empty");
  }
  if (!r.prompts.empty() && !r.ids.empty()) {
    throw UsageError("give either --ids or --prompt, not both");
  }
  if (r.chat) {
    if (!r.ids.empty() || !r.prompts.empty()) {
      throw UsageError("--chat reads the user's turns from stdin; it does not take --ids or "
                       "--prompt");
    }
    for (const char* flag : {"--decoder-ids", "--dump", "--pooling", "--attention-map"}) {
      if (args.Has(flag)) throw UsageError(std::string(flag) + " does not combine with --chat");
    }
    if (args.Has("--system")) {
      r.has_system = true;
      r.system = args.Value("--system");
    }
    if (args.Has("--context")) {
      r.context = ParseUint("--context", args.Value("--context"), 1, kMaxGenerate);
    }
  } else {
    for (const char* flag : {"--system", "--context"}) {
      if (args.Has(flag)) throw UsageError(std::string(flag) + " needs --chat");
    }
    if (r.ids.empty() && r.prompts.empty()) {
      throw UsageError("missing --ids or --prompt (one per sequence, e.g. --ids 5,17,42; see "
                       "'octet run --help')");
    }
  }
  const size_t sequences = r.ids.size() + r.prompts.size();  // one of them is empty
  if (!r.decoder_ids.empty() && r.decoder_ids.size() != sequences) {
    throw UsageError("got " + std::to_string(sequences) + " --ids but " +
                     std::to_string(r.decoder_ids.size()) +
                     " --decoder-ids; give one --decoder-ids per --ids");
  }

  // Generation and sampling.
  if (args.Has("--generate")) {
    r.generate = ParseUint("--generate", args.Value("--generate"), 1, kMaxGenerate);
  }
  if (args.Has("--temperature")) {
    r.temperature = ParseDouble("--temperature", args.Value("--temperature"), 0, 100);
  }
  if (args.Has("--top-k")) r.top_k = ParseUint("--top-k", args.Value("--top-k"), 0, kMaxVocab);
  if (args.Has("--top-p")) {
    r.top_p = ParseDouble("--top-p", args.Value("--top-p"), 0, 1);
    if (r.top_p <= 0) throw UsageError("--top-p " + args.Value("--top-p") + " must be above 0");
  }
  if (args.Has("--seed")) r.seed = ParseUint("--seed", args.Value("--seed"), 0, UINT64_MAX);
  if (r.chat) {
    // Sampling flags and --generate apply per answer.
  } else if (r.generate == 0) {
    for (const char* flag : {"--temperature", "--top-k", "--top-p", "--seed", "--verbose"}) {
      if (args.Has(flag)) throw UsageError(std::string(flag) + " needs --generate N or --chat");
    }
  } else if (!r.dump_path.empty()) {
    throw UsageError("--dump writes one forward pass; it does not combine with --generate");
  } else if (!r.decoder_ids.empty()) {
    throw UsageError("--decoder-ids does not combine with --generate (the decoder starts from "
                     "the model's decoder start token)");
  }

  // Sentence embeddings.
  if (args.Has("--pooling")) {
    const std::string& kind = args.Value("--pooling");
    if (kind != "cls" && kind != "mean") {
      throw UsageError("--pooling " + kind + ": give cls or mean");
    }
    r.pooled = true;
    r.pooling = kind == "cls" ? OCTET_POOLING_CLS : OCTET_POOLING_MEAN;
    if (r.generate != 0) throw UsageError("--pooling does not combine with --generate");
  }

  // Attention map.
  if (args.Has("--attention-map")) {
    r.attention_map_path = args.Value("--attention-map");
    if (r.attention_map_path.empty()) throw UsageError("--attention-map needs a file name");
    if (r.generate != 0) {
      throw UsageError("--attention-map draws one forward pass; it does not combine with "
                       "--generate");
    }
    if (args.Has("--layer")) {
      r.layer = static_cast<int64_t>(ParseUint("--layer", args.Value("--layer"), 0, kMaxLayers - 1));
    }
    if (args.Has("--head")) {
      r.head = static_cast<int64_t>(ParseUint("--head", args.Value("--head"), 0, kMaxHeads - 1));
    }
    r.cross = args.Switch("--cross");
    if (args.Has("--stack")) {
      const std::string& stack = args.Value("--stack");
      if (stack != "encoder" && stack != "decoder") {
        throw UsageError("--stack " + stack + ": give encoder or decoder");
      }
      r.encoder_stack = stack == "encoder";
      if (r.encoder_stack && r.cross) {
        throw UsageError("--cross is the decoder's cross-attention; it does not combine with "
                         "--stack encoder");
      }
    }
    if (args.Has("--sequence")) {
      r.sequence = static_cast<int64_t>(
          ParseUint("--sequence", args.Value("--sequence"), 0, std::max<size_t>(sequences, 1) - 1));
    } else if (sequences > 1) {
      throw UsageError("--attention-map draws one sequence: give --sequence N (0 to " +
                       std::to_string(sequences - 1) + ") for a batch of " +
                       std::to_string(sequences));
    }
  } else {
    for (const char* flag : {"--layer", "--head", "--cross", "--stack", "--sequence"}) {
      if (args.Has(flag)) throw UsageError(std::string(flag) + " needs --attention-map OUT.png");
    }
  }
  return r;
}

void CheckIds(const std::string& flag, const std::vector<std::vector<int32_t>>& batch,
              const octet_model_info& arch) {
  for (size_t b = 0; b < batch.size(); ++b) {
    const std::string which = flag + " #" + std::to_string(b + 1);
    for (int32_t id : batch[b]) {
      if (static_cast<uint32_t>(id) >= arch.vocab_size) {
        throw UsageError(which + ": token id " + std::to_string(id) +
                         " is out of range (the model's vocab_size is " +
                         std::to_string(arch.vocab_size) + ")");
      }
    }
    if (arch.max_positions != 0 && batch[b].size() > arch.max_positions) {
      throw UsageError(which + " has " + std::to_string(batch[b].size()) +
                       " tokens; the model takes at most " + std::to_string(arch.max_positions) +
                       " (max_positions)");
    }
  }
}

// What depends on the model: ids in range, the right inputs for its structure.
void CheckAgainstModel(const RunRequest& r, const api::Model& model) {
  const octet_model_info arch = model.info();
  const int32_t structure = arch.structure;
  CheckIds(r.prompts.empty() ? "--ids" : "--prompt", r.ids, arch);
  CheckIds("--decoder-ids", r.decoder_ids, arch);
  if (structure == OCTET_ENCODER_DECODER) {
    if (r.generate == 0 && r.decoder_ids.empty()) {
      throw UsageError(
          "this is an encoder-decoder model: give one --decoder-ids per --ids "
          "(starting with the decoder start token " +
          std::to_string(arch.decoder_start_token_id) + ")");
    }
  } else if (!r.decoder_ids.empty()) {
    throw UsageError("--decoder-ids is for encoder-decoder models; this one is " +
                     StructureName(structure));
  }
  if (r.generate != 0 && structure == OCTET_ENCODER_ONLY) {
    throw UsageError("--generate needs a decoder; this model is encoder-only");
  }
  if (r.generate != 0 && structure == OCTET_ENCODER_DECODER &&
      arch.positions_bounded != 0 && 1 + r.generate > arch.max_positions) {
    throw UsageError("--generate " + std::to_string(r.generate) +
                     " with the decoder start token exceeds the model's " +
                     std::to_string(arch.max_positions) + " positions");
  }
  if (r.generate != 0 && structure == OCTET_DECODER_ONLY &&
      arch.positions_bounded != 0) {
    for (size_t b = 0; b < r.ids.size(); ++b) {
      if (r.ids[b].size() + r.generate > arch.max_positions) {
        throw UsageError((r.prompts.empty() ? "--ids #" : "--prompt #") + std::to_string(b + 1) +
                         " has " +
                         std::to_string(r.ids[b].size()) + " tokens; with --generate " +
                         std::to_string(r.generate) + " that exceeds the model's " +
                         std::to_string(arch.max_positions) + " positions");
      }
    }
  }
  if (r.pooled && structure != OCTET_ENCODER_ONLY) {
    throw UsageError("--pooling gives sentence embeddings of encoder-only models; this one is " +
                     StructureName(structure));
  }
  if (!r.attention_map_path.empty()) {
    const bool enc_dec = structure == OCTET_ENCODER_DECODER;
    if (r.cross && !enc_dec) {
      throw UsageError("--cross needs an encoder-decoder model (cross-attention); this one is " +
                       StructureName(structure));
    }
    if (r.encoder_stack && !enc_dec) {
      throw UsageError("--stack is for encoder-decoder models; this one is " +
                       StructureName(structure));
    }
    const uint32_t layers = enc_dec && !r.encoder_stack ? arch.num_decoder_layers
                                                        : arch.num_layers;
    const std::string stack = !enc_dec ? "" : r.encoder_stack ? " encoder" : " decoder";
    if (layers == 0) {
      throw UsageError("--attention-map needs attention layers; this model has none");
    }
    if (r.layer >= static_cast<int64_t>(layers)) {
      throw UsageError("--layer " + std::to_string(r.layer) + " is out of range (the model's" +
                       stack + " stack has " + std::to_string(layers) + " layers: 0 to " +
                       std::to_string(layers - 1) + ")");
    }
    const uint32_t heads = arch.num_heads;
    if (r.head >= 0 && static_cast<uint64_t>(r.head) >= heads) {
      throw UsageError("--head " + std::to_string(r.head) + " is out of range (the model has " +
                       std::to_string(heads) + " heads: 0 to " + std::to_string(heads - 1) + ")");
    }
    if (!HaveAttentionMaps()) {
      throw Failure("--attention-map: this build has no PNG support (cairo was not found when "
                    "it was built: install libcairo2-dev and rebuild)");
    }
  }
}

// --prompt: the texts through the model's tokenizer, as HF's encode(text)
// (add_special_tokens); encoder-only models then give sentence embeddings.
void EncodePrompts(RunRequest* r, const api::Model& model, TextCodec* codec) {
  if (r->prompts.empty()) return;
  if (codec == nullptr) {
    throw UsageError("--prompt needs a model with a tokenizer; this one has none (use --ids)");
  }
  for (size_t b = 0; b < r->prompts.size(); ++b) {
    std::vector<int32_t> ids = codec->Encode(r->prompts[b], /*add_special_tokens=*/true);
    if (ids.empty()) {
      throw UsageError("--prompt #" + std::to_string(b + 1) + " gives no tokens");
    }
    r->ids.push_back(std::move(ids));
  }
  if (model.info().structure == OCTET_ENCODER_ONLY && !r->pooled &&
      r->attention_map_path.empty()) {
    r->pooled = true;
    r->pooling = OCTET_POOLING_MEAN;
  }
}

void RejectUnimplemented(const RunRequest& r, const api::Model& model) {
  if (r.generate != 0) {
    const octet_model_info arch = model.info();
    if (arch.structure == OCTET_ENCODER_DECODER) {
      if (arch.decoder_start_token_id < 0) {  // the loader checked it is in the vocabulary
        throw Failure("--generate needs the model's decoder start token (decoder_start_token_id); "
                      "this model has none");
      }
    } else if (arch.num_layers == 0) {  // decoder-only: its decoder layers
      throw Failure("--generate needs a model with transformer layers (the KV cache); this one "
                    "has none");
    }
  }
}

// Index of the largest of n values (the first on ties).
uint32_t ArgMax(const float* values, uint32_t n) {
  uint32_t best = 0;
  for (uint32_t i = 1; i < n; ++i) {
    if (values[i] > values[best]) best = i;
  }
  return best;
}

void PrintSummary(const RunRequest& r, const api::Model& model, const octet_output& out) {
  const octet_model_info info = model.info();
  const bool enc_dec = info.structure == OCTET_ENCODER_DECODER;
  const bool decoder = enc_dec || info.structure == OCTET_DECODER_ONLY;
  const std::vector<std::vector<int32_t>>& inputs = enc_dec ? r.decoder_ids : r.ids;
  std::printf("%s: %s, %s\n", r.model_path.c_str(), info.family,
              StructureName(info.structure).c_str());
  std::printf("output: %s float32 [%u, %u, %u]\n",
              enc_dec ? "decoder logits" : decoder ? "logits" : "last hidden state", out.batch,
              out.seq, out.dim);
  for (uint32_t b = 0; b < out.batch; ++b) {
    const uint32_t length = static_cast<uint32_t>(inputs[b].size());
    const float* last = out.data + (static_cast<size_t>(b) * out.seq + (length - 1)) * out.dim;
    if (decoder) {
      const uint32_t next = ArgMax(last, out.dim);
      std::printf("sequence %u: %u tokens; next token (argmax at position %u): %u (logit %.6g)\n",
                  b, length, length - 1, next, static_cast<double>(last[next]));
    } else {
      const float* first = out.data + static_cast<size_t>(b) * out.seq * out.dim;
      double norm = 0.0;
      for (uint32_t i = 0; i < out.dim; ++i) norm += static_cast<double>(first[i]) * first[i];
      std::printf("sequence %u: %u tokens; hidden state at position 0: L2 norm %.6g\n", b, length,
                  std::sqrt(norm));
    }
  }
}

// Sentence embeddings without --dump: their shape, and per sequence its norm
// and first values.
void PrintEmbeddings(const RunRequest& r, const float* pooled, uint32_t batch, uint32_t dim) {
  std::printf("output: sentence embeddings (%s pooling) float32 [%u, %u]\n",
              r.pooling == OCTET_POOLING_CLS ? "cls" : "mean", batch, dim);
  for (uint32_t b = 0; b < batch; ++b) {
    const float* e = pooled + static_cast<size_t>(b) * dim;
    double norm = 0.0;
    for (uint32_t i = 0; i < dim; ++i) norm += static_cast<double>(e[i]) * e[i];
    std::printf("sequence %u: L2 norm %.6g; first values", b, std::sqrt(norm));
    for (uint32_t i = 0; i < dim && i < 4; ++i) std::printf(" %.6g", static_cast<double>(e[i]));
    std::printf("\n");
  }
}

// The capture for the request (CheckAgainstModel checked the layer).
octet_attention_capture CaptureRequest(const RunRequest& r, const api::Model& model) {
  const octet_model_info arch = model.info();
  const bool enc_dec = arch.structure == OCTET_ENCODER_DECODER;
  octet_attention_capture c{};
  c.struct_size = sizeof(c);
  c.stack = !enc_dec ? OCTET_STACK_MODEL : r.encoder_stack ? OCTET_STACK_ENCODER
                                                           : OCTET_STACK_DECODER;
  c.cross = r.cross ? 1 : 0;
  const uint32_t layers = enc_dec && !r.encoder_stack ? arch.num_decoder_layers : arch.num_layers;
  c.layer = r.layer >= 0 ? static_cast<uint32_t>(r.layer) : layers - 1;
  return c;
}

// Token labels: the tokens' text when the model has a tokenizer, else the ids.
std::vector<std::string> TokenLabels(const std::vector<int32_t>& ids, TextCodec* codec) {
  std::vector<std::string> labels;
  for (int32_t id : ids) labels.push_back(codec != nullptr ? codec->Label(id) : std::to_string(id));
  return labels;
}

// The heatmap of the captured probabilities: the chosen sequence, its real
// tokens only, the chosen head or all of them.
void DrawAttention(const RunRequest& r, const api::Model& model, const octet_attention_capture& c,
                   TextCodec* codec) {
  const bool enc_dec = model.info().structure == OCTET_ENCODER_DECODER;
  const uint32_t b = r.sequence >= 0 ? static_cast<uint32_t>(r.sequence) : 0;
  const std::vector<int32_t>& sources = r.ids[b];
  const std::vector<int32_t>& queries = enc_dec && !r.encoder_stack ? r.decoder_ids[b] : sources;
  const std::vector<int32_t>& keys = enc_dec && !r.encoder_stack && !r.cross ? queries : sources;
  AttentionMapSpec spec;
  spec.q_len = static_cast<uint32_t>(queries.size());
  spec.k_len = static_cast<uint32_t>(keys.size());
  spec.query_labels = TokenLabels(queries, codec);
  spec.key_labels = TokenLabels(keys, codec);
  const uint32_t first = r.head >= 0 ? static_cast<uint32_t>(r.head) : 0;
  const uint32_t last = r.head >= 0 ? first + 1 : c.heads;
  std::vector<float> panels;  // [heads drawn, q_len, k_len]: the real tokens of sequence b
  for (uint32_t h = first; h < last; ++h) {
    spec.heads.push_back(h);
    for (uint32_t i = 0; i < spec.q_len; ++i) {
      const float* row = c.probs + ((static_cast<size_t>(b) * c.heads + h) * c.q_len + i) * c.k_len;
      panels.insert(panels.end(), row, row + spec.k_len);
    }
  }
  spec.probs = panels.data();
  spec.panels = last - first;
  spec.mixing = c.kind == OCTET_CAPTURE_MIXING;
  const std::string what = spec.mixing ? "linear attention (token mixing)"
                           : r.cross   ? "cross-attention"
                           : !enc_dec  ? "self-attention"
                           : r.encoder_stack ? "encoder self-attention"
                                             : "decoder self-attention";
  const std::string heads_word = spec.mixing ? " value heads" : " heads";
  spec.title = "layer " + std::to_string(c.layer) + " " + what + ", " +
               (r.head >= 0 ? "head " + std::to_string(r.head)
                            : "all " + std::to_string(c.heads) + heads_word) +
               (r.ids.size() > 1 ? ", sequence " + std::to_string(b) : "");
  WriteAttentionMap(spec, r.attention_map_path);
  std::printf("wrote %s: %s [%u heads, %u queries, %u keys]\n", r.attention_map_path.c_str(),
              spec.title.c_str(), spec.panels, spec.q_len, spec.k_len);
}

void Forward(const RunRequest& r, const api::Model& model, TextCodec* codec) {
  const octet_model_info info = model.info();
  const auto batch = static_cast<uint32_t>(r.ids.size());
  const int32_t pad = std::max(info.pad_token_id, 0);
  std::vector<int32_t> ids, dec_ids;
  std::vector<uint32_t> lengths, dec_lengths;
  const uint32_t seq = Pad(r.ids, pad, &ids, &lengths);
  const bool enc_dec = info.structure == OCTET_ENCODER_DECODER;
  const uint32_t dec_seq = enc_dec ? Pad(r.decoder_ids, pad, &dec_ids, &dec_lengths) : 0;

  octet_session_options limits = api::SessionOptions();
  limits.max_batch = batch;
  limits.max_seq = std::max(seq, dec_seq);
  limits.max_new_tokens = 0;
  limits.threads = r.threads;
  limits.flags = OCTET_SESSION_ALL_LOGITS;  // --dump writes every position
  api::Session session = OpenSession(model, limits);
  std::vector<float> probs;  // the attention capture's [batch, heads, q_len, k_len]
  octet_attention_capture capture{};
  if (!r.attention_map_path.empty()) {
    capture = CaptureRequest(r, model);
    const uint32_t q_len = enc_dec && !r.encoder_stack ? dec_seq : seq;
    const uint32_t k_len = enc_dec && !r.encoder_stack && !r.cross ? dec_seq : seq;
    probs.resize(static_cast<size_t>(batch) * info.num_heads * q_len * k_len);
    capture.probs = probs.data();
    capture.capacity = probs.size();
    const api::Status armed = session.CaptureAttention(&capture);
    if (!armed.ok()) throw Failure("--attention-map: " + StatusText(armed));
  }

  // A capture over more heads than the attention's (a linear attention's value
  // heads): the run reported the shape it needs before computing; again with it.
  const auto resized = [&](const api::Status& st) {
    if (r.attention_map_path.empty() || st.code != OCTET_BUFFER_TOO_SMALL || capture.heads == 0) {
      return false;
    }
    probs.resize(static_cast<size_t>(capture.batch) * capture.heads * capture.q_len *
                 capture.k_len);
    capture.probs = probs.data();
    capture.capacity = probs.size();
    const api::Status armed = session.CaptureAttention(&capture);
    if (!armed.ok()) throw Failure("--attention-map: " + StatusText(armed));
    return true;
  };

  if (r.pooled) {
    std::vector<float> pooled;  // [batch, hidden]
    api::Status embedded = session.Embed(ids, lengths, seq, r.pooling, 0, &pooled);
    if (resized(embedded)) embedded = session.Embed(ids, lengths, seq, r.pooling, 0, &pooled);
    Check(embedded, "the forward pass");
    if (!r.attention_map_path.empty()) DrawAttention(r, model, capture, codec);
    if (r.dump_path.empty()) {
      PrintEmbeddings(r, pooled.data(), batch, info.hidden_size);
      return;
    }
    WriteNpyFloat32(r.dump_path, pooled.data(), {batch, info.hidden_size});
    std::printf("wrote %s: float32 [%u, %u]\n", r.dump_path.c_str(), batch, info.hidden_size);
    return;
  }
  const auto run = [&] {
    return enc_dec ? session.RunEncoderDecoder(ids, lengths, seq, dec_ids, dec_lengths, dec_seq)
                   : session.Run(ids, lengths, seq);
  };
  api::Status status = run();
  if (resized(status)) status = run();
  if (!status.ok()) throw Failure("forward pass failed: " + StatusText(status));
  const uint32_t out_seq = enc_dec ? dec_seq : seq;
  const octet_output out = session.output();
  if (out.data == nullptr || out.batch != batch || out.seq != out_seq || out.dim == 0) {
    throw Failure("internal error: the session returned an output of shape [" +
                  std::to_string(out.batch) + ", " + std::to_string(out.seq) + ", " +
                  std::to_string(out.dim) + "] for a batch of [" + std::to_string(batch) + ", " +
                  std::to_string(out_seq) + "]");
  }

  if (!r.attention_map_path.empty()) DrawAttention(r, model, capture, codec);
  if (r.dump_path.empty()) {
    PrintSummary(r, model, out);
    return;
  }
  WriteNpyFloat32(r.dump_path, out.data, {out.batch, out.seq, out.dim});
  std::printf("wrote %s: float32 [%u, %u, %u]\n", r.dump_path.c_str(), out.batch, out.seq, out.dim);
}

}  // namespace

int RunCommand(const std::vector<std::string>& args) {
  const ParsedArgs parsed = ParseArgs("octet run", Options(), args, 1, 1, "MODEL");
  if (parsed.help) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  RunRequest request = ParseRequest(parsed);
  const api::Model model = OpenModel(request.model_path);
  const std::unique_ptr<TextCodec> codec = TextCodec::ForModel(model);
  if (request.chat) {
    if (codec == nullptr) {
      throw UsageError("--chat needs a model with a tokenizer and a chat template; this one "
                       "has no tokenizer");
    }
    Chat(request, model, *codec);
    return kExitOk;
  }
  EncodePrompts(&request, model, codec.get());
  CheckAgainstModel(request, model);
  RejectUnimplemented(request, model);
  if (request.generate != 0) {
    Generate(request, model, codec.get());
  } else {
    Forward(request, model, codec.get());
  }
  return kExitOk;
}

}  // namespace cli
}  // namespace octet
