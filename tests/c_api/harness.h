/* A small test harness for the C API tests (C99): checks that count failures
 * and go on, checks that stop the section, and failing-call checks that also
 * read octet_last_error().
 *
 * Every failing call must leave a message of its own: EXPECT_FAIL first makes
 * a known call fail (the marker), then checks that the call under test
 * replaced the marker's message with one containing `needle`. */
#ifndef OCTET_TESTS_C_API_HARNESS_H_
#define OCTET_TESTS_C_API_HARNESS_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "octet/octet.h"

extern int g_failures;

/* The directory with the fixture's models (argv). */
extern const char* g_model_dir;

/* Makes a known call fail, so that the last error is the marker's message. */
void harness_mark(void);
void harness_expect_fail(octet_status got, octet_status want, const char* needle, const char* expr,
                         const char* file, int line);
void harness_expect_ok(octet_status got, const char* expr, const char* file, int line);
void harness_require_ok(octet_status got, const char* expr, const char* file, int line);

#define EXPECT(cond)                                                      \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      ++g_failures;                                                       \
    }                                                                     \
  } while (0)

/* Stops the program (the section's ctest fails): for what the rest needs. */
#define REQUIRE(cond)                                                     \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "%s:%d: required %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                            \
    }                                                                     \
  } while (0)

#define EXPECT_OK(call) harness_expect_ok((call), #call, __FILE__, __LINE__)
#define REQUIRE_OK(call) harness_require_ok((call), #call, __FILE__, __LINE__)

/* The call fails with `code` and a message of its own that contains `needle`. */
#define EXPECT_FAIL(call, code, needle)                                                \
  do {                                                                                 \
    octet_status harness_status_;                                                      \
    harness_mark();                                                                    \
    harness_status_ = (call);                                                          \
    harness_expect_fail(harness_status_, (code), (needle), #call, __FILE__, __LINE__); \
  } while (0)

/* "DIR/name" in a static buffer (one at a time per slot, 4 slots). */
const char* model_path(const char* name);
/* Loads DIR/name or stops. */
octet_model* load_model(const char* name);
/* A session for the options (fields given), allocating its memory, or stops. */
octet_session* make_session(const octet_model* model, uint32_t max_batch, uint32_t max_seq,
                            uint32_t max_new_tokens, uint32_t flags);
/* The whole file, malloc'ed; *size its bytes. Stops on failure. */
unsigned char* read_file(const char* path, size_t* size);
/* 1 when [p, p + n) is well-formed UTF-8 (no partial or overlong sequence). */
int utf8_valid(const char* p, size_t n);
/* 1 when the bytes hold U+FFFD. */
int has_replacement_char(const char* p, size_t n);
/* The argmax of row[0, n), the lowest index on ties. */
int32_t argmax(const float* row, uint32_t n);
/* max |a - b| / max |b| over n floats (0 when b is all zero). */
double relative_error(const float* a, const float* b, size_t n);

/* The sections: each a ctest of its own (c_api_test.c dispatches). */
void test_basics(void);
void test_fd(void);
void test_sessions(void);
void test_steps(void);
void test_sampling(void);
void test_embeddings(void);
void test_attention(void);
void test_generate(void);
void test_cancel(void);
void test_state(void);
void test_text(const char* golden_dir, const char* synthetic_dir);

#endif /* OCTET_TESTS_C_API_HARNESS_H_ */
