/* A program that uses an installed octet (tests/packaging, scripts/test-packages.sh):
 * loads MODEL, runs one forward pass over the ids 1, 2, 3 and prints the output's
 * shape and whether every value is finite.
 *
 *   consumer MODEL  ->  "octet 0.1.0: output [1, 3, 256], finite"
 */
#include <math.h>
#include <stdio.h>

#include <octet/octet.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL\n", argv[0]);
    return 2;
  }
  octet_model* model = NULL;
  octet_session* session = NULL;
  int rc = 1;
  if (octet_model_load(argv[1], &model) != OCTET_OK) {
    fprintf(stderr, "load: %s\n", octet_last_error());
    return 1;
  }
  const octet_session_limits limits = {1, 3, 0, 1}; /* batch, seq, new tokens, threads */
  const int32_t ids[3] = {1, 2, 3};
  const uint32_t lengths[1] = {3};
  octet_output out;
  if (octet_session_create(model, &limits, &session) != OCTET_OK ||
      octet_session_run(session, ids, lengths, 1, 3) != OCTET_OK ||
      octet_session_output(session, &out) != OCTET_OK) {
    fprintf(stderr, "run: %s\n", octet_last_error());
    goto done;
  }
  {
    size_t n = (size_t)out.batch * out.seq * out.dim, finite = 0;
    for (size_t i = 0; i < n; ++i) finite += isfinite(out.data[i]) ? 1 : 0;
    printf("octet %s: output [%u, %u, %u], %s\n", octet_version(), out.batch, out.seq,
           out.dim, n > 0 && finite == n ? "finite" : "NOT FINITE");
    rc = n > 0 && finite == n ? 0 : 1;
  }
done:
  octet_session_free(session);
  octet_model_free(model);
  return rc;
}
