// llama_logits.cpp: a causal GGUF's logits at every position of given token ids, through
// llama.cpp's C API (the library built for llama-bench), so that the GGUF can be checked
// against torch on the same ids, in one pass or through llama.cpp's caches.
//
// usage: llama-logits MODEL.gguf IDS.txt OUT.bin THREADS [N_FIRST]
//   IDS.txt  token ids, commas or spaces; sequence 0 from position 0
//   N_FIRST  the first N_FIRST ids go in one batch (one ubatch), every later id alone, one
//            llama_decode each, through the KV cache and the recurrent states (default: all
//            ids in one batch)
//   OUT.bin  float32 [n_ids, n_vocab]: every position's logits
// Prints one JSON line: n_tokens, n_first, n_vocab, prefill_ms (the first batch), decode_ms
// (the single steps, all of them). Exit status 1 on any failure.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "llama.h"

namespace {

void QuietLog(ggml_log_level level, const char* text, void*) {
  if (level == GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);
}

bool ReadIds(const char* path, std::vector<llama_token>* ids) {
  std::ifstream f(path);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  for (char& c : s) {
    if (c == ',') c = ' ';
  }
  std::istringstream in(s);
  long v;
  while (in >> v) ids->push_back(static_cast<llama_token>(v));
  return !ids->empty();
}

int Fail(const char* what) {
  std::fprintf(stderr, "llama-logits: %s\n", what);
  return 1;
}

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    std::fprintf(stderr, "usage: %s MODEL.gguf IDS.txt OUT.bin THREADS [N_FIRST]\n", argv[0]);
    return 2;
  }
  std::vector<llama_token> ids;
  if (!ReadIds(argv[2], &ids)) return Fail("cannot read the token ids");
  const int n = static_cast<int>(ids.size());
  const int n_first = argc == 6 ? std::atoi(argv[5]) : n;
  if (n_first < 1 || n_first > n) return Fail("N_FIRST must be 1 to the number of ids");

  llama_log_set(QuietLog, nullptr);
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (model == nullptr) return Fail("cannot load the model");
  const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));

  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = static_cast<uint32_t>(n);
  cp.n_batch = cp.n_ubatch = static_cast<uint32_t>(n_first);  // the first batch in one ubatch
  cp.n_seq_max = 1;
  cp.n_threads = cp.n_threads_batch = std::atoi(argv[4]);
  llama_context* ctx = llama_init_from_model(model, cp);
  if (ctx == nullptr) return Fail("cannot create the context");

  std::vector<float> out(static_cast<size_t>(n) * n_vocab);
  llama_batch batch = llama_batch_init(n_first, 0, 1);
  // Positions [from, to) in one llama_decode, every position's logits copied out.
  auto run = [&](int from, int to) {
    batch.n_tokens = to - from;
    for (int i = from; i < to; ++i) {
      const int j = i - from;
      batch.token[j] = ids[i];
      batch.pos[j] = i;
      batch.n_seq_id[j] = 1;
      batch.seq_id[j][0] = 0;
      batch.logits[j] = 1;
    }
    if (llama_decode(ctx, batch) != 0) return false;
    for (int i = from; i < to; ++i) {
      const float* l = llama_get_logits_ith(ctx, i - from);
      if (l == nullptr) return false;
      std::memcpy(out.data() + static_cast<size_t>(i) * n_vocab, l, sizeof(float) * n_vocab);
    }
    return true;
  };

  auto t0 = std::chrono::steady_clock::now();
  if (!run(0, n_first)) return Fail("llama_decode failed on the first batch");
  const double prefill_ms = MsSince(t0);
  t0 = std::chrono::steady_clock::now();
  for (int i = n_first; i < n; ++i) {
    if (!run(i, i + 1)) return Fail("llama_decode failed on a single token");
  }
  const double decode_ms = n_first < n ? MsSince(t0) : 0.0;

  std::FILE* f = std::fopen(argv[3], "wb");
  if (f == nullptr || std::fwrite(out.data(), sizeof(float), out.size(), f) != out.size() ||
      std::fclose(f) != 0) {
    return Fail("cannot write the output");
  }
  std::printf("{\"n_tokens\": %d, \"n_first\": %d, \"n_vocab\": %d, \"prefill_ms\": %.1f, \"decode_ms\": %.1f}\n",
              n, n_first, n_vocab, prefill_ms, decode_ms);
  llama_batch_free(batch);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
