/* Generation against a manual run / sample / step loop, its callback, flags,
 * limits and errors; cancel from another thread. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>

#include "harness.h"

#define MAX_EVENTS 512

/* What the token callback saw. */
typedef struct event_log {
  int n;
  uint32_t sequence[MAX_EVENTS];
  int32_t id[MAX_EVENTS];
  uint32_t index[MAX_EVENTS];
  int32_t is_eos[MAX_EVENTS];
  int text_not_null;
  int bad_struct_size;
  int stop_after; /* return nonzero after this many events (0: never) */
} event_log;

static int log_token(void* user, const octet_token_event* e) {
  event_log* log = (event_log*)user;
  if (e->struct_size != sizeof(octet_token_event)) log->bad_struct_size = 1;
  if (e->text != NULL || e->text_len != 0) log->text_not_null = 1;
  if (log->n < MAX_EVENTS) {
    log->sequence[log->n] = e->sequence;
    log->id[log->n] = e->id;
    log->index[log->n] = e->index;
    log->is_eos[log->n] = e->is_eos;
  }
  ++log->n;
  return log->stop_after > 0 && log->n >= log->stop_after;
}

/* Forces `id` for sequence `sequence` at its token `at` (the hook's call count
 * for that sequence), or stops (`id` == -1), or masks everything (-2). */
typedef struct force_hook {
  uint32_t sequence;
  uint32_t at;
  int32_t id;
  uint32_t calls[8];
} force_hook;

static int force_token(void* user, uint32_t sequence, float* logits, uint32_t vocab) {
  force_hook* f = (force_hook*)user;
  const uint32_t call = f->calls[sequence]++;
  uint32_t i;
  if (sequence != f->sequence || call != f->at) return 0;
  if (f->id == -1) return 1;
  for (i = 0; i < vocab; ++i) {
    if ((int32_t)i != f->id) logits[i] = -INFINITY;
  }
  return 0;
}

/* Tokens per sequence, [batch][max_new] in events order. */
typedef struct tokens {
  int32_t ids[4][64];
  uint32_t counts[4];
} tokens;

static void tokens_from_log(const event_log* log, tokens* t) {
  int e;
  memset(t, 0, sizeof(*t));
  for (e = 0; e < log->n && e < MAX_EVENTS; ++e) {
    const uint32_t b = log->sequence[e];
    if (b < 4 && t->counts[b] < 64) t->ids[b][t->counts[b]++] = log->id[e];
  }
}

/* The loop octet_generate documents, by hand: one run, then sample -> step
 * until each sequence has max_new tokens or an eos id; finished sequences feed
 * the pad id. The session is made for the same limits. */
static void manual_generate(const octet_model* model, const int32_t* ids, const uint32_t* lengths,
                            uint32_t batch, uint32_t seq, const octet_generate_options* g,
                            tokens* out) {
  octet_model_info info;
  octet_session* session = make_session(model, batch, seq, g->max_new_tokens, 0);
  octet_sampling s;
  uint64_t rng = g->seed;
  int32_t next[4], feed[4];
  uint32_t ones[4] = {1, 1, 1, 1};
  int done[4] = {0, 0, 0, 0};
  uint32_t b;
  int32_t pad;
  memset(out, 0, sizeof(*out));
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  REQUIRE_OK(octet_model_get_info(model, &info));
  pad = info.pad_token_id >= 0 ? info.pad_token_id : 0;
  if (info.structure == OCTET_ENCODER_DECODER) {
    for (b = 0; b < batch; ++b) feed[b] = info.decoder_start_token_id;
    REQUIRE_OK(octet_session_run_encoder_decoder(session, ids, lengths, seq, feed, ones, 1, batch));
  } else {
    REQUIRE_OK(octet_session_run(session, ids, lengths, batch, seq));
  }
  octet_sampling_init(&s);
  s.temperature = g->temperature;
  s.top_k = g->top_k;
  s.top_p = g->top_p;
  s.logits_hook = g->logits_hook;
  s.logits_hook_user = g->logits_hook_user;
  for (;;) {
    int all_done = 1;
    REQUIRE_OK(octet_session_sample(session, &s, &rng, next));
    for (b = 0; b < batch; ++b) {
      feed[b] = done[b] ? pad : next[b];
      if (done[b]) continue;
      out->ids[b][out->counts[b]++] = next[b];
      if (out->counts[b] == g->max_new_tokens ||
          ((g->flags & OCTET_GENERATE_IGNORE_EOS) == 0 && octet_model_is_eos(model, next[b]))) {
        done[b] = 1;
      }
      all_done = all_done && done[b];
    }
    if (all_done) break;
    REQUIRE_OK(octet_session_step(session, feed, batch));
  }
  octet_session_free(session);
}

static int same_tokens(const tokens* a, const tokens* b, uint32_t batch) {
  uint32_t i;
  for (i = 0; i < batch; ++i) {
    if (a->counts[i] != b->counts[i]) return 0;
    if (memcmp(a->ids[i], b->ids[i], a->counts[i] * sizeof(int32_t)) != 0) return 0;
  }
  return 1;
}

static void print_tokens(const char* what, const tokens* t, uint32_t batch) {
  uint32_t b, i;
  for (b = 0; b < batch; ++b) {
    fprintf(stderr, "%s sequence %u:", what, b);
    for (i = 0; i < t->counts[b]; ++i) fprintf(stderr, " %d", t->ids[b][i]);
    fprintf(stderr, "\n");
  }
}

/* octet_generate with a log, against the manual loop; returns the log's tokens. */
static void check_against_manual(const octet_model* model, octet_session* session,
                                 const int32_t* ids, const uint32_t* lengths, uint32_t batch,
                                 uint32_t seq, octet_generate_options* g, const char* what) {
  event_log log;
  tokens got, want;
  uint32_t counts[4] = {0, 0, 0, 0}, b;
  int e;
  memset(&log, 0, sizeof(log));
  g->on_token = log_token;
  g->on_token_user = &log;
  EXPECT_OK(octet_generate(session, ids, lengths, batch, seq, g, counts));
  tokens_from_log(&log, &got);
  manual_generate(model, ids, lengths, batch, seq, g, &want);
  if (!same_tokens(&got, &want, batch)) {
    fprintf(stderr, "%s: octet_generate and the manual loop differ\n", what);
    print_tokens("generate", &got, batch);
    print_tokens("manual", &want, batch);
    ++g_failures;
  }
  for (b = 0; b < batch; ++b) EXPECT(counts[b] == got.counts[b]);
  /* Events: each sequence's indexes count up from 0; is_eos marks eos ids. */
  EXPECT(!log.text_not_null && !log.bad_struct_size);
  {
    uint32_t next_index[4] = {0, 0, 0, 0};
    for (e = 0; e < log.n; ++e) {
      const uint32_t s = log.sequence[e];
      EXPECT(s < batch && log.index[e] == next_index[s]);
      if (s < 4) ++next_index[s];
      EXPECT(log.is_eos[e] ==
             ((g->flags & OCTET_GENERATE_IGNORE_EOS) == 0 && octet_model_is_eos(model, log.id[e])));
    }
  }
  g->on_token = NULL;
  g->on_token_user = NULL;
}

void test_generate(void) {
  static const int32_t prompts[10] = {3, 14, 15, 9, 26, 53, 58, 0, 0, 0}; /* [2, 5] */
  static const uint32_t lengths[2] = {5, 2};
  octet_model* llama = load_model("llama.octet");
  octet_model* llama0 = load_model("llama0.octet");
  octet_model* bert = load_model("bert.octet");
  octet_model* t5 = load_model("t5.octet");
  octet_session* session = make_session(llama, 2, 5, 12, 0);
  octet_session* single = make_session(llama, 1, 5, 12, 0);
  octet_session* other;
  octet_generate_options g;
  event_log log;
  force_hook force;
  tokens batch_tokens, one;
  uint32_t counts[2];
  int e;

  /* Greedy, then sampled with every knob, batch 1 and 2: the manual loop's tokens. */
  octet_generate_options_init(&g);
  g.max_new_tokens = 13;
  g.temperature = 0.0f;
  check_against_manual(llama, single, prompts, lengths, 1, 5, &g, "greedy, batch 1");
  check_against_manual(llama, session, prompts, lengths, 2, 5, &g, "greedy, batch 2");
  g.temperature = 0.8f;
  g.top_k = 20;
  g.top_p = 0.9f;
  g.seed = 1234;
  check_against_manual(llama, session, prompts, lengths, 2, 5, &g, "sampled, batch 2");
  g.temperature = 1.0f;
  g.top_k = 0;
  g.top_p = 1.0f;
  g.seed = 99;
  g.flags = OCTET_GENERATE_IGNORE_EOS;
  check_against_manual(llama, session, prompts, lengths, 2, 5, &g, "sampled, ignoring eos");
  /* A session that keeps every logit prefills the prompt in one pass: the same tokens. */
  other = make_session(llama, 2, 5, 12, OCTET_SESSION_ALL_LOGITS);
  check_against_manual(llama, other, prompts, lengths, 2, 5, &g, "every logit");
  octet_session_free(other);

  /* A batch of prompts of different lengths: each sequence as if alone (greedy). */
  octet_generate_options_init(&g);
  g.max_new_tokens = 13;
  g.temperature = 0.0f;
  g.flags = OCTET_GENERATE_IGNORE_EOS;
  memset(&log, 0, sizeof(log));
  g.on_token = log_token;
  g.on_token_user = &log;
  EXPECT_OK(octet_generate(session, prompts, lengths, 2, 5, &g, counts));
  tokens_from_log(&log, &batch_tokens);
  EXPECT(counts[0] == 13 && counts[1] == 13);
  memset(&log, 0, sizeof(log));
  EXPECT_OK(octet_generate(single, prompts + 5, lengths + 1, 1, 5, &g, NULL));
  tokens_from_log(&log, &one);
  EXPECT(one.counts[0] == 13 && memcmp(one.ids[0], batch_tokens.ids[1], 13 * sizeof(int32_t)) == 0);
  /* Events interleave: token t of sequence 0, then of sequence 1. */
  memset(&log, 0, sizeof(log));
  EXPECT_OK(octet_generate(session, prompts, lengths, 2, 5, &g, NULL));
  for (e = 0; e < 26 && e < log.n; ++e) {
    EXPECT(log.sequence[e] == (uint32_t)(e % 2) && log.index[e] == (uint32_t)(e / 2));
  }

  /* The callback stops it: OCTET_OK, with the tokens so far. */
  memset(&log, 0, sizeof(log));
  log.stop_after = 3;
  EXPECT_OK(octet_generate(single, prompts, lengths, 1, 5, &g, counts));
  EXPECT(log.n == 3 && counts[0] == 3);
  memset(&log, 0, sizeof(log));
  log.stop_after = 3; /* in a batch: the whole generation ends */
  EXPECT_OK(octet_generate(session, prompts, lengths, 2, 5, &g, counts));
  EXPECT(log.n == 3 && counts[0] == 2 && counts[1] == 1);

  /* An eos id ends its sequence (the event says so), unless IGNORE_EOS. */
  memset(&force, 0, sizeof(force));
  force.sequence = 0;
  force.at = 2;
  force.id = 2; /* llama's eos */
  g.logits_hook = force_token;
  g.logits_hook_user = &force;
  g.flags = 0;
  memset(&log, 0, sizeof(log));
  log.stop_after = 0;
  EXPECT_OK(octet_generate(session, prompts, lengths, 2, 5, &g, counts));
  tokens_from_log(&log, &one);
  EXPECT(counts[0] == 3 && one.counts[0] == 3 && one.ids[0][2] == 2);
  EXPECT(counts[1] == 13 || octet_model_is_eos(llama, one.ids[1][counts[1] - 1]));
  for (e = 0; e < log.n; ++e) {
    if (log.sequence[e] == 0) EXPECT(log.is_eos[e] == (log.index[e] == 2));
  }
  memset(&force, 0, sizeof(force));
  force.at = 2;
  force.id = 2;
  g.flags = OCTET_GENERATE_IGNORE_EOS;
  memset(&log, 0, sizeof(log));
  EXPECT_OK(octet_generate(session, prompts, lengths, 2, 5, &g, counts));
  tokens_from_log(&log, &one);
  EXPECT(counts[0] == 13 && counts[1] == 13 && one.ids[0][2] == 2);
  for (e = 0; e < log.n; ++e) EXPECT(log.is_eos[e] == 0);

  /* The hook stops it: OCTET_CANCELLED; masking everything is an error. */
  memset(&force, 0, sizeof(force));
  force.sequence = 1;
  force.at = 4;
  force.id = -1;
  EXPECT_FAIL(octet_generate(session, prompts, lengths, 2, 5, &g, counts), OCTET_CANCELLED, "hook");
  EXPECT(counts[0] == 4 && counts[1] == 4);
  memset(&force, 0, sizeof(force));
  force.id = -2;
  EXPECT_FAIL(octet_generate(session, prompts, lengths, 2, 5, &g, counts), OCTET_INVALID_ARGUMENT,
              "masked every");
  g.logits_hook = NULL;
  g.logits_hook_user = NULL;
  g.on_token = NULL;

  /* An older caller's options (up to top_p): seed 0, no flags and no callbacks,
   * whatever the bytes after its struct_size hold. */
  {
    octet_generate_options older;
    octet_output out;
    float* last;
    uint32_t older_counts[2];
    octet_generate_options_init(&older);
    older.struct_size = offsetof(octet_generate_options, seed);
    older.max_new_tokens = 6;
    older.temperature = 0.9f;
    older.seed = 555;
    older.flags = 0x7777;
    older.on_token = log_token;
    older.on_token_user = &log;
    memset(&log, 0, sizeof(log));
    EXPECT_OK(octet_generate(session, prompts, lengths, 2, 5, &older, older_counts));
    EXPECT(log.n == 0);
    REQUIRE_OK(octet_session_output(session, &out));
    last = (float*)malloc(2 * 64 * sizeof(float));
    REQUIRE(last != NULL);
    memcpy(last, out.data, 2 * 64 * sizeof(float));
    octet_generate_options_init(&older);
    older.max_new_tokens = 6;
    older.temperature = 0.9f;
    EXPECT_OK(octet_generate(session, prompts, lengths, 2, 5, &older, counts));
    REQUIRE_OK(octet_session_output(session, &out));
    EXPECT(counts[0] == older_counts[0] && counts[1] == older_counts[1]);
    EXPECT(memcmp(last, out.data, 2 * 64 * sizeof(float)) == 0);
    free(last);
  }

  /* Limits: the prompt plus max_new_tokens - 1 steps must fit in max_seq +
   * max_new_tokens positions (5 + 12 here). */
  octet_generate_options_init(&g);
  g.temperature = 0.0f;
  g.flags = OCTET_GENERATE_IGNORE_EOS;
  g.max_new_tokens = 13;
  EXPECT_OK(octet_generate(session, prompts, lengths, 2, 5, &g, counts));
  EXPECT(counts[0] == 13 && counts[1] == 13);
  g.max_new_tokens = 14;
  EXPECT_FAIL(octet_generate(session, prompts, lengths, 2, 5, &g, counts), OCTET_LIMIT_EXCEEDED,
              "max_seq + max_new_tokens");
  g.max_new_tokens = 16; /* a prompt of 2: 2 + 15 steps fit */
  EXPECT_OK(octet_generate(single, prompts + 5, lengths + 1, 1, 5, &g, counts));
  EXPECT(counts[0] == 16);
  g.max_new_tokens = 17;
  EXPECT_FAIL(octet_generate(single, prompts + 5, lengths + 1, 1, 5, &g, counts),
              OCTET_LIMIT_EXCEEDED, "max_seq + max_new_tokens");
  g.max_new_tokens = 4;
  EXPECT_FAIL(octet_generate(single, prompts, lengths, 2, 5, &g, counts), OCTET_LIMIT_EXCEEDED,
              "max_batch");
  EXPECT_FAIL(octet_generate(single, prompts, lengths, 0, 5, &g, counts), OCTET_INVALID_ARGUMENT,
              "batch");
  EXPECT_FAIL(octet_generate(session, prompts, lengths, 1, 6, &g, counts), OCTET_LIMIT_EXCEEDED,
              "max_seq");

  /* Bad arguments. */
  EXPECT_FAIL(octet_generate(NULL, prompts, lengths, 1, 5, &g, counts), OCTET_INVALID_ARGUMENT,
              "null");
  EXPECT_FAIL(octet_generate(session, NULL, lengths, 1, 5, &g, counts), OCTET_INVALID_ARGUMENT,
              "null");
  EXPECT_FAIL(octet_generate(session, prompts, NULL, 1, 5, &g, counts), OCTET_INVALID_ARGUMENT,
              "null");
  g.struct_size = 0;
  EXPECT_FAIL(octet_generate(session, prompts, lengths, 1, 5, &g, counts), OCTET_INVALID_ARGUMENT,
              "struct_size");
  g.struct_size = sizeof(g);
  g.flags = 4;
  EXPECT_FAIL(octet_generate(session, prompts, lengths, 1, 5, &g, counts), OCTET_INVALID_ARGUMENT,
              "flags");
  g.flags = 0;
  g.max_new_tokens = 0;
  EXPECT_FAIL(octet_generate(session, prompts, lengths, 1, 5, &g, counts), OCTET_INVALID_ARGUMENT,
              "max_new_tokens");
  g.max_new_tokens = 4;
  g.temperature = -2.0f;
  EXPECT_FAIL(octet_generate(session, prompts, lengths, 1, 5, &g, counts), OCTET_INVALID_ARGUMENT,
              "temperature");
  g.temperature = 0.0f;
  {
    int32_t bad[5] = {3, 64, 1, 1, 1};
    uint32_t bad_lengths[2] = {5, 0}, long_lengths[2] = {5, 6};
    EXPECT_FAIL(octet_generate(session, bad, lengths, 1, 5, &g, counts), OCTET_INVALID_ARGUMENT,
                "vocabulary");
    EXPECT_FAIL(octet_generate(session, prompts, bad_lengths, 2, 5, &g, counts),
                OCTET_INVALID_ARGUMENT, "length");
    EXPECT_FAIL(octet_generate(session, prompts, long_lengths, 2, 5, &g, counts),
                OCTET_INVALID_ARGUMENT, "length");
  }
  /* Models that do not generate. */
  other = make_session(bert, 1, 5, 0, 0);
  EXPECT_FAIL(octet_generate(other, prompts, lengths, 1, 5, &g, counts), OCTET_UNSUPPORTED,
              "encoder-only");
  octet_session_free(other);
  other = make_session(llama0, 1, 5, 4, 0);
  EXPECT_FAIL(octet_generate(other, prompts, lengths, 1, 5, &g, counts), OCTET_UNSUPPORTED,
              "layers");
  octet_session_free(other);
  /* After all these failures, it generates. */
  g.max_new_tokens = 13;
  EXPECT_OK(octet_generate(session, prompts, lengths, 2, 5, &g, counts));
  EXPECT(counts[0] == 13 && counts[1] == 13);

  /* Encoder-decoder: the prompt is the source; the target starts at the
   * decoder start token. */
  octet_session_free(session);
  session = make_session(t5, 2, 5, 8, 0);
  octet_generate_options_init(&g);
  g.max_new_tokens = 9;
  g.temperature = 0.0f;
  check_against_manual(t5, session, prompts, lengths, 2, 5, &g, "t5 greedy");
  g.temperature = 0.7f;
  g.top_p = 0.8f;
  g.seed = 42;
  check_against_manual(t5, session, prompts, lengths, 2, 5, &g, "t5 sampled");
  g.flags = OCTET_GENERATE_IGNORE_EOS;
  check_against_manual(t5, session, prompts, lengths, 2, 5, &g, "t5 sampled, ignoring eos");
  /* 1 + (max_new_tokens - 1) decoder positions in 5 + 8. */
  g.max_new_tokens = 13;
  EXPECT_OK(octet_generate(session, prompts, lengths, 2, 5, &g, counts));
  EXPECT(counts[0] == 13 && counts[1] == 13);
  g.max_new_tokens = 14;
  EXPECT_FAIL(octet_generate(session, prompts, lengths, 2, 5, &g, counts), OCTET_LIMIT_EXCEEDED,
              "max_seq + max_new_tokens");

  octet_session_free(session);
  octet_session_free(single);
  octet_model_free(t5);
  octet_model_free(bert);
  octet_model_free(llama0);
  octet_model_free(llama);
}

/* ---- Cancel ------------------------------------------------------------------------------ */

typedef struct cancel_state {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  octet_session* session;
  int events;
  int handshake; /* 1: the callback waits for the canceller at index 3 */
  int ready;     /* the generation reached the point to cancel */
  int cancelled; /* octet_session_cancel returned */
  int events_when_cancelled;
} cancel_state;

static int cancel_on_token(void* user, const octet_token_event* e) {
  cancel_state* c = (cancel_state*)user;
  pthread_mutex_lock(&c->mutex);
  ++c->events;
  if (!c->ready && e->index == (c->handshake ? 3u : 20u)) {
    c->ready = 1;
    pthread_cond_broadcast(&c->cond);
    while (c->handshake && !c->cancelled) pthread_cond_wait(&c->cond, &c->mutex);
  }
  pthread_mutex_unlock(&c->mutex);
  return 0;
}

static void* canceller(void* user) {
  cancel_state* c = (cancel_state*)user;
  pthread_mutex_lock(&c->mutex);
  while (!c->ready) pthread_cond_wait(&c->cond, &c->mutex);
  pthread_mutex_unlock(&c->mutex);
  octet_session_cancel(c->session);
  pthread_mutex_lock(&c->mutex);
  c->cancelled = 1;
  c->events_when_cancelled = c->events;
  pthread_cond_broadcast(&c->cond);
  pthread_mutex_unlock(&c->mutex);
  return NULL;
}

static void run_cancel(octet_session* session, const int32_t* prompt, const uint32_t* length,
                       int handshake, uint32_t max_new) {
  cancel_state c;
  octet_generate_options g;
  pthread_t thread;
  uint32_t count = 0;
  octet_status status;
  memset(&c, 0, sizeof(c));
  REQUIRE(pthread_mutex_init(&c.mutex, NULL) == 0);
  REQUIRE(pthread_cond_init(&c.cond, NULL) == 0);
  c.session = session;
  c.handshake = handshake;
  octet_generate_options_init(&g);
  g.max_new_tokens = max_new;
  g.temperature = 0.9f;
  g.seed = 3;
  g.flags = OCTET_GENERATE_IGNORE_EOS;
  g.on_token = cancel_on_token;
  g.on_token_user = &c;
  REQUIRE(pthread_create(&thread, NULL, canceller, &c) == 0);
  status = octet_generate(session, prompt, length, 1, 4, &g, &count);
  /* A generation that ended before the point to cancel releases the canceller. */
  pthread_mutex_lock(&c.mutex);
  c.ready = 1;
  pthread_cond_broadcast(&c.cond);
  pthread_mutex_unlock(&c.mutex);
  REQUIRE(pthread_join(thread, NULL) == 0);
  EXPECT(status == OCTET_CANCELLED);
  if (status == OCTET_CANCELLED) EXPECT(strstr(octet_last_error(), "cancel") != NULL);
  /* At most one more token after octet_session_cancel returned. */
  if (c.events > c.events_when_cancelled + 1) {
    fprintf(stderr, "cancel (handshake %d): %d tokens, %d when cancel returned\n", handshake,
            c.events, c.events_when_cancelled);
    ++g_failures;
  }
  EXPECT(count == (uint32_t)c.events && count < max_new);
  if (handshake) EXPECT(c.events_when_cancelled == 4);
  pthread_cond_destroy(&c.cond);
  pthread_mutex_destroy(&c.mutex);
}

/* Cancel from the token callback itself (the generation's own thread). */
static int cancel_at_2(void* user, const octet_token_event* e) {
  if (e->index == 2) octet_session_cancel((octet_session*)user);
  return 0;
}

void test_cancel(void) {
  static const int32_t prompt[4] = {3, 14, 15, 9};
  static const uint32_t length[1] = {4};
  octet_model* llama = load_model("llama.octet");
  octet_model* t5 = load_model("t5.octet");
  octet_session* session = make_session(llama, 1, 4, 1000, 0);
  octet_generate_options g;
  uint32_t count = 0;

  octet_generate_options_init(&g);
  g.max_new_tokens = 40;
  g.flags = OCTET_GENERATE_IGNORE_EOS;
  /* A cancel before a generation does not affect it. */
  octet_session_cancel(session);
  EXPECT_OK(octet_generate(session, prompt, length, 1, 4, &g, &count));
  EXPECT(count == 40);
  /* Cancelled while the callback waits for it, then while it runs freely. */
  run_cancel(session, prompt, length, 1, 1000);
  run_cancel(session, prompt, length, 0, 1000);
  /* The session generates normally afterwards. */
  EXPECT_OK(octet_generate(session, prompt, length, 1, 4, &g, &count));
  EXPECT(count == 40);
  /* From the callback: no token after it. */
  g.on_token = cancel_at_2;
  g.on_token_user = session;
  EXPECT_FAIL(octet_generate(session, prompt, length, 1, 4, &g, &count), OCTET_CANCELLED, "cancel");
  EXPECT(count == 3);
  g.on_token = NULL;
  EXPECT_OK(octet_generate(session, prompt, length, 1, 4, &g, &count));
  EXPECT(count == 40);
  octet_session_free(session);
  /* Encoder-decoder generation cancels the same way. */
  session = make_session(t5, 1, 4, 1000, 0);
  run_cancel(session, prompt, length, 1, 1000);
  EXPECT_OK(octet_generate(session, prompt, length, 1, 4, &g, &count));
  EXPECT(count == 40);
  octet_session_free(session);
  octet_model_free(t5);
  octet_model_free(llama);
}
