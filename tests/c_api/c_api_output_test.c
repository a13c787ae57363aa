/* What runs give: sampling (against a C restatement of the documented
 * semantics, engine/sampling.h), the logits hook, embeddings (against pooling
 * the hidden states by hand) and attention capture. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>

#include "harness.h"

/* ---- Sampling, restated -------------------------------------------------------------
 * splitmix64; a draw is the top 53 bits of one output. Greedy is the argmax (no
 * draw). Candidates: every id, or the top_k largest logits (lower id first on
 * ties); weights exp((logit - max) / temperature) in float, summed in double;
 * top-p keeps the shortest prefix, by decreasing probability, whose sum reaches
 * top_p of the total; the token is the first candidate (that order with top-p,
 * else increasing id) whose cumulative weight exceeds u * total. */

static uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* a before b: the larger logit, the lower id on ties. */
static int ranks_before(const float* logits, uint32_t a, uint32_t b) {
  return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
}

static int32_t reference_sample(const float* logits, uint32_t vocab, float temperature,
                                uint32_t top_k, float top_p, uint64_t* rng) {
  uint32_t index[256];
  float weight[256];
  uint32_t i, j, n = vocab, kept;
  double total = 0.0, target, cumulative;
  float max;
  const int nucleus = top_p < 1.0f;
  REQUIRE(vocab <= 256);
  if (!(temperature > 0.0f) || top_k == 1 || vocab <= 1) return argmax(logits, vocab);
  for (i = 0; i < vocab; ++i) index[i] = i;
  if ((top_k > 0 && top_k < vocab) || nucleus) {
    /* insertion sort by rank */
    for (i = 1; i < vocab; ++i) {
      const uint32_t x = index[i];
      for (j = i; j > 0 && ranks_before(logits, x, index[j - 1]); --j) index[j] = index[j - 1];
      index[j] = x;
    }
    if (top_k > 0 && top_k < vocab) n = top_k;
    if (!nucleus) {
      /* the top_k by id */
      for (i = 1; i < n; ++i) {
        const uint32_t x = index[i];
        for (j = i; j > 0 && x < index[j - 1]; --j) index[j] = index[j - 1];
        index[j] = x;
      }
    }
  }
  max = logits[index[0]];
  for (j = 1; j < n; ++j) max = logits[index[j]] > max ? logits[index[j]] : max;
  for (j = 0; j < n; ++j) {
    weight[j] = expf((logits[index[j]] - max) / temperature);
    total += (double)weight[j];
  }
  kept = n;
  if (nucleus) {
    const double threshold = (double)top_p * total;
    cumulative = 0.0;
    for (j = 0; j < n; ++j) {
      cumulative += (double)weight[j];
      if (cumulative >= threshold) {
        kept = j + 1;
        total = cumulative;
        break;
      }
    }
  }
  target = (double)(splitmix64(rng) >> 11) * (1.0 / 9007199254740992.0) * total;
  cumulative = 0.0;
  j = 0;
  for (i = 0; i < kept; ++i) {
    if (weight[i] <= 0.0f) continue;
    cumulative += (double)weight[i];
    j = i;
    if (target < cumulative) return (int32_t)index[i];
  }
  return (int32_t)index[j];
}

/* ---- Hooks ---------------------------------------------------------------------------- */

typedef struct hook_state {
  int calls;
  uint32_t sequences[8];
  uint32_t vocab;
  int32_t keep; /* >= 0: mask every other id */
  int mask_all; /* mask every id */
  int stop_at;  /* return nonzero on this sequence (-1: never) */
  int poison;   /* write a NaN */
} hook_state;

static int test_hook(void* user, uint32_t sequence, float* logits, uint32_t vocab) {
  hook_state* h = (hook_state*)user;
  uint32_t i;
  if (h->calls < 8) h->sequences[h->calls] = sequence;
  ++h->calls;
  h->vocab = vocab;
  if ((int)sequence == h->stop_at) return 1;
  for (i = 0; i < vocab; ++i) {
    if (h->mask_all || (h->keep >= 0 && (int32_t)i != h->keep)) logits[i] = -INFINITY;
  }
  if (h->poison) logits[3] = NAN;
  return 0;
}

static void reset_hook(hook_state* h) {
  memset(h, 0, sizeof(*h));
  h->keep = -1;
  h->stop_at = -1;
}

/* Runs the fixed prompts: fresh next-token logits in the session. */
static const float* run_prompts(octet_session* session, float* rows /* [2, 64] */) {
  static const int32_t ids[10] = {3, 14, 15, 9, 26, 53, 58, 9, 0, 0}; /* [2, 5] */
  static const uint32_t lengths[2] = {5, 3};
  octet_output out;
  REQUIRE_OK(octet_session_run(session, ids, lengths, 2, 5));
  REQUIRE_OK(octet_session_output(session, &out));
  REQUIRE(out.batch == 2 && out.seq == 1 && out.dim == 64);
  memcpy(rows, out.data, 2 * 64 * sizeof(float));
  return out.data;
}

void test_sampling(void) {
  static const float kTemperatures[4] = {1.0f, 0.7f, 1.5f, 0.05f};
  static const uint32_t kTopK[4] = {0, 5, 40, 2};
  static const float kTopP[4] = {1.0f, 0.9f, 0.5f, 0.99f};
  octet_model* llama = load_model("llama.octet");
  octet_session* session = make_session(llama, 2, 5, 4, 0);
  octet_sampling s;
  hook_state hook;
  float rows[2 * 64];
  int32_t got[2], want[2];
  uint64_t rng, rng_ref;
  int t, k, p, draw;

  run_prompts(session, rows);
  /* Greedy: the argmax, no draw. */
  octet_sampling_init(&s);
  s.temperature = 0.0f;
  rng = 12345;
  EXPECT_OK(octet_session_sample(session, &s, &rng, got));
  EXPECT(got[0] == argmax(rows, 64) && got[1] == argmax(rows + 64, 64));
  EXPECT(rng == 12345);
  s.temperature = 1.0f;
  s.top_k = 1;
  EXPECT_OK(octet_session_sample(session, &s, &rng, got));
  EXPECT(got[0] == argmax(rows, 64) && got[1] == argmax(rows + 64, 64));
  EXPECT(rng == 12345);

  /* Sampled: the restatement's tokens and random state, for each setting. */
  for (t = 0; t < 4; ++t) {
    for (k = 0; k < 4; ++k) {
      for (p = 0; p < 4; ++p) {
        octet_sampling_init(&s);
        s.temperature = kTemperatures[t];
        s.top_k = kTopK[k];
        s.top_p = kTopP[p];
        rng = rng_ref = (uint64_t)(t * 16 + k * 4 + p) * 1000003u;
        for (draw = 0; draw < 8; ++draw) {
          EXPECT_OK(octet_session_sample(session, &s, &rng, got));
          want[0] = reference_sample(rows, 64, s.temperature, s.top_k, s.top_p, &rng_ref);
          want[1] = reference_sample(rows + 64, 64, s.temperature, s.top_k, s.top_p, &rng_ref);
          if (got[0] != want[0] || got[1] != want[1] || rng != rng_ref) {
            fprintf(stderr, "sampling t=%g k=%u p=%g draw %d: got %d %d, restated %d %d\n",
                    s.temperature, s.top_k, s.top_p, draw, got[0], got[1], want[0], want[1]);
            ++g_failures;
          }
        }
      }
    }
  }
  /* Two draws per call, sequence 0 first. */
  rng = 7;
  EXPECT_OK(octet_session_sample(session, NULL, &rng, got));
  EXPECT(rng == 7 + 2 * 0x9E3779B97F4A7C15ull);
  /* NULL sampling: the defaults (temperature 1, no cut). */
  rng_ref = 7;
  want[0] = reference_sample(rows, 64, 1.0f, 0, 1.0f, &rng_ref);
  want[1] = reference_sample(rows + 64, 64, 1.0f, 0, 1.0f, &rng_ref);
  EXPECT(got[0] == want[0] && got[1] == want[1]);
  /* An older caller's struct (temperature only): the rest keeps its defaults. */
  octet_sampling_init(&s);
  s.struct_size = offsetof(octet_sampling, top_k);
  s.temperature = 0.7f;
  s.top_k = 1;
  s.top_p = 0.01f;
  s.logits_hook = test_hook;
  rng = rng_ref = 77;
  EXPECT_OK(octet_session_sample(session, &s, &rng, got));
  want[0] = reference_sample(rows, 64, 0.7f, 0, 1.0f, &rng_ref);
  want[1] = reference_sample(rows + 64, 64, 0.7f, 0, 1.0f, &rng_ref);
  EXPECT(got[0] == want[0] && got[1] == want[1] && rng == rng_ref);

  /* Bad parameters and pointers. */
  octet_sampling_init(&s);
  EXPECT_FAIL(octet_session_sample(NULL, &s, &rng, got), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_session_sample(session, &s, NULL, got), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_session_sample(session, &s, &rng, NULL), OCTET_INVALID_ARGUMENT, "null");
  s.struct_size = 0;
  EXPECT_FAIL(octet_session_sample(session, &s, &rng, got), OCTET_INVALID_ARGUMENT, "struct_size");
  octet_sampling_init(&s);
  s.temperature = -1.0f;
  EXPECT_FAIL(octet_session_sample(session, &s, &rng, got), OCTET_INVALID_ARGUMENT, "temperature");
  s.temperature = NAN;
  EXPECT_FAIL(octet_session_sample(session, &s, &rng, got), OCTET_INVALID_ARGUMENT, "temperature");
  s.temperature = 1.0f;
  s.top_p = 0.0f;
  EXPECT_FAIL(octet_session_sample(session, &s, &rng, got), OCTET_INVALID_ARGUMENT, "top_p");
  s.top_p = 1.5f;
  EXPECT_FAIL(octet_session_sample(session, &s, &rng, got), OCTET_INVALID_ARGUMENT, "top_p");

  /* The logits hook: called once per sequence, in order, with the vocabulary;
   * masking all but one id forces it, whatever the temperature. */
  octet_sampling_init(&s);
  reset_hook(&hook);
  hook.keep = argmax(rows, 64) == 0 ? 1 : 0; /* never the argmax of sequence 0 */
  s.logits_hook = test_hook;
  s.logits_hook_user = &hook;
  s.temperature = 0.0f;
  rng = 5;
  EXPECT_OK(octet_session_sample(session, &s, &rng, got));
  EXPECT(got[0] == hook.keep && got[1] == hook.keep);
  EXPECT(hook.calls == 2 && hook.sequences[0] == 0 && hook.sequences[1] == 1 && hook.vocab == 64);
  run_prompts(session, rows);
  s.temperature = 1.3f;
  hook.keep = 41;
  EXPECT_OK(octet_session_sample(session, &s, &rng, got));
  EXPECT(got[0] == 41 && got[1] == 41);
  /* A nonzero return stops it: OCTET_CANCELLED. */
  run_prompts(session, rows);
  reset_hook(&hook);
  hook.stop_at = 1;
  EXPECT_FAIL(octet_session_sample(session, &s, &rng, got), OCTET_CANCELLED, "hook");
  EXPECT(hook.calls == 2);
  /* Masking every id, or a NaN, is the hook's mistake. */
  reset_hook(&hook);
  hook.mask_all = 1;
  EXPECT_FAIL(octet_session_sample(session, &s, &rng, got), OCTET_INVALID_ARGUMENT, "masked every");
  run_prompts(session, rows);
  reset_hook(&hook);
  hook.poison = 1;
  EXPECT_FAIL(octet_session_sample(session, &s, &rng, got), OCTET_INVALID_ARGUMENT, "NaN");

  octet_session_free(session);
  octet_model_free(llama);
}

/* ---- Embeddings ----------------------------------------------------------------------- */

void test_embeddings(void) {
  static const int32_t ids[12] = {2, 11, 25, 40, 63, 7, 2, 30, 9, 0, 0, 0}; /* [2, 6] */
  static const uint32_t lengths[2] = {6, 3};
  octet_model* bert = load_model("bert.octet");
  octet_model* llama = load_model("llama.octet");
  octet_session* session = make_session(bert, 2, 6, 0, 0);
  octet_session* decoder = make_session(llama, 2, 6, 0, 0);
  octet_output out;
  float hidden[2 * 6 * 32], mean[2 * 32], cls[2 * 32], got[3 * 32 + 1];
  uint32_t b, s, i;
  char needed[32];

  REQUIRE_OK(octet_session_run(session, ids, lengths, 2, 6));
  REQUIRE_OK(octet_session_output(session, &out));
  REQUIRE(out.batch == 2 && out.seq == 6 && out.dim == 32);
  memcpy(hidden, out.data, sizeof(hidden));
  /* By hand: the first row; the mean of the real rows, summed in order in float. */
  for (b = 0; b < 2; ++b) {
    for (i = 0; i < 32; ++i) {
      float sum = hidden[(b * 6) * 32 + i];
      cls[b * 32 + i] = sum;
      for (s = 1; s < lengths[b]; ++s) sum += hidden[(b * 6 + s) * 32 + i];
      mean[b * 32 + i] = sum / (float)lengths[b];
    }
  }
  got[64] = 12345.0f;
  EXPECT_OK(octet_session_embed(session, ids, lengths, 2, 6, OCTET_POOLING_CLS, 0, got, 65));
  EXPECT(memcmp(got, cls, sizeof(cls)) == 0);
  EXPECT(got[64] == 12345.0f);
  EXPECT_OK(octet_session_embed(session, ids, lengths, 2, 6, OCTET_POOLING_MEAN, 0, got, 64));
  EXPECT(memcmp(got, mean, sizeof(mean)) == 0);
  if (memcmp(got, mean, sizeof(mean)) != 0) {
    fprintf(stderr, "mean pooling: relative error %g\n", relative_error(got, mean, 64));
  }
  /* Normalized: unit length, the same direction. */
  EXPECT_OK(octet_session_embed(session, ids, lengths, 2, 6, OCTET_POOLING_MEAN,
                                OCTET_EMBED_NORMALIZE, got, 64));
  for (b = 0; b < 2; ++b) {
    double norm = 0.0, ref = 0.0, err = 0.0;
    for (i = 0; i < 32; ++i) ref += (double)mean[b * 32 + i] * mean[b * 32 + i];
    ref = sqrt(ref);
    for (i = 0; i < 32; ++i) {
      const double g = got[b * 32 + i];
      norm += g * g;
      err = fmax(err, fabs(g - mean[b * 32 + i] / ref));
    }
    EXPECT(fabs(sqrt(norm) - 1.0) < 1e-5);
    EXPECT(err < 1e-6);
  }
  /* The embedding run is a run: its hidden states are the output. */
  REQUIRE_OK(octet_session_output(session, &out));
  EXPECT(memcmp(out.data, hidden, sizeof(hidden)) == 0);

  /* A buffer one float short: the message names the floats needed. */
  snprintf(needed, sizeof(needed), "%u", 2u * 32u);
  EXPECT_FAIL(octet_session_embed(session, ids, lengths, 2, 6, OCTET_POOLING_MEAN, 0, got, 63),
              OCTET_BUFFER_TOO_SMALL, needed);
  EXPECT_FAIL(octet_session_embed(session, ids, lengths, 2, 6, OCTET_POOLING_MEAN, 0, NULL, 64),
              OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_session_embed(NULL, ids, lengths, 2, 6, OCTET_POOLING_MEAN, 0, got, 64),
              OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_session_embed(session, ids, lengths, 2, 6, (octet_pooling)7, 0, got, 64),
              OCTET_INVALID_ARGUMENT, "pooling");
  EXPECT_FAIL(octet_session_embed(session, ids, lengths, 2, 6, OCTET_POOLING_CLS, 2, got, 64),
              OCTET_INVALID_ARGUMENT, "flags");
  EXPECT_FAIL(octet_session_embed(session, ids, lengths, 3, 6, OCTET_POOLING_CLS, 0, got, 96),
              OCTET_LIMIT_EXCEEDED, "max_batch");
  EXPECT_FAIL(octet_session_embed(session, ids, NULL, 2, 6, OCTET_POOLING_CLS, 0, got, 64),
              OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_session_embed(decoder, ids, lengths, 2, 6, OCTET_POOLING_CLS, 0, got, 64),
              OCTET_UNSUPPORTED, "encoder-only");
  octet_session_free(decoder);
  octet_session_free(session);
  octet_model_free(llama);
  octet_model_free(bert);

  /* RoBERTa (positions from row 2): embeddings need nothing family-specific. */
  bert = load_model("roberta.octet");
  session = make_session(bert, 2, 6, 0, 0);
  REQUIRE_OK(octet_session_run(session, ids, lengths, 2, 6));
  REQUIRE_OK(octet_session_output(session, &out));
  for (b = 0; b < 2; ++b) memcpy(cls + b * 32, out.data + b * 6 * 32, 32 * sizeof(float));
  EXPECT_OK(octet_session_embed(session, ids, lengths, 2, 6, OCTET_POOLING_CLS, 0, got, 64));
  EXPECT(memcmp(got, cls, sizeof(cls)) == 0);
  octet_session_free(session);
  octet_model_free(bert);
}

/* ---- Attention capture ----------------------------------------------------------------- */

/* Rows of real queries sum to 1 over the keys they may see, and are 0 beyond. */
static void check_probs(const octet_attention_capture* c, const uint32_t* q_real,
                        const uint32_t* k_real, int causal, const char* what) {
  uint32_t b, h, q, k;
  double worst = 0.0;
  int outside = 0;
  for (b = 0; b < c->batch; ++b) {
    for (h = 0; h < c->heads; ++h) {
      for (q = 0; q < q_real[b]; ++q) {
        const float* row = c->probs + (((size_t)b * c->heads + h) * c->q_len + q) * c->k_len;
        const uint32_t visible = causal ? q + 1 : k_real[b];
        double sum = 0.0;
        for (k = 0; k < c->k_len; ++k) {
          if (k < visible) {
            sum += row[k];
            if (!(row[k] >= 0.0f)) outside = 1;
          } else if (row[k] != 0.0f) {
            outside = 1;
          }
        }
        worst = fmax(worst, fabs(sum - 1.0));
      }
    }
  }
  if (worst > 1e-4 || outside) {
    fprintf(stderr, "%s: rows off 1 by %g; weight outside the real keys: %d\n", what, worst,
            outside);
    ++g_failures;
  }
}

void test_attention(void) {
  static const int32_t ids[12] = {2, 11, 25, 40, 63, 7, 2, 30, 9, 0, 0, 0}; /* [2, 6] */
  static const uint32_t lengths[2] = {6, 3};
  static const int32_t dec[8] = {0, 12, 5, 28, 0, 7, 0, 0}; /* [2, 4] */
  static const uint32_t dec_lengths[2] = {4, 2};
  octet_model* llama = load_model("llama.octet");
  octet_model* bert = load_model("bert.octet");
  octet_model* t5 = load_model("t5.octet");
  octet_session* session = make_session(llama, 2, 6, 2, 0);
  octet_attention_capture c;
  float probs[2 * 2 * 6 * 6 + 1];
  float before[2 * 64];
  octet_output out;
  int32_t next[2] = {1, 2};
  size_t i;

  memset(&c, 0, sizeof(c));
  c.struct_size = sizeof(c);
  c.stack = OCTET_STACK_MODEL;
  c.layer = 1;
  c.probs = probs;
  c.capacity = 2 * 2 * 6 * 6;
  probs[c.capacity] = 777.0f;
  EXPECT_OK(octet_session_capture_attention(session, &c));
  EXPECT_OK(octet_session_run(session, ids, lengths, 2, 6));
  EXPECT(c.batch == 2 && c.heads == 2 && c.q_len == 6 && c.k_len == 6);
  EXPECT(c.kind == OCTET_CAPTURE_PROBABILITIES);
  EXPECT(probs[c.capacity] == 777.0f);
  check_probs(&c, lengths, lengths, 1, "llama layer 1");
  /* A caller built before `kind` (struct_size up to k_len) is served; kind untouched. */
  c.struct_size = offsetof(octet_attention_capture, kind);
  c.kind = 55;
  EXPECT_OK(octet_session_capture_attention(session, &c));
  EXPECT_OK(octet_session_run(session, ids, lengths, 2, 6));
  EXPECT(c.batch == 2 && c.heads == 2 && c.kind == 55);
  check_probs(&c, lengths, lengths, 1, "llama layer 1, older struct");
  c.struct_size = offsetof(octet_attention_capture, kind) - 1;
  EXPECT_FAIL(octet_session_capture_attention(session, &c), OCTET_INVALID_ARGUMENT, "struct_size");
  c.struct_size = sizeof(c);
  EXPECT_OK(octet_session_capture_attention(session, &c));
  EXPECT_OK(octet_session_run(session, ids, lengths, 2, 6));
  EXPECT(c.kind == OCTET_CAPTURE_PROBABILITIES);
  /* Steps do not capture. */
  memcpy(before, probs, sizeof(before));
  EXPECT_OK(octet_session_step(session, next, 2));
  EXPECT(c.q_len == 6 && memcmp(before, probs, sizeof(before)) == 0);
  /* A run whose probabilities do not fit fails before computing with the shape
   * it needs: the last output and the buffer are untouched. */
  REQUIRE_OK(octet_session_output(session, &out));
  memcpy(before, out.data, sizeof(before));
  c.capacity = 2 * 2 * 6 * 6 - 1;
  EXPECT_OK(octet_session_capture_attention(session, &c));
  for (i = 0; i < 2 * 2 * 6 * 6; ++i) probs[i] = -7.0f;
  EXPECT(c.batch == 0 && c.heads == 0 && c.q_len == 0 && c.k_len == 0);
  EXPECT_FAIL(octet_session_run(session, ids, lengths, 2, 6), OCTET_BUFFER_TOO_SMALL, "capture");
  EXPECT(c.batch == 2 && c.heads == 2 && c.q_len == 6 && c.k_len == 6);
  EXPECT(probs[0] == -7.0f && probs[2 * 2 * 6 * 6 - 1] == -7.0f);
  EXPECT(memcmp(before, out.data, sizeof(before)) == 0);
  /* A smaller run fits. */
  EXPECT_OK(octet_session_run(session, ids, lengths, 1, 6));
  EXPECT(c.batch == 1 && c.q_len == 6 && c.k_len == 6);
  check_probs(&c, lengths, lengths, 1, "llama batch 1");
  /* NULL stops capturing. */
  EXPECT_OK(octet_session_capture_attention(session, NULL));
  for (i = 0; i < 2 * 2 * 6 * 6; ++i) probs[i] = -7.0f;
  EXPECT_OK(octet_session_run(session, ids, lengths, 2, 6));
  EXPECT(c.batch == 1 && probs[0] == -7.0f && probs[100] == -7.0f);
  /* What cannot be captured. */
  c.capacity = 2 * 2 * 6 * 6;
  c.layer = 2;
  EXPECT_FAIL(octet_session_capture_attention(session, &c), OCTET_INVALID_ARGUMENT, "layer");
  c.layer = 0;
  c.stack = OCTET_STACK_DECODER;
  EXPECT_FAIL(octet_session_capture_attention(session, &c), OCTET_INVALID_ARGUMENT, "stack");
  c.stack = OCTET_STACK_MODEL;
  c.cross = 1;
  EXPECT_FAIL(octet_session_capture_attention(session, &c), OCTET_INVALID_ARGUMENT, "cross");
  c.cross = 0;
  c.stack = (octet_attention_stack)9;
  EXPECT_FAIL(octet_session_capture_attention(session, &c), OCTET_INVALID_ARGUMENT, "stack");
  c.stack = OCTET_STACK_MODEL;
  c.probs = NULL;
  EXPECT_FAIL(octet_session_capture_attention(session, &c), OCTET_INVALID_ARGUMENT, "buffer");
  c.probs = probs;
  c.struct_size = 0;
  EXPECT_FAIL(octet_session_capture_attention(session, &c), OCTET_INVALID_ARGUMENT, "struct_size");
  c.struct_size = sizeof(c);
  EXPECT_FAIL(octet_session_capture_attention(NULL, &c), OCTET_INVALID_ARGUMENT, "null");
  /* A failed request leaves nothing set. */
  for (i = 0; i < 2 * 2 * 6 * 6; ++i) probs[i] = -7.0f;
  EXPECT_OK(octet_session_run(session, ids, lengths, 2, 6));
  EXPECT(probs[0] == -7.0f);
  octet_session_free(session);

  /* An encoder: bidirectional over the real tokens. */
  session = make_session(bert, 2, 6, 0, 0);
  c.stack = OCTET_STACK_MODEL;
  c.layer = 0;
  EXPECT_OK(octet_session_capture_attention(session, &c));
  EXPECT_OK(octet_session_run(session, ids, lengths, 2, 6));
  EXPECT(c.batch == 2 && c.heads == 2 && c.q_len == 6 && c.k_len == 6);
  check_probs(&c, lengths, lengths, 0, "bert layer 0");
  /* Embeddings are runs: they capture too. */
  {
    float embedding[64];
    c.batch = 0;
    EXPECT_OK(
        octet_session_embed(session, ids, lengths, 2, 6, OCTET_POOLING_MEAN, 0, embedding, 64));
    EXPECT(c.batch == 2);
  }
  octet_session_free(session);

  /* An encoder-decoder: the encoder, the decoder and its cross-attention. */
  session = make_session(t5, 2, 6, 0, 0);
  c.stack = OCTET_STACK_ENCODER;
  c.layer = 1;
  EXPECT_OK(octet_session_capture_attention(session, &c));
  EXPECT_OK(octet_session_run_encoder_decoder(session, ids, lengths, 6, dec, dec_lengths, 4, 2));
  EXPECT(c.batch == 2 && c.q_len == 6 && c.k_len == 6);
  check_probs(&c, lengths, lengths, 0, "t5 encoder");
  c.stack = OCTET_STACK_DECODER;
  c.layer = 0;
  EXPECT_OK(octet_session_capture_attention(session, &c));
  EXPECT_OK(octet_session_run_encoder_decoder(session, ids, lengths, 6, dec, dec_lengths, 4, 2));
  EXPECT(c.batch == 2 && c.q_len == 4 && c.k_len == 4);
  check_probs(&c, dec_lengths, dec_lengths, 1, "t5 decoder");
  c.cross = 1;
  EXPECT_OK(octet_session_capture_attention(session, &c));
  EXPECT_OK(octet_session_run_encoder_decoder(session, ids, lengths, 6, dec, dec_lengths, 4, 2));
  EXPECT(c.batch == 2 && c.q_len == 4 && c.k_len == 6);
  check_probs(&c, dec_lengths, lengths, 0, "t5 cross");
  c.stack = OCTET_STACK_MODEL;
  c.cross = 0;
  EXPECT_FAIL(octet_session_capture_attention(session, &c), OCTET_INVALID_ARGUMENT, "stack");
  octet_session_free(session);
  octet_model_free(t5);
  octet_model_free(bert);
  octet_model_free(llama);
}
