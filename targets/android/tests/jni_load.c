/* jni.load: liboctet_jni.so loads on its own (dlopen, every symbol bound now) and the runtime
 * inside it computes what liboctet.so computes. Built for the ARM presets, where no JVM runs
 * under qemu: the library is opened without one, through the C API it also exports.
 *
 *   octet_jni_load JNI_LIBRARY REFERENCE_LIBRARY MODEL
 *
 * Both libraries are opened with RTLD_LOCAL (each keeps its own copy of the runtime); the same
 * prompt goes through a prefill and 8 greedy steps in each, and every logit must be identical. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "octet/octet.h"

typedef struct api {
  void* handle;
  const char* (*version)(void);
  const char* (*last_error)(void);
  octet_status (*model_load)(const char*, octet_model**);
  void (*model_free)(octet_model*);
  void (*options_init)(octet_session_options*);
  octet_status (*session_create)(const octet_model*, const octet_session_options*, void*, size_t,
                                 octet_session**);
  void (*session_free)(octet_session*);
  octet_status (*run)(octet_session*, const int32_t*, const uint32_t*, uint32_t, uint32_t);
  octet_status (*step)(octet_session*, const int32_t*, uint32_t);
  octet_status (*output)(const octet_session*, octet_output*);
} api;

/* An object pointer from dlsym, converted as POSIX allows (C99 has no cast between the two). */
static int bind(void* handle, const char* name, void* slot, size_t size) {
  void* symbol = dlsym(handle, name);
  if (symbol == NULL) {
    fprintf(stderr, "jni_load: %s is not exported\n", name);
    return 0;
  }
  memcpy(slot, &symbol, size);
  return 1;
}

#define BIND(a, field, name) bind((a)->handle, name, &(a)->field, sizeof((a)->field))

static int open_api(const char* path, api* a) {
  memset(a, 0, sizeof(*a));
  a->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (a->handle == NULL) {
    fprintf(stderr, "jni_load: dlopen(%s): %s\n", path, dlerror());
    return 0;
  }
  return BIND(a, version, "octet_version") && BIND(a, last_error, "octet_last_error") &&
         BIND(a, model_load, "octet_model_load") && BIND(a, model_free, "octet_model_free") &&
         BIND(a, options_init, "octet_session_options_init") &&
         BIND(a, session_create, "octet_session_create_with_options") &&
         BIND(a, session_free, "octet_session_free") && BIND(a, run, "octet_session_run") &&
         BIND(a, step, "octet_session_step") && BIND(a, output, "octet_session_output");
}

enum { kSteps = 8, kMaxVocab = 1 << 18 };
static float logits[2][kSteps + 1][kMaxVocab];

/* Prefill + kSteps greedy steps; the logits of each go to out[i]. Returns the vocab size, 0 on
 * failure. */
static uint32_t generate(const api* a, const char* model_path, float (*out)[kMaxVocab]) {
  octet_model* model = NULL;
  octet_session* session = NULL;
  uint32_t vocab = 0;
  if (a->model_load(model_path, &model) != OCTET_OK) {
    fprintf(stderr, "jni_load: model: %s\n", a->last_error());
    return 0;
  }
  octet_session_options options;
  a->options_init(&options);
  options.max_seq = 16;
  options.max_new_tokens = kSteps;
  options.threads = 2;
  if (a->session_create(model, &options, NULL, 0, &session) == OCTET_OK) {
    const int32_t prompt[5] = {1, 7, 42, 3, 19};
    const uint32_t length = 5;
    octet_status status = a->run(session, prompt, &length, 1, 5);
    for (int i = 0; status == OCTET_OK && i <= kSteps; ++i) {
      octet_output o;
      status = a->output(session, &o);
      if (status != OCTET_OK) break;
      if (o.dim > kMaxVocab || o.batch != 1 || o.seq != 1) {
        fprintf(stderr, "jni_load: output %ux%ux%u\n", o.batch, o.seq, o.dim);
        status = OCTET_INTERNAL;
        break;
      }
      memcpy(out[i], o.data, o.dim * sizeof(float));
      vocab = o.dim;
      int32_t next = 0;
      for (uint32_t v = 1; v < o.dim; ++v) {
        if (o.data[v] > o.data[next]) next = (int32_t)v;
      }
      if (i < kSteps) status = a->step(session, &next, 1);
    }
    if (status != OCTET_OK) {
      fprintf(stderr, "jni_load: %s\n", a->last_error());
      vocab = 0;
    }
    a->session_free(session);
  } else {
    fprintf(stderr, "jni_load: session: %s\n", a->last_error());
  }
  a->model_free(model);
  return vocab;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: octet_jni_load JNI_LIBRARY REFERENCE_LIBRARY MODEL\n");
    return 2;
  }
  api jni, reference;
  if (!open_api(argv[1], &jni) || !open_api(argv[2], &reference)) return 1;
  if (dlsym(jni.handle, "JNI_OnLoad") == NULL) {
    fprintf(stderr, "jni_load: %s has no JNI_OnLoad\n", argv[1]);
    return 1;
  }
  if (strcmp(jni.version(), reference.version()) != 0) {
    fprintf(stderr, "jni_load: versions differ: %s vs %s\n", jni.version(), reference.version());
    return 1;
  }
  const uint32_t vocab = generate(&jni, argv[3], logits[0]);
  if (vocab == 0 || generate(&reference, argv[3], logits[1]) != vocab) return 1;
  for (int i = 0; i <= kSteps; ++i) {
    if (memcmp(logits[0][i], logits[1][i], vocab * sizeof(float)) != 0) {
      fprintf(stderr, "jni_load: the logits of position %d differ between the libraries\n", i);
      return 1;
    }
  }
  printf("jni_load: %s %s: prefill + %d greedy steps, %u logits each, identical to %s\n", argv[1],
         jni.version(), kSteps, vocab, argv[2]);
  return 0;
}
