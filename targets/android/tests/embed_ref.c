/* octet_embed_ref: sentence embeddings through the C API (octet_session_embed), written as raw
 * native-endian float32 [batch, hidden] for java.embeddings to compare with Session.embed.
 *
 *   octet_embed_ref MODEL mean|cls 0|1 OUT.bin IDS [IDS ...]     (IDS: comma-separated ids)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "octet/octet.h"

static int fail(const char* what, octet_status st) {
  fprintf(stderr, "octet_embed_ref: %s: %s (%s)\n", what, octet_last_error(), octet_status_name(st));
  return 1;
}

int main(int argc, char** argv) {
  octet_model* model = NULL;
  octet_session* session = NULL;
  octet_session_options options;
  octet_status st;
  int32_t* ids;
  uint32_t* lengths;
  float* out;
  uint32_t batch, seq = 0, b, hidden;
  int i;
  FILE* f;
  if (argc < 6) {
    fprintf(stderr, "usage: octet_embed_ref MODEL mean|cls 0|1 OUT.bin IDS [IDS ...]\n");
    return 2;
  }
  batch = (uint32_t)(argc - 5);
  /* The longest list sets seq: count the commas. */
  for (i = 5; i < argc; ++i) {
    uint32_t n = 1;
    const char* p;
    for (p = argv[i]; *p; ++p) n += *p == ',';
    if (n > seq) seq = n;
  }
  ids = calloc((size_t)batch * seq, sizeof(*ids));
  lengths = calloc(batch, sizeof(*lengths));
  if (ids == NULL || lengths == NULL) return 1;
  for (b = 0; b < batch; ++b) {
    char* p = argv[5 + b];
    uint32_t n = 0;
    for (;;) {
      char* end;
      ids[b * seq + n++] = (int32_t)strtol(p, &end, 10);
      if (*end != ',') break;
      p = end + 1;
    }
    lengths[b] = n;
  }
  st = octet_model_load(argv[1], &model);
  if (st != OCTET_OK) return fail("load", st);
  octet_session_options_init(&options);
  options.max_batch = batch;
  options.max_seq = seq;
  st = octet_session_create_with_options(model, &options, NULL, 0, &session);
  if (st != OCTET_OK) return fail("session", st);
  hidden = octet_model_hidden_size(model);
  out = malloc((size_t)batch * hidden * sizeof(float));
  if (out == NULL) return 1;
  st = octet_session_embed(session, ids, lengths, batch, seq,
                           strcmp(argv[2], "cls") == 0 ? OCTET_POOLING_CLS : OCTET_POOLING_MEAN,
                           strcmp(argv[3], "1") == 0 ? OCTET_EMBED_NORMALIZE : 0u, out,
                           (size_t)batch * hidden);
  if (st != OCTET_OK) return fail("embed", st);
  f = fopen(argv[4], "wb");
  if (f == NULL || fwrite(out, sizeof(float), (size_t)batch * hidden, f) != (size_t)batch * hidden ||
      fclose(f) != 0) {
    fprintf(stderr, "octet_embed_ref: cannot write %s\n", argv[4]);
    return 1;
  }
  free(out);
  free(ids);
  free(lengths);
  octet_session_free(session);
  octet_model_free(model);
  return 0;
}
