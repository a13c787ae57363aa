/* The C API, used from C (this file is compiled as C99 with -pedantic -Werror,
 * which proves octet.h is a C header). Usage: octet_c_api_test MODEL.octet
 * where MODEL is a zero-layer decoder (vocab 32) made by octet-testmodel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "octet/octet.h"

static int failures = 0;

#define EXPECT(cond)                                                   \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                      \
    }                                                                  \
  } while (0)

int main(int argc, char** argv) {
  octet_model* model = NULL;
  octet_session* session = NULL;
  octet_session_limits limits = {0};
  octet_output output;
  int32_t ids[2 * 3] = {1, 2, 3, 4, 0, 0};
  uint32_t lengths[2] = {3, 1};
  int32_t bad_ids[1] = {1000};
  uint32_t one[1] = {1};
  static const char garbage[128] __attribute__((aligned(64))) = "definitely not a model";

  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.octet\n", argv[0]);
    return 2;
  }
  EXPECT(strlen(octet_version()) > 0);
  EXPECT(strcmp(octet_status_name(OCTET_INVALID_MODEL), "invalid model") == 0);

  /* Errors: a code and a message, never a crash. */
  EXPECT(octet_model_load("/nonexistent/model.octet", &model) == OCTET_IO_ERROR);
  EXPECT(model == NULL);
  EXPECT(strstr(octet_last_error(), "/nonexistent/model.octet") != NULL);
  EXPECT(octet_model_load_from_buffer(garbage, sizeof(garbage), &model) == OCTET_INVALID_MODEL);
  EXPECT(strlen(octet_last_error()) > 0);
  EXPECT(octet_model_load(NULL, &model) == OCTET_INVALID_ARGUMENT);
  EXPECT(octet_session_create(NULL, NULL, &session) == OCTET_INVALID_ARGUMENT);
  EXPECT(octet_session_run(NULL, ids, lengths, 1, 1) == OCTET_INVALID_ARGUMENT);

  /* A real model. */
  if (octet_model_load(argv[1], &model) != OCTET_OK) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], octet_last_error());
    return 1;
  }
  EXPECT(octet_model_vocab_size(model) == 32);
  limits.max_batch = 2;
  limits.max_seq = 3;
  limits.max_new_tokens = 0;
  limits.threads = 2; /* results are the same for every count */
  EXPECT(octet_session_create(model, &limits, &session) == OCTET_OK);
  if (session == NULL) return 1;
  EXPECT(octet_session_arena_bytes(session) > 0);
  EXPECT(octet_session_output(session, &output) == OCTET_INVALID_STATE); /* no run yet */
  EXPECT(octet_session_run(session, ids, lengths, 2, 3) == OCTET_OK);
  EXPECT(octet_session_output(session, &output) == OCTET_OK);
  EXPECT(output.batch == 2 && output.seq == 3 && output.dim == 32);
  EXPECT(output.data != NULL);
  EXPECT(octet_session_run(session, bad_ids, one, 1, 1) == OCTET_INVALID_ARGUMENT);
  EXPECT(strstr(octet_last_error(), "vocabulary") != NULL);
  EXPECT(octet_session_run(session, ids, lengths, 3, 3) == OCTET_LIMIT_EXCEEDED);

  octet_session_free(session);
  octet_model_free(model);
  octet_session_free(NULL); /* freeing NULL is a no-op */
  octet_model_free(NULL);
  if (failures == 0) printf("C API: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
