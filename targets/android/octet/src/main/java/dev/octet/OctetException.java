package dev.octet;

import java.nio.charset.StandardCharsets;

/**
 * A call into octet failed: the C API's status code and the message octet_last_error() gave for
 * it. Every failing octet call throws this one checked exception type; programming errors on the
 * Java side (a null argument, a closed object) are the usual unchecked exceptions instead.
 */
public final class OctetException extends Exception {
  private static final long serialVersionUID = 1L;

  /** The C API's status codes (octet.h's octet_status), with the same numbers. */
  public enum Code {
    /** The caller passed something wrong (shape, id, null). */
    INVALID_ARGUMENT(1),
    /** The model file is malformed or inconsistent. */
    INVALID_MODEL(2),
    /** Valid, but this model, build or version cannot do it. */
    UNSUPPORTED(3),
    /** An allocation failed, or a memory bound was exceeded. */
    OUT_OF_MEMORY(4),
    /** A file could not be opened, mapped or read. */
    IO_ERROR(5),
    /** A bug in octet. */
    INTERNAL(6),
    /** A call in the wrong order (a step before any prompt). */
    INVALID_STATE(7),
    /** Beyond the session's limits (a sequence longer than planned). */
    LIMIT_EXCEEDED(8),
    /** An output buffer is too small; the message says the size needed. */
    BUFFER_TOO_SMALL(9),
    /** Stopped by {@link Session#cancel()} or a {@link LogitsHook}. */
    CANCELLED(10);

    private final int value;

    Code(int value) {
      this.value = value;
    }

    /** The octet_status number. */
    public int value() {
      return value;
    }

    /** The code for an octet_status number ({@link #INTERNAL} for one this binding does not know). */
    public static Code of(int value) {
      for (Code c : values()) {
        if (c.value == value) return c;
      }
      return INTERNAL;
    }
  }

  private final Code code;

  public OctetException(Code code, String message) {
    super(message);
    this.code = code;
  }

  /** The status code. */
  public Code code() {
    return code;
  }

  @Override
  public String toString() {
    return "OctetException(" + code + "): " + getMessage();
  }

  // Called by the JNI glue: the message crosses as UTF-8 bytes (never modified UTF-8).
  static OctetException fromNative(int status, byte[] message) {
    Code code = Code.of(status);
    String text = message == null ? "" : new String(message, StandardCharsets.UTF_8);
    if (code.value != status) text = "octet status " + status + ": " + text;
    return new OctetException(code, text);
  }
}
