// octet run --chat: user turns from stdin, answers streamed, the model's chat
// template applied to the whole conversation each turn, the KV cache kept.
//
// Which tokens are the template's and which are the user's: the conversation
// is rendered twice, once as it is and once with every message's content
// replaced by a placeholder. The placeholder render gives the template's own
// text, whose special-token strings become special ids; the message contents
// are encoded with split_special_tokens, so "<|im_start|>" typed in a message
// stays plain text. Text between two template specials is encoded as one
// piece, as Hugging Face does for the rendered string, so a conversation
// without special strings in its messages gets the ids apply_chat_template
// gives. An assistant message is the ids the model generated (they are in
// the KV cache), not a re-encoding of their text.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include "cli/api_util.h"
#include "cli/args.h"
#include "cli/chat_messages.h"
#include "cli/run.h"

namespace octet {
namespace cli {
namespace {

constexpr uint64_t kDefaultAnswerTokens = 512;
constexpr uint32_t kDefaultContext = 2048;

// A message the chat cannot send safely: reported, and the chat goes on.
class Refusal : public Failure {
 public:
  explicit Refusal(const std::string& what) : Failure(what) {}
};

struct SpecialToken {
  std::string content;
  int32_t id;
  bool lstrip;
  bool rstrip;
};

// Private-use characters around the message index: no template writes them.
const char kOpen[] = "\xEE\x80\x80";   // U+E000
const char kClose[] = "\xEE\x80\x81";  // U+E001

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
void TrimLeft(std::string* s) {
  size_t i = 0;
  while (i < s->size() && IsSpace((*s)[i])) ++i;
  s->erase(0, i);
}
void TrimRight(std::string* s) {
  while (!s->empty() && IsSpace(s->back())) s->pop_back();
}
std::string Trimmed(std::string s) {
  TrimRight(&s);
  TrimLeft(&s);
  return s;
}

// A piece of the placeholder render: template text, or message `index`.
struct Piece {
  bool message = false;
  size_t index = 0;
  std::string text;
};

// Splits the placeholder render; false when it does not parse as template
// text and placeholders of existing messages.
bool SplitPlaceholders(const std::string& render, size_t messages, std::vector<Piece>* pieces) {
  size_t at = 0;
  for (;;) {
    const size_t open = render.find(kOpen, at);
    if (open == std::string::npos) break;
    if (open > at) pieces->push_back({false, 0, render.substr(at, open - at)});
    const size_t digits = open + sizeof(kOpen) - 1;
    const size_t close = render.find(kClose, digits);
    if (close == std::string::npos || close == digits || close - digits > 9) return false;
    size_t index = 0;
    for (size_t i = digits; i < close; ++i) {
      if (render[i] < '0' || render[i] > '9') return false;
      index = index * 10 + static_cast<size_t>(render[i] - '0');
    }
    if (index >= messages) return false;
    pieces->push_back({true, index, ""});
    at = close + sizeof(kClose) - 1;
  }
  if (at < render.size()) pieces->push_back({false, 0, render.substr(at)});
  return true;
}

class Conversation {
 public:
  Conversation(TextCodec& codec, const std::tm* now) : codec_(codec) {
    octet_chat_options_init(&options_);
    options_.now = now;
    for (const octet_special_token& a : codec.Specials()) {
      specials_.push_back({std::string(a.content, a.content_len), a.id, a.lstrip != 0,
                           a.rstrip != 0});
    }
    // Longest first: the scan takes the first that matches.
    std::stable_sort(specials_.begin(), specials_.end(),
                     [](const SpecialToken& a, const SpecialToken& b) {
                       return a.content.size() > b.content.size();
                     });
  }

  void Add(const std::string& role, const std::string& content) {
    messages_.push_back({role, content});
    ids_.emplace_back();
    has_ids_.push_back(false);
  }
  void AddAnswer(const std::vector<int32_t>& ids) {
    messages_.push_back({"assistant", codec_.Decode(ids, /*skip_special_tokens=*/true)});
    ids_.push_back(ids);
    has_ids_.push_back(true);
  }
  void DropLast() {
    messages_.pop_back();
    ids_.pop_back();
    has_ids_.pop_back();
  }

  // The ids of the whole conversation, ending with the generation prompt.
  std::vector<int32_t> Ids() {
    std::string render;
    const api::Status rendered = Render(messages_, &render);
    if (!rendered.ok()) throw Failure("chat template: " + rendered.message);
    std::vector<ChatTurn> masked = messages_;
    for (size_t k = 0; k < masked.size(); ++k) {
      masked[k].content = kOpen + std::to_string(k) + kClose;
    }
    std::vector<Piece> pieces;
    std::string placeholders;
    // A template that looks into the contents fails on placeholders: then none.
    const bool split = Render(masked, &placeholders).ok() &&
                       SplitPlaceholders(placeholders, messages_.size(), &pieces);
    // The template may trim the contents (Llama 3 does): try both.
    for (const bool trim : {false, true}) {
      if (!split) break;
      std::string joined;
      for (const Piece& p : pieces) {
        joined += !p.message ? p.text : trim ? Trimmed(messages_[p.index].content)
                                             : messages_[p.index].content;
      }
      if (joined == render) return Segmented(pieces, trim);
    }
    // The template transforms the contents some other way: encode the render
    // as it is, unless a message holds a special token's string.
    for (size_t k = 0; k < messages_.size(); ++k) {
      if (has_ids_[k]) continue;
      for (const SpecialToken& s : specials_) {
        if (messages_[k].content.find(s.content) != std::string::npos) {
          throw Refusal("the message holds the special token " + s.content +
                        ", and this chat template changes message text in a way that octet "
                        "cannot keep apart from its own tokens");
        }
      }
    }
    return codec_.Encode(render, /*add_special_tokens=*/false);
  }

 private:
  api::Status Render(const std::vector<ChatTurn>& messages, std::string* text) const {
    std::vector<std::pair<std::string, std::string>> m;
    for (const ChatTurn& t : messages) m.emplace_back(t.role, t.content);
    return codec_.model().RenderChat(m, &options_, text);
  }

  std::vector<int32_t> Segmented(const std::vector<Piece>& pieces, bool trim) {
    std::vector<int32_t> out;
    std::string pending;      // text up to the next special or answer
    bool strip_next = false;  // the last special takes the whitespace after it (rstrip)
    auto flush = [&] {
      if (pending.empty()) return;
      const std::vector<int32_t> ids =
          codec_.Encode(pending, /*add_special_tokens=*/false, /*split_special_tokens=*/true);
      out.insert(out.end(), ids.begin(), ids.end());
      pending.clear();
    };
    auto add_text = [&](std::string text) {
      if (strip_next) {
        TrimLeft(&text);
        if (!text.empty()) strip_next = false;
      }
      pending += text;
    };
    for (const Piece& p : pieces) {
      if (p.message) {
        if (has_ids_[p.index]) {
          flush();
          out.insert(out.end(), ids_[p.index].begin(), ids_[p.index].end());
          strip_next = false;
        } else {
          add_text(trim ? Trimmed(messages_[p.index].content) : messages_[p.index].content);
        }
        continue;
      }
      size_t start = 0, i = 0;
      while (i < p.text.size()) {
        const SpecialToken* match = nullptr;
        for (const SpecialToken& s : specials_) {
          if (p.text.compare(i, s.content.size(), s.content) == 0) {
            match = &s;
            break;
          }
        }
        if (match == nullptr) {
          ++i;
          continue;
        }
        add_text(p.text.substr(start, i - start));
        if (match->lstrip) TrimRight(&pending);
        flush();
        out.push_back(match->id);
        strip_next = match->rstrip;
        i += match->content.size();
        start = i;
      }
      add_text(p.text.substr(start));
    }
    flush();
    return out;
  }

  TextCodec& codec_;
  octet_chat_options options_;
  std::vector<SpecialToken> specials_;
  std::vector<ChatTurn> messages_;
  std::vector<std::vector<int32_t>> ids_;  // per message: the generated ids of an answer
  std::vector<bool> has_ids_;
};

// One answer of the chat.
struct Answer {
  std::vector<int32_t> ids;  // without the eos id that ended it
  int32_t last = 0;          // the last sampled id (eos or not)
  uint32_t sampled = 0;      // ids sampled, eos included
  bool eos = false;          // an eos id ended it
};

// octet_generate_continue: samples from what the prompt left and steps each
// token but the last, up to options.max_new_tokens; it stops at an eos id,
// which the template closes the turn with. Each id's text goes to `stream`;
// the first sample ends the prefill time (from *start), the decode time then
// starts (*start).
Answer GenerateAnswer(api::Session& session, const octet_generate_options& options,
                      uint64_t* rng, TextStream* stream, GenerationStats* stats, int64_t* start) {
  Answer answer;
  bool first = true;
  std::vector<uint32_t> counts;
  const api::Status generated = session.GenerateContinue(
      options,
      [&](const octet_token_event& e) {
        if (e.id < 0) return true;  // the generator's own text stream: not used
        if (first) {
          stats->prefill_seconds += SecondsSince(*start);
          *start = NowNanos();
          first = false;
        }
        answer.last = e.id;
        answer.eos = e.is_eos != 0;
        if (!answer.eos) {
          answer.ids.push_back(e.id);
          stream->Push(e.id);
        }
        return true;
      },
      rng, &counts);
  Check(generated, "generation");
  answer.sampled = counts.empty() ? 0 : counts[0];
  stats->generated_tokens += answer.sampled;
  if (answer.sampled > 0) stats->decode_tokens += answer.sampled - 1;
  return answer;
}

}  // namespace

void Chat(const RunRequest& r, const api::Model& model, TextCodec& codec) {
  const octet_model_info info = model.info();
  if (info.structure != OCTET_DECODER_ONLY || info.num_layers == 0) {
    throw UsageError("--chat needs a decoder-only model with transformer layers; this one is " +
                     StructureName(info.structure));
  }
  if (info.has_chat_template == 0) {
    throw UsageError("--chat needs a chat template; this model has none (its checkpoint had "
                     "none in tokenizer_config.json)");
  }
  const bool learned = info.positions_bounded != 0;
  uint64_t context = r.context;
  if (context == 0) {
    context = info.max_positions != 0 ? std::min(info.max_positions, kDefaultContext)
                                      : kDefaultContext;
  } else if (learned && context > info.max_positions) {
    throw UsageError("--context " + std::to_string(context) + " exceeds the model's " +
                     std::to_string(info.max_positions) + " positions");
  }
  const uint64_t answer_max = r.generate != 0 ? r.generate : kDefaultAnswerTokens;

  octet_session_options limits = api::SessionOptions();
  limits.max_batch = 1;
  limits.max_seq = static_cast<uint32_t>(context);
  limits.max_new_tokens = 0;  // answers live in max_seq too: the context is the limit
  limits.threads = r.threads;
  api::Session session = OpenSession(model, limits);
  octet_generate_options options = api::GenerateOptions();
  options.temperature = static_cast<float>(r.temperature);
  options.top_k = static_cast<uint32_t>(std::min<uint64_t>(r.top_k, UINT32_MAX));
  options.top_p = static_cast<float>(r.top_p);
  uint64_t rng = r.seed;  // one random stream for every answer

  // One clock reading for the whole chat: a template that prints the date
  // renders earlier turns the same way every turn.
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  const std::tm* now_ptr = localtime_r(&now, &local) != nullptr ? &local : nullptr;
  Conversation conversation(codec, now_ptr);
  if (r.has_system) conversation.Add("system", r.system);

  GenerationStats stats;
  stats.arena_bytes = session.arena_bytes();
  std::vector<int32_t> cached;  // the ids in the KV cache
  const bool interactive = isatty(fileno(stdin)) != 0;
  std::string line;
  for (;;) {
    if (interactive) {
      std::fputs("> ", stderr);
      std::fflush(stderr);
    }
    if (!std::getline(std::cin, line)) break;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const size_t valid = ValidUtf8Prefix(line.data(), line.size());
    if (valid != line.size()) {
      std::fprintf(stderr, "octet: the line is not valid UTF-8 (at byte %zu); message not sent\n",
                   valid);
      continue;
    }
    conversation.Add("user", line);
    std::vector<int32_t> ids;
    try {
      ids = conversation.Ids();
    } catch (const Refusal& e) {
      std::fprintf(stderr, "octet: %s; message not sent\n", e.what());
      conversation.DropLast();
      continue;
    }
    if (ids.size() > context) {
      throw Failure("the conversation needs " + std::to_string(ids.size()) +
                    " tokens, more than the context of " + std::to_string(context) +
                    " (--context); the chat ends here");
    }
    if (cached.size() > ids.size() || !std::equal(cached.begin(), cached.end(), ids.begin())) {
      std::fprintf(stderr,
                   "octet: the chat template rendered earlier turns differently; running the "
                   "whole conversation again (%zu tokens)\n",
                   ids.size());
      cached.clear();
    }

    // The new tokens: the whole conversation in one pass the first time (or
    // after a re-render), else appended after the cached ones in one Extend.
    int64_t start = NowNanos();
    const auto fresh = static_cast<uint32_t>(ids.size() - cached.size());
    stats.prompt_tokens += fresh;
    if (cached.empty()) {
      Check(session.Run(ids, {fresh}, fresh), "the prompt");
    } else if (fresh > 0) {
      Check(session.Extend(ids.data() + cached.size(), 1, fresh), "the prompt");
    }
    cached = ids;
    if (r.verbose) std::fprintf(stderr, "chat: context %s\n", JoinIds(cached).c_str());

    const uint64_t room = context - cached.size();  // steps the session still holds
    options.max_new_tokens = static_cast<uint32_t>(std::min(answer_max, room + 1));
    TextStream stream(model, /*skip_special_tokens=*/true, stdout);
    const Answer answer = GenerateAnswer(session, options, &rng, &stream, &stats, &start);
    // Every token but the last was stepped into the cache.
    if (answer.sampled > 0) {
      cached.insert(cached.end(), answer.ids.begin(), answer.ids.begin() + (answer.sampled - 1));
    }
    const bool cut = !answer.eos && answer.sampled == room + 1 && room + 1 < answer_max;
    stats.decode_seconds += SecondsSince(start);
    stream.Finish();
    WriteText(stdout, "\n", 1);
    std::fflush(stdout);
    if (cut) {
      std::fprintf(stderr, "octet: the context of %llu tokens is full; the answer is cut\n",
                   static_cast<unsigned long long>(context));
    }
    if (r.verbose) {
      std::vector<int32_t> sampled = answer.ids;  // with the eos id that ended it
      if (!cut && answer.ids.size() < answer_max) sampled.push_back(answer.last);
      std::fprintf(stderr, "chat: answer %s\n", JoinIds(sampled).c_str());
    }
    conversation.AddAnswer(answer.ids);
  }
  PrintStats(stats);
}

}  // namespace cli
}  // namespace octet
