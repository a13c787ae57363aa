// The JNI glue of the Java binding (targets/android/octet/src/main/java/dev/octet/Native.java):
// one function per C API call or group of calls, written on octet.h alone.
//
// Rules kept here (the ones Android's -Xcheck:jni and HotSpot's enforce):
//   - Text crosses as UTF-8 byte arrays, decoded and encoded in Java: never NewStringUTF or
//     GetStringUTFChars (modified UTF-8 spells an emoji as two 3-byte surrogates).
//   - Method and field IDs are cached in JNI_OnLoad.
//   - Every call back into Java is followed by an exception check; an exception stops the
//     native loop and reaches the Java caller unchanged.
//   - Local references made in loops (one per generated token) are deleted each time.
//   - GetPrimitiveArrayCritical only around short calls that do not call back (tokenizer
//     encode/decode, state save/load); runs copy their few input ids instead.
//   - No C++ exceptions: allocation failures become OctetException(OUT_OF_MEMORY).
#include <jni.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <new>

#include "octet/octet.h"

namespace {

// ---- Cached classes and IDs (JNI_OnLoad) ----------------------------------------------------

jclass g_exception_class;       // dev.octet.OctetException
jmethodID g_exception_from;     // static OctetException fromNative(int, byte[])
jmethodID g_on_token;           // Callbacks.onToken(int, int, int, boolean, byte[]) -> boolean
jmethodID g_on_logits;          // Callbacks.onLogits(int, ByteBuffer) -> boolean
jfieldID g_fd_field;            // java.io.FileDescriptor's int: "fd" (OpenJDK), "descriptor" (Android)

// ---- Errors ----------------------------------------------------------------------------------

jbyteArray NewBytes(JNIEnv* env, const char* data, size_t len);

// Throws OctetException(code, message). With an exception already pending, leaves that one.
void ThrowMessage(JNIEnv* env, int code, const char* message) {
  if (env->ExceptionCheck()) return;
  jbyteArray bytes = NewBytes(env, message, strlen(message));
  if (env->ExceptionCheck()) return;
  jobject e = env->CallStaticObjectMethod(g_exception_class, g_exception_from, code, bytes);
  if (bytes != nullptr) env->DeleteLocalRef(bytes);
  if (env->ExceptionCheck()) return;
  env->Throw(static_cast<jthrowable>(e));
  env->DeleteLocalRef(e);
}

// Throws the status with this thread's octet_last_error().
void ThrowStatus(JNIEnv* env, octet_status status) {
  ThrowMessage(env, static_cast<int>(status), octet_last_error());
}

// Returns true when st is OCTET_OK; else throws and returns false.
bool Ok(JNIEnv* env, octet_status st) {
  if (st == OCTET_OK) return true;
  ThrowStatus(env, st);
  return false;
}

void ThrowOutOfMemory(JNIEnv* env, const char* what) {
  ThrowMessage(env, OCTET_OUT_OF_MEMORY, what);
}

void ThrowInvalid(JNIEnv* env, const char* what) { ThrowMessage(env, OCTET_INVALID_ARGUMENT, what); }

// ---- Small helpers ---------------------------------------------------------------------------

// UTF-8 bytes as a new byte[] (null for no bytes: Java reads null as "").
jbyteArray NewBytes(JNIEnv* env, const char* data, size_t len) {
  if (len == 0) return nullptr;
  if (len > 0x7fffffff) {
    ThrowMessage(env, OCTET_LIMIT_EXCEEDED, "more than 2 GiB of text for one Java array");
    return nullptr;
  }
  jbyteArray a = env->NewByteArray(static_cast<jsize>(len));
  if (a == nullptr) return nullptr;  // OutOfMemoryError pending
  env->SetByteArrayRegion(a, 0, static_cast<jsize>(len), reinterpret_cast<const jbyte*>(data));
  return a;
}

// A growable array of T (malloc'd: no exceptions), kept between calls to avoid reallocating.
template <typename T>
struct Buffer {
  T* data = nullptr;
  size_t capacity = 0;
  ~Buffer() { free(data); }
  bool Reserve(size_t n) {
    if (n <= capacity) return true;
    size_t want = capacity * 2 > n ? capacity * 2 : n;
    void* p = realloc(data, want * sizeof(T));
    if (p == nullptr) return false;
    data = static_cast<T*>(p);
    capacity = want;
    return true;
  }
};

// A byte[]'s bytes, NUL-terminated (paths, chat messages).
char* CopyCString(JNIEnv* env, jbyteArray bytes) {
  const jsize n = env->GetArrayLength(bytes);
  char* s = static_cast<char*>(malloc(static_cast<size_t>(n) + 1));
  if (s == nullptr) {
    ThrowOutOfMemory(env, "cannot allocate a string");
    return nullptr;
  }
  env->GetByteArrayRegion(bytes, 0, n, reinterpret_cast<jbyte*>(s));
  s[n] = '\0';
  return s;
}

// The address of a direct buffer's element `offset` (element size `unit`), with `count` elements
// checked against its capacity; null (and an exception) when it is not a direct buffer.
void* DirectAddress(JNIEnv* env, jobject buffer, jint offset, jint count, size_t unit) {
  void* base = buffer != nullptr ? env->GetDirectBufferAddress(buffer) : nullptr;
  if (base == nullptr) {
    ThrowInvalid(env, "not a direct buffer");
    return nullptr;
  }
  const jlong capacity = env->GetDirectBufferCapacity(buffer);
  if (offset < 0 || count < 0 || static_cast<jlong>(offset) + count > capacity) {
    ThrowInvalid(env, "the range is outside the buffer");
    return nullptr;
  }
  return static_cast<char*>(base) + static_cast<size_t>(offset) * unit;
}

// Copies a Java int[] of at least n elements into buf (as int32_t or uint32_t).
template <typename T>
bool CopyInts(JNIEnv* env, jintArray array, size_t n, Buffer<T>* buf) {
  static_assert(sizeof(T) == sizeof(jint), "32-bit elements");
  if (array == nullptr || static_cast<size_t>(env->GetArrayLength(array)) < n) {
    ThrowInvalid(env, "an id or length array is shorter than the batch says");
    return false;
  }
  if (!buf->Reserve(n == 0 ? 1 : n)) {
    ThrowOutOfMemory(env, "cannot allocate the ids");
    return false;
  }
  env->GetIntArrayRegion(array, 0, static_cast<jsize>(n), reinterpret_cast<jint*>(buf->data));
  return true;
}

// The session handle with the buffers its calls reuse.
struct JniSession {
  octet_session* session = nullptr;
  Buffer<int32_t> ids, dec_ids, out_ids;
  Buffer<uint32_t> lengths, dec_lengths, counts;
  Buffer<float> floats;
};

// The tokenizer handle with its output buffers.
struct JniTokenizer {
  octet_tokenizer* tokenizer = nullptr;
  Buffer<int32_t> ids;
  Buffer<char> text;
};

template <typename T>
T* FromHandle(jlong h) {
  return reinterpret_cast<T*>(static_cast<intptr_t>(h));
}

jlong ToHandle(const void* p) { return static_cast<jlong>(reinterpret_cast<intptr_t>(p)); }

bool ReadOptions(JNIEnv* env, jintArray array, octet_session_options* o) {
  octet_session_options_init(o);
  jint v[6];
  if (array == nullptr || env->GetArrayLength(array) < 6) {
    ThrowInvalid(env, "session options: 6 numbers expected");
    return false;
  }
  env->GetIntArrayRegion(array, 0, 6, v);
  o->max_batch = static_cast<uint32_t>(v[0]);
  o->max_seq = static_cast<uint32_t>(v[1]);
  o->max_new_tokens = static_cast<uint32_t>(v[2]);
  o->threads = static_cast<uint32_t>(v[3]);
  o->flags = static_cast<uint32_t>(v[4]);
  o->prefill_chunk = static_cast<uint32_t>(v[5]);
  return true;
}

bool CheckBatch(JNIEnv* env, jint batch, jint seq) {
  if (batch < 0 || seq < 0) {
    ThrowInvalid(env, "negative batch or sequence length");
    return false;
  }
  return true;
}

// ---- Callbacks into Java (generation, sampling) ----------------------------------------------

struct CallbackContext {
  JNIEnv* env;
  jobject callbacks;  // a dev.octet.Callbacks
  bool threw = false; // a Java exception is pending: stop and return to Java
};

int OnToken(void* user, const octet_token_event* event) {
  CallbackContext* c = static_cast<CallbackContext*>(user);
  JNIEnv* env = c->env;
  jbyteArray text = nullptr;
  if (event->text != nullptr && event->text_len > 0) {
    text = NewBytes(env, event->text, event->text_len);
    if (env->ExceptionCheck()) {
      c->threw = true;
      return 1;
    }
  }
  const jboolean go_on = env->CallBooleanMethod(
      c->callbacks, g_on_token, static_cast<jint>(event->sequence), static_cast<jint>(event->id),
      static_cast<jint>(event->index), event->is_eos ? JNI_TRUE : JNI_FALSE, text);
  const bool threw = env->ExceptionCheck();
  if (text != nullptr) env->DeleteLocalRef(text);
  if (threw) {
    c->threw = true;
    return 1;
  }
  return go_on ? 0 : 1;
}

int OnLogits(void* user, uint32_t sequence, float* logits, uint32_t vocab) {
  CallbackContext* c = static_cast<CallbackContext*>(user);
  JNIEnv* env = c->env;
  jobject view = env->NewDirectByteBuffer(logits, static_cast<jlong>(vocab) * sizeof(float));
  if (view == nullptr) {  // an exception, or a VM without direct buffers
    if (!env->ExceptionCheck()) ThrowOutOfMemory(env, "cannot make a direct buffer over the logits");
    c->threw = true;
    return 1;
  }
  const jboolean go_on =
      env->CallBooleanMethod(c->callbacks, g_on_logits, static_cast<jint>(sequence), view);
  const bool threw = env->ExceptionCheck();
  env->DeleteLocalRef(view);
  if (threw) {
    c->threw = true;
    return 1;
  }
  return go_on ? 0 : 1;
}

}  // namespace

// ---- JNI_OnLoad --------------------------------------------------------------------------------

extern "C" JNIEXPORT jint JNI_OnLoad(JavaVM* vm, void*) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_6) != JNI_OK) return JNI_ERR;
  jclass local = env->FindClass("dev/octet/OctetException");
  if (local == nullptr) return JNI_ERR;
  g_exception_class = static_cast<jclass>(env->NewGlobalRef(local));
  env->DeleteLocalRef(local);
  g_exception_from = env->GetStaticMethodID(g_exception_class, "fromNative",
                                            "(I[B)Ldev/octet/OctetException;");
  if (g_exception_from == nullptr) return JNI_ERR;
  local = env->FindClass("dev/octet/Callbacks");
  if (local == nullptr) return JNI_ERR;
  g_on_token = env->GetMethodID(local, "onToken", "(IIIZ[B)Z");
  g_on_logits = env->GetMethodID(local, "onLogits", "(ILjava/nio/ByteBuffer;)Z");
  env->DeleteLocalRef(local);
  if (g_on_token == nullptr || g_on_logits == nullptr) return JNI_ERR;
  // Method and field IDs stay valid while the class is loaded: the global ref above keeps
  // OctetException's; Callbacks and FileDescriptor live as long as the binding's class loader.
  local = env->FindClass("java/io/FileDescriptor");
  if (local == nullptr) return JNI_ERR;
  g_fd_field = env->GetFieldID(local, "fd", "I");
  if (g_fd_field == nullptr) {
    env->ExceptionClear();  // NoSuchFieldError: Android's libcore names it "descriptor"
    g_fd_field = env->GetFieldID(local, "descriptor", "I");
  }
  env->DeleteLocalRef(local);
  if (g_fd_field == nullptr) return JNI_ERR;
  return JNI_VERSION_1_6;
}

// ---- Version ---------------------------------------------------------------------------------

#define JNI_FN(ret, name) extern "C" JNIEXPORT ret JNICALL Java_dev_octet_Native_##name

JNI_FN(jbyteArray, version)(JNIEnv* env, jclass) {
  const char* v = octet_version();
  return NewBytes(env, v, strlen(v));
}

JNI_FN(jint, versionNumber)(JNIEnv*, jclass) { return static_cast<jint>(octet_version_number()); }

// ---- Models ----------------------------------------------------------------------------------

JNI_FN(jlong, modelLoad)(JNIEnv* env, jclass, jbyteArray path) {
  char* p = CopyCString(env, path);
  if (p == nullptr) return 0;
  if (strlen(p) != static_cast<size_t>(env->GetArrayLength(path))) {
    free(p);
    ThrowInvalid(env, "the model path contains a NUL character");
    return 0;
  }
  octet_model* model = nullptr;
  const octet_status st = octet_model_load(p, &model);
  free(p);
  return Ok(env, st) ? ToHandle(model) : 0;
}

JNI_FN(jlong, modelLoadBuffer)(JNIEnv* env, jclass, jobject data, jint offset, jint size) {
  void* p = DirectAddress(env, data, offset, size, 1);
  if (p == nullptr) return 0;
  octet_model* model = nullptr;
  return Ok(env, octet_model_load_from_buffer(p, static_cast<size_t>(size), &model))
             ? ToHandle(model)
             : 0;
}

JNI_FN(jlong, modelLoadFd)(JNIEnv* env, jclass, jint fd, jlong offset, jlong length) {
  if (offset < 0 || length < 0) {
    ThrowInvalid(env, "negative offset or length");
    return 0;
  }
  octet_model* model = nullptr;
  return Ok(env, octet_model_load_from_fd(fd, static_cast<uint64_t>(offset),
                                          static_cast<uint64_t>(length), &model))
             ? ToHandle(model)
             : 0;
}

JNI_FN(jint, descriptorOf)(JNIEnv* env, jclass, jobject fd) {
  return env->GetIntField(fd, g_fd_field);
}

JNI_FN(jlong, addressOf)(JNIEnv* env, jclass, jobject buffer) {
  return ToHandle(env->GetDirectBufferAddress(buffer));
}

JNI_FN(void, modelFree)(JNIEnv*, jclass, jlong model) {
  octet_model_free(FromHandle<octet_model>(model));
}

JNI_FN(jbyteArray, modelInfo)(JNIEnv* env, jclass, jlong model, jlongArray out) {
  octet_model_info i;
  memset(&i, 0, sizeof(i));
  i.struct_size = sizeof(i);
  if (!Ok(env, octet_model_get_info(FromHandle<octet_model>(model), &i))) return nullptr;
  const jlong v[19] = {
      static_cast<jlong>(i.structure),   i.vocab_size,       i.hidden_size,
      i.num_layers,                      i.num_decoder_layers, i.num_heads,
      i.num_kv_heads,                    i.head_dim,         i.max_positions,
      i.bos_token_id,                    i.eos_token_id,     i.pad_token_id,
      i.decoder_start_token_id,          i.has_tokenizer,    i.has_chat_template,
      i.int8,                            i.mapped,           static_cast<jlong>(i.file_bytes),
      static_cast<jlong>(i.weights_bytes)};
  if (env->GetArrayLength(out) < 19) {
    ThrowInvalid(env, "model info: 19 numbers expected");
    return nullptr;
  }
  env->SetLongArrayRegion(out, 0, 19, v);
  return NewBytes(env, i.family, strlen(i.family));
}

JNI_FN(jboolean, modelIsEos)(JNIEnv*, jclass, jlong model, jint id) {
  return octet_model_is_eos(FromHandle<octet_model>(model), id) ? JNI_TRUE : JNI_FALSE;
}

JNI_FN(jint, modelHiddenSize)(JNIEnv*, jclass, jlong model) {
  return static_cast<jint>(octet_model_hidden_size(FromHandle<octet_model>(model)));
}

JNI_FN(void, planMemory)(JNIEnv* env, jclass, jlong model, jintArray options, jlongArray out) {
  octet_session_options o;
  if (!ReadOptions(env, options, &o)) return;
  octet_session_plan plan;
  memset(&plan, 0, sizeof(plan));
  plan.struct_size = sizeof(plan);
  if (!Ok(env, octet_session_plan_memory(FromHandle<octet_model>(model), &o, &plan))) return;
  const jlong v[4] = {static_cast<jlong>(plan.activation_bytes),
                      static_cast<jlong>(plan.scratch_bytes),
                      static_cast<jlong>(plan.kv_cache_bytes),
                      static_cast<jlong>(plan.memory_bytes)};
  env->SetLongArrayRegion(out, 0, 4, v);
}

// ---- Sessions --------------------------------------------------------------------------------

JNI_FN(jlong, sessionCreate)(JNIEnv* env, jclass, jlong model, jintArray options, jobject memory,
                             jint offset, jint size) {
  octet_session_options o;
  if (!ReadOptions(env, options, &o)) return 0;
  void* arena = nullptr;
  if (memory != nullptr) {
    arena = DirectAddress(env, memory, offset, size, 1);
    if (arena == nullptr) return 0;
  }
  JniSession* s = new (std::nothrow) JniSession;
  if (s == nullptr) {
    ThrowOutOfMemory(env, "cannot allocate a session handle");
    return 0;
  }
  const octet_status st = octet_session_create_with_options(
      FromHandle<octet_model>(model), &o, arena, static_cast<size_t>(size), &s->session);
  if (!Ok(env, st)) {
    delete s;
    return 0;
  }
  return ToHandle(s);
}

JNI_FN(void, sessionFree)(JNIEnv*, jclass, jlong handle) {
  JniSession* s = FromHandle<JniSession>(handle);
  if (s == nullptr) return;
  octet_session_free(s->session);
  delete s;
}

JNI_FN(jlong, sessionArenaBytes)(JNIEnv*, jclass, jlong handle) {
  return static_cast<jlong>(octet_session_arena_bytes(FromHandle<JniSession>(handle)->session));
}

JNI_FN(void, sessionRun)(JNIEnv* env, jclass, jlong handle, jintArray ids, jintArray lengths,
                         jint batch, jint seq) {
  JniSession* s = FromHandle<JniSession>(handle);
  if (!CheckBatch(env, batch, seq)) return;
  if (!CopyInts(env, ids, static_cast<size_t>(batch) * seq, &s->ids)) return;
  if (!CopyInts(env, lengths, static_cast<size_t>(batch), &s->lengths)) return;
  Ok(env, octet_session_run(s->session, s->ids.data, s->lengths.data, static_cast<uint32_t>(batch),
                            static_cast<uint32_t>(seq)));
}

JNI_FN(void, sessionRunEncoderDecoder)(JNIEnv* env, jclass, jlong handle, jintArray enc_ids,
                                       jintArray enc_lengths, jint enc_seq, jintArray dec_ids,
                                       jintArray dec_lengths, jint dec_seq, jint batch) {
  JniSession* s = FromHandle<JniSession>(handle);
  if (!CheckBatch(env, batch, enc_seq) || !CheckBatch(env, batch, dec_seq)) return;
  if (!CopyInts(env, enc_ids, static_cast<size_t>(batch) * enc_seq, &s->ids) ||
      !CopyInts(env, enc_lengths, static_cast<size_t>(batch), &s->lengths) ||
      !CopyInts(env, dec_ids, static_cast<size_t>(batch) * dec_seq, &s->dec_ids) ||
      !CopyInts(env, dec_lengths, static_cast<size_t>(batch), &s->dec_lengths)) {
    return;
  }
  Ok(env, octet_session_run_encoder_decoder(s->session, s->ids.data, s->lengths.data,
                                            static_cast<uint32_t>(enc_seq), s->dec_ids.data,
                                            s->dec_lengths.data, static_cast<uint32_t>(dec_seq),
                                            static_cast<uint32_t>(batch)));
}

JNI_FN(void, sessionStep)(JNIEnv* env, jclass, jlong handle, jintArray ids, jint batch) {
  JniSession* s = FromHandle<JniSession>(handle);
  if (!CheckBatch(env, batch, 1) || !CopyInts(env, ids, static_cast<size_t>(batch), &s->ids)) return;
  Ok(env, octet_session_step(s->session, s->ids.data, static_cast<uint32_t>(batch)));
}

JNI_FN(void, sessionExtend)(JNIEnv* env, jclass, jlong handle, jintArray ids, jint batch, jint k) {
  JniSession* s = FromHandle<JniSession>(handle);
  if (!CheckBatch(env, batch, k) || !CopyInts(env, ids, static_cast<size_t>(batch) * k, &s->ids)) {
    return;
  }
  Ok(env, octet_session_extend(s->session, s->ids.data, static_cast<uint32_t>(batch),
                               static_cast<uint32_t>(k)));
}

JNI_FN(void, sessionOutputShape)(JNIEnv* env, jclass, jlong handle, jintArray shape) {
  octet_output out;
  if (!Ok(env, octet_session_output(FromHandle<JniSession>(handle)->session, &out))) return;
  const jint v[3] = {static_cast<jint>(out.batch), static_cast<jint>(out.seq),
                     static_cast<jint>(out.dim)};
  env->SetIntArrayRegion(shape, 0, 3, v);
}

JNI_FN(void, sessionOutputCopy)(JNIEnv* env, jclass, jlong handle, jfloatArray dst) {
  octet_output out;
  if (!Ok(env, octet_session_output(FromHandle<JniSession>(handle)->session, &out))) return;
  const size_t n = static_cast<size_t>(out.batch) * out.seq * out.dim;
  if (static_cast<size_t>(env->GetArrayLength(dst)) < n) {
    ThrowInvalid(env, "the output array is too short");
    return;
  }
  env->SetFloatArrayRegion(dst, 0, static_cast<jsize>(n), out.data);
}

JNI_FN(jobject, sessionOutputBuffer)(JNIEnv* env, jclass, jlong handle) {
  octet_output out;
  if (!Ok(env, octet_session_output(FromHandle<JniSession>(handle)->session, &out))) return nullptr;
  const jlong bytes = static_cast<jlong>(out.batch) * out.seq * out.dim * sizeof(float);
  return env->NewDirectByteBuffer(const_cast<float*>(out.data), bytes);
}

JNI_FN(void, sessionSample)(JNIEnv* env, jclass, jlong handle, jfloat temperature, jint top_k,
                            jfloat top_p, jlongArray rng, jintArray out, jobject hook) {
  JniSession* s = FromHandle<JniSession>(handle);
  octet_output output;
  if (!Ok(env, octet_session_output(s->session, &output))) return;
  if (env->GetArrayLength(out) < static_cast<jsize>(output.batch)) {
    ThrowInvalid(env, "the id array is shorter than the batch");
    return;
  }
  if (!s->out_ids.Reserve(output.batch)) {
    ThrowOutOfMemory(env, "cannot allocate the ids");
    return;
  }
  jlong state = 0;
  env->GetLongArrayRegion(rng, 0, 1, &state);
  uint64_t rng_state = static_cast<uint64_t>(state);
  octet_sampling sampling;
  octet_sampling_init(&sampling);
  sampling.temperature = temperature;
  sampling.top_k = static_cast<uint32_t>(top_k);
  sampling.top_p = top_p;
  CallbackContext context{env, hook};
  if (hook != nullptr) {
    sampling.logits_hook = OnLogits;
    sampling.logits_hook_user = &context;
  }
  const octet_status st = octet_session_sample(s->session, &sampling, &rng_state, s->out_ids.data);
  if (context.threw) return;  // the hook's exception goes to the caller
  if (!Ok(env, st)) return;
  state = static_cast<jlong>(rng_state);
  env->SetLongArrayRegion(rng, 0, 1, &state);
  env->SetIntArrayRegion(out, 0, static_cast<jsize>(output.batch),
                         reinterpret_cast<const jint*>(s->out_ids.data));
}

JNI_FN(jintArray, generate)(JNIEnv* env, jclass, jlong handle, jintArray ids, jintArray lengths,
                            jint batch, jint seq, jint max_new_tokens, jfloat temperature,
                            jint top_k, jfloat top_p, jlong seed, jint flags, jobject callbacks,
                            jboolean tokens, jboolean logits) {
  JniSession* s = FromHandle<JniSession>(handle);
  if (!CheckBatch(env, batch, seq)) return nullptr;
  if (!CopyInts(env, ids, static_cast<size_t>(batch) * seq, &s->ids) ||
      !CopyInts(env, lengths, static_cast<size_t>(batch), &s->lengths)) {
    return nullptr;
  }
  if (!s->counts.Reserve(batch == 0 ? 1 : static_cast<size_t>(batch))) {
    ThrowOutOfMemory(env, "cannot allocate the counts");
    return nullptr;
  }
  octet_generate_options o;
  octet_generate_options_init(&o);
  o.max_new_tokens = static_cast<uint32_t>(max_new_tokens);
  o.temperature = temperature;
  o.top_k = static_cast<uint32_t>(top_k);
  o.top_p = top_p;
  o.seed = static_cast<uint64_t>(seed);
  o.flags = static_cast<uint32_t>(flags);
  CallbackContext context{env, callbacks};
  if (callbacks != nullptr && tokens) {
    o.on_token = OnToken;
    o.on_token_user = &context;
  }
  if (callbacks != nullptr && logits) {
    o.logits_hook = OnLogits;
    o.logits_hook_user = &context;
  }
  const octet_status st = octet_generate(s->session, s->ids.data, s->lengths.data,
                                         static_cast<uint32_t>(batch), static_cast<uint32_t>(seq),
                                         &o, s->counts.data);
  if (context.threw) return nullptr;  // the callback's exception goes to the caller
  if (!Ok(env, st)) return nullptr;
  jintArray counts = env->NewIntArray(batch);
  if (counts == nullptr) return nullptr;
  env->SetIntArrayRegion(counts, 0, batch, reinterpret_cast<const jint*>(s->counts.data));
  return counts;
}

JNI_FN(void, sessionCancel)(JNIEnv*, jclass, jlong handle) {
  octet_session_cancel(FromHandle<JniSession>(handle)->session);
}

JNI_FN(void, sessionEmbed)(JNIEnv* env, jclass, jlong handle, jintArray ids, jintArray lengths,
                           jint batch, jint seq, jint pooling, jint flags, jfloatArray out) {
  JniSession* s = FromHandle<JniSession>(handle);
  if (!CheckBatch(env, batch, seq)) return;
  if (!CopyInts(env, ids, static_cast<size_t>(batch) * seq, &s->ids) ||
      !CopyInts(env, lengths, static_cast<size_t>(batch), &s->lengths)) {
    return;
  }
  const size_t n = static_cast<size_t>(env->GetArrayLength(out));
  if (!s->floats.Reserve(n == 0 ? 1 : n)) {
    ThrowOutOfMemory(env, "cannot allocate the embeddings");
    return;
  }
  if (!Ok(env, octet_session_embed(s->session, s->ids.data, s->lengths.data,
                                   static_cast<uint32_t>(batch), static_cast<uint32_t>(seq),
                                   static_cast<octet_pooling>(pooling),
                                   static_cast<uint32_t>(flags), s->floats.data, n))) {
    return;
  }
  env->SetFloatArrayRegion(out, 0, static_cast<jsize>(n), s->floats.data);
}

JNI_FN(void, sessionEmbedBuffer)(JNIEnv* env, jclass, jlong handle, jintArray ids,
                                 jintArray lengths, jint batch, jint seq, jint pooling, jint flags,
                                 jobject out, jint offset, jint floats) {
  JniSession* s = FromHandle<JniSession>(handle);
  if (!CheckBatch(env, batch, seq)) return;
  if (!CopyInts(env, ids, static_cast<size_t>(batch) * seq, &s->ids) ||
      !CopyInts(env, lengths, static_cast<size_t>(batch), &s->lengths)) {
    return;
  }
  // A FloatBuffer's address is its first float; the capacity counts floats.
  float* dst = static_cast<float*>(DirectAddress(env, out, offset, floats, sizeof(float)));
  if (dst == nullptr) return;
  Ok(env, octet_session_embed(s->session, s->ids.data, s->lengths.data,
                              static_cast<uint32_t>(batch), static_cast<uint32_t>(seq),
                              static_cast<octet_pooling>(pooling), static_cast<uint32_t>(flags),
                              dst, static_cast<size_t>(floats)));
}

JNI_FN(jlong, stateSize)(JNIEnv* env, jclass, jlong handle) {
  size_t bytes = 0;
  return Ok(env, octet_session_state_size(FromHandle<JniSession>(handle)->session, &bytes))
             ? static_cast<jlong>(bytes)
             : 0;
}

JNI_FN(jbyteArray, stateSave)(JNIEnv* env, jclass, jlong handle) {
  const octet_session* session = FromHandle<JniSession>(handle)->session;
  size_t bytes = 0;
  if (!Ok(env, octet_session_state_size(session, &bytes))) return nullptr;
  if (bytes > 0x7fffffff) {
    ThrowMessage(env, OCTET_LIMIT_EXCEEDED, "the state exceeds 2 GiB: save it to a direct buffer");
    return nullptr;
  }
  jbyteArray a = env->NewByteArray(static_cast<jsize>(bytes));
  if (a == nullptr) return nullptr;
  // A memcpy of the KV cache, with no call back: the array is pinned, not copied.
  void* p = env->GetPrimitiveArrayCritical(a, nullptr);
  if (p == nullptr) return nullptr;
  size_t written = 0;
  const octet_status st = octet_session_state_save(session, p, bytes, &written);
  env->ReleasePrimitiveArrayCritical(a, p, st == OCTET_OK ? 0 : JNI_ABORT);
  if (!Ok(env, st)) return nullptr;
  return a;
}

JNI_FN(jlong, stateSaveBuffer)(JNIEnv* env, jclass, jlong handle, jobject out, jint offset,
                               jint capacity) {
  void* p = DirectAddress(env, out, offset, capacity, 1);
  if (p == nullptr) return 0;
  size_t written = 0;
  return Ok(env, octet_session_state_save(FromHandle<JniSession>(handle)->session, p,
                                          static_cast<size_t>(capacity), &written))
             ? static_cast<jlong>(written)
             : 0;
}

JNI_FN(void, stateLoad)(JNIEnv* env, jclass, jlong handle, jbyteArray data) {
  const jsize n = env->GetArrayLength(data);
  void* p = env->GetPrimitiveArrayCritical(data, nullptr);
  if (p == nullptr) return;
  const octet_status st =
      octet_session_state_load(FromHandle<JniSession>(handle)->session, p, static_cast<size_t>(n));
  env->ReleasePrimitiveArrayCritical(data, p, JNI_ABORT);
  Ok(env, st);
}

JNI_FN(void, stateLoadBuffer)(JNIEnv* env, jclass, jlong handle, jobject data, jint offset,
                              jint size) {
  void* p = DirectAddress(env, data, offset, size, 1);
  if (p == nullptr) return;
  Ok(env, octet_session_state_load(FromHandle<JniSession>(handle)->session, p,
                                   static_cast<size_t>(size)));
}

// ---- Tokenizers ------------------------------------------------------------------------------

JNI_FN(jlong, tokenizerCreate)(JNIEnv* env, jclass, jlong model) {
  JniTokenizer* t = new (std::nothrow) JniTokenizer;
  if (t == nullptr) {
    ThrowOutOfMemory(env, "cannot allocate a tokenizer handle");
    return 0;
  }
  if (!Ok(env, octet_tokenizer_create(FromHandle<octet_model>(model), &t->tokenizer))) {
    delete t;
    return 0;
  }
  return ToHandle(t);
}

JNI_FN(void, tokenizerFree)(JNIEnv*, jclass, jlong handle) {
  JniTokenizer* t = FromHandle<JniTokenizer>(handle);
  if (t == nullptr) return;
  octet_tokenizer_free(t->tokenizer);
  delete t;
}

JNI_FN(jintArray, tokenizerEncode)(JNIEnv* env, jclass, jlong handle, jbyteArray text,
                                   jint flags) {
  JniTokenizer* t = FromHandle<JniTokenizer>(handle);
  const size_t len = static_cast<size_t>(env->GetArrayLength(text));
  // Most texts encode to fewer ids than bytes (plus a template's few): one pass.
  if (!t->ids.Reserve(len + 64)) {
    ThrowOutOfMemory(env, "cannot allocate the ids");
    return nullptr;
  }
  size_t n = 0;
  octet_status st;
  for (;;) {
    // Encoding is short and calls nothing back: the text is pinned, not copied.
    void* p = env->GetPrimitiveArrayCritical(text, nullptr);
    if (p == nullptr) return nullptr;
    st = octet_tokenizer_encode(t->tokenizer, static_cast<const char*>(p), len,
                                static_cast<uint32_t>(flags), t->ids.data, t->ids.capacity, &n);
    env->ReleasePrimitiveArrayCritical(text, p, JNI_ABORT);
    if (st != OCTET_BUFFER_TOO_SMALL || n <= t->ids.capacity) break;
    if (!t->ids.Reserve(n)) {
      ThrowOutOfMemory(env, "cannot allocate the ids");
      return nullptr;
    }
  }
  if (!Ok(env, st)) return nullptr;
  if (n > 0x7fffffff) {
    ThrowMessage(env, OCTET_LIMIT_EXCEEDED, "more than 2^31 ids");
    return nullptr;
  }
  jintArray ids = env->NewIntArray(static_cast<jsize>(n));
  if (ids == nullptr) return nullptr;
  env->SetIntArrayRegion(ids, 0, static_cast<jsize>(n), reinterpret_cast<const jint*>(t->ids.data));
  return ids;
}

JNI_FN(jbyteArray, tokenizerDecode)(JNIEnv* env, jclass, jlong handle, jintArray ids, jint flags) {
  JniTokenizer* t = FromHandle<JniTokenizer>(handle);
  const size_t n = static_cast<size_t>(env->GetArrayLength(ids));
  if (!t->text.Reserve(n * 8 + 64)) {
    ThrowOutOfMemory(env, "cannot allocate the text");
    return nullptr;
  }
  size_t len = 0;
  octet_status st;
  for (;;) {
    void* p = env->GetPrimitiveArrayCritical(ids, nullptr);
    if (p == nullptr) return nullptr;
    st = octet_tokenizer_decode(t->tokenizer, static_cast<const int32_t*>(p), n,
                                static_cast<uint32_t>(flags), t->text.data, t->text.capacity, &len);
    env->ReleasePrimitiveArrayCritical(ids, p, JNI_ABORT);
    if (st != OCTET_BUFFER_TOO_SMALL || len <= t->text.capacity) break;
    if (!t->text.Reserve(len)) {
      ThrowOutOfMemory(env, "cannot allocate the text");
      return nullptr;
    }
  }
  if (!Ok(env, st)) return nullptr;
  return NewBytes(env, t->text.data, len);
}

JNI_FN(jint, tokenizerVocabSize)(JNIEnv*, jclass, jlong handle) {
  return static_cast<jint>(octet_tokenizer_vocab_size(FromHandle<JniTokenizer>(handle)->tokenizer));
}

JNI_FN(jbyteArray, tokenizerToken)(JNIEnv* env, jclass, jlong handle, jint id) {
  const char* bytes = nullptr;
  size_t len = 0;
  if (!Ok(env, octet_tokenizer_token(FromHandle<JniTokenizer>(handle)->tokenizer, id, &bytes, &len))) {
    return nullptr;
  }
  return NewBytes(env, bytes, len);
}

JNI_FN(jint, tokenizerSpecialCount)(JNIEnv*, jclass, jlong handle) {
  return static_cast<jint>(
      octet_tokenizer_special_count(FromHandle<JniTokenizer>(handle)->tokenizer));
}

JNI_FN(jbyteArray, tokenizerSpecial)(JNIEnv* env, jclass, jlong handle, jint index,
                                     jintArray out) {
  if (index < 0) {
    ThrowInvalid(env, "negative special token index");
    return nullptr;
  }
  octet_special_token s;
  memset(&s, 0, sizeof(s));
  s.struct_size = sizeof(s);
  if (!Ok(env, octet_tokenizer_special(FromHandle<JniTokenizer>(handle)->tokenizer,
                                       static_cast<size_t>(index), &s))) {
    return nullptr;
  }
  const jint v[3] = {s.id, s.lstrip, s.rstrip};
  env->SetIntArrayRegion(out, 0, 3, v);
  return NewBytes(env, s.content, s.content_len);
}

// ---- Text streams ----------------------------------------------------------------------------

JNI_FN(jlong, streamCreate)(JNIEnv* env, jclass, jlong model, jint flags) {
  octet_text_stream* stream = nullptr;
  return Ok(env, octet_text_stream_create(FromHandle<octet_model>(model),
                                          static_cast<uint32_t>(flags), &stream))
             ? ToHandle(stream)
             : 0;
}

JNI_FN(void, streamFree)(JNIEnv*, jclass, jlong handle) {
  octet_text_stream_free(FromHandle<octet_text_stream>(handle));
}

JNI_FN(jbyteArray, streamPush)(JNIEnv* env, jclass, jlong handle, jint id) {
  const char* text = nullptr;
  size_t len = 0;
  if (!Ok(env, octet_text_stream_push(FromHandle<octet_text_stream>(handle), id, &text, &len))) {
    return nullptr;
  }
  return NewBytes(env, text, len);
}

JNI_FN(jbyteArray, streamFinish)(JNIEnv* env, jclass, jlong handle) {
  const char* text = nullptr;
  size_t len = 0;
  if (!Ok(env, octet_text_stream_finish(FromHandle<octet_text_stream>(handle), &text, &len))) {
    return nullptr;
  }
  return NewBytes(env, text, len);
}

JNI_FN(void, streamReset)(JNIEnv*, jclass, jlong handle) {
  octet_text_stream_reset(FromHandle<octet_text_stream>(handle));
}

// ---- Chat templates --------------------------------------------------------------------------

JNI_FN(jbyteArray, chatRender)(JNIEnv* env, jclass, jlong model, jobjectArray roles,
                               jobjectArray contents, jint flags, jboolean has_now,
                               jlong epoch_seconds) {
  const jsize n = env->GetArrayLength(roles);
  if (env->GetArrayLength(contents) != n) {
    ThrowInvalid(env, "as many roles as contents expected");
    return nullptr;
  }
  // Each message's two strings, NUL-terminated, in one allocation per string.
  octet_chat_message* messages =
      static_cast<octet_chat_message*>(calloc(n == 0 ? 1 : static_cast<size_t>(n), sizeof(*messages)));
  if (messages == nullptr) {
    ThrowOutOfMemory(env, "cannot allocate the messages");
    return nullptr;
  }
  jbyteArray result = nullptr;
  bool ok = true;
  for (jsize i = 0; i < n && ok; ++i) {
    for (int which = 0; which < 2 && ok; ++which) {
      jbyteArray bytes = static_cast<jbyteArray>(
          env->GetObjectArrayElement(which == 0 ? roles : contents, i));
      if (bytes == nullptr) {
        ThrowInvalid(env, "a null role or content");
        ok = false;
        break;
      }
      char* s = CopyCString(env, bytes);
      env->DeleteLocalRef(bytes);  // one per string: a long chat must not fill the local table
      if (s == nullptr) {
        ok = false;
        break;
      }
      (which == 0 ? messages[i].role : messages[i].content) = s;
    }
  }
  if (ok) {
    octet_chat_options options;
    octet_chat_options_init(&options);
    options.flags = static_cast<uint32_t>(flags);
    struct tm now;
    if (has_now) {
      const time_t t = static_cast<time_t>(epoch_seconds);
      if (gmtime_r(&t, &now) == nullptr) {
        ThrowInvalid(env, "the time is out of range");
        ok = false;
      }
      options.now = &now;
    }
    size_t capacity = 4096, len = 0;
    char* text = nullptr;
    while (ok) {
      char* grown = static_cast<char*>(realloc(text, capacity));
      if (grown == nullptr) {
        ThrowOutOfMemory(env, "cannot allocate the rendered chat");
        break;
      }
      text = grown;
      const octet_status st = octet_chat_render(FromHandle<octet_model>(model), messages,
                                                static_cast<size_t>(n), &options, text, capacity,
                                                &len);
      if (st == OCTET_BUFFER_TOO_SMALL && len > capacity) {
        capacity = len;
        continue;
      }
      if (Ok(env, st)) result = NewBytes(env, text, len);
      break;
    }
    free(text);
  }
  for (jsize i = 0; i < n; ++i) {
    free(const_cast<char*>(messages[i].role));
    free(const_cast<char*>(messages[i].content));
  }
  free(messages);
  return result;
}
