package dev.octet;

/** What a session for given options needs, before anything is allocated (octet_session_plan). */
public final class MemoryPlan {
  private final long activationBytes, scratchBytes, kvCacheBytes, memoryBytes;

  MemoryPlan(long[] v) {
    activationBytes = v[0];
    scratchBytes = v[1];
    kvCacheBytes = v[2];
    memoryBytes = v[3];
  }

  /** Hidden states, layer outputs, the output buffer. */
  public long activationBytes() {
    return activationBytes;
  }

  /** Per-op temporaries. */
  public long scratchBytes() {
    return scratchBytes;
  }

  /** Decoder keys and values. */
  public long kvCacheBytes() {
    return kvCacheBytes;
  }

  /** One caller buffer holding all three (with alignment): see {@link Model#newSession(SessionOptions, java.nio.ByteBuffer)}. */
  public long memoryBytes() {
    return memoryBytes;
  }

  @Override
  public String toString() {
    return "activations " + activationBytes + ", scratch " + scratchBytes + ", KV cache "
        + kvCacheBytes + ", memory " + memoryBytes + " bytes";
  }
}
