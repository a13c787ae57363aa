package dev.octet.tests;

import dev.octet.GenerateOptions;
import dev.octet.Generation;
import dev.octet.Model;
import dev.octet.Session;
import dev.octet.SessionOptions;
import dev.octet.TextDecoder;

/**
 * N create/generate/close cycles (each: the model loaded, a session, its tokenizer for the text
 * prompt, a generation with streamed text, a text decoder, all closed) under -Xcheck:jni: no JNI warning,
 * no exception, and the resident set grows by less than 2 MiB between a warm-up and the end
 * (System.gc() before each reading). Prints the time per cycle.
 * Usage: CyclesTest MODEL.octet N
 */
public final class CyclesTest {
  static final long LIMIT = 2L << 20;

  public static void main(String[] args) throws Exception {
    String path = args[0];
    int n = Integer.parseInt(args[1]);
    int warmup = Integer.parseInt(System.getProperty("warmup", "500"));
    String expected = null;
    for (int i = 0; i < warmup; ++i) expected = cycle(path, expected);
    long before = settledRss();
    long t0 = System.nanoTime();
    for (int i = 0; i < n; ++i) expected = cycle(path, expected);
    double seconds = (System.nanoTime() - t0) * 1e-9;
    long after = settledRss();
    System.out.printf("CyclesTest: %d cycles in %.2f s (%.0f us each); VmRSS %d -> %d KiB (%+d KiB)%n", n, seconds,
        seconds * 1e6 / n, before >> 10, after >> 10, (after - before) >> 10);
    Check.that(after - before < LIMIT, "RSS growth under 2 MiB: " + ((after - before) >> 10) + " KiB");
  }

  // One cycle, from the model's load to every close; each writes the same text (greedy).
  static String cycle(String path, String expected) throws Exception {
    final StringBuilder text = new StringBuilder();
    try (Model model = Model.load(path);
         Session s = model.newSession(new SessionOptions().maxSeq(8).maxNewTokens(4));
         TextDecoder d = model.newTextDecoder()) {
      Generation g = s.generate("It was", new GenerateOptions().maxNewTokens(4).temperature(0).ignoreEos(true), tok -> {
        text.append(tok.text());
        return true;
      });
      StringBuilder again = new StringBuilder();
      for (int id : g.ids()) again.append(d.push(id));
      if (g.ids().length != 4) throw new AssertionError("FAILED: 4 tokens, got " + g.ids().length);
      if (expected != null && !expected.equals(text.toString())) {
        throw new AssertionError("FAILED: cycle text changed: " + text + " != " + expected);
      }
    }
    return text.toString();
  }

  static long settledRss() throws Exception {
    for (int i = 0; i < 3; ++i) {
      System.gc();
      Thread.sleep(50);
    }
    return Check.rssBytes();
  }
}
