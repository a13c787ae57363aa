/* The C API's diagnostics, used from C (C99, -pedantic -Werror): the model
 * description as JSON, runtime and session info, the per-op profile and the
 * int8 peak probe, with every null-argument path and the struct_size rules.
 * Usage: octet_diagnostics_test INT8.octet FP32.octet, two one-layer Llama
 * models made by octet-testmodel (vocab 32, hidden 16, max_positions 64). */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "octet/octet.h"

static int failures = 0;

#define EXPECT(cond)                                                      \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                         \
    }                                                                     \
  } while (0)

/* An error: its code, and a message for this thread. */
#define EXPECT_ERROR(call, code)            \
  do {                                      \
    EXPECT((call) == (code));               \
    EXPECT(strlen(octet_last_error()) > 0); \
  } while (0)

/* ---- A JSON checker: RFC 8259 syntax, and the text of one value by path ---- */

typedef struct json_reader {
  const char* p;
  const char* end;
  const char* want; /* "architecture.attention.num_heads"; array elements are "#" */
  char path[256];
  const char* found; /* the wanted value's text */
  size_t found_len;
  int depth;
} json_reader;

static int json_value(json_reader* r, size_t path_len);

static void json_space(json_reader* r) {
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) {
    ++r->p;
  }
}

static int json_digits(json_reader* r) {
  const char* start = r->p;
  while (r->p < r->end && isdigit((unsigned char)*r->p)) ++r->p;
  return r->p > start;
}

/* A string; *s and *n: its raw text between the quotes. */
static int json_string(json_reader* r, const char** s, size_t* n) {
  if (r->p >= r->end || *r->p != '"') return 0;
  *s = ++r->p;
  while (r->p < r->end && *r->p != '"') {
    const unsigned char c = (unsigned char)*r->p;
    if (c < 0x20) return 0;
    if (c == '\\') {
      ++r->p;
      if (r->p >= r->end) return 0;
      if (*r->p == 'u') {
        int i;
        for (i = 0; i < 4; ++i) {
          ++r->p;
          if (r->p >= r->end || !isxdigit((unsigned char)*r->p)) return 0;
        }
      } else if (strchr("\"\\/bfnrt", *r->p) == NULL) {
        return 0;
      }
    }
    ++r->p;
  }
  if (r->p >= r->end) return 0;
  *n = (size_t)(r->p - *s);
  ++r->p;
  return 1;
}

static int json_number(json_reader* r) {
  if (r->p < r->end && *r->p == '-') ++r->p;
  if (r->p < r->end && *r->p == '0') {
    ++r->p;
  } else if (!json_digits(r)) {
    return 0;
  }
  if (r->p < r->end && *r->p == '.') {
    ++r->p;
    if (!json_digits(r)) return 0;
  }
  if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
    ++r->p;
    if (r->p < r->end && (*r->p == '+' || *r->p == '-')) ++r->p;
    if (!json_digits(r)) return 0;
  }
  return 1;
}

static int json_literal(json_reader* r, const char* word) {
  const size_t n = strlen(word);
  if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0) return 0;
  r->p += n;
  return 1;
}

/* Extends the path by a member name (or "#"); returns the new length, 0 when too long. */
static size_t json_push(json_reader* r, size_t path_len, const char* name, size_t n) {
  const size_t dot = path_len > 0 ? 1 : 0;
  if (path_len + dot + n + 1 > sizeof(r->path)) return 0;
  if (dot) r->path[path_len] = '.';
  memcpy(r->path + path_len + dot, name, n);
  r->path[path_len + dot + n] = '\0';
  return path_len + dot + n;
}

static int json_members(json_reader* r, size_t path_len, int object) {
  const char close = object ? '}' : ']';
  ++r->p;
  json_space(r);
  if (r->p < r->end && *r->p == close) {
    ++r->p;
    return 1;
  }
  for (;;) {
    size_t inner;
    json_space(r);
    if (object) {
      const char* key;
      size_t n;
      if (!json_string(r, &key, &n)) return 0;
      json_space(r);
      if (r->p >= r->end || *r->p != ':') return 0;
      ++r->p;
      json_space(r);
      inner = json_push(r, path_len, key, n);
    } else {
      inner = json_push(r, path_len, "#", 1);
    }
    if (inner == 0 || !json_value(r, inner)) return 0;
    r->path[path_len] = '\0';
    json_space(r);
    if (r->p < r->end && *r->p == ',') {
      ++r->p;
      continue;
    }
    if (r->p >= r->end || *r->p != close) return 0;
    ++r->p;
    return 1;
  }
}

static int json_value(json_reader* r, size_t path_len) {
  const char* start = r->p;
  int ok;
  if (r->p >= r->end || ++r->depth > 64) return 0;
  switch (*r->p) {
    case '{':
      ok = json_members(r, path_len, 1);
      break;
    case '[':
      ok = json_members(r, path_len, 0);
      break;
    case '"': {
      const char* s;
      size_t n;
      ok = json_string(r, &s, &n);
      break;
    }
    case 't':
      ok = json_literal(r, "true");
      break;
    case 'f':
      ok = json_literal(r, "false");
      break;
    case 'n':
      ok = json_literal(r, "null");
      break;
    default:
      ok = json_number(r);
      break;
  }
  --r->depth;
  if (ok && r->want != NULL && r->found == NULL && strcmp(r->path, r->want) == 0) {
    r->found = start;
    r->found_len = (size_t)(r->p - start);
  }
  return ok;
}

/* 1 when json[0, n) is one valid JSON value with whitespace around it; with a
 * path, *value / *value_len get that value's text (NULL when absent). */
static int json_check(const char* json, size_t n, const char* path, const char** value,
                      size_t* value_len) {
  json_reader r;
  int ok;
  memset(&r, 0, sizeof(r));
  r.p = json;
  r.end = json + n;
  r.want = path;
  json_space(&r);
  ok = json_value(&r, 0);
  json_space(&r);
  ok = ok && r.p == r.end;
  if (value != NULL) {
    *value = r.found;
    *value_len = r.found_len;
  }
  return ok;
}

/* The value's text at path equals `expected` (NULL: the path is absent). */
static int json_is(const char* json, size_t n, const char* path, const char* expected) {
  const char* value = NULL;
  size_t len = 0;
  if (!json_check(json, n, path, &value, &len)) return 0;
  if (expected == NULL) return value == NULL;
  if (value == NULL || len != strlen(expected) || memcmp(value, expected, len) != 0) {
    fprintf(stderr, "  %s is '%.*s', expected '%s'\n", path, (int)len, value ? value : "",
            expected);
    return 0;
  }
  return 1;
}

static int json_is_uint(const char* json, size_t n, const char* path, unsigned long long v) {
  char text[32];
  sprintf(text, "%llu", v);
  return json_is(json, n, path, text);
}

static int json_is_int(const char* json, size_t n, const char* path, long v) {
  char text[32];
  sprintf(text, "%ld", v);
  return json_is(json, n, path, text);
}

/* A JSON string's text (no escapes in it) equals s, ignoring case. */
static int json_is_name(const char* json, size_t n, const char* path, const char* s) {
  const char* value = NULL;
  size_t len = 0, i;
  if (!json_check(json, n, path, &value, &len) || value == NULL) return 0;
  if (len != strlen(s) + 2 || value[0] != '"') return 0;
  for (i = 0; i < len - 2; ++i) {
    if (tolower((unsigned char)value[i + 1]) != tolower((unsigned char)s[i])) return 0;
  }
  return 1;
}

static void test_json_checker(void) {
  static const char good[] = " {\"a\": [1, -2.5e3, \"x\\u00e9\\n\"], \"b\": {\"c\": null}} ";
  static const char* const bad[] = {"",   "{",       "{\"a\" 1}", "[1,]",       "01",
                                    "1.", "\"\\x\"", "{} {}",     "[\"\x01\"]", "tru"};
  size_t i;
  EXPECT(json_check(good, strlen(good), NULL, NULL, NULL));
  EXPECT(json_is(good, strlen(good), "b.c", "null"));
  EXPECT(json_is(good, strlen(good), "a", "[1, -2.5e3, \"x\\u00e9\\n\"]"));
  EXPECT(json_is(good, strlen(good), "b.d", NULL));
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    EXPECT(!json_check(bad[i], strlen(bad[i]), NULL, NULL, NULL));
  }
}

/* ---- octet_model_describe ---------------------------------------------------- */

/* The description in a new buffer (size *n), after checking the size protocol. */
static char* describe(const octet_model* model, size_t* n) {
  size_t needed = 0, len = 0;
  char* json;
  EXPECT_ERROR(octet_model_describe(model, NULL, 0, &needed), OCTET_BUFFER_TOO_SMALL);
  EXPECT(needed > 0);
  json = (char*)malloc(needed + 16);
  if (json == NULL) return NULL;
  /* One byte short: too small again, with the same size. */
  len = 0;
  EXPECT_ERROR(octet_model_describe(model, json, needed - 1, &len), OCTET_BUFFER_TOO_SMALL);
  EXPECT(len == needed);
  /* Room to spare: exactly the size, nothing written beyond it. */
  memset(json, '#', needed + 16);
  len = 0;
  EXPECT(octet_model_describe(model, json, needed + 16, &len) == OCTET_OK);
  EXPECT(len == needed);
  EXPECT(json[needed] == '#' && json[needed + 15] == '#');
  /* Exactly the size; the same text again. */
  {
    char* again = (char*)malloc(needed);
    if (again != NULL) {
      EXPECT(octet_model_describe(model, again, needed, &len) == OCTET_OK);
      EXPECT(len == needed && memcmp(again, json, needed) == 0);
      free(again);
    }
  }
  *n = needed;
  return json;
}

static void test_describe(const char* path, const octet_model* model) {
  octet_model_info info;
  octet_runtime_info runtime;
  octet_session_options options;
  octet_session_plan plan;
  size_t n = 0, len = 0;
  char buffer[64];
  char* json;
  uint32_t plan_seq;
  FILE* file;

  EXPECT_ERROR(octet_model_describe(NULL, buffer, sizeof(buffer), &len), OCTET_INVALID_ARGUMENT);
  EXPECT_ERROR(octet_model_describe(model, buffer, sizeof(buffer), NULL), OCTET_INVALID_ARGUMENT);
  EXPECT_ERROR(octet_model_describe(model, NULL, 10, &len), OCTET_INVALID_ARGUMENT);

  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  EXPECT(octet_model_get_info(model, &info) == OCTET_OK);
  memset(&runtime, 0, sizeof(runtime));
  runtime.struct_size = sizeof(runtime);
  EXPECT(octet_get_runtime_info(&runtime) == OCTET_OK);

  json = describe(model, &n);
  if (json == NULL) return;
  EXPECT(json_check(json, n, NULL, NULL, NULL));
  EXPECT(json[0] == '{' && json[n - 1] == '}');
  {
    static const char* const sections[] = {"file",        "architecture", "tensors",
                                           "weights",     "tokenizer",    "provenance",
                                           "memory_plan", "session_plan", "cpu"};
    size_t i;
    const char* value;
    for (i = 0; i < sizeof(sections) / sizeof(sections[0]); ++i) {
      EXPECT(json_check(json, n, sections[i], &value, &len) && value != NULL);
    }
  }
  /* The architecture octet_model_get_info gives. */
  EXPECT(json_is_name(json, n, "architecture.family", info.family));
  EXPECT(json_is(json, n, "architecture.structure", "\"DecoderOnly\""));
  EXPECT(json_is_uint(json, n, "architecture.vocab_size", info.vocab_size));
  EXPECT(json_is_uint(json, n, "architecture.hidden_size", info.hidden_size));
  EXPECT(json_is_uint(json, n, "architecture.num_layers", info.num_layers));
  EXPECT(json_is_uint(json, n, "architecture.num_decoder_layers", info.num_decoder_layers));
  EXPECT(json_is_uint(json, n, "architecture.max_positions", info.max_positions));
  EXPECT(json_is_uint(json, n, "architecture.attention.num_heads", info.num_heads));
  EXPECT(json_is_uint(json, n, "architecture.attention.num_kv_heads", info.num_kv_heads));
  EXPECT(json_is_uint(json, n, "architecture.attention.head_dim", info.head_dim));
  EXPECT(json_is_int(json, n, "architecture.bos_token_id", info.bos_token_id));
  EXPECT(json_is_int(json, n, "architecture.eos_token_id", info.eos_token_id));
  EXPECT(json_is_int(json, n, "architecture.pad_token_id", info.pad_token_id));
  EXPECT(json_is_int(json, n, "architecture.decoder_start_token_id", info.decoder_start_token_id));
  /* The file and its weights. */
  EXPECT(json_is(json, n, "file.path", NULL)); /* the API does not know it */
  EXPECT(json_is_uint(json, n, "file.size_bytes", info.file_bytes));
  EXPECT(json_is(json, n, "file.mapped", info.mapped ? "true" : "false"));
  EXPECT(json_is(json, n, "file.format_major", "1"));
  EXPECT(json_is_uint(json, n, "weights.total_bytes", info.weights_bytes));
  /* The session plan: batch 1, min(512, max_positions) tokens, every logit. */
  plan_seq = info.max_positions == 0 || info.max_positions > 512 ? 512 : info.max_positions;
  octet_session_options_init(&options);
  options.max_seq = plan_seq;
  options.flags = OCTET_SESSION_ALL_LOGITS;
  memset(&plan, 0, sizeof(plan));
  plan.struct_size = sizeof(plan);
  EXPECT(octet_session_plan_memory(model, &options, &plan) == OCTET_OK);
  EXPECT(json_is_uint(json, n, "session_plan.max_batch", 1));
  EXPECT(json_is_uint(json, n, "session_plan.max_seq", plan_seq));
  EXPECT(json_is_uint(json, n, "session_plan.activation_bytes", plan.activation_bytes));
  EXPECT(json_is_uint(json, n, "session_plan.scratch_bytes", plan.scratch_bytes));
  EXPECT(json_is_uint(json, n, "session_plan.kv_cache_bytes", plan.kv_cache_bytes));
  /* The CPU section is octet_runtime_info's. */
  sprintf(buffer, "\"%.60s\"", runtime.cpu_features);
  EXPECT(json_is(json, n, "cpu.features", buffer));
  sprintf(buffer, "\"%.60s\"", runtime.int8_gemm_kernel);
  EXPECT(json_is(json, n, "cpu.qs8_gemm_kernel", buffer));
  sprintf(buffer, "\"%.60s\"", runtime.int8_pv_kernel);
  EXPECT(json_is(json, n, "cpu.qu8s8_pv_kernel", buffer));

  /* The same file from a buffer: the same architecture, not mapped. */
  file = fopen(path, "rb");
  EXPECT(file != NULL);
  if (file != NULL) {
    long size;
    char* raw;
    void* aligned;
    octet_model* from_buffer = NULL;
    fseek(file, 0, SEEK_END);
    size = ftell(file);
    fseek(file, 0, SEEK_SET);
    raw = (char*)malloc((size_t)size + 64);
    aligned = raw == NULL ? NULL : raw + (64 - (size_t)raw % 64) % 64;
    if (aligned != NULL && fread(aligned, 1, (size_t)size, file) == (size_t)size) {
      EXPECT(octet_model_load_from_buffer(aligned, (size_t)size, &from_buffer) == OCTET_OK);
    }
    fclose(file);
    if (from_buffer != NULL) {
      size_t m = 0;
      char* other = describe(from_buffer, &m);
      if (other != NULL) {
        EXPECT(json_check(other, m, NULL, NULL, NULL));
        EXPECT(json_is(other, m, "file.mapped", "false"));
        EXPECT(json_is_uint(other, m, "architecture.hidden_size", info.hidden_size));
        free(other);
      }
      octet_model_free(from_buffer);
    }
    free(raw);
  }
  free(json);
}

/* ---- Runtime and session info ---------------------------------------------------- */

static void test_runtime_info(void) {
  octet_runtime_info info;
  octet_runtime_info old;

  EXPECT_ERROR(octet_get_runtime_info(NULL), OCTET_INVALID_ARGUMENT);
  memset(&info, 0, sizeof(info));
  EXPECT_ERROR(octet_get_runtime_info(&info), OCTET_INVALID_ARGUMENT); /* struct_size unset */

  info.struct_size = sizeof(info);
  EXPECT(octet_get_runtime_info(&info) == OCTET_OK);
  EXPECT(info.struct_size == sizeof(info));
  EXPECT(info.cpu_features != NULL && strlen(info.cpu_features) > 0);
  EXPECT(info.int8_gemm_kernel != NULL && strlen(info.int8_gemm_kernel) > 0);
  EXPECT(info.int8_packed_gemm_kernel != NULL && strlen(info.int8_packed_gemm_kernel) > 0);
  EXPECT(info.int8_pv_kernel != NULL && strlen(info.int8_pv_kernel) > 0);
  EXPECT(info.default_threads >= 1 && info.default_threads <= 256);

  /* A caller built against a shorter struct: only its fields are written. */
  memset(&old, 0x5a, sizeof(old));
  old.struct_size = offsetof(octet_runtime_info, int8_packed_gemm_kernel);
  EXPECT(octet_get_runtime_info(&old) == OCTET_OK);
  EXPECT(old.struct_size == offsetof(octet_runtime_info, int8_packed_gemm_kernel));
  EXPECT(old.cpu_features == info.cpu_features && old.int8_gemm_kernel == info.int8_gemm_kernel);
  {
    octet_runtime_info untouched;
    memset(&untouched, 0x5a, sizeof(untouched));
    EXPECT(memcmp((const char*)&old + old.struct_size, (const char*)&untouched + old.struct_size,
                  sizeof(old) - old.struct_size) == 0);
  }
}

static octet_session* make_session(const octet_model* model, uint32_t threads,
                                   octet_session_plan* plan) {
  octet_session_options options;
  octet_session* session = NULL;
  octet_session_options_init(&options);
  options.max_batch = 2;
  options.max_seq = 8;
  options.max_new_tokens = 4;
  options.threads = threads;
  memset(plan, 0, sizeof(*plan));
  plan->struct_size = sizeof(*plan);
  EXPECT(octet_session_plan_memory(model, &options, plan) == OCTET_OK);
  EXPECT(octet_session_create_with_options(model, &options, NULL, 0, &session) == OCTET_OK);
  return session;
}

static void test_session_info(const octet_model* int8_model, const octet_model* fp32_model) {
  octet_session_plan plan;
  octet_session_info info;
  octet_runtime_info runtime;
  octet_model_info model_info;
  octet_session* session = make_session(int8_model, 2, &plan);
  if (session == NULL) return;

  EXPECT_ERROR(octet_session_get_info(NULL, &info), OCTET_INVALID_ARGUMENT);
  EXPECT_ERROR(octet_session_get_info(session, NULL), OCTET_INVALID_ARGUMENT);
  memset(&info, 0, sizeof(info));
  EXPECT_ERROR(octet_session_get_info(session, &info), OCTET_INVALID_ARGUMENT);

  info.struct_size = sizeof(info);
  EXPECT(octet_session_get_info(session, &info) == OCTET_OK);
  EXPECT(info.threads == 2);
  EXPECT(info.max_batch == 2 && info.max_seq == 8 && info.max_new_tokens == 4);
  EXPECT(info.activation_bytes == plan.activation_bytes);
  EXPECT(info.scratch_bytes == plan.scratch_bytes);
  EXPECT(info.kv_cache_bytes == plan.kv_cache_bytes);
  EXPECT(info.activation_bytes + info.scratch_bytes + info.kv_cache_bytes ==
         octet_session_arena_bytes(session));
  EXPECT(info.f32_products == 0); /* every matrix product in int8 */
  EXPECT(info.f32_matrices == 0 && info.f32_operators == 0 && info.f32_packed_bytes == 0);
  EXPECT(info.f32_note == NULL);
  memset(&model_info, 0, sizeof(model_info));
  model_info.struct_size = sizeof(model_info);
  EXPECT(octet_model_get_info(int8_model, &model_info) == OCTET_OK);
  EXPECT(info.decode_weight_bytes > 0 && info.decode_weight_bytes < model_info.weights_bytes);

  /* A shorter struct: the fields it has, nothing after them. */
  {
    octet_session_info old;
    octet_session_info untouched;
    const size_t size = offsetof(octet_session_info, f32_products);
    memset(&old, 0x5a, sizeof(old));
    memset(&untouched, 0x5a, sizeof(untouched));
    old.struct_size = size;
    EXPECT(octet_session_get_info(session, &old) == OCTET_OK);
    EXPECT(old.struct_size == size && old.threads == 2 &&
           old.kv_cache_bytes == info.kv_cache_bytes);
    EXPECT(memcmp((const char*)&old + size, (const char*)&untouched + size, sizeof(old) - size) ==
           0);
  }
  octet_session_free(session);

  /* threads = 0 resolves to the runtime's default. */
  memset(&runtime, 0, sizeof(runtime));
  runtime.struct_size = sizeof(runtime);
  EXPECT(octet_get_runtime_info(&runtime) == OCTET_OK);
  session = make_session(int8_model, 0, &plan);
  if (session != NULL) {
    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    EXPECT(octet_session_get_info(session, &info) == OCTET_OK);
    EXPECT(info.threads == runtime.default_threads);
    octet_session_free(session);
  }

  /* An fp32 file: its products run in fp32, on XNNPACK's operators or on the
   * reference GEMM with a note saying why. */
  session = make_session(fp32_model, 1, &plan);
  if (session != NULL) {
    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    EXPECT(octet_session_get_info(session, &info) == OCTET_OK);
    EXPECT(info.f32_products == 1);
    if (info.f32_operators > 0) {
      EXPECT(info.f32_matrices > 0 && info.f32_operators >= info.f32_matrices);
      EXPECT(info.f32_packed_bytes > 0);
      EXPECT(info.f32_note == NULL);
    } else {
      EXPECT(info.f32_matrices == 0 && info.f32_packed_bytes == 0);
      EXPECT(info.f32_note != NULL && strlen(info.f32_note) > 0);
    }
    octet_session_free(session);
  }
}

/* ---- The profile ------------------------------------------------------------------ */

static octet_profile read_profile(const octet_session* session) {
  octet_profile p;
  memset(&p, 0, sizeof(p));
  p.struct_size = sizeof(p);
  EXPECT(octet_session_profile(session, &p) == OCTET_OK);
  return p;
}

static uint64_t total_calls(const octet_profile* p) {
  uint64_t total = 0;
  uint32_t k;
  for (k = 0; k < p->num_kinds; ++k) total += p->calls[k];
  return total;
}

static int kind_index(const octet_profile* p, const char* kind) {
  uint32_t k;
  for (k = 0; k < p->num_kinds; ++k) {
    if (p->kind[k] != NULL && strcmp(p->kind[k], kind) == 0) return (int)k;
  }
  return -1;
}

static void test_profile(const octet_model* model) {
  octet_session_plan plan;
  octet_profile p, first, second;
  int32_t ids[2 * 4] = {1, 5, 7, 9, 3, 4, 0, 0};
  uint32_t lengths[2] = {4, 2};
  int32_t next[2] = {6, 8};
  int linear, attention, embed;
  uint32_t k;
  octet_session* session = make_session(model, 1, &plan);
  if (session == NULL) return;

  EXPECT_ERROR(octet_session_profile_start(NULL), OCTET_INVALID_ARGUMENT);
  EXPECT_ERROR(octet_session_profile_stop(NULL), OCTET_INVALID_ARGUMENT);
  EXPECT_ERROR(octet_session_profile(NULL, &p), OCTET_INVALID_ARGUMENT);
  EXPECT_ERROR(octet_session_profile(session, NULL), OCTET_INVALID_ARGUMENT);
  memset(&p, 0, sizeof(p));
  EXPECT_ERROR(octet_session_profile(session, &p), OCTET_INVALID_ARGUMENT);

  /* Before any start: the kinds, and nothing counted, even after a run. */
  EXPECT(octet_session_run(session, ids, lengths, 2, 4) == OCTET_OK);
  p = read_profile(session);
  EXPECT(p.num_kinds >= 1 && p.num_kinds <= OCTET_PROFILE_MAX_KINDS);
  for (k = 0; k < p.num_kinds; ++k) EXPECT(p.kind[k] != NULL && strlen(p.kind[k]) > 0);
  linear = kind_index(&p, "linear");
  attention = kind_index(&p, "attention");
  embed = kind_index(&p, "embed");
  EXPECT(linear >= 0 && attention >= 0 && embed >= 0);
  if (linear < 0 || attention < 0 || embed < 0) {
    octet_session_free(session);
    return;
  }
  EXPECT(total_calls(&p) == 0 && p.linear_ops == 0);

  /* Started: a run counts; a second identical run counts as much again. */
  EXPECT(octet_session_profile_start(session) == OCTET_OK);
  EXPECT(octet_session_run(session, ids, lengths, 2, 4) == OCTET_OK);
  first = read_profile(session);
  EXPECT(first.calls[linear] > 0 && first.calls[attention] > 0 && first.calls[embed] > 0);
  EXPECT(first.linear_ops > 0);
  EXPECT(octet_session_run(session, ids, lengths, 2, 4) == OCTET_OK);
  second = read_profile(session);
  for (k = 0; k < first.num_kinds; ++k) {
    EXPECT(second.calls[k] == 2 * first.calls[k]);
    EXPECT(second.nanos[k] >= first.nanos[k]);
  }
  EXPECT(second.linear_ops == 2 * first.linear_ops);
  /* Steps count too. */
  EXPECT(octet_session_step(session, next, 2) == OCTET_OK);
  p = read_profile(session);
  EXPECT(p.calls[linear] > second.calls[linear]);

  /* Stopped: the counters stay as they were. */
  EXPECT(octet_session_profile_stop(session) == OCTET_OK);
  second = read_profile(session);
  EXPECT(octet_session_run(session, ids, lengths, 2, 4) == OCTET_OK);
  EXPECT(octet_session_step(session, next, 2) == OCTET_OK);
  p = read_profile(session);
  EXPECT(memcmp(p.calls, second.calls, sizeof(p.calls)) == 0);
  EXPECT(memcmp(p.nanos, second.nanos, sizeof(p.nanos)) == 0);
  EXPECT(octet_session_profile_stop(session) == OCTET_OK); /* stopping twice is fine */

  /* A new start zeroes them. */
  EXPECT(octet_session_profile_start(session) == OCTET_OK);
  p = read_profile(session);
  EXPECT(total_calls(&p) == 0 && p.linear_ops == 0 && p.head_ops == 0);
  EXPECT(octet_session_run(session, ids, lengths, 2, 4) == OCTET_OK);
  p = read_profile(session);
  EXPECT(p.calls[linear] == first.calls[linear]);
  octet_session_free(session);
}

int main(int argc, char** argv) {
  octet_model* int8_model = NULL;
  octet_model* fp32_model = NULL;
  if (argc != 3) {
    fprintf(stderr, "usage: %s INT8.octet FP32.octet\n", argv[0]);
    return 2;
  }
  if (octet_model_load(argv[1], &int8_model) != OCTET_OK ||
      octet_model_load(argv[2], &fp32_model) != OCTET_OK) {
    fprintf(stderr, "cannot load the models: %s\n", octet_last_error());
    return 1;
  }
  test_json_checker();
  test_describe(argv[1], int8_model);
  test_describe(argv[2], fp32_model);
  test_runtime_info();
  test_session_info(int8_model, fp32_model);
  test_profile(int8_model);
  test_profile(fp32_model);
  octet_model_free(fp32_model);
  octet_model_free(int8_model);
  if (failures == 0) printf("C API diagnostics: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
