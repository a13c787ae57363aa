/* Threads through the C API (C99 + pthreads), built and run by the host-tsan
 * preset too: 4 threads share one model, each with its own session (some with
 * a thread pool of their own), run, step and generate the same inputs and get
 * the results of a single-threaded run, bit for bit; each thread's failing call
 * leaves its own message; a generation is cancelled from another thread.
 *
 * Usage: octet_c_api_threads_test MODEL.octet (a decoder with layers, vocabulary
 * >= 64: ctest gives the c_api_models fixture's llama.octet). */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "octet/octet.h"

#define THREADS 4
#define NEW_TOKENS 12

static int g_failures = 0; /* written by the main thread only */

typedef struct result {
  float* logits; /* [2, vocab] after the prompts, then after each of 3 steps: [4][2][vocab] */
  int32_t greedy[2][NEW_TOKENS];
  int32_t sampled[2][NEW_TOKENS];
  uint32_t greedy_counts[2];
  uint32_t sampled_counts[2];
  int own_message; /* the failing call's message named this thread's id */
  int ok;          /* every call that should succeed did */
} result;

typedef struct recorder {
  int32_t (*ids)[NEW_TOKENS];
} recorder;

static int record(void* user, const octet_token_event* e) {
  recorder* r = (recorder*)user;
  if (e->sequence < 2 && e->index < NEW_TOKENS) r->ids[e->sequence][e->index] = e->id;
  return 0;
}

typedef struct job {
  const octet_model* model;
  uint32_t session_threads;
  int index;
  result* out;
} job;

static void* compute(void* arg) {
  static const int32_t prompts[16] = {5, 17, 9, 33, 60, 2, 41, 8, 12, 40, 3, 0, 0, 0, 0, 0};
  static const uint32_t lengths[2] = {8, 3};
  static const int32_t feed[3][2] = {{4, 9}, {50, 7}, {31, 31}};
  job* j = (job*)arg;
  result* r = j->out;
  const uint32_t vocab = octet_model_vocab_size(j->model);
  octet_session_options o;
  octet_session* session = NULL;
  octet_generate_options g;
  octet_output out;
  octet_model_info info;
  recorder rec;
  int32_t bad[1];
  uint32_t one[1] = {1};
  char needle[32];
  int t;

  r->ok = 1;
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  r->ok &= octet_model_get_info(j->model, &info) == OCTET_OK && info.vocab_size == vocab;
  octet_session_options_init(&o);
  o.max_batch = 2;
  o.max_seq = 8;
  o.max_new_tokens = NEW_TOKENS;
  o.threads = j->session_threads;
  if (octet_session_create_with_options(j->model, &o, NULL, 0, &session) != OCTET_OK) {
    fprintf(stderr, "thread %d: %s\n", j->index, octet_last_error());
    r->ok = 0;
    return NULL;
  }
  r->ok &= octet_session_run(session, prompts, lengths, 2, 8) == OCTET_OK;
  r->ok &= octet_session_output(session, &out) == OCTET_OK && out.batch == 2 && out.seq == 1;
  if (r->ok) memcpy(r->logits, out.data, 2 * vocab * sizeof(float));
  for (t = 0; t < 3 && r->ok; ++t) {
    r->ok &= octet_session_step(session, feed[t], 2) == OCTET_OK;
    r->ok &= octet_session_output(session, &out) == OCTET_OK;
    if (r->ok) memcpy(r->logits + (size_t)(t + 1) * 2 * vocab, out.data, 2 * vocab * sizeof(float));
  }
  /* A failing call: the message is this thread's. */
  bad[0] = (int32_t)vocab + 1000 * j->index;
  snprintf(needle, sizeof(needle), "%d", bad[0]);
  r->own_message = octet_session_run(session, bad, one, 1, 1) == OCTET_INVALID_ARGUMENT &&
                   strstr(octet_last_error(), needle) != NULL;

  octet_generate_options_init(&g);
  g.max_new_tokens = NEW_TOKENS;
  g.temperature = 0.0f;
  g.flags = OCTET_GENERATE_IGNORE_EOS;
  g.on_token = record;
  g.on_token_user = &rec;
  rec.ids = r->greedy;
  r->ok &= octet_generate(session, prompts, lengths, 2, 8, &g, r->greedy_counts) == OCTET_OK;
  g.temperature = 0.9f;
  g.top_k = 40;
  g.top_p = 0.95f;
  g.seed = 42;
  rec.ids = r->sampled;
  r->ok &= octet_generate(session, prompts, lengths, 2, 8, &g, r->sampled_counts) == OCTET_OK;
  /* The message is still this thread's, whatever the others did meanwhile. */
  r->own_message = r->own_message && strstr(octet_last_error(), needle) != NULL;
  octet_session_free(session);
  return NULL;
}

static void compare(const result* a, const result* b, uint32_t vocab, const char* what) {
  if (!b->ok || !b->own_message) {
    fprintf(stderr, "%s: ok %d, own message %d\n", what, b->ok, b->own_message);
    ++g_failures;
    return;
  }
  if (memcmp(a->logits, b->logits, 4 * 2 * vocab * sizeof(float)) != 0 ||
      memcmp(a->greedy, b->greedy, sizeof(a->greedy)) != 0 ||
      memcmp(a->sampled, b->sampled, sizeof(a->sampled)) != 0 ||
      memcmp(a->greedy_counts, b->greedy_counts, sizeof(a->greedy_counts)) != 0 ||
      memcmp(a->sampled_counts, b->sampled_counts, sizeof(a->sampled_counts)) != 0) {
    fprintf(stderr, "%s: results differ from the single-threaded run\n", what);
    ++g_failures;
  }
}

/* Cancel from another thread while the generation runs freely. */
typedef struct cancel_job {
  octet_session* session;
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  int events;
  int started;
  int events_when_cancelled;
} cancel_job;

static int count_token(void* user, const octet_token_event* e) {
  cancel_job* c = (cancel_job*)user;
  pthread_mutex_lock(&c->mutex);
  ++c->events;
  if (e->index == 5) {
    c->started = 1;
    pthread_cond_broadcast(&c->cond);
  }
  pthread_mutex_unlock(&c->mutex);
  return 0;
}

static void* cancel_later(void* arg) {
  cancel_job* c = (cancel_job*)arg;
  pthread_mutex_lock(&c->mutex);
  while (!c->started) pthread_cond_wait(&c->cond, &c->mutex);
  pthread_mutex_unlock(&c->mutex);
  octet_session_cancel(c->session);
  pthread_mutex_lock(&c->mutex);
  c->events_when_cancelled = c->events;
  pthread_mutex_unlock(&c->mutex);
  return NULL;
}

static void check_cancel(const octet_model* model) {
  static const int32_t prompt[2] = {5, 17};
  static const uint32_t length[1] = {2};
  octet_session_options o;
  octet_generate_options g;
  cancel_job c;
  pthread_t thread;
  uint32_t count = 0;
  octet_status status;
  memset(&c, 0, sizeof(c));
  pthread_mutex_init(&c.mutex, NULL);
  pthread_cond_init(&c.cond, NULL);
  octet_session_options_init(&o);
  o.max_seq = 2;
  o.max_new_tokens = 4000;
  if (octet_session_create_with_options(model, &o, NULL, 0, &c.session) != OCTET_OK) {
    fprintf(stderr, "cancel: %s\n", octet_last_error());
    ++g_failures;
    return;
  }
  octet_generate_options_init(&g);
  g.max_new_tokens = 4000;
  g.flags = OCTET_GENERATE_IGNORE_EOS;
  g.on_token = count_token;
  g.on_token_user = &c;
  pthread_create(&thread, NULL, cancel_later, &c);
  status = octet_generate(c.session, prompt, length, 1, 2, &g, &count);
  pthread_mutex_lock(&c.mutex); /* ended early: release the canceller */
  c.started = 1;
  pthread_cond_broadcast(&c.cond);
  pthread_mutex_unlock(&c.mutex);
  pthread_join(thread, NULL);
  if (status != OCTET_CANCELLED || c.events > c.events_when_cancelled + 1 ||
      count != (uint32_t)c.events) {
    fprintf(stderr, "cancel: %s after %d tokens (%d when cancel returned, count %u)\n",
            octet_status_name(status), c.events, c.events_when_cancelled, count);
    ++g_failures;
  }
  g.on_token = NULL;
  g.max_new_tokens = 8;
  if (octet_generate(c.session, prompt, length, 1, 2, &g, &count) != OCTET_OK || count != 8) {
    fprintf(stderr, "cancel: the next generation failed\n");
    ++g_failures;
  }
  octet_session_free(c.session);
  pthread_cond_destroy(&c.cond);
  pthread_mutex_destroy(&c.mutex);
}

int main(int argc, char** argv) {
  octet_model* model = NULL;
  result reference, results[THREADS];
  job reference_job, jobs[THREADS];
  pthread_t threads[THREADS];
  uint32_t vocab;
  int i, round;
  char what[64];
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.octet\n", argv[0]);
    return 2;
  }
  if (octet_model_load(argv[1], &model) != OCTET_OK) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], octet_last_error());
    return 1;
  }
  vocab = octet_model_vocab_size(model);
  memset(&reference, 0, sizeof(reference));
  reference.logits = (float*)calloc(4 * 2 * (size_t)vocab, sizeof(float));
  reference_job.model = model;
  reference_job.session_threads = 1;
  reference_job.index = 0;
  reference_job.out = &reference;
  compute(&reference_job);
  if (!reference.ok || !reference.own_message) {
    fprintf(stderr, "the single-threaded run failed\n");
    return 1;
  }
  /* Round 0: one thread per session; round 1: sessions with pools of 2 and 3. */
  for (round = 0; round < 2; ++round) {
    for (i = 0; i < THREADS; ++i) {
      memset(&results[i], 0, sizeof(results[i]));
      results[i].logits = (float*)calloc(4 * 2 * (size_t)vocab, sizeof(float));
      jobs[i].model = model;
      jobs[i].session_threads = round == 0 ? 1u : 2u + (uint32_t)(i % 2);
      jobs[i].index = i + 1;
      jobs[i].out = &results[i];
      if (pthread_create(&threads[i], NULL, compute, &jobs[i]) != 0) return 1;
    }
    for (i = 0; i < THREADS; ++i) pthread_join(threads[i], NULL);
    for (i = 0; i < THREADS; ++i) {
      snprintf(what, sizeof(what), "round %d, thread %d", round, i);
      compare(&reference, &results[i], vocab, what);
      free(results[i].logits);
    }
  }
  check_cancel(model);
  free(reference.logits);
  octet_model_free(model);
  if (g_failures == 0) printf("C API threads: all checks passed\n");
  return g_failures == 0 ? 0 : 1;
}
