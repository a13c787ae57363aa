package dev.octet.tests;

import dev.octet.OctetException;
import java.util.Arrays;

/** A small assertion helper for the Java tests (no JUnit download needed). */
final class Check {
  private Check() {}

  static int passed;

  interface Body {
    void run() throws Exception;
  }

  static void that(boolean condition, String what) {
    if (!condition) throw new AssertionError("FAILED: " + what);
    ++passed;
  }

  static void equal(Object got, Object want, String what) {
    boolean same = got == null ? want == null
        : got instanceof int[] && want instanceof int[] ? Arrays.equals((int[]) got, (int[]) want)
        : got instanceof byte[] && want instanceof byte[] ? Arrays.equals((byte[]) got, (byte[]) want)
        : got instanceof float[] && want instanceof float[] ? Arrays.equals((float[]) got, (float[]) want)
        : got.equals(want);
    if (!same) {
      throw new AssertionError("FAILED: " + what + "\n  got:  " + show(got) + "\n  want: " + show(want));
    }
    ++passed;
  }

  static String show(Object o) {
    if (o instanceof int[]) return Arrays.toString((int[]) o);
    if (o instanceof byte[]) return Arrays.toString((byte[]) o);
    if (o instanceof float[]) return Arrays.toString((float[]) o);
    if (o instanceof String) return "\"" + o + "\"";
    return String.valueOf(o);
  }

  /** The body throws OctetException with this code; returns it. */
  static OctetException fails(OctetException.Code code, String what, Body body) {
    try {
      body.run();
    } catch (OctetException e) {
      if (e.code() != code) {
        throw new AssertionError("FAILED: " + what + ": " + e.code() + " instead of " + code + ": " + e.getMessage(), e);
      }
      if (e.getMessage() == null || e.getMessage().isEmpty()) {
        throw new AssertionError("FAILED: " + what + ": an exception without a message");
      }
      ++passed;
      return e;
    } catch (Exception e) {
      throw new AssertionError("FAILED: " + what + ": " + e + " instead of OctetException " + code, e);
    }
    throw new AssertionError("FAILED: " + what + ": no exception (expected " + code + ")");
  }

  /** The body throws an exception of this class (IllegalStateException, ...); returns it. */
  static <T extends Throwable> T throwsA(Class<T> type, String what, Body body) {
    try {
      body.run();
    } catch (Throwable e) {
      if (!type.isInstance(e)) {
        throw new AssertionError("FAILED: " + what + ": " + e + " instead of " + type.getSimpleName(), e);
      }
      ++passed;
      return type.cast(e);
    }
    throw new AssertionError("FAILED: " + what + ": no exception (expected " + type.getSimpleName() + ")");
  }

  /** No U+FFFD and no lone surrogate in s. */
  static void wellFormed(String s, String what) {
    for (int i = 0; i < s.length(); ++i) {
      char c = s.charAt(i);
      if (c == '\uFFFD') throw new AssertionError("FAILED: " + what + ": U+FFFD at " + i + " in " + show(s));
      if (Character.isHighSurrogate(c)) {
        if (i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) {
          throw new AssertionError("FAILED: " + what + ": a lone high surrogate at " + i);
        }
        ++i;
      } else if (Character.isLowSurrogate(c)) {
        throw new AssertionError("FAILED: " + what + ": a lone low surrogate at " + i);
      }
    }
    ++passed;
  }

  /** The process's resident set (VmRSS of /proc/self/status), in bytes. */
  static long rssBytes() throws java.io.IOException {
    for (String line : java.nio.file.Files.readAllLines(java.nio.file.Paths.get("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        String[] parts = line.trim().split("\\s+");
        return Long.parseLong(parts[1]) * 1024;
      }
    }
    throw new IllegalStateException("no VmRSS in /proc/self/status");
  }

  /** Runs a command; returns its stdout (fails on a non-zero exit). */
  static byte[] run(String... command) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.redirectError(ProcessBuilder.Redirect.INHERIT);
    Process p = pb.start();
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    java.io.InputStream in = p.getInputStream();
    byte[] buf = new byte[8192];
    for (int n; (n = in.read(buf)) > 0; ) out.write(buf, 0, n);
    int rc = p.waitFor();
    if (rc != 0) throw new AssertionError("FAILED: " + String.join(" ", command) + " exited with " + rc);
    return out.toByteArray();
  }
}
