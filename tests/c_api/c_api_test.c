/* The C API, used from C (compiled as C99 with -pedantic -Werror, which proves
 * octet.h is a C header).
 *
 * Usage: octet_c_api_test SECTION MODEL_DIR
 *        octet_c_api_test text TEXT_MODEL_DIR CHAT_TEMPLATE_DIR MODEL_DIR
 * MODEL_DIR holds the synthetic models the c_api_models fixture writes with
 * octet-testmodel (tests/c_api/CMakeLists.txt says which), and for the text
 * section the models with real tokenizers of the c_api_text_models fixture.
 * This file: the harness, the dispatcher, the basics (version, status names,
 * per-thread messages, loading errors, model facts) and loading from a file
 * descriptor. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

int g_failures = 0;
const char* g_model_dir = ".";

/* ---- Harness ---------------------------------------------------------------- */

/* The marker: a call whose failure message no other check expects. */
static const char kMarkerNeedle[] = "octet_model_load_from_fd: out is null";

void harness_mark(void) {
  if (octet_model_load_from_fd(-1, 0, 0, NULL) != OCTET_INVALID_ARGUMENT ||
      strcmp(octet_last_error(), kMarkerNeedle) != 0) {
    fprintf(stderr, "harness: the marker call did not fail as expected: '%s'\n",
            octet_last_error());
    exit(1);
  }
}

void harness_expect_fail(octet_status got, octet_status want, const char* needle, const char* expr,
                         const char* file, int line) {
  const char* message = octet_last_error();
  if (got != want) {
    fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d (%s); last error: %s\n", file, line,
            expr, (int)got, octet_status_name(got), (int)want, octet_status_name(want), message);
    ++g_failures;
    return;
  }
  if (message == NULL || message[0] == '\0' || strcmp(message, kMarkerNeedle) == 0) {
    fprintf(stderr, "%s:%d: %s failed without a message of its own ('%s')\n", file, line, expr,
            message ? message : "(null)");
    ++g_failures;
    return;
  }
  if (needle != NULL && strstr(message, needle) == NULL) {
    fprintf(stderr, "%s:%d: %s: the message '%s' does not name '%s'\n", file, line, expr, message,
            needle);
    ++g_failures;
  }
}

void harness_expect_ok(octet_status got, const char* expr, const char* file, int line) {
  if (got != OCTET_OK) {
    fprintf(stderr, "%s:%d: %s returned %s: %s\n", file, line, expr, octet_status_name(got),
            octet_last_error());
    ++g_failures;
  }
}

void harness_require_ok(octet_status got, const char* expr, const char* file, int line) {
  if (got != OCTET_OK) {
    fprintf(stderr, "%s:%d: %s returned %s: %s (required)\n", file, line, expr,
            octet_status_name(got), octet_last_error());
    exit(1);
  }
}

const char* model_path(const char* name) {
  static char paths[4][4096];
  static int next = 0;
  char* p = paths[next];
  next = (next + 1) % 4;
  snprintf(p, sizeof(paths[0]), "%s/%s", g_model_dir, name);
  return p;
}

octet_model* load_model(const char* name) {
  octet_model* model = NULL;
  const char* path = model_path(name);
  if (octet_model_load(path, &model) != OCTET_OK) {
    fprintf(stderr, "cannot load %s: %s\n", path, octet_last_error());
    exit(1);
  }
  return model;
}

octet_session* make_session(const octet_model* model, uint32_t max_batch, uint32_t max_seq,
                            uint32_t max_new_tokens, uint32_t flags) {
  octet_session_options options;
  octet_session* session = NULL;
  octet_session_options_init(&options);
  options.max_batch = max_batch;
  options.max_seq = max_seq;
  options.max_new_tokens = max_new_tokens;
  options.flags = flags;
  REQUIRE_OK(octet_session_create_with_options(model, &options, NULL, 0, &session));
  return session;
}

unsigned char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  unsigned char* bytes;
  long n;
  if (f == NULL) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  bytes = (unsigned char*)malloc((size_t)n + 1);
  REQUIRE(bytes != NULL);
  REQUIRE(fread(bytes, 1, (size_t)n, f) == (size_t)n);
  bytes[n] = 0; /* text files read as C strings */
  fclose(f);
  *size = (size_t)n;
  return bytes;
}

int utf8_valid(const char* text, size_t n) {
  const unsigned char* p = (const unsigned char*)text;
  size_t i = 0;
  while (i < n) {
    unsigned char c = p[i];
    size_t len, k;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return 0;
    }
    if (i + len > n) return 0;
    for (k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return 0;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return 0;
    }
    i += len;
  }
  return 1;
}

int has_replacement_char(const char* text, size_t n) {
  size_t i;
  for (i = 0; i + 2 < n; ++i) {
    if ((unsigned char)text[i] == 0xEF && (unsigned char)text[i + 1] == 0xBF &&
        (unsigned char)text[i + 2] == 0xBD) {
      return 1;
    }
  }
  return 0;
}

int32_t argmax(const float* row, uint32_t n) {
  uint32_t best = 0, i;
  for (i = 1; i < n; ++i) {
    if (row[i] > row[best]) best = i;
  }
  return (int32_t)best;
}

double relative_error(const float* a, const float* b, size_t n) {
  double max_err = 0.0, max_ref = 0.0;
  size_t i;
  for (i = 0; i < n; ++i) {
    const double err = fabs((double)a[i] - (double)b[i]);
    const double ref = fabs((double)b[i]);
    if (err > max_err || err != err) max_err = err != err ? INFINITY : err;
    if (ref > max_ref) max_ref = ref;
  }
  return max_ref > 0.0 ? max_err / max_ref : max_err;
}

/* ---- Basics -------------------------------------------------------------------- */

static void* other_thread_errors(void* arg) {
  int* ok = (int*)arg;
  octet_model* model = NULL;
  /* A new thread starts with no message, and its failures stay its own. */
  ok[0] = strcmp(octet_last_error(), "") == 0;
  ok[1] = octet_model_load("/nonexistent/other-thread.octet", &model) == OCTET_IO_ERROR &&
          strstr(octet_last_error(), "other-thread") != NULL;
  return NULL;
}

static void write_file(const char* path, const void* bytes, size_t n) {
  FILE* f = fopen(path, "wb");
  REQUIRE(f != NULL);
  REQUIRE(fwrite(bytes, 1, n, f) == n);
  REQUIRE(fclose(f) == 0);
}

/* Model facts against what octet-testmodel was told (tests/c_api/CMakeLists.txt). */
static void check_info(const char* name, const char* family, int32_t structure,
                       uint32_t layers, uint32_t decoder_layers, uint32_t max_positions,
                       int32_t bos, int32_t eos, int32_t pad, int32_t start, int32_t int8) {
  octet_model* model = load_model(name);
  octet_model_info info;
  struct stat st;
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  EXPECT_OK(octet_model_get_info(model, &info));
  EXPECT(info.struct_size == sizeof(info));
  EXPECT(info.family != NULL && strcmp(info.family, family) == 0);
  EXPECT(info.structure == structure);
  EXPECT(info.vocab_size == 64);
  EXPECT(info.hidden_size == 32);
  EXPECT(info.num_layers == layers);
  EXPECT(info.num_decoder_layers == decoder_layers);
  EXPECT(info.num_heads == 2);
  EXPECT(info.num_kv_heads == 2);
  EXPECT(info.head_dim == 16);
  EXPECT(info.max_positions == max_positions);
  EXPECT(info.bos_token_id == bos);
  EXPECT(info.eos_token_id == eos);
  EXPECT(info.pad_token_id == pad);
  EXPECT(info.decoder_start_token_id == start);
  EXPECT(info.has_tokenizer == 0); /* a raw tokenizer.json blob is not a compiled tokenizer */
  EXPECT(info.has_chat_template == 0);
  EXPECT(info.int8 == int8);
  EXPECT(info.mapped == 1);
  REQUIRE(stat(model_path(name), &st) == 0);
  EXPECT(info.file_bytes == (uint64_t)st.st_size);
  EXPECT(info.weights_bytes > 0 && info.weights_bytes < info.file_bytes);
  EXPECT(octet_model_vocab_size(model) == 64);
  EXPECT(octet_model_hidden_size(model) == 32);
  EXPECT(octet_model_is_eos(model, eos) == (eos >= 0));
  EXPECT(octet_model_is_eos(model, 3) == 0);
  EXPECT(octet_model_is_eos(model, -1) == 0);
  octet_model_free(model);
}

void test_basics(void) {
  char version[32];
  static const char* const kNames[] = {
      "ok",        "invalid argument", "invalid model", "unsupported",    "out of memory",
      "i/o error", "internal error",   "invalid state", "limit exceeded", "buffer too small",
      "cancelled"};
  int code, thread_ok[2] = {0, 0};
  pthread_t thread;
  octet_model* model = NULL;
  octet_model_info info;
  unsigned char* bytes;
  size_t size;
  void* aligned = NULL;

  /* Versions: the header's macros, the library's string and number agree. */
  snprintf(version, sizeof(version), "%d.%d.%d", OCTET_VERSION_MAJOR, OCTET_VERSION_MINOR,
           OCTET_VERSION_PATCH);
  EXPECT(strcmp(octet_version(), version) == 0);
  EXPECT(octet_version_number() == OCTET_VERSION_NUMBER);
  EXPECT(OCTET_VERSION_NUMBER ==
         OCTET_VERSION_MAJOR * 10000 + OCTET_VERSION_MINOR * 100 + OCTET_VERSION_PATCH);
  EXPECT(octet_version_number() / 10000 == OCTET_VERSION_MAJOR);

  /* Every status code has its name; an unknown code still gets a string. */
  for (code = OCTET_OK; code <= OCTET_CANCELLED; ++code) {
    const char* name = octet_status_name((octet_status)code);
    EXPECT(name != NULL && strcmp(name, kNames[code]) == 0);
  }
  EXPECT(octet_status_name((octet_status)99) != NULL &&
         strlen(octet_status_name((octet_status)99)) > 0);

  /* Messages are per thread; a thread starts with none. */
  EXPECT(strcmp(octet_last_error(), "") == 0);
  EXPECT_FAIL(octet_model_load("/nonexistent/model.octet", &model), OCTET_IO_ERROR,
              "/nonexistent/model.octet");
  EXPECT(model == NULL);
  REQUIRE(pthread_create(&thread, NULL, other_thread_errors, thread_ok) == 0);
  REQUIRE(pthread_join(thread, NULL) == 0);
  EXPECT(thread_ok[0] && thread_ok[1]);
  EXPECT(strstr(octet_last_error(), "/nonexistent/model.octet") != NULL);

  /* Loading: every way it can go wrong is a code and a message. */
  model = (octet_model*)&model; /* set to NULL by each failing call */
  EXPECT_FAIL(octet_model_load(NULL, &model), OCTET_INVALID_ARGUMENT, "null");
  EXPECT(model == NULL);
  EXPECT_FAIL(octet_model_load(model_path("llama.octet"), NULL), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_model_load(g_model_dir, &model), OCTET_IO_ERROR, "not a regular file");
  write_file(model_path("basics_empty.octet"), "", 0);
  EXPECT_FAIL(octet_model_load(model_path("basics_empty.octet"), &model), OCTET_INVALID_MODEL,
              "empty");
  bytes = read_file(model_path("llama.octet"), &size);
  write_file(model_path("basics_truncated.octet"), bytes, size / 2);
  EXPECT_FAIL(octet_model_load(model_path("basics_truncated.octet"), &model), OCTET_INVALID_MODEL,
              "");
  EXPECT(model == NULL);
  REQUIRE(posix_memalign(&aligned, 64, size + 64) == 0);
  memcpy(aligned, bytes, size);
  ((unsigned char*)aligned)[4] ^= 0x5A; /* the file identifier */
  EXPECT_FAIL(octet_model_load_from_buffer(aligned, size, &model), OCTET_INVALID_MODEL, "");
  ((unsigned char*)aligned)[4] ^= 0x5A;
  EXPECT_FAIL(octet_model_load_from_buffer(NULL, size, &model), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_model_load_from_buffer(aligned, size, NULL), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_model_load_from_buffer(aligned, 0, &model), OCTET_INVALID_MODEL, "");
  memmove((unsigned char*)aligned + 8, aligned, size);
  EXPECT_FAIL(octet_model_load_from_buffer((unsigned char*)aligned + 8, size, &model),
              OCTET_INVALID_ARGUMENT, "aligned");
  memmove(aligned, (unsigned char*)aligned + 8, size);
  /* From a buffer: used in place, not mapped. */
  REQUIRE_OK(octet_model_load_from_buffer(aligned, size, &model));
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  EXPECT_OK(octet_model_get_info(model, &info));
  EXPECT(info.mapped == 0 && info.file_bytes == size && info.vocab_size == 64);
  octet_model_free(model);
  free(aligned);
  free(bytes);

  /* Model facts. */
  check_info("llama.octet", "llama", OCTET_DECODER_ONLY, 2, 0, 2048, 1, 2, -1, -1, 1);
  check_info("llama_fp32.octet", "llama", OCTET_DECODER_ONLY, 2, 0, 2048, 1, 2, -1, -1, 0);
  check_info("llama0.octet", "llama", OCTET_DECODER_ONLY, 0, 0, 2048, 1, 2, -1, -1, 1);
  check_info("bert.octet", "bert", OCTET_ENCODER_ONLY, 2, 0, 64, -1, -1, 0, -1, 1);
  /* 64 usable positions: the table has 66 rows, position ids start at 2. */
  check_info("roberta.octet", "roberta", OCTET_ENCODER_ONLY, 2, 0, 64, -1, -1, 1, -1, 1);
  check_info("t5.octet", "t5", OCTET_ENCODER_DECODER, 2, 2, 0, -1, 1, 0, 0, 1);

  model = load_model("llama.octet");
  EXPECT_FAIL(octet_model_get_info(NULL, &info), OCTET_INVALID_ARGUMENT, "null");
  EXPECT_FAIL(octet_model_get_info(model, NULL), OCTET_INVALID_ARGUMENT, "null");
  info.struct_size = 0;
  EXPECT_FAIL(octet_model_get_info(model, &info), OCTET_INVALID_ARGUMENT, "struct_size");
  info.struct_size = 3;
  EXPECT_FAIL(octet_model_get_info(model, &info), OCTET_INVALID_ARGUMENT, "struct_size");
  {
    /* An older caller's smaller struct: only the bytes it covers are written. */
    unsigned char buffer[sizeof(octet_model_info) + 32];
    unsigned char canary[sizeof(buffer)];
    octet_model_info* older = (octet_model_info*)(void*)buffer;
    const size_t covered = offsetof(octet_model_info, hidden_size);
    memset(buffer, 0xAB, sizeof(buffer));
    memset(canary, 0xAB, sizeof(canary));
    older->struct_size = covered;
    EXPECT_OK(octet_model_get_info(model, older));
    EXPECT(older->struct_size == covered);
    EXPECT(older->vocab_size == 64 && older->structure == OCTET_DECODER_ONLY);
    EXPECT(memcmp(buffer + covered, canary + covered, sizeof(buffer) - covered) == 0);
    /* A newer caller's larger struct: the known fields, the rest left alone. */
    memset(buffer, 0xAB, sizeof(buffer));
    older->struct_size = sizeof(buffer);
    EXPECT_OK(octet_model_get_info(model, older));
    EXPECT(older->struct_size == sizeof(buffer));
    EXPECT(older->num_layers == 2 && older->mapped == 1);
    EXPECT(memcmp(buffer + sizeof(octet_model_info), canary + sizeof(octet_model_info), 32) == 0);
  }
  EXPECT(octet_model_vocab_size(NULL) == 0);
  EXPECT(octet_model_hidden_size(NULL) == 0);
  EXPECT(octet_model_is_eos(NULL, 2) == 0);
  octet_model_free(model);

  /* Freeing NULL is a no-op, for every handle. */
  octet_model_free(NULL);
  octet_session_free(NULL);
  octet_tokenizer_free(NULL);
  octet_text_stream_free(NULL);
  octet_session_cancel(NULL);
  octet_text_stream_reset(NULL);
  /* The *_init functions take NULL too. */
  octet_session_options_init(NULL);
  octet_sampling_init(NULL);
  octet_generate_options_init(NULL);
  octet_chat_options_init(NULL);
}

/* ---- Loading from a file descriptor ----------------------------------------------- */

/* The logits of a fixed batch, malloc'ed ([2, 4, vocab]: every position). */
static float* fixed_logits(const octet_model* model, size_t* n) {
  static const int32_t ids[8] = {5, 17, 9, 33, 60, 2, 0, 0};
  static const uint32_t lengths[2] = {4, 2};
  octet_session* session = make_session(model, 2, 4, 0, OCTET_SESSION_ALL_LOGITS);
  octet_output out;
  float* copy;
  REQUIRE_OK(octet_session_run(session, ids, lengths, 2, 4));
  REQUIRE_OK(octet_session_output(session, &out));
  *n = (size_t)out.batch * out.seq * out.dim;
  copy = (float*)malloc(*n * sizeof(float));
  REQUIRE(copy != NULL);
  memcpy(copy, out.data, *n * sizeof(float));
  octet_session_free(session);
  return copy;
}

/* Loads [offset, offset + length) of `path`, closes the descriptor, checks mapped
 * and that the model gives the reference's logits. */
static void check_fd_load(const char* path, uint64_t offset, uint64_t length, int mapped,
                          uint64_t model_bytes, const float* reference, size_t n) {
  octet_model* model = NULL;
  octet_model_info info;
  const int fd = open(path, O_RDONLY);
  size_t m = 0;
  float* logits;
  REQUIRE(fd >= 0);
  EXPECT_OK(octet_model_load_from_fd(fd, offset, length, &model));
  REQUIRE(close(fd) == 0); /* the caller may close it once the call returns */
  if (model == NULL) return;
  memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  EXPECT_OK(octet_model_get_info(model, &info));
  if (info.mapped != mapped) {
    fprintf(stderr, "fd load at offset %llu: mapped %d, expected %d\n", (unsigned long long)offset,
            info.mapped, mapped);
  }
  EXPECT(info.mapped == mapped);
  EXPECT(info.file_bytes == model_bytes);
  logits = fixed_logits(model, &m);
  EXPECT(m == n && memcmp(logits, reference, n * sizeof(float)) == 0);
  free(logits);
  octet_model_free(model);
}

void test_fd(void) {
  size_t size, n, i;
  unsigned char* bytes = read_file(model_path("llama.octet"), &size);
  unsigned char* file;
  octet_model* model = load_model("llama.octet");
  octet_model* out = (octet_model*)&file;
  float* reference = fixed_logits(model, &n);
  const char* embedded = model_path("fd_embedded.bin");
  const char* at_end = model_path("fd_at_end.bin");
  const char* at_64 = model_path("fd_at_64.bin");
  int fd, pipe_fds[2];
  octet_model_free(model);

  /* The model at 4096 inside a bigger file (junk before and after it): mapped. */
  file = (unsigned char*)malloc(4096 + size + 100);
  REQUIRE(file != NULL);
  for (i = 0; i < 4096 + size + 100; ++i) file[i] = (unsigned char)(i * 131 + 7);
  memcpy(file + 4096, bytes, size);
  write_file(embedded, file, 4096 + size + 100);
  check_fd_load(embedded, 4096, size, 1, size, reference, n);
  /* At offset 4, the model last in its file, length 0 (to the end): copied. */
  memcpy(file + 4, bytes, size);
  write_file(at_end, file, 4 + size);
  check_fd_load(at_end, 4, 0, 0, size, reference, n);
  check_fd_load(at_end, 4, size, 0, size, reference, n);
  /* At 64 (a 64-byte aligned start inside its page): mapped. */
  memcpy(file + 64, bytes, size);
  write_file(at_64, file, 64 + size);
  check_fd_load(at_64, 64, 0, 1, size, reference, n);

  /* Ranges that do not hold a model, and descriptors that are not files. */
  fd = open(embedded, O_RDONLY);
  REQUIRE(fd >= 0);
  EXPECT_FAIL(octet_model_load_from_fd(fd, 4096 + size + 101, 0, &out), OCTET_INVALID_ARGUMENT,
              "past the end");
  EXPECT(out == NULL);
  EXPECT_FAIL(octet_model_load_from_fd(fd, 4096, size + 101, &out), OCTET_INVALID_ARGUMENT,
              "passes the end");
  EXPECT_FAIL(octet_model_load_from_fd(fd, 4096 + size + 100, 0, &out), OCTET_INVALID_MODEL,
              "empty");
  EXPECT_FAIL(octet_model_load_from_fd(fd, 4096, size / 2, &out), OCTET_INVALID_MODEL, "");
  EXPECT_FAIL(octet_model_load_from_fd(fd, 4100, size - 4, &out), OCTET_INVALID_MODEL, "");
  EXPECT_FAIL(octet_model_load_from_fd(fd, 0, 0, &out), OCTET_INVALID_MODEL, "");
  EXPECT_FAIL(octet_model_load_from_fd(fd, UINT64_MAX, 1, &out), OCTET_INVALID_ARGUMENT, "");
  EXPECT_FAIL(octet_model_load_from_fd(fd, 4096, UINT64_MAX, &out), OCTET_INVALID_ARGUMENT, "");
  REQUIRE(close(fd) == 0);
  EXPECT_FAIL(octet_model_load_from_fd(-1, 0, 0, &out), OCTET_INVALID_ARGUMENT, "-1");
  EXPECT(out == NULL);
  EXPECT_FAIL(octet_model_load_from_fd(fd, 0, 0, &out), OCTET_IO_ERROR, ""); /* closed */
  fd = open(g_model_dir, O_RDONLY);
  REQUIRE(fd >= 0);
  EXPECT_FAIL(octet_model_load_from_fd(fd, 0, 0, &out), OCTET_IO_ERROR, "not a regular file");
  REQUIRE(close(fd) == 0);
  /* A descriptor open for writing only: it can be neither mapped nor read. */
  fd = open(at_64, O_WRONLY);
  REQUIRE(fd >= 0);
  EXPECT_FAIL(octet_model_load_from_fd(fd, 64, 0, &out), OCTET_IO_ERROR, "map");
  REQUIRE(close(fd) == 0);
  fd = open(at_end, O_WRONLY);
  REQUIRE(fd >= 0);
  EXPECT_FAIL(octet_model_load_from_fd(fd, 4, 0, &out), OCTET_IO_ERROR, "read");
  REQUIRE(close(fd) == 0);
  REQUIRE(pipe(pipe_fds) == 0);
  EXPECT_FAIL(octet_model_load_from_fd(pipe_fds[0], 0, 0, &out), OCTET_IO_ERROR,
              "not a regular file");
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  free(file);
  free(bytes);
  free(reference);
}

/* ---- Dispatch ---------------------------------------------------------------------- */

int main(int argc, char** argv) {
  const char* section;
  if (argc < 3) {
    fprintf(stderr, "usage: %s SECTION MODEL_DIR [CHAT_TEMPLATE_DIR MODEL_DIR]\n", argv[0]);
    return 2;
  }
  section = argv[1];
  g_model_dir = argv[2];
  if (strcmp(section, "basics") == 0) {
    test_basics();
  } else if (strcmp(section, "fd") == 0) {
    test_fd();
  } else if (strcmp(section, "sessions") == 0) {
    test_sessions();
  } else if (strcmp(section, "steps") == 0) {
    test_steps();
  } else if (strcmp(section, "sampling") == 0) {
    test_sampling();
  } else if (strcmp(section, "embeddings") == 0) {
    test_embeddings();
  } else if (strcmp(section, "attention") == 0) {
    test_attention();
  } else if (strcmp(section, "generate") == 0) {
    test_generate();
  } else if (strcmp(section, "cancel") == 0) {
    test_cancel();
  } else if (strcmp(section, "state") == 0) {
    test_state();
  } else if (strcmp(section, "text") == 0) {
    if (argc < 5) {
      fprintf(stderr, "the text section needs GOLDEN_DIR and SYNTHETIC_MODEL_DIR\n");
      return 2;
    }
    test_text(argv[3], argv[4]);
  } else {
    fprintf(stderr, "unknown section '%s'\n", section);
    return 2;
  }
  if (g_failures == 0) printf("C API %s: all checks passed\n", section);
  return g_failures == 0 ? 0 : 1;
}
