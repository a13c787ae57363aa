/* octet: int8 Transformer inference for edge devices. The public C API.
 *
 * Handles are opaque. Every call that can fail returns an octet_status; on
 * failure, octet_last_error() gives a one-line message for this thread (valid
 * until this thread's next failing call). Nothing here aborts or throws.
 *
 * Lifetimes: a model must outlive its sessions; free sessions first.
 * Threads: a model may be shared by many threads; a session is used by one
 * thread at a time. Running allocates no memory: a session plans and allocates
 * its arenas when it is created.
 */
#ifndef OCTET_OCTET_H_
#define OCTET_OCTET_H_

#include <stddef.h>
#include <stdint.h>

#if defined(OCTET_BUILDING_SHARED)
#define OCTET_API __attribute__((visibility("default")))
#else
#define OCTET_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum octet_status {
  OCTET_OK = 0,
  OCTET_INVALID_ARGUMENT = 1, /* the caller passed something wrong (shape, id, null) */
  OCTET_INVALID_MODEL = 2,    /* the model file is malformed or inconsistent */
  OCTET_UNSUPPORTED = 3,      /* valid, but this build or version cannot do it */
  OCTET_OUT_OF_MEMORY = 4,    /* an allocation or a planned limit was exceeded */
  OCTET_IO_ERROR = 5,         /* a file could not be opened or mapped */
  OCTET_INTERNAL = 6          /* a bug in octet */
} octet_status;

typedef struct octet_model octet_model;
typedef struct octet_session octet_session;

typedef struct octet_session_limits {
  uint32_t max_batch;      /* sequences per run, >= 1 */
  uint32_t max_seq;        /* tokens per sequence, >= 1 */
  uint32_t max_new_tokens; /* decoder steps after the prompt (0 if none) */
  uint32_t threads;        /* 0: the machine's fast cores; 1: the calling thread only;
                              results are bit-identical for every count (<= 256) */
} octet_session_limits;

typedef struct octet_output {
  const float* data; /* [batch, seq, dim] row-major, owned by the session */
  uint32_t batch;
  uint32_t seq;
  uint32_t dim; /* hidden size (encoders) or vocabulary size (decoders) */
} octet_output;

/* "0.1.0" */
OCTET_API const char* octet_version(void);
/* The message of this thread's last failing call ("" if none). */
OCTET_API const char* octet_last_error(void);
/* A short name for a status code ("invalid model"). */
OCTET_API const char* octet_status_name(octet_status status);

/* Maps and verifies a model file. On success *out is a new model. */
OCTET_API octet_status octet_model_load(const char* path, octet_model** out);
/* Verifies a model in caller memory (64-byte aligned), used in place: the
 * buffer must stay alive and unchanged until octet_model_free. */
OCTET_API octet_status octet_model_load_from_buffer(const void* data, size_t size,
                                                    octet_model** out);
OCTET_API void octet_model_free(octet_model* model);
OCTET_API uint32_t octet_model_vocab_size(const octet_model* model);
OCTET_API uint32_t octet_model_hidden_size(const octet_model* model);

/* Creates a session for the limits (NULL = batch 1, 128 tokens): plans and
 * allocates its arenas now. */
OCTET_API octet_status octet_session_create(const octet_model* model,
                                            const octet_session_limits* limits,
                                            octet_session** out);
OCTET_API void octet_session_free(octet_session* session);
/* Bytes of the session's arenas (activations + scratch + KV cache). */
OCTET_API size_t octet_session_arena_bytes(const octet_session* session);

/* One forward pass: ids is [batch, seq] row-major; lengths[b] tokens of row b
 * are real (1..seq), the rest is padding. */
OCTET_API octet_status octet_session_run(octet_session* session, const int32_t* ids,
                                         const uint32_t* lengths, uint32_t batch, uint32_t seq);
/* The output of the last successful run. */
OCTET_API octet_status octet_session_output(const octet_session* session, octet_output* out);

#ifdef __cplusplus
}
#endif

#endif /* OCTET_OCTET_H_ */
