package dev.octet;

/**
 * Sampling parameters and the random state for {@link Session#sample} (octet_sampling plus the
 * rng state). The state advances with every draw, so one Sampling object drawn from step after
 * step gives the same stream as a generation with the same seed.
 */
public final class Sampling {
  private float temperature = 1f;
  private int topK = 0;
  private float topP = 1f;
  private long state = 0;
  private LogitsHook logitsHook;

  /** 0 = greedy (the argmax, lowest id on ties). */
  public Sampling temperature(float t) {
    temperature = t;
    return this;
  }

  /** 0 = no limit. */
  public Sampling topK(int k) {
    topK = k;
    return this;
  }

  /** In (0, 1]; 1 = no nucleus cut. */
  public Sampling topP(float p) {
    topP = p;
    return this;
  }

  /** Sets the random state (splitmix64; the seed is the initial state). */
  public Sampling seed(long s) {
    state = s;
    return this;
  }

  /** Called before sampling each sequence (null: none). */
  public Sampling logitsHook(LogitsHook hook) {
    logitsHook = hook;
    return this;
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

  /** The random state now. */
  public long state() {
    return state;
  }

  public LogitsHook logitsHook() {
    return logitsHook;
  }

  void setState(long s) {
    state = s;
  }
}
