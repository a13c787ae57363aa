/* octet: int8 Transformer inference for edge devices. The public C API.
 *
 * This header is the one door to the runtime: the command-line tools, the C++
 * wrapper (octet.hpp) and the Java binding are all written on it.
 *
 * Errors. Every call that can fail returns an octet_status; on failure,
 * octet_last_error() gives a one-line message for this thread (valid until
 * this thread's next failing call). Nothing here aborts or throws; a null
 * handle or pointer where one is required is OCTET_INVALID_ARGUMENT.
 *
 * A call the model's kind cannot make (embeddings from a decoder, a step of an
 * encoder, a tokenizer of a file without one) is OCTET_UNSUPPORTED.
 *
 * Lifetimes. A model must outlive its sessions, tokenizers and text streams;
 * free those first. Strings and arrays the API returns point into the object
 * they came from and stay valid as long as it (or as the call says).
 *
 * Threads. A model may be shared by any number of threads. A session, a
 * tokenizer or a text stream is used by one thread at a time, except
 * octet_session_cancel, which any thread may call at any time. Running a
 * session allocates no memory: it plans and allocates its arenas (or takes the
 * caller's) when it is created.
 *
 * ABI rules (what stays true across versions with the same major number):
 *   - handles are opaque; their layout is private;
 *   - a struct a caller passes in starts with `size_t struct_size`, set by the
 *     caller to sizeof(struct) (the *_init functions do it): new fields are only
 *     ever appended, and octet reads or writes only the bytes the caller's size
 *     covers, so a program built against an older header keeps working;
 *   - functions, enum values and flags are only ever added, never changed;
 *   - a struct field that holds an enum's value is an int32_t (the size of a C
 *     enum is the compiler's choice; the field's is not);
 *   - no C++ types or exceptions cross the boundary; every exported symbol
 *     starts with `octet_`;
 *   - OCTET_VERSION_* is the header's version, octet_version_number() the
 *     library's: a program may check that the major numbers agree.
 */
#ifndef OCTET_OCTET_H_
#define OCTET_OCTET_H_

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#if defined(OCTET_BUILDING_SHARED)
#define OCTET_API __attribute__((visibility("default")))
#else
#define OCTET_API
#endif

#define OCTET_VERSION_MAJOR 0
#define OCTET_VERSION_MINOR 2
#define OCTET_VERSION_PATCH 0
/* major * 10000 + minor * 100 + patch */
#define OCTET_VERSION_NUMBER \
  (OCTET_VERSION_MAJOR * 10000 + OCTET_VERSION_MINOR * 100 + OCTET_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Status ------------------------------------------------------------ */

typedef enum octet_status {
  OCTET_OK = 0,
  OCTET_INVALID_ARGUMENT = 1, /* the caller passed something wrong (shape, id, null) */
  OCTET_INVALID_MODEL = 2,    /* the model file is malformed or inconsistent */
  OCTET_UNSUPPORTED = 3,      /* valid, but this model, build or version cannot do it */
  OCTET_OUT_OF_MEMORY = 4,    /* an allocation failed, or a memory bound was exceeded */
  OCTET_IO_ERROR = 5,         /* a file could not be opened, mapped or read */
  OCTET_INTERNAL = 6,         /* a bug in octet */
  OCTET_INVALID_STATE = 7,    /* a call in the wrong order (a step before any prompt) */
  OCTET_LIMIT_EXCEEDED = 8,   /* beyond the session's limits (a sequence longer than planned) */
  OCTET_BUFFER_TOO_SMALL = 9, /* an output buffer is too small; the call reports the size needed */
  OCTET_CANCELLED = 10        /* stopped by octet_session_cancel or a logits hook */
} octet_status;

/* "0.2.0": the library's version. */
OCTET_API const char* octet_version(void);
/* The library's OCTET_VERSION_NUMBER. */
OCTET_API uint32_t octet_version_number(void);
/* The message of this thread's last failing call ("" if none). */
OCTET_API const char* octet_last_error(void);
/* A short name for a status code ("invalid model"). */
OCTET_API const char* octet_status_name(octet_status status);

/* ---- Models -------------------------------------------------------------- */

typedef struct octet_model octet_model;

/* Maps and verifies a model file. On success *out is a new model. */
OCTET_API octet_status octet_model_load(const char* path, octet_model** out);
/* Verifies a model in caller memory (64-byte aligned), used in place: the
 * buffer must stay alive and unchanged until octet_model_free. */
OCTET_API octet_status octet_model_load_from_buffer(const void* data, size_t size,
                                                    octet_model** out);
/* A model stored at [offset, offset + length) of an open file (length 0: to the
 * end of the file), e.g. an uncompressed asset inside an APK (Android's
 * AAsset_openFileDescriptor64 gives the three). The range is mapped, not read,
 * when the model's start in the mapping is 64-byte aligned; otherwise it is
 * read into memory octet owns (octet_model_info.mapped tells which). The
 * caller may close fd once the call returns. */
OCTET_API octet_status octet_model_load_from_fd(int fd, uint64_t offset, uint64_t length,
                                                octet_model** out);
OCTET_API void octet_model_free(octet_model* model);

typedef enum octet_structure {
  OCTET_ENCODER_ONLY = 0,    /* bert: hidden states, embeddings */
  OCTET_DECODER_ONLY = 1,    /* gpt2, llama, qwen2, mistral: logits, generation */
  OCTET_ENCODER_DECODER = 2  /* marian, t5: source in, generated target out */
} octet_structure;

/* What a program needs to know about a model. */
typedef struct octet_model_info {
  size_t struct_size;       /* in: sizeof(octet_model_info) */
  const char* family;       /* config.json's model_type: "bert", "distilbert", "roberta",
                               "xlm-roberta", "gpt2", "llama", "qwen2", "qwen3", "mistral",
                               "gemma", "gemma2", "gemma3_text", "phi3", "marian", "t5",
                               "modernbert", "lfm2", "qwen3_5", "rwkv" */
  int32_t structure;        /* an octet_structure */
  uint32_t vocab_size;
  uint32_t hidden_size;
  uint32_t num_layers;         /* encoder layers, or decoder layers of a decoder-only model */
  uint32_t num_decoder_layers; /* encoder-decoder models; else 0 */
  uint32_t num_heads;
  uint32_t num_kv_heads;
  uint32_t head_dim;
  uint32_t max_positions;   /* longest sequence the positions support; 0 = no bound */
  int32_t bos_token_id;     /* -1 when the model has none */
  int32_t eos_token_id;     /* the architecture's; octet_model_is_eos knows the whole set */
  int32_t pad_token_id;
  int32_t decoder_start_token_id;
  int32_t has_tokenizer;    /* 1 when the file carries a tokenizer */
  int32_t has_chat_template;
  int32_t int8;             /* 1: int8 weights; 0: fp32 file (--dtype fp32) */
  int32_t mapped;           /* 1: the weights are used in place from a file mapping */
  uint64_t file_bytes;      /* the model file */
  uint64_t weights_bytes;   /* every tensor of it */
  int32_t positions_bounded; /* 1: max_positions is a hard limit (a learned position table) */
} octet_model_info;

/* Fills *info (whose struct_size the caller sets). */
OCTET_API octet_status octet_model_get_info(const octet_model* model, octet_model_info* info);
OCTET_API uint32_t octet_model_vocab_size(const octet_model* model);
OCTET_API uint32_t octet_model_hidden_size(const octet_model* model);
/* 1 when id ends generation: one of the tokenizer's end-of-sequence ids when the
 * file has a tokenizer that lists them, else the architecture's eos id. */
OCTET_API int octet_model_is_eos(const octet_model* model, int32_t id);

/* ---- Sessions ------------------------------------------------------------- */

typedef struct octet_session octet_session;

typedef struct octet_session_limits {
  uint32_t max_batch;      /* sequences per run, >= 1 */
  uint32_t max_seq;        /* tokens per sequence, >= 1 */
  uint32_t max_new_tokens; /* decoder steps after the prompt (0 if none) */
  uint32_t threads;        /* 0: the machine's fast cores; 1: the calling thread only;
                              results are bit-identical for every count (<= 256) */
} octet_session_limits;

/* Session flags. */
/* Decoders: octet_session_run and octet_session_run_encoder_decoder output the
 * logits of every position, [batch, seq, vocab], instead of each sequence's
 * last one, [batch, 1, vocab] (planned for max_batch x max_seq rows of the
 * vocabulary instead of max_batch). octet_session_create (limits) always
 * outputs every position. */
#define OCTET_SESSION_ALL_LOGITS 1u

typedef struct octet_session_options {
  size_t struct_size;      /* sizeof(octet_session_options) */
  uint32_t max_batch;      /* default 1 */
  uint32_t max_seq;        /* default 128: tokens per sequence of a run (a prompt) */
  uint32_t max_new_tokens; /* default 0: decoder steps after the prompt (KV cache room) */
  uint32_t threads;        /* default 1; 0: the machine's fast cores; at most 256 */
  uint32_t flags;          /* OCTET_SESSION_*; default 0 */
  uint32_t prefill_chunk;  /* decoder prompts pass the layers this many positions at a
                              time (same results, smaller buffers); 0: 512, or the
                              whole prompt with OCTET_SESSION_ALL_LOGITS */
} octet_session_options;

/* Sets struct_size and the defaults above. */
OCTET_API void octet_session_options_init(octet_session_options* options);

/* What a session for given options needs, before anything is allocated. */
typedef struct octet_session_plan {
  size_t struct_size;       /* in: sizeof(octet_session_plan) */
  size_t activation_bytes;  /* hidden states, layer outputs, the output buffer */
  size_t scratch_bytes;     /* per-op temporaries */
  size_t kv_cache_bytes;    /* decoder keys and values */
  size_t memory_bytes;      /* one caller buffer holding all three (with alignment) */
} octet_session_plan;

OCTET_API octet_status octet_session_plan_memory(const octet_model* model,
                                                 const octet_session_options* options,
                                                 octet_session_plan* plan);

/* Creates a session for the limits (NULL = batch 1, 128 tokens); it always
 * outputs every position's logits. octet_session_limits cannot grow (it has no
 * struct_size): new programs use octet_session_create_with_options. */
OCTET_API octet_status octet_session_create(const octet_model* model,
                                            const octet_session_limits* limits,
                                            octet_session** out);
/* Creates a session for the options (NULL = the defaults). memory NULL: the
 * session allocates its arenas; else the caller's buffer of memory_bytes (at
 * least octet_session_plan.memory_bytes, 64-byte aligned) holds them and must
 * outlive the session. What is still allocated: the handle, the thread pool's
 * workers, a tokenizer's workspace for generation, and for an fp32 file the
 * packed copies of its matrices. */
OCTET_API octet_status octet_session_create_with_options(const octet_model* model,
                                                         const octet_session_options* options,
                                                         void* memory, size_t memory_bytes,
                                                         octet_session** out);
OCTET_API void octet_session_free(octet_session* session);
/* Bytes of the session's arenas (activations + scratch + KV cache). */
OCTET_API size_t octet_session_arena_bytes(const octet_session* session);

/* One forward pass: ids is [batch, seq] row-major; lengths[b] tokens of row b
 * are real (1..seq), the rest is padding (not read). Encoders: the last hidden
 * state [batch, seq, hidden]. Decoders: logits (see OCTET_SESSION_ALL_LOGITS);
 * the keys and values stay in the KV cache for octet_session_step (the prompt,
 * or prefill). Encoder-decoder models use octet_session_run_encoder_decoder. */
OCTET_API octet_status octet_session_run(octet_session* session, const int32_t* ids,
                                         const uint32_t* lengths, uint32_t batch, uint32_t seq);

/* Encoder-decoder models: the encoder reads enc_ids [batch, enc_seq]
 * (enc_lengths[b] real), the decoder dec_ids [batch, dec_seq] (dec_lengths[b]
 * real, starting with the decoder start token), teacher-forced. Output: decoder
 * logits [batch, dec_seq, vocab] with OCTET_SESSION_ALL_LOGITS, else each
 * sequence's last row [batch, 1, vocab]. The source's keys and values are kept
 * for octet_session_step. */
OCTET_API octet_status octet_session_run_encoder_decoder(
    octet_session* session, const int32_t* enc_ids, const uint32_t* enc_lengths, uint32_t enc_seq,
    const int32_t* dec_ids, const uint32_t* dec_lengths, uint32_t dec_seq, uint32_t batch);

/* Decoders, after a run: one more token for each sequence of that run (ids
 * [batch], the same batch), appended after its tokens. Output: logits
 * [batch, 1, vocab]. At most max_seq + max_new_tokens positions per sequence
 * (OCTET_LIMIT_EXCEEDED beyond). */
OCTET_API octet_status octet_session_step(octet_session* session, const int32_t* ids,
                                          uint32_t batch);

/* Decoder-only models, after a run: k (1..max_seq) more tokens per sequence
 * (ids [batch, k] row-major) in one pass, as k steps would append them (a
 * chat's next turn). Output: the logits of each sequence's last new token,
 * [batch, 1, vocab]; with OCTET_SESSION_ALL_LOGITS every new token's,
 * [batch, k, vocab] (sampling reads the last). */
OCTET_API octet_status octet_session_extend(octet_session* session, const int32_t* ids,
                                            uint32_t batch, uint32_t k);

typedef struct octet_output {
  const float* data; /* [batch, seq, dim] row-major, owned by the session */
  uint32_t batch;
  uint32_t seq;
  uint32_t dim; /* hidden size (encoders) or vocabulary size (decoders) */
} octet_output;

/* The output of the last successful run, step or extend. */
OCTET_API octet_status octet_session_output(const octet_session* session, octet_output* out);

/* ---- Sampling ------------------------------------------------------------- */

/* Called before each sampling with the next-token logits of one sequence,
 * which it may change in place (a mask: -INFINITY; a bias: add): they are the
 * session's output, so octet_session_output shows the edited values
 * afterwards. At least one logit must stay finite (NaN and +INFINITY are
 * refused). Returns 0 to go on; anything else stops the generation (or the
 * sample call) with OCTET_CANCELLED. */
typedef int (*octet_logits_fn)(void* user, uint32_t sequence, float* logits, uint32_t vocab);

typedef struct octet_sampling {
  size_t struct_size;   /* sizeof(octet_sampling) */
  float temperature;    /* default 1; 0 (or top_k 1) = greedy: the argmax, lowest id on
                           ties, and the random state does not advance */
  uint32_t top_k;       /* default 0 = no limit */
  float top_p;          /* default 1 = no nucleus cut; in (0, 1] */
  octet_logits_fn logits_hook; /* default NULL */
  void* logits_hook_user;
} octet_sampling;

OCTET_API void octet_sampling_init(octet_sampling* sampling);

/* Decoders, after a run, step or extend: the next token of each sequence of
 * that batch (out_ids[batch]) from its last row of logits, drawing for
 * sequence 0, 1, ... in order from *rng_state (splitmix64; the seed is the
 * initial state; same seed, same stream on every platform). NULL sampling:
 * the defaults. No allocation. */
OCTET_API octet_status octet_session_sample(octet_session* session,
                                            const octet_sampling* sampling,
                                            uint64_t* rng_state, int32_t* out_ids);

/* ---- Generation ---------------------------------------------------------- */

/* One event of a generation, for the token callback. */
typedef struct octet_token_event {
  size_t struct_size;  /* sizeof(octet_token_event) of the library */
  uint32_t sequence;   /* which sequence of the batch */
  int32_t id;          /* the sampled token; -1 for text alone (held-back text at the end) */
  uint32_t index;      /* tokens this sequence generated before this one */
  int32_t is_eos;      /* 1 when id ends the sequence (its text is empty) */
  const char* text;    /* UTF-8 the token completes (may be empty; NULL without a
                          tokenizer); valid during the call. A character split over
                          several tokens arrives whole, with the token that ends it. */
  size_t text_len;
} octet_token_event;

/* Returns 0 to go on; anything else ends the whole generation (octet_generate
 * then returns OCTET_OK). */
typedef int (*octet_token_fn)(void* user, const octet_token_event* event);

/* Generation flags. */
#define OCTET_GENERATE_KEEP_SPECIAL 1u /* text includes special tokens' strings */
#define OCTET_GENERATE_IGNORE_EOS 2u   /* run max_new_tokens even past an eos id */

typedef struct octet_generate_options {
  size_t struct_size;        /* sizeof(octet_generate_options) */
  uint32_t max_new_tokens;   /* default 128; the prompt (1 for encoder-decoder) + max_new_tokens
                                - 1 must fit in the session's max_seq + max_new_tokens */
  float temperature;         /* default 1; 0 = greedy */
  uint32_t top_k;            /* default 0 */
  float top_p;               /* default 1 */
  uint64_t seed;             /* default 0: the random state's start */
  uint32_t flags;            /* OCTET_GENERATE_*; default 0 */
  octet_token_fn on_token;   /* default NULL */
  void* on_token_user;
  octet_logits_fn logits_hook; /* default NULL */
  void* logits_hook_user;
} octet_generate_options;

OCTET_API void octet_generate_options_init(octet_generate_options* options);

/* Generates from a batch of prompts (ids [batch, seq] row-major, lengths[b]
 * real): decoder-only models continue each prompt; encoder-decoder models read
 * it as the source and start the target at the decoder start token. Each
 * sequence runs until it samples an eos id (octet_model_is_eos) or has
 * max_new_tokens tokens. on_token gets every token as it is sampled, with its
 * text when the model has a tokenizer (decoded in the context of the prompt).
 * out_counts[batch] (may be NULL) receives the tokens each sequence generated,
 * eos included. The session must be made for the batch, the prompt length
 * (max_seq) and max_new_tokens - 1 steps (max_new_tokens). Returns
 * OCTET_CANCELLED when octet_session_cancel or the logits hook stopped it. */
OCTET_API octet_status octet_generate(octet_session* session, const int32_t* ids,
                                      const uint32_t* lengths, uint32_t batch, uint32_t seq,
                                      const octet_generate_options* options,
                                      uint32_t* out_counts);

/* Decoder-only models: generates after what the session holds (a run, an
 * extend or a loaded state: its last output gives each sequence's first token),
 * for the batch of that output, as octet_generate does after the prompts: the
 * same options, events, stop rules and cancel, out_counts[batch] (may be NULL).
 * For a chat's next answer once the turn is extended in. Each token but the
 * last is stepped into the cache, so the session must hold max_new_tokens - 1
 * more positions per sequence (OCTET_LIMIT_EXCEEDED from the step that does
 * not fit). The text starts with the first new token: no earlier context.
 * rng_state (may be NULL: options->seed) is the random state, advanced as
 * octet_session_sample advances it, so answers can draw from one stream.
 * OCTET_INVALID_STATE before any run, extend or state load. */
OCTET_API octet_status octet_generate_continue(octet_session* session,
                                               const octet_generate_options* options,
                                               uint64_t* rng_state, uint32_t* out_counts);

/* Stops the generation running on this session (the one started last) before
 * its next step; safe from any thread. A cancel that lands while that
 * generation is still starting is not lost; a generation started after this
 * call is not affected (with none running, the call does nothing). */
OCTET_API void octet_session_cancel(octet_session* session);

/* ---- Embeddings ------------------------------------------------------------ */

typedef enum octet_pooling {
  OCTET_POOLING_MEAN = 0, /* the mean of the real tokens' hidden states */
  OCTET_POOLING_CLS = 1   /* the first token's hidden state */
} octet_pooling;

#define OCTET_EMBED_NORMALIZE 1u /* divide each embedding by its L2 norm */

/* Encoder-only models: runs ids [batch, seq] (lengths[b] real) and writes one
 * vector per sequence, out[batch, hidden] (out_floats >= batch x hidden), as
 * sentence-transformers' Pooling (and Normalize with the flag) computes it. */
OCTET_API octet_status octet_session_embed(octet_session* session, const int32_t* ids,
                                           const uint32_t* lengths, uint32_t batch, uint32_t seq,
                                           octet_pooling pooling, uint32_t flags, float* out,
                                           size_t out_floats);

/* ---- Attention weights ------------------------------------------------------ */

typedef enum octet_attention_stack {
  OCTET_STACK_MODEL = 0,   /* the layers of an encoder-only or decoder-only model */
  OCTET_STACK_ENCODER = 1, /* encoder-decoder: the encoder's self-attention */
  OCTET_STACK_DECODER = 2  /* encoder-decoder: the decoder's */
} octet_attention_stack;

typedef enum octet_capture_kind {
  OCTET_CAPTURE_PROBABILITIES = 0, /* softmax attention: rows of probabilities */
  OCTET_CAPTURE_MIXING = 1         /* a linear attention (Gated DeltaNet): the token-mixing
                                      matrix its recurrence implies, per value head: the
                                      output before its gated norm is o_i = sum_j c_ij v_j
                                      (j <= i); signed, rows need not sum to 1 */
} octet_capture_kind;

typedef struct octet_attention_capture {
  size_t struct_size;   /* sizeof(octet_attention_capture) */
  int32_t stack;        /* an octet_attention_stack */
  int32_t cross;        /* 1: the decoder's cross-attention (OCTET_STACK_DECODER) */
  uint32_t layer;
  float* probs;         /* caller-owned, capacity floats */
  size_t capacity;
  /* Set by each run that wrote probs, [batch, heads, q_len, k_len]: */
  uint32_t batch;
  uint32_t heads;
  uint32_t q_len;
  uint32_t k_len;
  int32_t kind;         /* an octet_capture_kind (set when struct_size covers it) */
} octet_attention_capture;

/* The following runs (not steps) write the attention probabilities of one
 * layer into capture->probs (a Gated DeltaNet layer: its token-mixing matrix,
 * kind OCTET_CAPTURE_MIXING, heads = its value heads; it needs a session whose
 * prompts run in one pass, prefill_chunk 0); NULL stops it. A struct_size up
 * to k_len (before kind) is accepted as well. *capture must stay alive while
 * set. A run whose probabilities exceed capacity fails before computing with
 * OCTET_BUFFER_TOO_SMALL, and batch, heads, q_len and k_len then give the
 * shape it needs (the session's output stays the last run's). */
OCTET_API octet_status octet_session_capture_attention(octet_session* session,
                                                       octet_attention_capture* capture);

/* ---- Session state ------------------------------------------------------------ */

/* A decoder session's state (each layer's token-mixer state: the KV rows of
 * attention layers, the fixed state of others such as a short convolution's
 * last rows; the sequences' positions and last next-token logits) as bytes,
 * with a checksum over them, so a fixed prompt is processed
 * once: restored into a session of the same model (any limits that hold it),
 * the next sample and every following step give bit-identical results. */
OCTET_API octet_status octet_session_state_size(const octet_session* session, size_t* bytes);
/* Writes the state; OCTET_BUFFER_TOO_SMALL (with *written = the size needed)
 * when capacity is short (buffer NULL: a size query). */
OCTET_API octet_status octet_session_state_save(const octet_session* session, void* buffer,
                                                size_t capacity, size_t* written);
/* Restores a state saved from a session of the same model (checked by a
 * fingerprint of the file's tables and samples of every tensor, not a full
 * hash); bytes changed or cut since the save fail the checksum. A failed load
 * leaves the session as it was. */
OCTET_API octet_status octet_session_state_load(octet_session* session, const void* data,
                                                size_t size);

/* ---- Tokenizer ----------------------------------------------------------------- */

typedef struct octet_tokenizer octet_tokenizer;

/* The model's tokenizer (OCTET_UNSUPPORTED when the file has none), with its
 * own workspace: one per thread. */
OCTET_API octet_status octet_tokenizer_create(const octet_model* model, octet_tokenizer** out);
OCTET_API void octet_tokenizer_free(octet_tokenizer* tokenizer);

#define OCTET_ENCODE_NO_SPECIAL 1u    /* add_special_tokens=False: no template (BOS, CLS, ...) */
#define OCTET_ENCODE_SPLIT_SPECIAL 2u /* special tokens' strings in the text are plain text */

/* Hugging Face tokenizers' encode(text): text[0, text_len) is UTF-8 (the
 * message names the offset of an invalid byte). Writes *n_ids ids; when they
 * do not fit in capacity, OCTET_BUFFER_TOO_SMALL with *n_ids = the count. */
OCTET_API octet_status octet_tokenizer_encode(octet_tokenizer* tokenizer, const char* text,
                                              size_t text_len, uint32_t flags, int32_t* ids,
                                              size_t capacity, size_t* n_ids);

#define OCTET_DECODE_KEEP_SPECIAL 1u /* skip_special_tokens=False */

/* Hugging Face tokenizers' decode(ids): writes *text_len bytes of UTF-8 (not
 * NUL-terminated); OCTET_BUFFER_TOO_SMALL with *text_len = the bytes needed. */
OCTET_API octet_status octet_tokenizer_decode(octet_tokenizer* tokenizer, const int32_t* ids,
                                              size_t n_ids, uint32_t flags, char* text,
                                              size_t capacity, size_t* text_len);

OCTET_API uint32_t octet_tokenizer_vocab_size(const octet_tokenizer* tokenizer);
/* The token's string as the vocabulary spells it (bytes, not NUL-terminated). */
OCTET_API octet_status octet_tokenizer_token(const octet_tokenizer* tokenizer, int32_t id,
                                             const char** bytes, size_t* len);

typedef struct octet_special_token {
  size_t struct_size;  /* in: sizeof(octet_special_token) */
  const char* content; /* its string (NUL-terminated, owned by the model) */
  size_t content_len;
  int32_t id;
  int32_t lstrip;      /* it takes the whitespace before it */
  int32_t rstrip;      /* it takes the whitespace after it */
} octet_special_token;

/* The tokenizer's special added tokens (<s>, <|im_start|>, ...), by index. */
OCTET_API size_t octet_tokenizer_special_count(const octet_tokenizer* tokenizer);
OCTET_API octet_status octet_tokenizer_special(const octet_tokenizer* tokenizer, size_t index,
                                               octet_special_token* out);

/* Streaming decode: push ids one at a time and get the text each completes; a
 * character spread over several tokens (byte fallback, emoji) is held back
 * until complete. The pieces, then finish's, concatenate to decode(all ids). */
typedef struct octet_text_stream octet_text_stream;

/* flags: OCTET_DECODE_KEEP_SPECIAL. */
OCTET_API octet_status octet_text_stream_create(const octet_model* model, uint32_t flags,
                                                octet_text_stream** out);
OCTET_API void octet_text_stream_free(octet_text_stream* stream);
/* *text points into the stream (valid until its next call). */
OCTET_API octet_status octet_text_stream_push(octet_text_stream* stream, int32_t id,
                                              const char** text, size_t* text_len);
/* The held-back text; the stream is then empty, as after reset. */
OCTET_API octet_status octet_text_stream_finish(octet_text_stream* stream, const char** text,
                                                size_t* text_len);
OCTET_API void octet_text_stream_reset(octet_text_stream* stream);

/* ---- Chat templates ------------------------------------------------------------- */

typedef struct octet_chat_message {
  const char* role;    /* "system", "user", "assistant", ... (NUL-terminated UTF-8) */
  const char* content; /* NUL-terminated UTF-8 */
} octet_chat_message;

#define OCTET_CHAT_NO_GENERATION_PROMPT 1u /* add_generation_prompt=False */

typedef struct octet_chat_options {
  size_t struct_size;   /* sizeof(octet_chat_options) */
  uint32_t flags;       /* OCTET_CHAT_*; default 0 */
  const struct tm* now; /* the time strftime_now() formats; NULL: the local time now */
} octet_chat_options;

OCTET_API void octet_chat_options_init(octet_chat_options* options);

/* The model's chat template rendered for the messages, byte for byte as
 * Hugging Face's apply_chat_template(tokenize=False) renders it. Writes
 * *text_len bytes (not NUL-terminated); OCTET_BUFFER_TOO_SMALL with *text_len =
 * the bytes needed. OCTET_UNSUPPORTED when the model has no chat template; a
 * template's own error (raise_exception) is OCTET_INVALID_ARGUMENT with its
 * message. options NULL: the defaults. */
OCTET_API octet_status octet_chat_render(const octet_model* model,
                                         const octet_chat_message* messages, size_t n_messages,
                                         const octet_chat_options* options, char* text,
                                         size_t capacity, size_t* text_len);

/* ---- Diagnostics: a model's description, the runtime's and a session's facts,
 * a per-operation profile. Supported API under the same ABI rules as the rest:
 * for apps that report what they run and where the time goes, for tools and
 * for bug reports. ---------------------------------------------------------------- */

/* The model file described as one JSON object (UTF-8, not NUL-terminated):
 * "file" (size, format version, data segment, mapped; not the path, which
 * octet does not keep), "architecture" (every field), "tensors" (name, dtype,
 * layout, input_bits, shape, bytes, offset, quantization summary), "weights"
 * (bytes by dtype), "tokenizer", "provenance" (source, converter, quantization
 * report), "memory_plan" (as stored), "session_plan" (what a session of batch
 * 1 and min(512, max_positions) tokens plans on this build) and "cpu"
 * (octet_runtime_info). What `octet inspect --json` prints, "file.path" aside.
 * OCTET_BUFFER_TOO_SMALL with *json_len = the bytes needed (json may be NULL
 * with capacity 0 to ask). */
OCTET_API octet_status octet_model_describe(const octet_model* model, char* json, size_t capacity,
                                            size_t* json_len);

typedef struct octet_runtime_info {
  size_t struct_size;                  /* in: sizeof(octet_runtime_info) */
  const char* cpu_features;            /* what the kernels may use, e.g. "avx2 avx512vnni" */
  const char* int8_gemm_kernel;        /* the kernels chosen for this CPU */
  const char* int8_packed_gemm_kernel;
  const char* int8_pv_kernel;          /* attention's P·V */
  uint32_t default_threads;            /* what threads = 0 resolves to */
} octet_runtime_info;

OCTET_API octet_status octet_get_runtime_info(octet_runtime_info* info);

typedef struct octet_session_info {
  size_t struct_size;        /* in: sizeof(octet_session_info) */
  uint32_t threads;          /* resolved */
  uint32_t max_batch;
  uint32_t max_seq;
  uint32_t max_new_tokens;
  size_t activation_bytes;
  size_t scratch_bytes;
  size_t kv_cache_bytes;
  int32_t f32_products;      /* 1: some matrix product runs in fp32 (an fp32 file, or
                                matrices the converter kept in fp32) */
  uint32_t f32_matrices;     /* of those, on XNNPACK operators ... */
  uint32_t f32_operators;    /* ... in this many operators */
  size_t f32_packed_bytes;   /* the operators' packed copies of the matrices */
  const char* f32_note;      /* NULL, or why fp32 products run on the reference GEMM */
  uint64_t decode_weight_bytes; /* weight bytes one decode step reads (all but looked-up tables) */
} octet_session_info;

OCTET_API octet_status octet_session_get_info(const octet_session* session,
                                              octet_session_info* info);

#define OCTET_PROFILE_MAX_KINDS 32

/* Time per kind of operation over the runs and steps since the last
 * octet_session_profile_start (two clock reads per operation while on). */
typedef struct octet_profile {
  size_t struct_size;        /* in: sizeof(octet_profile) */
  uint32_t num_kinds;
  const char* kind[OCTET_PROFILE_MAX_KINDS]; /* "embed", "norm", "linear", "attention", ... */
  uint64_t nanos[OCTET_PROFILE_MAX_KINDS];
  uint64_t calls[OCTET_PROFILE_MAX_KINDS];
  double linear_ops;         /* 2 x multiply-adds of the layers' products */
  double head_ops;           /* same for the LM head */
  /* Attention work in tiles: a block of 16 queries against one tile of keys (64 by
   * default), per head. "visited" are the tiles the kernels computed, "full" what a
   * pass with every key visible would compute: a sliding window or a causal mask
   * skips the rest. Layers without a window (and cross-attention), then layers with
   * one ("local_attention" in kind[]). */
  double attention_tiles_visited;
  double attention_tiles_full;
  double local_attention_tiles_visited;
  double local_attention_tiles_full;
} octet_profile;

/* Zeroes the counters and times the following runs and steps. */
OCTET_API octet_status octet_session_profile_start(octet_session* session);
/* Stops timing; the counters stay readable. */
OCTET_API octet_status octet_session_profile_stop(octet_session* session);
OCTET_API octet_status octet_session_profile(const octet_session* session, octet_profile* out);

#ifdef __cplusplus
}
#endif

#endif /* OCTET_OCTET_H_ */
