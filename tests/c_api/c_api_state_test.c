/* Session state save and restore: the next sample and the following steps of
 * a restored session are bit-identical to the original's, in a session with
 * the same limits, bigger ones, or the original itself rewound; what is not a
 * state of this session's model is refused with the right code. */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#define STEPS 4

/* What a session does after the saved point: the next-token logits, a sampled
 * draw (ids and random state), then STEPS steps' logits, then an extend's. */
typedef struct continuation {
  float next[2 * 64];
  int32_t sampled[2];
  uint64_t rng;
  float steps[STEPS][2 * 64];
  float extended[2 * 64];
} continuation;

static const int32_t kFeed[STEPS][2] = {{7, 40}, {13, 2}, {63, 0}, {21, 21}};
static const int32_t kExtend[2 * 2] = {5, 6, 50, 51}; /* [2, 2] */

static void last_rows(const octet_session* session, uint32_t batch, float* rows) {
  octet_output out;
  uint32_t b;
  REQUIRE_OK(octet_session_output(session, &out));
  REQUIRE(out.batch == batch && out.dim == 64);
  for (b = 0; b < batch; ++b) {
    memcpy(rows + b * 64, out.data + ((size_t)b * out.seq + out.seq - 1) * 64, 64 * sizeof(float));
  }
}

/* From the current (just run or just loaded) point: sample, then steps; then,
 * from `state`, an extend (decoder-only) when `extend` is set. */
static void continue_from(octet_session* session, uint32_t batch, const void* state, size_t size,
                          int extend, continuation* c) {
  octet_sampling s;
  uint32_t t;
  memset(c, 0, sizeof(*c));
  last_rows(session, batch, c->next);
  octet_sampling_init(&s);
  s.temperature = 0.8f;
  s.top_k = 30;
  c->rng = 2024;
  REQUIRE_OK(octet_session_sample(session, &s, &c->rng, c->sampled));
  for (t = 0; t < STEPS; ++t) {
    REQUIRE_OK(octet_session_step(session, kFeed[t], batch));
    last_rows(session, batch, c->steps[t]);
  }
  if (extend) {
    REQUIRE_OK(octet_session_state_load(session, state, size));
    REQUIRE_OK(octet_session_extend(session, kExtend, batch, 2));
    last_rows(session, batch, c->extended);
  }
}

static void expect_same(const continuation* a, const continuation* b, const char* what) {
  if (memcmp(a, b, sizeof(*a)) != 0) {
    fprintf(stderr,
            "%s: the restored session differs (next %d, sample %d, rng %d, steps %d, "
            "extend %d)\n",
            what, memcmp(a->next, b->next, sizeof(a->next)) != 0,
            memcmp(a->sampled, b->sampled, sizeof(a->sampled)) != 0, a->rng != b->rng,
            memcmp(a->steps, b->steps, sizeof(a->steps)) != 0,
            memcmp(a->extended, b->extended, sizeof(a->extended)) != 0);
    ++g_failures;
  }
}

/* A session for explicit options (threads, flags). */
static octet_session* session_with(const octet_model* model, uint32_t max_batch, uint32_t max_seq,
                                   uint32_t max_new, uint32_t flags, uint32_t threads) {
  octet_session_options o;
  octet_session* session = NULL;
  octet_session_options_init(&o);
  o.max_batch = max_batch;
  o.max_seq = max_seq;
  o.max_new_tokens = max_new;
  o.flags = flags;
  o.threads = threads;
  REQUIRE_OK(octet_session_create_with_options(model, &o, NULL, 0, &session));
  return session;
}

static void check_decoder_state(const char* name) {
  static const int32_t prompts[12] = {3, 14, 15, 9, 26, 53, 58, 9, 7, 0, 0, 0}; /* [2, 6] */
  static const uint32_t lengths[2] = {6, 3};
  octet_model* model = load_model(name);
  octet_session* original = make_session(model, 2, 6, 8, 0);
  octet_session *same, *bigger, *caller;
  continuation want, got;
  unsigned char* state;
  size_t size = 0, written = 0, later = 0;
  octet_session_plan plan;
  octet_session_options o;
  void* memory = NULL;

  REQUIRE_OK(octet_session_run(original, prompts, lengths, 2, 6));
  REQUIRE_OK(octet_session_state_size(original, &size));
  REQUIRE(size > 0);
  state = (unsigned char*)malloc(size);
  REQUIRE(state != NULL);
  /* Short buffers report the exact size; with it, the save succeeds. */
  EXPECT_FAIL(octet_session_state_save(original, state, size - 1, &written), OCTET_BUFFER_TOO_SMALL,
              "bytes");
  EXPECT(written == size);
  written = 0;
  EXPECT_FAIL(octet_session_state_save(original, NULL, 0, &written), OCTET_BUFFER_TOO_SMALL,
              "bytes");
  EXPECT(written == size);
  written = 0;
  REQUIRE_OK(octet_session_state_save(original, state, size, &written));
  EXPECT(written == size);
  continue_from(original, 2, state, size, 1, &want);
  /* More positions, more bytes. */
  REQUIRE_OK(octet_session_state_size(original, &later));
  EXPECT(later > size);

  /* The same limits. */
  same = make_session(model, 2, 6, 8, 0);
  REQUIRE_OK(octet_session_state_load(same, state, size));
  continue_from(same, 2, state, size, 1, &got);
  expect_same(&want, &got, "same limits");
  /* Bigger limits, every logit, two threads. */
  bigger = session_with(model, 3, 10, 16, OCTET_SESSION_ALL_LOGITS, 2);
  REQUIRE_OK(octet_session_state_load(bigger, state, size));
  continue_from(bigger, 2, state, size, 1, &got);
  expect_same(&want, &got, "bigger limits");
  /* Caller memory. */
  octet_session_options_init(&o);
  o.max_batch = 2;
  o.max_seq = 7;
  o.max_new_tokens = 7;
  memset(&plan, 0, sizeof(plan));
  plan.struct_size = sizeof(plan);
  REQUIRE_OK(octet_session_plan_memory(model, &o, &plan));
  REQUIRE(posix_memalign(&memory, 64, plan.memory_bytes) == 0);
  REQUIRE_OK(octet_session_create_with_options(model, &o, memory, plan.memory_bytes, &caller));
  REQUIRE_OK(octet_session_state_load(caller, state, size));
  continue_from(caller, 2, state, size, 1, &got);
  expect_same(&want, &got, "caller memory");
  /* The original, rewound. */
  REQUIRE_OK(octet_session_state_load(original, state, size));
  continue_from(original, 2, state, size, 1, &got);
  expect_same(&want, &got, "rewound");
  /* A state saved after steps restores too. */
  {
    unsigned char* stepped = (unsigned char*)malloc(later);
    continuation a, b;
    REQUIRE(stepped != NULL);
    REQUIRE_OK(octet_session_state_load(original, state, size));
    REQUIRE_OK(octet_session_step(original, kFeed[0], 2));
    REQUIRE_OK(octet_session_step(original, kFeed[1], 2));
    REQUIRE_OK(octet_session_state_size(original, &later));
    REQUIRE_OK(octet_session_state_save(original, stepped, later, &written));
    EXPECT(written == later);
    continue_from(original, 2, NULL, 0, 0, &a);
    REQUIRE_OK(octet_session_state_load(same, stepped, later));
    continue_from(same, 2, NULL, 0, 0, &b);
    expect_same(&a, &b, "saved after steps");
    free(stepped);
  }
  octet_session_free(caller);
  free(memory);
  octet_session_free(bigger);
  octet_session_free(same);
  octet_session_free(original);
  free(state);
  octet_model_free(model);
}

static void check_encoder_decoder_state(void) {
  static const int32_t source[12] = {3, 9, 14, 1, 30, 22, 5, 8, 2, 19, 0, 0}; /* [2, 6] */
  static const uint32_t source_lengths[2] = {6, 4};
  static const int32_t target[4] = {0, 12, 0, 0}; /* [2, 2] */
  static const uint32_t target_lengths[2] = {2, 1};
  octet_model* t5 = load_model("t5.octet");
  octet_session* original = make_session(t5, 2, 6, 6, 0);
  octet_session *same, *bigger, *small;
  continuation want, got;
  unsigned char* state;
  size_t size = 0, written = 0;

  REQUIRE_OK(octet_session_run_encoder_decoder(original, source, source_lengths, 6, target,
                                               target_lengths, 2, 2));
  REQUIRE_OK(octet_session_state_size(original, &size));
  state = (unsigned char*)malloc(size);
  REQUIRE(state != NULL);
  REQUIRE_OK(octet_session_state_save(original, state, size, &written));
  EXPECT(written == size);
  continue_from(original, 2, NULL, 0, 0, &want);
  same = make_session(t5, 2, 6, 6, 0);
  REQUIRE_OK(octet_session_state_load(same, state, size));
  continue_from(same, 2, NULL, 0, 0, &got);
  expect_same(&want, &got, "t5, same limits");
  bigger = session_with(t5, 4, 9, 12, OCTET_SESSION_ALL_LOGITS, 2);
  REQUIRE_OK(octet_session_state_load(bigger, state, size));
  continue_from(bigger, 2, NULL, 0, 0, &got);
  expect_same(&want, &got, "t5, bigger limits");
  REQUIRE_OK(octet_session_state_load(original, state, size));
  continue_from(original, 2, NULL, 0, 0, &got);
  expect_same(&want, &got, "t5, rewound");
  /* A source longer than the session's max_seq does not fit. */
  small = make_session(t5, 2, 5, 20, 0);
  EXPECT_FAIL(octet_session_state_load(small, state, size), OCTET_LIMIT_EXCEEDED, "source");
  octet_session_free(small);
  octet_session_free(bigger);
  octet_session_free(same);
  octet_session_free(original);
  free(state);
  octet_model_free(t5);
}

static void check_state_errors(void) {
  static const int32_t prompts[12] = {3, 14, 15, 9, 26, 53, 58, 9, 7, 0, 0, 0}; /* [2, 6] */
  static const uint32_t lengths[2] = {6, 3};
  octet_model* llama = load_model("llama.octet");
  octet_model* other = load_model("llama_other.octet");
  octet_model* fp32 = load_model("llama_fp32.octet");
  octet_model* fp32_other = load_model("llama_fp32_other.octet");
  octet_model* bert = load_model("bert.octet");
  octet_model* t5 = load_model("t5.octet");
  octet_session* session = make_session(llama, 2, 6, 8, 0);
  octet_session* target = make_session(llama, 2, 6, 8, 0);
  octet_session* elsewhere;
  unsigned char *state, *copy;
  size_t size = 0, written = 0, i;
  float before[2 * 64];
  octet_output out;
  int accepted = 0;

  REQUIRE_OK(octet_session_run(session, prompts, lengths, 2, 6));
  REQUIRE_OK(octet_session_state_size(session, &size));
  state = (unsigned char*)malloc(size + 1);
  copy = (unsigned char*)malloc(size + 1);
  REQUIRE(state != NULL && copy != NULL);
  REQUIRE_OK(octet_session_state_save(session, state, size, &written));
  state[size] = 0;

  /* Null pointers. */
  EXPECT_FAIL(octet_session_state_size(NULL, &written), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_session_state_size(session, NULL), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_session_state_save(NULL, state, size, &written), OCTET_INVALID_ARGUMENT,
              "null");
  EXPECT_FAIL(octet_session_state_save(session, state, size, NULL), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_session_state_load(NULL, state, size), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_session_state_load(target, NULL, size), OCTET_INVALID_ARGUMENT, "null");

  /* The target's last output, to see that failed loads leave it alone. */
  REQUIRE_OK(octet_session_run(target, prompts + 6, lengths + 1, 1, 6));
  last_rows(target, 1, before);

  /* Truncated, padded, too short for a header. */
  EXPECT_FAIL(octet_session_state_load(target, state, size - 1), OCTET_INVALID_ARGUMENT, "bytes");
  EXPECT_FAIL(octet_session_state_load(target, state, size + 1), OCTET_INVALID_ARGUMENT, "bytes");
  EXPECT_FAIL(octet_session_state_load(target, state, 10), OCTET_INVALID_ARGUMENT, "short");
  EXPECT_FAIL(octet_session_state_load(target, state, 0), OCTET_INVALID_ARGUMENT, "short");
  /* Not a state; another model's (same architecture, other weights; fp32). */
  memcpy(copy, state, size);
  copy[0] ^= 0x20;
  EXPECT_FAIL(octet_session_state_load(target, copy, size), OCTET_INVALID_ARGUMENT, "state");
  elsewhere = make_session(other, 2, 6, 8, 0);
  EXPECT_FAIL(octet_session_state_load(elsewhere, state, size), OCTET_INVALID_ARGUMENT,
              "another model");
  octet_session_free(elsewhere);
  elsewhere = make_session(fp32, 2, 6, 8, 0);
  EXPECT_FAIL(octet_session_state_load(elsewhere, state, size), OCTET_INVALID_ARGUMENT,
              "another model");
  octet_session_free(elsewhere);
  elsewhere = make_session(t5, 2, 6, 8, 0);
  EXPECT_FAIL(octet_session_state_load(elsewhere, state, size), OCTET_INVALID_ARGUMENT,
              "another model");
  octet_session_free(elsewhere);
  /* fp32 twins: the same tables (names, shapes, offsets), other weights. */
  {
    octet_session* a = make_session(fp32, 2, 6, 8, 0);
    unsigned char* fp32_state;
    size_t fp32_size = 0;
    REQUIRE_OK(octet_session_run(a, prompts, lengths, 2, 6));
    REQUIRE_OK(octet_session_state_size(a, &fp32_size));
    fp32_state = (unsigned char*)malloc(fp32_size);
    REQUIRE(fp32_state != NULL);
    REQUIRE_OK(octet_session_state_save(a, fp32_state, fp32_size, &written));
    elsewhere = make_session(fp32_other, 2, 6, 8, 0);
    EXPECT_FAIL(octet_session_state_load(elsewhere, fp32_state, fp32_size), OCTET_INVALID_ARGUMENT,
                "another model");
    octet_session_free(elsewhere);
    EXPECT_OK(octet_session_state_load(a, fp32_state, fp32_size));
    free(fp32_state);
    octet_session_free(a);
  }
  /* Models without a state. */
  elsewhere = make_session(bert, 2, 6, 0, 0);
  EXPECT_FAIL(octet_session_state_load(elsewhere, state, size), OCTET_UNSUPPORTED, "decoders");
  EXPECT_OK(octet_session_run(elsewhere, prompts, lengths, 2, 6));
  EXPECT_FAIL(octet_session_state_size(elsewhere, &written), OCTET_UNSUPPORTED, "decoders");
  EXPECT_FAIL(octet_session_state_save(elsewhere, copy, size, &written), OCTET_UNSUPPORTED,
              "decoders");
  octet_session_free(elsewhere);
  /* More sequences than max_batch; more positions than the session holds. */
  elsewhere = make_session(llama, 1, 6, 8, 0);
  EXPECT_FAIL(octet_session_state_load(elsewhere, state, size), OCTET_LIMIT_EXCEEDED, "sequences");
  octet_session_free(elsewhere);
  elsewhere = make_session(llama, 2, 4, 1, 0);
  EXPECT_FAIL(octet_session_state_load(elsewhere, state, size), OCTET_LIMIT_EXCEEDED, "positions");
  octet_session_free(elsewhere);
  /* Any byte of the fixed header changed (magic, model fingerprint, shapes,
   * sequence count, reserved): refused. */
  for (i = 0; i < 56; ++i) {
    int bit;
    for (bit = 0; bit < 8; bit += 7) {
      memcpy(copy, state, size);
      copy[i] ^= (unsigned char)(1u << bit);
      harness_mark();
      if (octet_session_state_load(target, copy, size) == OCTET_OK) {
        fprintf(stderr, "a state with header byte %u ^ 0x%x was accepted\n", (unsigned)i,
                1u << bit);
        accepted = 1;
        REQUIRE_OK(octet_session_run(target, prompts + 6, lengths + 1, 1, 6));
      } else {
        EXPECT(strlen(octet_last_error()) > 0);
      }
    }
  }
  EXPECT(!accepted);
  /* Every failed load left the session as it was. */
  REQUIRE_OK(octet_session_output(target, &out));
  EXPECT(out.batch == 1 && memcmp(out.data, before, sizeof(before) / 2) == 0);
  {
    const int32_t next[1] = {4};
    EXPECT_OK(octet_session_step(target, next, 1));
  }
  octet_session_free(target);
  octet_session_free(session);
  free(copy);
  free(state);
  octet_model_free(t5);
  octet_model_free(bert);
  octet_model_free(fp32_other);
  octet_model_free(fp32);
  octet_model_free(other);
  octet_model_free(llama);
}

void test_state(void) {
  check_decoder_state("llama.octet");
  check_decoder_state("llama_fp32.octet");
  check_encoder_decoder_state();
  check_state_errors();
}
