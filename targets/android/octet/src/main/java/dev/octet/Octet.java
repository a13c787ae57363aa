package dev.octet;

import java.nio.charset.StandardCharsets;

/** The library's version, and the version this binding was written against. */
public final class Octet {
  private Octet() {}

  /** The C header's version this binding was written against (major * 10000 + minor * 100 + patch). */
  public static final int BINDING_VERSION_NUMBER = 200;

  /** The native library's version, "0.2.0". */
  public static String version() {
    return new String(Native.version(), StandardCharsets.UTF_8);
  }

  /** The native library's OCTET_VERSION_NUMBER. */
  public static int versionNumber() {
    return Native.versionNumber();
  }
}
