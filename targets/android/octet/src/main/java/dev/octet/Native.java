package dev.octet;

import java.io.FileDescriptor;
import java.nio.ByteBuffer;

/**
 * The JNI functions (targets/android/jni/octet_jni.cc), one per C API call or group of calls.
 * Handles are the C pointers as longs. Text crosses as UTF-8 byte arrays, decoded and encoded
 * here in Java; a null byte[] result is empty text. Failures throw {@link OctetException}.
 */
final class Native {
  private Native() {}

  /** System property naming liboctet_jni.so's path (host tests); else System.loadLibrary. */
  static final String LIBRARY_PROPERTY = "octet.jni.library";

  static {
    String path = System.getProperty(LIBRARY_PROPERTY);
    if (path != null && !path.isEmpty()) {
      System.load(new java.io.File(path).getAbsolutePath());
    } else {
      System.loadLibrary("octet_jni");
    }
  }

  /** Loads the library (the static initializer does it; this makes it explicit). */
  static void load() {}

  // The order of SessionOptions' fields in the int[] the glue reads.
  static final int OPT_MAX_BATCH = 0;
  static final int OPT_MAX_SEQ = 1;
  static final int OPT_MAX_NEW_TOKENS = 2;
  static final int OPT_THREADS = 3;
  static final int OPT_FLAGS = 4;
  static final int OPT_PREFILL_CHUNK = 5;
  static final int OPT_COUNT = 6;

  static native byte[] version();

  static native int versionNumber();

  // ---- Models ----
  static native long modelLoad(byte[] pathUtf8) throws OctetException;

  static native long modelLoadBuffer(ByteBuffer data, int offset, int size) throws OctetException;

  static native long modelLoadFd(int fd, long offset, long length) throws OctetException;

  /** The descriptor number of a FileDescriptor (its private int field, as Android's libnativehelper reads it). */
  static native int descriptorOf(FileDescriptor fd);

  /** The address of a direct buffer's first byte (for alignment). */
  static native long addressOf(ByteBuffer buffer);

  static native void modelFree(long model);

  /** Fills out[] (ModelInfo's numbers) and returns the family name. */
  static native byte[] modelInfo(long model, long[] out) throws OctetException;

  static native boolean modelIsEos(long model, int id);

  static native int modelHiddenSize(long model);

  /** out[]: activation, scratch, KV cache, memory bytes. */
  static native void planMemory(long model, int[] options, long[] out) throws OctetException;

  // ---- Sessions ----
  static native long sessionCreate(long model, int[] options, ByteBuffer memory, int offset, int size)
      throws OctetException;

  static native void sessionFree(long session);

  static native long sessionArenaBytes(long session);

  static native void sessionRun(long session, int[] ids, int[] lengths, int batch, int seq)
      throws OctetException;

  static native void sessionRunEncoderDecoder(
      long session, int[] encIds, int[] encLengths, int encSeq, int[] decIds, int[] decLengths,
      int decSeq, int batch) throws OctetException;

  static native void sessionStep(long session, int[] ids, int batch) throws OctetException;

  static native void sessionExtend(long session, int[] ids, int batch, int k) throws OctetException;

  /** shape[]: batch, seq, dim of the last output. */
  static native void sessionOutputShape(long session, int[] shape) throws OctetException;

  static native void sessionOutputCopy(long session, float[] out) throws OctetException;

  /** A direct view of the output (native byte order), valid until the session runs again. */
  static native ByteBuffer sessionOutputBuffer(long session) throws OctetException;

  /** rng[0] is the random state (in and out); out[] gets one id per sequence. */
  static native void sessionSample(
      long session, float temperature, int topK, float topP, long[] rng, int[] out,
      Callbacks hook) throws OctetException;

  /** Returns the tokens each sequence generated; callbacks may be null. */
  static native int[] generate(
      long session, int[] ids, int[] lengths, int batch, int seq, int maxNewTokens,
      float temperature, int topK, float topP, long seed, int flags, Callbacks callbacks,
      boolean tokens, boolean logits) throws OctetException;

  static native void sessionCancel(long session);

  static native void sessionEmbed(
      long session, int[] ids, int[] lengths, int batch, int seq, int pooling, int flags,
      float[] out) throws OctetException;

  static native void sessionEmbedBuffer(
      long session, int[] ids, int[] lengths, int batch, int seq, int pooling, int flags,
      java.nio.Buffer out, int offset, int floats) throws OctetException;

  static native long stateSize(long session) throws OctetException;

  static native byte[] stateSave(long session) throws OctetException;

  static native long stateSaveBuffer(long session, ByteBuffer out, int offset, int capacity)
      throws OctetException;

  static native void stateLoad(long session, byte[] data) throws OctetException;

  static native void stateLoadBuffer(long session, ByteBuffer data, int offset, int size)
      throws OctetException;

  // ---- Tokenizers ----
  static native long tokenizerCreate(long model) throws OctetException;

  static native void tokenizerFree(long tokenizer);

  static native int[] tokenizerEncode(long tokenizer, byte[] utf8, int flags) throws OctetException;

  static native byte[] tokenizerDecode(long tokenizer, int[] ids, int flags) throws OctetException;

  static native int tokenizerVocabSize(long tokenizer);

  static native byte[] tokenizerToken(long tokenizer, int id) throws OctetException;

  static native int tokenizerSpecialCount(long tokenizer);

  /** out[]: id, lstrip, rstrip; returns the content. */
  static native byte[] tokenizerSpecial(long tokenizer, int index, int[] out) throws OctetException;

  // ---- Text streams ----
  static native long streamCreate(long model, int flags) throws OctetException;

  static native void streamFree(long stream);

  static native byte[] streamPush(long stream, int id) throws OctetException;

  static native byte[] streamFinish(long stream) throws OctetException;

  static native void streamReset(long stream);

  // ---- Chat templates ----
  static native byte[] chatRender(
      long model, byte[][] roles, byte[][] contents, int flags, boolean hasNow,
      long epochSeconds) throws OctetException;
}
