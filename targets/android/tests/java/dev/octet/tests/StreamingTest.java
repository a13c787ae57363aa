package dev.octet.tests;

import dev.octet.GenerateOptions;
import dev.octet.Generation;
import dev.octet.Model;
import dev.octet.Session;
import dev.octet.SessionOptions;
import dev.octet.TextDecoder;
import dev.octet.Token;
import dev.octet.Tokenizer;
import java.util.ArrayList;
import java.util.List;

/**
 * Emoji and CJK split across tokens stream through JNI whole: every piece is well-formed UTF-16
 * (no U+FFFD, no lone surrogate), and the pieces concatenate to the tokenizer's decode. Two kinds
 * of tokenizer split characters: byte-level BPE (models/austen-tiny: an emoji is four byte
 * tokens) and SentencePiece BPE with byte fallback (Llama 2's: <0xF0><0x9F>...).
 *
 * <p>Through a {@link TextDecoder}, and through {@link Session#generate} with a logits hook that
 * forces the text's ids one by one, so the callback's pieces cross JNI as they do in an app.
 * Usage: StreamingTest AUSTEN_TINY.octet LLAMA2.octet
 */
public final class StreamingTest {
  static final String TEXT = "Smile \uD83D\uDE42, snow \u2603, \u4f60\u597d\u4e16\u754c, \u65e5\u672c\u8a9e, "
      + "flags \uD83C\uDDEF\uD83C\uDDF5, a family \uD83D\uDC69\u200D\uD83D\uDC69\u200D\uD83D\uDC67, "
      + "math \uD835\uDD38\uD835\uDD39 and caf\u00e9 \uD83E\uDD16\uD83E\uDD16\uD83E\uDD16.";

  public static void main(String[] args) throws Exception {
    long t0 = System.nanoTime();
    for (String model : args) check(model);
    System.out.printf("StreamingTest: %d checks passed in %.1f s%n", Check.passed, (System.nanoTime() - t0) * 1e-9);
  }

  static void check(String path) throws Exception {
    try (Model m = Model.load(path); Tokenizer t = m.newTokenizer()) {
      int[] ids = t.encode(TEXT, Tokenizer.ENCODE_NO_SPECIAL);
      String decoded = t.decode(ids);
      Check.wellFormed(decoded, path + ": decode");
      Check.that(decoded.contains("\uD83D\uDE42") && decoded.contains("\u4f60\u597d\u4e16\u754c"),
          path + ": decode keeps the emoji and the CJK: " + decoded);

      // 1. A streaming decoder, one id at a time.
      int held = 0;
      StringBuilder joined = new StringBuilder();
      try (TextDecoder d = m.newTextDecoder()) {
        for (int id : ids) {
          String piece = d.push(id);
          Check.wellFormed(piece, path + ": a TextDecoder piece");
          if (piece.isEmpty()) ++held;
          joined.append(piece);
        }
        joined.append(d.finish());
      }
      Check.equal(joined.toString(), decoded, path + ": TextDecoder pieces == decode");
      Check.that(held >= 10, path + ": characters were split across tokens (" + held + " tokens held back)");

      // 2. Generation: a logits hook forces the text's ids; the callback's pieces cross JNI.
      int[] prompt = t.encode("Say:");
      try (Session s = m.newSession(new SessionOptions().maxSeq(prompt.length).maxNewTokens(ids.length))) {
        final int[] step = {0};
        List<Token> tokens = new ArrayList<>();
        Generation g = s.generate(prompt, new GenerateOptions().maxNewTokens(ids.length).temperature(0).ignoreEos(true)
            .logitsHook((seq, logits) -> {
              int want = ids[step[0]++];
              for (int i = 0; i < logits.limit(); ++i) {
                if (i != want) logits.put(i, Float.NEGATIVE_INFINITY);
              }
              return true;
            }), tok -> {
              Check.wellFormed(tok.text(), path + ": a generated piece");
              tokens.add(tok);
              return true;
            });
        Check.equal(g.ids(), ids, path + ": the forced ids were generated");
        StringBuilder pieces = new StringBuilder();
        int empty = 0;
        for (Token tok : tokens) {
          pieces.append(tok.text());
          if (tok.id() >= 0 && tok.text().isEmpty()) ++empty;
        }
        int[] all = new int[prompt.length + ids.length];
        System.arraycopy(prompt, 0, all, 0, prompt.length);
        System.arraycopy(ids, 0, all, prompt.length, ids.length);
        String whole = t.decode(all);
        String head = t.decode(prompt);
        Check.that(whole.startsWith(head), path + ": decode(prompt) starts decode(prompt + text)");
        Check.equal(pieces.toString(), whole.substring(head.length()), path + ": generated pieces == decode");
        Check.equal(g.text(), pieces.toString(), path + ": Generation.text() == the pieces");
        Check.that(empty >= 10, path + ": generated tokens held back (" + empty + ")");
        System.out.printf("%s: %d ids, %d held back in the decoder, %d in generation: %s%n", path, ids.length, held,
            empty, g.text());
      }
    }
  }
}
