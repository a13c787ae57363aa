/* Sessions: options and plans, caller memory, the run-time checks, calls in the
 * wrong order and on the wrong kind of model; runs, steps, extends and
 * encoder-decoder runs against the full-sequence logits. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>

#include "harness.h"

/* A copy of the session's output, malloc'ed. */
static float* output_copy(const octet_session* session, octet_output* shape) {
  octet_output out;
  float* copy;
  size_t n;
  REQUIRE_OK(octet_session_output(session, &out));
  n = (size_t)out.batch * out.seq * out.dim;
  copy = (float*)malloc(n * sizeof(float));
  REQUIRE(copy != NULL);
  memcpy(copy, out.data, n * sizeof(float));
  if (shape != NULL) *shape = out;
  return copy;
}

/* Row `row` of the current output equals `expected` bit for bit. */
static int output_row_equals(const octet_session* session, uint32_t row, const float* expected) {
  octet_output out;
  if (octet_session_output(session, &out) != OCTET_OK) return 0;
  return memcmp(out.data + (size_t)row * out.dim, expected, out.dim * sizeof(float)) == 0;
}

static void check_inits(void) {
  octet_session_options o;
  octet_sampling s;
  octet_generate_options g;
  octet_chat_options c;
  memset(&o, 0xCD, sizeof(o));
  octet_session_options_init(&o);
  EXPECT(o.struct_size == sizeof(o) && o.max_batch == 1 && o.max_seq == 128 &&
         o.max_new_tokens == 0 && o.threads == 1 && o.flags == 0 && o.prefill_chunk == 0);
  memset(&s, 0xCD, sizeof(s));
  octet_sampling_init(&s);
  EXPECT(s.struct_size == sizeof(s) && s.temperature == 1.0f && s.top_k == 0 && s.top_p == 1.0f &&
         s.logits_hook == NULL && s.logits_hook_user == NULL);
  memset(&g, 0xCD, sizeof(g));
  octet_generate_options_init(&g);
  EXPECT(g.struct_size == sizeof(g) && g.max_new_tokens == 128 && g.temperature == 1.0f &&
         g.top_k == 0 && g.top_p == 1.0f && g.seed == 0 && g.flags == 0 && g.on_token == NULL &&
         g.on_token_user == NULL && g.logits_hook == NULL && g.logits_hook_user == NULL);
  memset(&c, 0xCD, sizeof(c));
  octet_chat_options_init(&c);
  EXPECT(c.struct_size == sizeof(c) && c.flags == 0 && c.now == NULL);
}

static void check_plans(const octet_model* llama, const octet_model* bert) {
  octet_session_options o;
  octet_session_plan plan, defaults, all_logits;
  unsigned char buffer[sizeof(octet_session_plan) + 16];
  octet_session_plan* older = (octet_session_plan*)(void*)buffer;
  memset(&plan, 0, sizeof(plan));
  plan.struct_size = sizeof(plan);
  octet_session_options_init(&o);
  EXPECT_FAIL(octet_session_plan_memory(NULL, &o, &plan), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_session_plan_memory(llama, &o, NULL), OCTET_INVALID_ARGUMENT, "null");
  plan.struct_size = 0;
  EXPECT_FAIL(octet_session_plan_memory(llama, &o, &plan), OCTET_INVALID_ARGUMENT, "struct_size");
  plan.struct_size = sizeof(plan);
  o.struct_size = 0;
  EXPECT_FAIL(octet_session_plan_memory(llama, &o, &plan), OCTET_INVALID_ARGUMENT, "struct_size");
  octet_session_options_init(&o);
  o.flags = 0x80;
  EXPECT_FAIL(octet_session_plan_memory(llama, &o, &plan), OCTET_INVALID_ARGUMENT, "flags");
  octet_session_options_init(&o);
  o.max_batch = 0;
  EXPECT_FAIL(octet_session_plan_memory(llama, &o, &plan), OCTET_INVALID_ARGUMENT, "max_batch");
  octet_session_options_init(&o);
  o.max_seq = 0;
  EXPECT_FAIL(octet_session_plan_memory(llama, &o, &plan), OCTET_INVALID_ARGUMENT, "max_seq");
  octet_session_options_init(&o);
  o.threads = 257;
  EXPECT_FAIL(octet_session_plan_memory(llama, &o, &plan), OCTET_INVALID_ARGUMENT, "threads");
  octet_session_options_init(&o);
  o.max_seq = 65; /* bert's learned positions: 64 */
  EXPECT_FAIL(octet_session_plan_memory(bert, &o, &plan), OCTET_INVALID_ARGUMENT, "positions");

  /* NULL options: the defaults. */
  memset(&defaults, 0, sizeof(defaults));
  defaults.struct_size = sizeof(defaults);
  EXPECT_OK(octet_session_plan_memory(llama, NULL, &defaults));
  octet_session_options_init(&o);
  EXPECT_OK(octet_session_plan_memory(llama, &o, &plan));
  EXPECT(memcmp(&plan, &defaults, sizeof(plan)) == 0);
  EXPECT(plan.activation_bytes > 0 && plan.scratch_bytes > 0);
  EXPECT(plan.memory_bytes >= plan.activation_bytes + plan.scratch_bytes + plan.kv_cache_bytes);
  EXPECT(plan.memory_bytes % 64 == 0);
  /* Every logit takes more room than the last ones; steps take KV cache. */
  o.flags = OCTET_SESSION_ALL_LOGITS;
  memset(&all_logits, 0, sizeof(all_logits));
  all_logits.struct_size = sizeof(all_logits);
  EXPECT_OK(octet_session_plan_memory(llama, &o, &all_logits));
  EXPECT(all_logits.activation_bytes > plan.activation_bytes);
  octet_session_options_init(&o);
  o.max_new_tokens = 64;
  EXPECT_OK(octet_session_plan_memory(llama, &o, &all_logits));
  EXPECT(all_logits.kv_cache_bytes > plan.kv_cache_bytes);
  /* Prompts in chunks of 2 positions: smaller buffers. */
  octet_session_options_init(&o);
  o.prefill_chunk = 2;
  EXPECT_OK(octet_session_plan_memory(llama, &o, &all_logits));
  EXPECT(all_logits.activation_bytes < plan.activation_bytes);
  /* An older caller's options (no flags, no prefill_chunk): those keep their
   * defaults whatever the bytes after its struct_size hold. */
  octet_session_options_init(&o);
  o.struct_size = offsetof(octet_session_options, flags);
  o.flags = 0xFFFF;
  o.prefill_chunk = 0xFFFF;
  EXPECT_OK(octet_session_plan_memory(llama, &o, &plan));
  EXPECT(memcmp(&plan, &defaults, sizeof(plan)) == 0);
  /* An older caller's plan: only the bytes it covers are written. */
  memset(buffer, 0xAB, sizeof(buffer));
  older->struct_size = offsetof(octet_session_plan, scratch_bytes);
  EXPECT_OK(octet_session_plan_memory(llama, NULL, older));
  EXPECT(older->struct_size == offsetof(octet_session_plan, scratch_bytes));
  EXPECT(older->activation_bytes == defaults.activation_bytes);
  EXPECT(buffer[offsetof(octet_session_plan, scratch_bytes)] == 0xAB &&
         buffer[sizeof(buffer) - 1] == 0xAB);
}

/* The same runs, steps and generation in three sessions: an allocating one and
 * two in caller memory, interleaved. */
static void check_caller_memory(const octet_model* llama) {
  static const int32_t ids[12] = {3, 14, 15, 9, 26, 5, 35, 8, 9, 0, 0, 0};
  static const uint32_t lengths[2] = {6, 3};
  octet_session_options o;
  octet_session_plan plan;
  octet_session *own = NULL, *first = NULL, *second = NULL, *out = (octet_session*)&o;
  unsigned char* memory[2] = {NULL, NULL};
  octet_generate_options g;
  uint32_t counts[3][2];
  int32_t step[2] = {7, 11};
  float* expected;
  octet_output shape, got;
  int i, t;

  octet_session_options_init(&o);
  o.max_batch = 2;
  o.max_seq = 6;
  o.max_new_tokens = 4;
  o.threads = 1;
  memset(&plan, 0, sizeof(plan));
  plan.struct_size = sizeof(plan);
  REQUIRE_OK(octet_session_plan_memory(llama, &o, &plan));
  for (i = 0; i < 2; ++i) {
    void* p = NULL;
    REQUIRE(posix_memalign(&p, 64, plan.memory_bytes + 128) == 0);
    memory[i] = (unsigned char*)p;
    memset(memory[i], 0x5C, plan.memory_bytes + 128);
  }
  /* Too small, misaligned, nothing. */
  EXPECT_FAIL(octet_session_create_with_options(llama, &o, memory[0], plan.memory_bytes - 1, &out),
              OCTET_BUFFER_TOO_SMALL, "bytes");
  EXPECT(out == NULL);
  EXPECT_FAIL(octet_session_create_with_options(llama, &o, memory[0], 0, &out),
              OCTET_BUFFER_TOO_SMALL, "bytes");
  EXPECT_FAIL(octet_session_create_with_options(llama, &o, memory[0] + 8, plan.memory_bytes, &out),
              OCTET_INVALID_ARGUMENT, "aligned");
  EXPECT_FAIL(octet_session_create_with_options(NULL, &o, memory[0], plan.memory_bytes, &out),
              OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_session_create_with_options(llama, &o, memory[0], plan.memory_bytes, NULL),
              OCTET_INVALID_ARGUMENT, "null");
  o.flags = 2;
  EXPECT_FAIL(octet_session_create_with_options(llama, &o, memory[0], plan.memory_bytes, &out),
              OCTET_INVALID_ARGUMENT, "flags");
  o.flags = 0;
  o.struct_size = sizeof(size_t) - 1; /* not even its own size field */
  EXPECT_FAIL(octet_session_create_with_options(llama, &o, NULL, 0, &out), OCTET_INVALID_ARGUMENT,
              "struct_size");
  o.struct_size = sizeof(o);

  REQUIRE_OK(octet_session_create_with_options(llama, &o, NULL, 0, &own));
  REQUIRE_OK(octet_session_create_with_options(llama, &o, memory[0], plan.memory_bytes, &first));
  REQUIRE_OK(octet_session_create_with_options(llama, &o, memory[1], plan.memory_bytes, &second));
  EXPECT(octet_session_arena_bytes(first) ==
         plan.activation_bytes + plan.scratch_bytes + plan.kv_cache_bytes);
  EXPECT(octet_session_arena_bytes(own) == octet_session_arena_bytes(first));
  EXPECT(octet_session_arena_bytes(NULL) == 0);

  REQUIRE_OK(octet_session_run(own, ids, lengths, 2, 6));
  expected = output_copy(own, &shape);
  EXPECT(shape.batch == 2 && shape.seq == 1 && shape.dim == 64);
  EXPECT_OK(octet_session_run(first, ids, lengths, 2, 6));
  EXPECT_OK(octet_session_run(second, ids, lengths, 2, 6));
  EXPECT_OK(octet_session_output(first, &got));
  /* The output lives in the caller's buffer. */
  EXPECT((const unsigned char*)got.data >= memory[0] &&
         (const unsigned char*)(got.data + 2 * 64) <= memory[0] + plan.memory_bytes);
  EXPECT(output_row_equals(first, 0, expected) && output_row_equals(first, 1, expected + 64));
  EXPECT(output_row_equals(second, 0, expected) && output_row_equals(second, 1, expected + 64));
  free(expected);
  for (t = 0; t < 4; ++t) {
    REQUIRE_OK(octet_session_step(own, step, 2));
    expected = output_copy(own, NULL);
    EXPECT_OK(octet_session_step(second, step, 2));
    EXPECT_OK(octet_session_step(first, step, 2));
    EXPECT(output_row_equals(first, 0, expected) && output_row_equals(first, 1, expected + 64));
    EXPECT(output_row_equals(second, 0, expected) && output_row_equals(second, 1, expected + 64));
    free(expected);
    step[0] = (step[0] * 7 + 3) % 64;
    step[1] = (step[1] * 5 + 1) % 64;
  }
  /* Generation, sampled: the same tokens everywhere (counted via out_counts and
   * compared through the last output). */
  octet_generate_options_init(&g);
  g.max_new_tokens = 5;
  g.temperature = 0.9f;
  g.seed = 99;
  g.flags = OCTET_GENERATE_IGNORE_EOS;
  EXPECT_OK(octet_generate(own, ids, lengths, 2, 6, &g, counts[0]));
  EXPECT_OK(octet_generate(first, ids, lengths, 2, 6, &g, counts[1]));
  EXPECT_OK(octet_generate(second, ids, lengths, 2, 6, &g, counts[2]));
  expected = output_copy(own, NULL);
  EXPECT(counts[0][0] == 5 && counts[0][1] == 5);
  EXPECT(memcmp(counts[0], counts[1], sizeof(counts[0])) == 0 &&
         memcmp(counts[0], counts[2], sizeof(counts[0])) == 0);
  EXPECT(output_row_equals(first, 0, expected) && output_row_equals(first, 1, expected + 64));
  EXPECT(output_row_equals(second, 0, expected) && output_row_equals(second, 1, expected + 64));
  free(expected);
  /* Nothing past memory_bytes was touched. */
  for (i = 0; i < 2; ++i) {
    size_t k;
    int clean = 1;
    for (k = plan.memory_bytes; k < plan.memory_bytes + 128; ++k) clean &= memory[i][k] == 0x5C;
    EXPECT(clean);
  }
  octet_session_free(second);
  octet_session_free(first);
  octet_session_free(own);
  free(memory[0]);
  free(memory[1]);
}

static void check_create_and_run_errors(const octet_model* llama, const octet_model* t5) {
  octet_session_limits limits;
  octet_session *session = NULL, *two = NULL, *out = (octet_session*)&limits;
  int32_t ids[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  uint32_t lengths[2] = {4, 2};
  octet_output shape;
  float* a;

  EXPECT_FAIL(octet_session_create(NULL, NULL, &out), OCTET_INVALID_ARGUMENT, "null");
  EXPECT(out == NULL);
  EXPECT_FAIL(octet_session_create(llama, NULL, NULL), OCTET_INVALID_ARGUMENT, "null");
  memset(&limits, 0, sizeof(limits));
  EXPECT_FAIL(octet_session_create(llama, &limits, &out), OCTET_INVALID_ARGUMENT, "max_batch");
  limits.max_batch = 1;
  limits.max_seq = 4;
  limits.threads = 1000;
  EXPECT_FAIL(octet_session_create(llama, &limits, &out), OCTET_INVALID_ARGUMENT, "threads");
  /* NULL limits: batch 1, 128 tokens, every logit. */
  REQUIRE_OK(octet_session_create(llama, NULL, &session));
  REQUIRE_OK(octet_session_run(session, ids, lengths, 1, 4));
  a = output_copy(session, &shape);
  EXPECT(shape.batch == 1 && shape.seq == 4 && shape.dim == 64);
  /* Two threads: the same bits. */
  limits.max_batch = 2;
  limits.max_seq = 4;
  limits.max_new_tokens = 0;
  limits.threads = 2;
  REQUIRE_OK(octet_session_create(llama, &limits, &two));
  REQUIRE_OK(octet_session_run(two, ids, lengths, 1, 4));
  EXPECT(output_row_equals(two, 3, a + 3 * 64) && output_row_equals(two, 0, a));
  octet_session_free(session);

  /* Run-time inputs. */
  session = two;
  EXPECT_FAIL(octet_session_run(NULL, ids, lengths, 1, 4), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_session_run(session, NULL, lengths, 1, 4), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_session_run(session, ids, NULL, 1, 4), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_session_run(session, ids, lengths, 0, 4), OCTET_INVALID_ARGUMENT, "batch");
  EXPECT_FAIL(octet_session_run(session, ids, lengths, 3, 4), OCTET_LIMIT_EXCEEDED, "max_batch");
  EXPECT_FAIL(octet_session_run(session, ids, lengths, 1, 0), OCTET_INVALID_ARGUMENT, "length");
  EXPECT_FAIL(octet_session_run(session, ids, lengths, 1, 5), OCTET_LIMIT_EXCEEDED, "max_seq");
  lengths[1] = 0;
  EXPECT_FAIL(octet_session_run(session, ids, lengths, 2, 4), OCTET_INVALID_ARGUMENT, "length");
  lengths[1] = 5;
  EXPECT_FAIL(octet_session_run(session, ids, lengths, 2, 4), OCTET_INVALID_ARGUMENT, "length");
  lengths[1] = 2;
  ids[5] = 64;
  EXPECT_FAIL(octet_session_run(session, ids, lengths, 2, 4), OCTET_INVALID_ARGUMENT, "vocabulary");
  ids[5] = -1;
  EXPECT_FAIL(octet_session_run(session, ids, lengths, 2, 4), OCTET_INVALID_ARGUMENT, "vocabulary");
  /* Failed runs fail their checks before computing: the last output stays. */
  EXPECT_OK(octet_session_output(session, &shape));
  EXPECT(shape.batch == 1 && shape.seq == 4 && output_row_equals(session, 3, a + 3 * 64));
  free(a);
  ids[5] = 6;
  ids[6] = 1000; /* padding is not read */
  ids[7] = -5;
  EXPECT_OK(octet_session_run(session, ids, lengths, 2, 4));
  EXPECT_FAIL(octet_session_output(session, NULL), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_session_output(NULL, &shape), OCTET_INVALID_ARGUMENT, "null");
  octet_session_free(session);

  /* A session whose only run failed has no output. */
  session = make_session(llama, 1, 4, 0, 0);
  EXPECT_FAIL(octet_session_run(session, ids, lengths, 1, 5), OCTET_LIMIT_EXCEEDED, "max_seq");
  EXPECT_FAIL(octet_session_output(session, &shape), OCTET_INVALID_STATE, "run");
  octet_session_free(session);

  /* An encoder-decoder model runs with run_encoder_decoder. */
  session = make_session(t5, 1, 4, 0, 0);
  EXPECT_FAIL(octet_session_run(session, ids, lengths, 1, 4), OCTET_UNSUPPORTED, "encoder-decoder");
  octet_session_free(session);
}

/* Calls before any run, and calls a model of this kind cannot make. */
static void check_order_and_kind(const octet_model* llama, const octet_model* llama0,
                                 const octet_model* bert, const octet_model* t5) {
  static const int32_t ids[4] = {1, 2, 3, 4};
  static const uint32_t lengths[1] = {4};
  octet_session* session = make_session(llama, 1, 4, 4, 0);
  octet_output out;
  int32_t next[1] = {0};
  uint64_t rng = 1;
  size_t bytes = 0;
  EXPECT_FAIL(octet_session_output(session, &out), OCTET_INVALID_STATE, "run");
  EXPECT_FAIL(octet_session_sample(session, NULL, &rng, next), OCTET_INVALID_STATE, "run");
  EXPECT_FAIL(octet_session_step(session, ids, 1), OCTET_INVALID_STATE, "Run");
  EXPECT_FAIL(octet_session_extend(session, ids, 1, 2), OCTET_INVALID_STATE, "Run");
  EXPECT_FAIL(octet_session_state_size(session, &bytes), OCTET_INVALID_STATE, "run");
  EXPECT_FAIL(octet_session_state_save(session, NULL, 0, &bytes), OCTET_INVALID_STATE, "run");
  EXPECT_FAIL(octet_session_run_encoder_decoder(session, ids, lengths, 4, ids, lengths, 4, 1),
              OCTET_UNSUPPORTED, "encoder-decoder");
  octet_session_free(session);

  session = make_session(t5, 1, 4, 4, 0);
  EXPECT_FAIL(octet_session_step(session, ids, 1), OCTET_INVALID_STATE, "RunEncoderDecoder");
  EXPECT_FAIL(octet_session_sample(session, NULL, &rng, next), OCTET_INVALID_STATE, "run");
  EXPECT_OK(octet_session_run_encoder_decoder(session, ids, lengths, 4, ids, lengths, 4, 1));
  EXPECT_FAIL(octet_session_extend(session, ids, 1, 1), OCTET_UNSUPPORTED, "decoder-only");
  octet_session_free(session);

  session = make_session(bert, 1, 4, 0, 0);
  EXPECT_OK(octet_session_run(session, ids, lengths, 1, 4));
  EXPECT_FAIL(octet_session_step(session, ids, 1), OCTET_UNSUPPORTED, "decoder");
  EXPECT_FAIL(octet_session_extend(session, ids, 1, 1), OCTET_UNSUPPORTED, "decoder");
  EXPECT_FAIL(octet_session_sample(session, NULL, &rng, next), OCTET_UNSUPPORTED, "logits");
  EXPECT_FAIL(octet_session_run_encoder_decoder(session, ids, lengths, 4, ids, lengths, 4, 1),
              OCTET_UNSUPPORTED, "encoder-decoder");
  octet_session_free(session);

  session = make_session(llama0, 1, 4, 4, 0);
  EXPECT_OK(octet_session_run(session, ids, lengths, 1, 4));
  EXPECT_OK(octet_session_sample(session, NULL, &rng, next)); /* logits, but no cache */
  EXPECT_FAIL(octet_session_step(session, ids, 1), OCTET_UNSUPPORTED, "layers");
  EXPECT_FAIL(octet_session_extend(session, ids, 1, 1), OCTET_UNSUPPORTED, "layers");
  octet_session_free(session);
}

void test_sessions(void) {
  octet_model* llama = load_model("llama.octet");
  octet_model* llama0 = load_model("llama0.octet");
  octet_model* bert = load_model("bert.octet");
  octet_model* t5 = load_model("t5.octet");
  check_inits();
  check_plans(llama, bert);
  check_caller_memory(llama);
  check_create_and_run_errors(llama, t5);
  check_order_and_kind(llama, llama0, bert, t5);
  octet_model_free(t5);
  octet_model_free(bert);
  octet_model_free(llama0);
  octet_model_free(llama);
}

/* ---- Steps ------------------------------------------------------------------------ */

/* Decoder-only: prompts of 3 and 4 tokens, then steps and extends, against one
 * run over the whole 8 tokens with every logit. int8: bit for bit (every row
 * quantized on its own, key tiles aligned to absolute positions:
 * tests/engine/session_test.cc); fp32: within 1e-5 of the largest logit. */
static void check_decoder_steps(const char* name, int exact) {
  static const int32_t full[2][8] = {{4, 17, 9, 25, 3, 11, 30, 2}, {12, 5, 28, 1, 19, 6, 23, 14}};
  static const uint32_t prompt[2] = {3, 4};
  octet_model* model = load_model(name);
  octet_session* whole = make_session(model, 2, 8, 0, OCTET_SESSION_ALL_LOGITS);
  octet_session* stepped = make_session(model, 2, 4, 4, 0);
  octet_session* extended = make_session(model, 2, 4, 4, OCTET_SESSION_ALL_LOGITS);
  octet_session* extended_last = make_session(model, 2, 4, 4, 0);
  const uint32_t full_lengths[2] = {8, 8};
  int32_t ids[8], more[6], next[2];
  float* reference;
  octet_output shape, out;
  double worst = 0.0;
  uint32_t b, t;

#define CHECK_ROW(session, row, b, pos)                                                      \
  do {                                                                                       \
    REQUIRE_OK(octet_session_output((session), &out));                                       \
    if (exact) {                                                                             \
      EXPECT(memcmp(out.data + (size_t)(row)*64, reference + ((b)*8 + (pos)) * 64,           \
                    64 * sizeof(float)) == 0);                                               \
    } else {                                                                                 \
      double e_ =                                                                            \
          relative_error(out.data + (size_t)(row)*64, reference + ((b)*8 + (pos)) * 64, 64); \
      if (e_ > worst) worst = e_;                                                            \
    }                                                                                        \
  } while (0)

  REQUIRE_OK(octet_session_run(whole, &full[0][0], full_lengths, 2, 8));
  reference = output_copy(whole, &shape);
  EXPECT(shape.batch == 2 && shape.seq == 8 && shape.dim == 64);

  for (b = 0; b < 2; ++b) {
    for (t = 0; t < 4; ++t) ids[b * 4 + t] = t < prompt[b] ? full[b][t] : 0;
  }
  /* The prompt run: last rows only. */
  REQUIRE_OK(octet_session_run(stepped, ids, prompt, 2, 4));
  REQUIRE_OK(octet_session_output(stepped, &out));
  EXPECT(out.batch == 2 && out.seq == 1 && out.dim == 64);
  for (b = 0; b < 2; ++b) CHECK_ROW(stepped, b, b, prompt[b] - 1);
  /* Prompts in chunks of 2 positions: the same rows, bit for bit. */
  {
    octet_session_options o;
    octet_session* chunked = NULL;
    float* rows = output_copy(stepped, NULL);
    octet_session_options_init(&o);
    o.max_batch = 2;
    o.max_seq = 4;
    o.prefill_chunk = 2;
    REQUIRE_OK(octet_session_create_with_options(model, &o, NULL, 0, &chunked));
    REQUIRE_OK(octet_session_run(chunked, ids, prompt, 2, 4));
    EXPECT(output_row_equals(chunked, 0, rows) && output_row_equals(chunked, 1, rows + 64));
    octet_session_free(chunked);
    free(rows);
  }
  /* Four steps: sequence 0 reaches 7 tokens, sequence 1 all 8. */
  for (t = 0; t < 4; ++t) {
    next[0] = full[0][prompt[0] + t];
    next[1] = full[1][prompt[1] + t];
    REQUIRE_OK(octet_session_step(stepped, next, 2));
    REQUIRE_OK(octet_session_output(stepped, &out));
    EXPECT(out.batch == 2 && out.seq == 1);
    for (b = 0; b < 2; ++b) CHECK_ROW(stepped, b, b, prompt[b] + t);
  }
  /* max_seq + max_new_tokens = 8 positions: sequence 1 is full. */
  EXPECT_FAIL(octet_session_step(stepped, next, 2), OCTET_LIMIT_EXCEEDED, "full");
  EXPECT_FAIL(octet_session_step(stepped, next, 1), OCTET_INVALID_ARGUMENT, "sequences");
  EXPECT_FAIL(octet_session_step(stepped, NULL, 2), OCTET_INVALID_ARGUMENT, "");
  EXPECT_FAIL(octet_session_step(NULL, next, 2), OCTET_INVALID_ARGUMENT, "null");
  next[1] = 64;
  EXPECT_FAIL(octet_session_step(stepped, next, 2), OCTET_INVALID_ARGUMENT, "vocabulary");
  /* A failed step leaves the last output. */
  CHECK_ROW(stepped, 1, 1, 7);

  /* Extend: three tokens at once, every row (ALL_LOGITS) or the last. */
  REQUIRE_OK(octet_session_run(extended, ids, prompt, 2, 4));
  for (b = 0; b < 2; ++b) CHECK_ROW(extended, b * 4 + prompt[b] - 1, b, prompt[b] - 1);
  REQUIRE_OK(octet_session_run(extended_last, ids, prompt, 2, 4));
  for (b = 0; b < 2; ++b) {
    for (t = 0; t < 3; ++t) more[b * 3 + t] = full[b][prompt[b] + t];
  }
  EXPECT_FAIL(octet_session_extend(extended, more, 2, 0), OCTET_INVALID_ARGUMENT, "");
  EXPECT_FAIL(octet_session_extend(extended, more, 2, 5), OCTET_LIMIT_EXCEEDED, "max_seq");
  EXPECT_FAIL(octet_session_extend(extended, more, 1, 3), OCTET_INVALID_ARGUMENT, "sequences");
  EXPECT_FAIL(octet_session_extend(extended, NULL, 2, 3), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_session_extend(NULL, more, 2, 3), OCTET_INVALID_ARGUMENT, "null");
  more[4] = -3;
  EXPECT_FAIL(octet_session_extend(extended, more, 2, 3), OCTET_INVALID_ARGUMENT, "vocabulary");
  more[4] = full[1][prompt[1] + 1];
  REQUIRE_OK(octet_session_extend(extended, more, 2, 3));
  REQUIRE_OK(octet_session_output(extended, &out));
  EXPECT(out.batch == 2 && out.seq == 3 && out.dim == 64);
  for (b = 0; b < 2; ++b) {
    for (t = 0; t < 3; ++t) CHECK_ROW(extended, b * 3 + t, b, prompt[b] + t);
  }
  REQUIRE_OK(octet_session_extend(extended_last, more, 2, 3));
  REQUIRE_OK(octet_session_output(extended_last, &out));
  EXPECT(out.batch == 2 && out.seq == 1);
  for (b = 0; b < 2; ++b) CHECK_ROW(extended_last, b, b, prompt[b] + 2);
  /* Sequence 1 holds 7 of 8 positions: two more do not fit, one does. */
  EXPECT_FAIL(octet_session_extend(extended_last, more, 2, 2), OCTET_LIMIT_EXCEEDED, "full");
  next[0] = full[0][6];
  next[1] = full[1][7];
  REQUIRE_OK(octet_session_extend(extended_last, next, 2, 1));
  CHECK_ROW(extended_last, 0, 0, 6);
  CHECK_ROW(extended_last, 1, 1, 7);
  if (!exact) {
    if (worst > 1e-5) fprintf(stderr, "%s: steps vs full run: relative error %g\n", name, worst);
    EXPECT(worst <= 1e-5);
  }
#undef CHECK_ROW
  free(reference);
  octet_session_free(extended_last);
  octet_session_free(extended);
  octet_session_free(stepped);
  octet_session_free(whole);
  octet_model_free(model);
}

/* Encoder-decoder: a decoder prefix of 1 and 2 tokens, then steps, against the
 * teacher-forced run over 5 decoder tokens (int8: bit for bit). */
static void check_encoder_decoder_steps(void) {
  static const int32_t source[12] = {3, 9, 14, 1, 30, 22, 5, 8, 2, 19, 0, 0}; /* [2, 6] */
  static const uint32_t source_lengths[2] = {6, 4};
  static const int32_t target[10] = {0, 12, 5, 28, 4, 0, 7, 16, 3, 25}; /* [2, 5] */
  static const uint32_t target_lengths[2] = {5, 5};
  static const uint32_t prefix[2] = {1, 2};
  octet_model* t5 = load_model("t5.octet");
  octet_session* teacher = make_session(t5, 2, 6, 0, OCTET_SESSION_ALL_LOGITS);
  octet_session* session = make_session(t5, 2, 6, 4, 0);
  int32_t dec[4], next[2];
  uint32_t lengths[2], b, t;
  float* reference;
  octet_output out;

  REQUIRE_OK(octet_session_run_encoder_decoder(teacher, source, source_lengths, 6, target,
                                               target_lengths, 5, 2));
  reference = output_copy(teacher, &out);
  EXPECT(out.batch == 2 && out.seq == 5 && out.dim == 64);
  for (b = 0; b < 2; ++b) {
    for (t = 0; t < 2; ++t) dec[b * 2 + t] = t < prefix[b] ? target[b * 5 + t] : 0;
  }
  /* The run-time checks. */
  EXPECT_FAIL(octet_session_run_encoder_decoder(NULL, source, source_lengths, 6, dec, prefix, 2, 2),
              OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(
      octet_session_run_encoder_decoder(session, NULL, source_lengths, 6, dec, prefix, 2, 2),
      OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(
      octet_session_run_encoder_decoder(session, source, source_lengths, 6, dec, NULL, 2, 2),
      OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(
      octet_session_run_encoder_decoder(session, source, source_lengths, 7, dec, prefix, 2, 2),
      OCTET_LIMIT_EXCEEDED, "max_seq");
  EXPECT_FAIL(
      octet_session_run_encoder_decoder(session, source, source_lengths, 6, dec, prefix, 2, 3),
      OCTET_LIMIT_EXCEEDED, "max_batch");
  lengths[0] = 0;
  lengths[1] = 1;
  EXPECT_FAIL(
      octet_session_run_encoder_decoder(session, source, source_lengths, 6, dec, lengths, 2, 2),
      OCTET_INVALID_ARGUMENT, "length");
  dec[0] = 64;
  EXPECT_FAIL(
      octet_session_run_encoder_decoder(session, source, source_lengths, 6, dec, prefix, 2, 2),
      OCTET_INVALID_ARGUMENT, "vocabulary");
  dec[0] = target[0];

  REQUIRE_OK(
      octet_session_run_encoder_decoder(session, source, source_lengths, 6, dec, prefix, 2, 2));
  REQUIRE_OK(octet_session_output(session, &out));
  EXPECT(out.batch == 2 && out.seq == 1 && out.dim == 64);
  for (b = 0; b < 2; ++b) {
    EXPECT(memcmp(out.data + b * 64, reference + (b * 5 + prefix[b] - 1) * 64,
                  64 * sizeof(float)) == 0);
  }
  /* Three steps: sequence 0 reaches 4 tokens, sequence 1 all 5. */
  for (t = 0; t < 3; ++t) {
    next[0] = target[prefix[0] + t];
    next[1] = target[5 + prefix[1] + t];
    REQUIRE_OK(octet_session_step(session, next, 2));
    REQUIRE_OK(octet_session_output(session, &out));
    for (b = 0; b < 2; ++b) {
      EXPECT(memcmp(out.data + b * 64, reference + (b * 5 + prefix[b] + t) * 64,
                    64 * sizeof(float)) == 0);
    }
  }
  /* 6 + 4 decoder positions: sequence 1 is at 5, five more fit. */
  for (t = 0; t < 5; ++t) EXPECT_OK(octet_session_step(session, next, 2));
  EXPECT_FAIL(octet_session_step(session, next, 2), OCTET_LIMIT_EXCEEDED, "full");
  free(reference);
  octet_session_free(session);
  octet_session_free(teacher);
  octet_model_free(t5);
}

void test_steps(void) {
  check_decoder_steps("llama.octet", 1);
  check_decoder_steps("llama_fp32.octet", 0);
  check_encoder_decoder_steps();
}
