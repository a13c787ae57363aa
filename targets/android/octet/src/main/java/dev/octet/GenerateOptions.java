package dev.octet;

/**
 * How {@link Session#generate} samples and when it stops (octet_generate_options). The defaults
 * are the C API's: 128 tokens, temperature 1, no top-k, top-p 1, seed 0.
 */
public final class GenerateOptions {
  private int maxNewTokens = 128;
  private float temperature = 1f;
  private int topK = 0;
  private float topP = 1f;
  private long seed = 0;
  private boolean keepSpecial = false;
  private boolean ignoreEos = false;
  private LogitsHook logitsHook;

  /** At most this many tokens per sequence (at most the session's maxNewTokens + 1). */
  public GenerateOptions maxNewTokens(int n) {
    maxNewTokens = n;
    return this;
  }

  /** 0 = greedy (the argmax, lowest id on ties). */
  public GenerateOptions temperature(float t) {
    temperature = t;
    return this;
  }

  /** 0 = no limit. */
  public GenerateOptions topK(int k) {
    topK = k;
    return this;
  }

  /** In (0, 1]; 1 = no nucleus cut. */
  public GenerateOptions topP(float p) {
    topP = p;
    return this;
  }

  /** The random state's start (splitmix64): same seed, same text on every platform. */
  public GenerateOptions seed(long s) {
    seed = s;
    return this;
  }

  /** The text includes special tokens' strings. */
  public GenerateOptions keepSpecial(boolean on) {
    keepSpecial = on;
    return this;
  }

  /** Run maxNewTokens even past an eos id. */
  public GenerateOptions ignoreEos(boolean on) {
    ignoreEos = on;
    return this;
  }

  /** Called before each sampling (null: none). */
  public GenerateOptions logitsHook(LogitsHook hook) {
    logitsHook = hook;
    return this;
  }

  public int maxNewTokens() {
    return maxNewTokens;
  }

  public float temperature() {
    return temperature;
  }

  public int topK() {
    return topK;
  }

  public float topP() {
    return topP;
  }

  public long seed() {
    return seed;
  }

  public boolean keepSpecial() {
    return keepSpecial;
  }

  public boolean ignoreEos() {
    return ignoreEos;
  }

  public LogitsHook logitsHook() {
    return logitsHook;
  }

  int flags() {
    return (keepSpecial ? 1 : 0) | (ignoreEos ? 2 : 0);
  }
}
