package dev.octet.tests;

import dev.octet.GenerateOptions;
import dev.octet.Generation;
import dev.octet.Model;
import dev.octet.Session;
import dev.octet.SessionOptions;
import dev.octet.TextDecoder;
import dev.octet.Tokenizer;
import java.nio.charset.StandardCharsets;

/**
 * The Java API writes the same text from models/austen as `octet run --generate` with the same
 * prompt and seed, byte for byte (the CLI prints the prompt, the continuation and a newline).
 * Usage: AustenTest AUSTEN.octet OCTET_CLI
 */
public final class AustenTest {
  public static void main(String[] args) throws Exception {
    String model = args[0], cli = args[1];
    String[][] cases = {
      // prompt, tokens, temperature, top-p, top-k, seed
      {"It is a truth universally acknowledged, that", "60", "0.8", "0.95", "0", "7"},
      {"Elizabeth", "80", "0", "1", "0", "0"},
      {"\"My dear Mr. Bennet,\" said his lady to him one day, \"have you heard", "48", "1", "1", "40", "12345"},
      {"She was", "100", "1.2", "0.9", "20", "18446744073709551615"},
    };
    long t0 = System.nanoTime();
    try (Model m = Model.load(model); Tokenizer t = m.newTokenizer()) {
      for (String[] c : cases) {
        String prompt = c[0];
        int n = Integer.parseInt(c[1]);
        long seed = Long.parseUnsignedLong(c[5]);
        byte[] want = Check.run(cli, "run", model, "--prompt", prompt, "--generate", c[1], "--temperature", c[2],
            "--top-p", c[3], "--top-k", c[4], "--seed", c[5]);
        int[] ids = t.encode(prompt);
        // A session as the CLI makes it: the prompt's length, n new tokens.
        try (Session s = m.newSession(new SessionOptions().maxSeq(ids.length).maxNewTokens(n))) {
          StringBuilder streamed = new StringBuilder();
          Generation g = s.generate(prompt, new GenerateOptions().maxNewTokens(n).temperature(Float.parseFloat(c[2]))
              .topP(Float.parseFloat(c[3])).topK(Integer.parseInt(c[4])).seed(seed), tok -> {
                streamed.append(tok.text());
                return true;
              });
          String text = t.decode(ids) + streamed + "\n";
          Check.equal(text.getBytes(StandardCharsets.UTF_8), want,
              "Java == CLI for \"" + prompt + "\" (seed " + c[5] + ")\n  java: " + text + "  cli:  "
                  + new String(want, StandardCharsets.UTF_8));
          Check.equal(streamed.toString(), g.text(), "the streamed pieces are the generation's text");
          // The same ids through a streaming decoder give the same text.
          try (TextDecoder d = m.newTextDecoder()) {
            StringBuilder all = new StringBuilder();
            for (int id : ids) all.append(d.push(id));
            for (int id : g.ids()) all.append(d.push(id));
            all.append(d.finish()).append('\n');
            Check.equal(all.toString(), text, "TextDecoder over prompt + generated == the CLI");
          }
          System.out.print("java: " + text);
        }
      }
    }
    System.out.printf("AustenTest: %d checks passed in %.1f s%n", Check.passed, (System.nanoTime() - t0) * 1e-9);
  }
}
