package dev.octet;

/** One token of a generation, as {@link TokenCallback} receives it. */
public final class Token {
  private final int sequence, id, index;
  private final boolean eos;
  private final String text;

  Token(int sequence, int id, int index, boolean eos, String text) {
    this.sequence = sequence;
    this.id = id;
    this.index = index;
    this.eos = eos;
    this.text = text;
  }

  /** Which sequence of the batch (0 for a single prompt). */
  public int sequence() {
    return sequence;
  }

  /** The sampled token; -1 for text alone (held-back text at the end). */
  public int id() {
    return id;
  }

  /** Tokens this sequence generated before this one. */
  public int index() {
    return index;
  }

  /** True when the id ends the sequence (its text is empty). */
  public boolean isEos() {
    return eos;
  }

  /**
   * The text this token completes, never null: empty when the token only starts a character
   * (byte fallback, an emoji split over byte-level tokens: the whole character comes with the
   * token that ends it), and for models without a tokenizer.
   */
  public String text() {
    return text;
  }

  @Override
  public String toString() {
    return "Token(" + sequence + ", " + id + ", #" + index + (eos ? ", eos" : "") + ", \"" + text + "\")";
  }
}
