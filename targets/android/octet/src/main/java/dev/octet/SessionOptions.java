package dev.octet;

/**
 * The limits a session is planned for, its threads and flags (octet_session_options). The
 * defaults are the C API's: batch 1, 128 tokens, no decoder steps, 1 thread. Setters return
 * this, so options chain: {@code new SessionOptions().maxSeq(64).maxNewTokens(32)}.
 */
public final class SessionOptions {
  /** Decoders: {@link Session#run} outputs the logits of every position, not only the last. */
  public static final int ALL_LOGITS = 1;

  private int maxBatch = 1;
  private int maxSeq = 128;
  private int maxNewTokens = 0;
  private int threads = 1;
  private int flags = 0;
  private int prefillChunk = 0;

  /** Sequences per run, at least 1. */
  public SessionOptions maxBatch(int n) {
    maxBatch = n;
    return this;
  }

  /** Tokens per sequence of a run (a prompt), at least 1. */
  public SessionOptions maxSeq(int n) {
    maxSeq = n;
    return this;
  }

  /** Decoder steps after the prompt (the KV cache's room); a generation of N tokens needs N. */
  public SessionOptions maxNewTokens(int n) {
    maxNewTokens = n;
    return this;
  }

  /** 1: the calling thread only; 0: the machine's fast cores; at most 256. Results are the same for every count. */
  public SessionOptions threads(int n) {
    threads = n;
    return this;
  }

  /** {@link #ALL_LOGITS} or 0. */
  public SessionOptions flags(int f) {
    flags = f;
    return this;
  }

  /** Sets or clears {@link #ALL_LOGITS}. */
  public SessionOptions allLogits(boolean on) {
    flags = on ? flags | ALL_LOGITS : flags & ~ALL_LOGITS;
    return this;
  }

  /** Decoder prompts pass the layers this many positions at a time; 0: the default (512). */
  public SessionOptions prefillChunk(int n) {
    prefillChunk = n;
    return this;
  }

  public int maxBatch() {
    return maxBatch;
  }

  public int maxSeq() {
    return maxSeq;
  }

  public int maxNewTokens() {
    return maxNewTokens;
  }

  public int threads() {
    return threads;
  }

  public int flags() {
    return flags;
  }

  public int prefillChunk() {
    return prefillChunk;
  }

  int[] toArray() {
    int[] a = new int[Native.OPT_COUNT];
    a[Native.OPT_MAX_BATCH] = maxBatch;
    a[Native.OPT_MAX_SEQ] = maxSeq;
    a[Native.OPT_MAX_NEW_TOKENS] = maxNewTokens;
    a[Native.OPT_THREADS] = threads;
    a[Native.OPT_FLAGS] = flags;
    a[Native.OPT_PREFILL_CHUNK] = prefillChunk;
    return a;
  }
}
