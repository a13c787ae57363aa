package dev.octet;

/** A special added token of a tokenizer (octet_special_token). */
public final class SpecialToken {
  private final String content;
  private final int id;
  private final boolean lstrip, rstrip;

  SpecialToken(String content, int id, boolean lstrip, boolean rstrip) {
    this.content = content;
    this.id = id;
    this.lstrip = lstrip;
    this.rstrip = rstrip;
  }

  public String content() {
    return content;
  }

  public int id() {
    return id;
  }

  /** It takes the whitespace before it. */
  public boolean lstrip() {
    return lstrip;
  }

  /** It takes the whitespace after it. */
  public boolean rstrip() {
    return rstrip;
  }

  @Override
  public String toString() {
    return content + "=" + id;
  }
}
