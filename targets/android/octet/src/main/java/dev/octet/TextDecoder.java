package dev.octet;

import java.nio.charset.StandardCharsets;

/**
 * Streaming decode (octet_text_stream): push ids one at a time and get the text each completes.
 * A character spread over several tokens (byte fallback, an emoji in byte-level tokens) is held
 * back until it is complete, so no piece ends in half a character; the pieces, then
 * {@link #finish()}'s, concatenate to the tokenizer's decode of all the ids. One thread at a time.
 */
public final class TextDecoder extends NativeObject {
  private final Model model;

  TextDecoder(Model model, long handle) {
    super("TextDecoder", true);
    this.model = model;
    setHandle(handle);
  }

  @Override
  void free(long handle) {
    Native.streamFree(handle);
    model.releaseChild();
  }

  /** The text the token completes (often empty). */
  public String push(int id) throws OctetException {
    long h = acquire();
    try {
      return text(Native.streamPush(h, id));
    } finally {
      release();
    }
  }

  /** The held-back text; the decoder is then empty, as after {@link #reset()}. */
  public String finish() throws OctetException {
    long h = acquire();
    try {
      return text(Native.streamFinish(h));
    } finally {
      release();
    }
  }

  /** Forgets everything pushed. */
  public void reset() {
    long h = acquire();
    try {
      Native.streamReset(h);
    } finally {
      release();
    }
  }

  private static String text(byte[] utf8) {
    return utf8 == null ? "" : new String(utf8, StandardCharsets.UTF_8);
  }
}
