// llama_embd.cpp: an encoder GGUF's output for given token ids, through llama.cpp's C API (the
// library built for llama-bench), so that the GGUF can be checked against torch on the same ids.
//
// usage: llama-embd MODEL.gguf IDS.txt OUT.bin THREADS {none|mean}
//   IDS.txt  token ids, commas or spaces; all of them go in one batch (one ubatch), sequence 0
//   none     OUT.bin = float32 [n_ids, n_embd]: every token's final hidden state
//   mean     OUT.bin = float32 [n_embd]: the sequence's mean-pooled vector (llama.cpp's pooling)
// Prints one JSON line: n_tokens, n_embd, pooling, decode_ms. Exit status 1 on any failure.
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
  std::fprintf(stderr, "llama-embd: %s\n", what);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s MODEL.gguf IDS.txt OUT.bin THREADS {none|mean}\n", argv[0]);
    return 2;
  }
  const bool mean = std::strcmp(argv[5], "mean") == 0;
  if (!mean && std::strcmp(argv[5], "none") != 0) return Fail("pooling must be none or mean");
  std::vector<llama_token> ids;
  if (!ReadIds(argv[2], &ids)) return Fail("cannot read the token ids");
  const int n = static_cast<int>(ids.size());

  llama_log_set(QuietLog, nullptr);
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (model == nullptr) return Fail("cannot load the model");
  const int n_embd = llama_model_n_embd(model);

  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = cp.n_batch = cp.n_ubatch = static_cast<uint32_t>(n);  // one pass: non-causal needs it
  cp.n_threads = cp.n_threads_batch = std::atoi(argv[4]);
  cp.embeddings = true;
  cp.pooling_type = mean ? LLAMA_POOLING_TYPE_MEAN : LLAMA_POOLING_TYPE_NONE;
  llama_context* ctx = llama_init_from_model(model, cp);
  if (ctx == nullptr) return Fail("cannot create the context");

  llama_batch batch = llama_batch_init(n, 0, 1);
  for (int i = 0; i < n; ++i) {
    batch.token[i] = ids[i];
    batch.pos[i] = i;
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = 0;
    batch.logits[i] = 1;  // every token's output
  }
  batch.n_tokens = n;
  const auto t0 = std::chrono::steady_clock::now();
  if (llama_decode(ctx, batch) != 0) return Fail("llama_decode failed");
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  std::vector<float> out;  // [n, n_embd] or [n_embd]
  if (mean) {
    const float* e = llama_get_embeddings_seq(ctx, 0);
    if (e == nullptr) return Fail("no pooled embedding");
    out.assign(e, e + n_embd);
  } else {
    out.resize(static_cast<size_t>(n) * n_embd);
    for (int i = 0; i < n; ++i) {
      const float* e = llama_get_embeddings_ith(ctx, i);
      if (e == nullptr) return Fail("no embedding for a token");
      std::memcpy(out.data() + static_cast<size_t>(i) * n_embd, e, sizeof(float) * n_embd);
    }
  }
  std::FILE* f = std::fopen(argv[3], "wb");
  if (f == nullptr || std::fwrite(out.data(), sizeof(float), out.size(), f) != out.size() ||
      std::fclose(f) != 0) {
    return Fail("cannot write the output");
  }
  std::printf("{\"n_tokens\": %d, \"n_embd\": %d, \"pooling\": \"%s\", \"decode_ms\": %.1f}\n", n,
              n_embd, argv[5], ms);
  llama_batch_free(batch);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
