package dev.octet;

import java.util.Arrays;

/** What {@link Session#generate} made: each sequence's ids and text (the prompt not included). */
public final class Generation {
  private final int[][] ids;
  private final String[] texts;
  private final boolean stopped;

  Generation(int[][] ids, String[] texts, boolean stopped) {
    this.ids = ids;
    this.texts = texts;
    this.stopped = stopped;
  }

  /** Sequences in the batch. */
  public int batch() {
    return ids.length;
  }

  /** The tokens sequence 0 generated, eos included. */
  public int[] ids() {
    return ids(0);
  }

  public int[] ids(int sequence) {
    return ids[sequence].clone();
  }

  /** The text sequence 0 generated (the pieces joined). */
  public String text() {
    return text(0);
  }

  public String text(int sequence) {
    return texts[sequence];
  }

  /** True when the token callback returned false. */
  public boolean stopped() {
    return stopped;
  }

  @Override
  public String toString() {
    return "Generation(" + Arrays.deepToString(ids) + (stopped ? ", stopped" : "") + ")";
  }
}
