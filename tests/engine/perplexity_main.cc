// octet_perplexity MODEL IDS_FILE [--window 256] [--max-tokens N]
//
// Held-out perplexity of a decoder-only model: the token ids of IDS_FILE
// (whitespace-separated) are cut into non-overlapping windows of --window
// tokens; each window is one forward pass, and every token after the first of
// a window is scored by the log-softmax (in double) of the logits before it.
// Prints the perplexity, the tokens scored, and the KV cache a session for 2048
// tokens plans against what an fp16 cache (K and V, 2 bytes per value) would
// take; a model with no attention layer (RWKV) has none: "no KV cache" and its
// fixed state. Exit 0 on success, 1 on any failure (one line on stderr).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "engine/session.h"
#include "format/model.h"
#include "format/tensor_roles.h"

namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "octet_perplexity: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace octet;
  if (argc < 3) return Fail("usage: octet_perplexity MODEL IDS_FILE [--window N] [--max-tokens N]");
  uint32_t window = 256;
  size_t max_tokens = 0;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--window") == 0) {
      window = static_cast<uint32_t>(std::strtoul(argv[i + 1], nullptr, 10));
    } else if (std::strcmp(argv[i], "--max-tokens") == 0) {
      max_tokens = std::strtoull(argv[i + 1], nullptr, 10);
    } else {
      return Fail(std::string("unknown flag ") + argv[i]);
    }
  }
  if (window < 2) return Fail("--window must be at least 2");
  Result<Model> model = Model::Load(argv[1]);
  if (!model.ok()) return Fail(model.status().message());
  const fb::Architecture& a = model->architecture();
  if (a.structure() != fb::Structure::DecoderOnly) return Fail("not a decoder-only model");
  std::vector<int32_t> ids;
  {
    std::ifstream in(argv[2]);
    if (!in) return Fail(std::string("cannot read ") + argv[2]);
    long id = 0;
    while (in >> id) {
      if (id < 0 || id >= static_cast<long>(a.vocab_size())) return Fail("token id out of range");
      ids.push_back(static_cast<int32_t>(id));
    }
  }
  if (max_tokens != 0 && ids.size() > max_tokens) ids.resize(max_tokens);
  if (ids.size() < 2) return Fail("fewer than 2 token ids");

  SessionLimits limits;
  limits.max_seq = window;
  Result<Session> session = Session::Create(*model, limits);
  if (!session.ok()) return Fail(session.status().message());
  const uint32_t vocab = a.vocab_size();
  double nll = 0;
  size_t scored = 0;
  for (size_t start = 0; start + 1 < ids.size(); start += window) {
    const uint32_t len =
        static_cast<uint32_t>(ids.size() - start < window ? ids.size() - start : window);
    if (len < 2) break;
    const Status s = session->Run(ids.data() + start, &len, 1, len);
    if (!s.ok()) return Fail(s.message());
    const float* logits = session->output().data;  // [len, vocab]
    for (uint32_t t = 0; t + 1 < len; ++t) {
      const float* row = logits + static_cast<size_t>(t) * vocab;
      double max = row[0];
      for (uint32_t v = 1; v < vocab; ++v) max = row[v] > max ? row[v] : max;
      double sum = 0;
      for (uint32_t v = 0; v < vocab; ++v) sum += std::exp(row[v] - max);
      nll -= row[ids[start + t + 1]] - max - std::log(sum);
      ++scored;
    }
  }
  const double ppl = std::exp(nll / static_cast<double>(scored));

  // The KV cache of a 2048-token session against an fp16 one.
  SessionLimits long_limits;
  long_limits.max_seq = 2048;
  Result<SessionPlan> plan = Session::Plan(*model, long_limits);
  if (!plan.ok()) return Fail(plan.status().message());
  const fb::Attention& att = *a.attention();
  // The KV rows of the layers whose token mixer keeps keys and values (a
  // hybrid's others keep a fixed state, also in the KV arena, not compared).
  const double kv = static_cast<double>(plan->kv_bytes_per_position) * 2048.0;
  const double fp16 = 2.0 * plan->kv_layers * 2048.0 * att.num_kv_heads() * att.head_dim() * 2.0;
  std::printf("perplexity %.4f over %zu tokens (window %u)\n", ppl, scored, window);
  if (plan->kv_layers == 0) {
    std::printf("no KV cache (no attention layer): %.0f bytes for 2048 tokens, %zu of fixed "
                "state\n", kv, plan->fixed_state_bytes);
    return 0;
  }
  std::printf("kv cache for 2048 tokens: %.0f bytes (+ %zu of fixed state); fp16 would take %.0f "
              "bytes; ratio %.4f\n", kv, plan->fixed_state_bytes, fp16, kv / fp16);
  return 0;
}
