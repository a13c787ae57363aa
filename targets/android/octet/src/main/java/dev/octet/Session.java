package dev.octet;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.charset.StandardCharsets;

/**
 * A model's per-run state, planned for the limits of its {@link SessionOptions} (octet_session):
 * forward runs, decoder steps, sampling, generation with streamed text, embeddings, state save
 * and restore. One thread uses it at a time (a second thread's call throws
 * IllegalStateException), except {@link #cancel()}, which any thread may call.
 *
 * <p>Batches are given as {@code int[][]}: one array of ids per sequence, padded here to the
 * longest (the padding is not read).
 */
public final class Session extends NativeObject {
  private final Model model;
  private final long modelHandle; // valid while this session is open (it holds the model)
  private final ByteBuffer memory; // caller-owned arenas stay reachable
  private Tokenizer tokenizer; // made on first use by the String methods
  // Set by cancel(): the token callback also stops on it. octet_generate clears the native flag
  // when it starts, so a cancel() from another thread in the instant between a generation's
  // start in Java and in C would otherwise be lost.
  private volatile boolean cancelRequested;

  Session(Model model, long modelHandle, long handle, ByteBuffer memory) {
    super("Session", true);
    this.model = model;
    this.modelHandle = modelHandle;
    this.memory = memory;
    setHandle(handle);
  }

  @Override
  void free(long handle) {
    if (tokenizer != null) tokenizer.close();
    Native.sessionFree(handle);
    model.releaseChild();
  }

  @Override
  void interrupt(long handle) {
    cancelRequested = true;
    Native.sessionCancel(handle);
  }

  /** The model this session runs. */
  public Model model() {
    return model;
  }

  /** Bytes of the session's arenas (activations + scratch + KV cache). */
  public long arenaBytes() {
    long h = acquire();
    try {
      return Native.sessionArenaBytes(h);
    } finally {
      release();
    }
  }

  // ---- Runs ----

  /** One forward pass over one sequence (encoders: hidden states; decoders: logits, then steps). */
  public void run(int... ids) throws OctetException {
    run(new int[][] {ids});
  }

  /** One forward pass over a batch of sequences. */
  public void run(int[][] sequences) throws OctetException {
    Batch b = new Batch(sequences);
    long h = acquire();
    try {
      Native.sessionRun(h, b.ids, b.lengths, b.batch, b.seq);
    } finally {
      release();
    }
  }

  /**
   * Encoder-decoder models: the encoder reads the sources, the decoder the decoder inputs (each
   * starting with the decoder start token), teacher-forced. Output: decoder logits.
   */
  public void runEncoderDecoder(int[][] sources, int[][] decoderInputs) throws OctetException {
    Batch enc = new Batch(sources);
    Batch dec = new Batch(decoderInputs);
    if (enc.batch != dec.batch) {
      throw new IllegalArgumentException(enc.batch + " sources but " + dec.batch + " decoder inputs");
    }
    long h = acquire();
    try {
      Native.sessionRunEncoderDecoder(h, enc.ids, enc.lengths, enc.seq, dec.ids, dec.lengths, dec.seq, enc.batch);
    } finally {
      release();
    }
  }

  /** Decoders, after a run: one more token for each sequence of that run (ids[batch]). */
  public void step(int... ids) throws OctetException {
    if (ids == null) throw new NullPointerException("ids");
    long h = acquire();
    try {
      Native.sessionStep(h, ids, ids.length);
    } finally {
      release();
    }
  }

  /** Decoder-only models, after a run: more tokens for sequence 0 in one pass (a chat's next turn). */
  public void extend(int... ids) throws OctetException {
    extend(new int[][] {ids});
  }

  /** Decoder-only models, after a run: k more tokens per sequence (every row k long) in one pass. */
  public void extend(int[][] ids) throws OctetException {
    if (ids == null) throw new NullPointerException("ids");
    int k = ids.length > 0 && ids[0] != null ? ids[0].length : 0;
    for (int[] row : ids) {
      if (row == null) throw new NullPointerException("a row of ids is null");
      if (row.length != k) throw new IllegalArgumentException("extend: rows of different lengths");
    }
    int[] flat = new int[ids.length * k];
    for (int b = 0; b < ids.length; ++b) System.arraycopy(ids[b], 0, flat, b * k, k);
    long h = acquire();
    try {
      Native.sessionExtend(h, flat, ids.length, k);
    } finally {
      release();
    }
  }

  /** {batch, seq, dim} of the last output (dim: hidden size for encoders, vocabulary for decoders). */
  public int[] outputShape() throws OctetException {
    long h = acquire();
    try {
      int[] shape = new int[3];
      Native.sessionOutputShape(h, shape);
      return shape;
    } finally {
      release();
    }
  }

  /** A copy of the last run's, step's or extend's output, [batch, seq, dim] row-major. */
  public float[] output() throws OctetException {
    long h = acquire();
    try {
      int[] shape = new int[3];
      Native.sessionOutputShape(h, shape);
      float[] out = new float[shape[0] * shape[1] * shape[2]];
      Native.sessionOutputCopy(h, out);
      return out;
    } finally {
      release();
    }
  }

  /**
   * The last output without a copy: a read-only view of the session's memory, [batch, seq, dim]
   * row-major. Valid until the session runs, steps, extends, embeds, generates or closes;
   * reading it after that reads other numbers (or, after close, freed memory).
   */
  public FloatBuffer outputBuffer() throws OctetException {
    long h = acquire();
    try {
      return Native.sessionOutputBuffer(h).asReadOnlyBuffer().order(ByteOrder.nativeOrder()).asFloatBuffer();
    } finally {
      release();
    }
  }

  /**
   * Decoders, after a run, step or extend: the next token of each sequence of that batch from
   * its last row of logits, drawn from (and advancing) the sampling's random state.
   */
  public int[] sample(Sampling sampling) throws OctetException {
    if (sampling == null) throw new NullPointerException("sampling");
    final LogitsHook hook = sampling.logitsHook();
    long h = acquire();
    try {
      int[] shape = new int[3];
      Native.sessionOutputShape(h, shape);
      int[] out = new int[shape[0]];
      long[] rng = {sampling.state()};
      Native.sessionSample(h, sampling.temperature(), sampling.topK(), sampling.topP(), rng, out,
          hook == null ? null : new Dispatch(null, hook, 1, null));
      sampling.setState(rng[0]);
      return out;
    } finally {
      release();
    }
  }

  // ---- Generation ----

  /** Generates from the prompt's text (encoded with the model's tokenizer, special tokens added). */
  public Generation generate(String prompt, GenerateOptions options, TokenCallback callback)
      throws OctetException {
    if (prompt == null) throw new NullPointerException("prompt");
    return generate(new int[][] {encode(prompt)}, options, callback);
  }

  /** Generates from one prompt's ids. */
  public Generation generate(int[] prompt, GenerateOptions options, TokenCallback callback)
      throws OctetException {
    if (prompt == null) throw new NullPointerException("prompt");
    return generate(new int[][] {prompt}, options, callback);
  }

  /**
   * Generates from a batch of prompts: decoder-only models continue each prompt; encoder-decoder
   * models read it as the source. Each sequence runs until an eos id or maxNewTokens tokens. The
   * callback (may be null) gets every token as it is sampled with the text it completes, decoded
   * in the context of the prompt. Throws CANCELLED when {@link #cancel()} or the logits hook
   * stopped it; the session must be made for the batch, the prompt length (maxSeq) and
   * maxNewTokens - 1 steps.
   */
  public Generation generate(int[][] prompts, GenerateOptions options, TokenCallback callback)
      throws OctetException {
    if (options == null) options = new GenerateOptions();
    Batch b = new Batch(prompts);
    Dispatch d = new Dispatch(callback, options.logitsHook(), b.batch, this);
    long h;
    synchronized (this) { // as one step with acquire(): a cancel() or close() comes before or after
      h = acquire();
      cancelRequested = false; // a cancel() before this generation does not stop it
    }
    try {
      Native.generate(h, b.ids, b.lengths, b.batch, b.seq, options.maxNewTokens(),
          options.temperature(), options.topK(), options.topP(), options.seed(), options.flags(),
          d, true, options.logitsHook() != null);
    } finally {
      release();
    }
    if (d.cancelled) {
      throw new OctetException(OctetException.Code.CANCELLED, "the generation was cancelled");
    }
    return d.result();
  }

  /**
   * Stops the generation running on this session before its next step (it then throws
   * CANCELLED); safe from any thread. A generation started after this call is not affected.
   */
  public void cancel() {
    synchronized (this) {
      long h = handleForAnyThread();
      cancelRequested = true;
      Native.sessionCancel(h);
    }
  }

  // ---- Embeddings ----

  /** Encoder-only models: the embedding of one sequence, [hidden]. */
  public float[] embed(int[] ids, Pooling pooling, boolean normalize) throws OctetException {
    return embed(new int[][] {ids}, pooling, normalize)[0];
  }

  /** Encoder-only models: the embedding of the text (encoded with the model's tokenizer). */
  public float[] embed(String text, Pooling pooling, boolean normalize) throws OctetException {
    if (text == null) throw new NullPointerException("text");
    return embed(encode(text), pooling, normalize);
  }

  /**
   * Encoder-only models: one vector per sequence, [batch][hidden], as sentence-transformers'
   * Pooling (and Normalize, when normalize) computes it.
   */
  public float[][] embed(int[][] sequences, Pooling pooling, boolean normalize) throws OctetException {
    if (pooling == null) throw new NullPointerException("pooling");
    Batch b = new Batch(sequences);
    int hidden;
    float[] flat;
    long h = acquire();
    try {
      hidden = Native.modelHiddenSize(modelHandle);
      flat = new float[b.batch * hidden];
      Native.sessionEmbed(h, b.ids, b.lengths, b.batch, b.seq, pooling.ordinal(), normalize ? 1 : 0, flat);
    } finally {
      release();
    }
    float[][] out = new float[b.batch][hidden];
    for (int i = 0; i < b.batch; ++i) System.arraycopy(flat, i * hidden, out[i], 0, hidden);
    return out;
  }

  /**
   * Encoder-only models: the embeddings written straight into a direct buffer, batch x hidden
   * floats from its position (which is not moved).
   */
  public void embed(int[][] sequences, Pooling pooling, boolean normalize, FloatBuffer out)
      throws OctetException {
    if (pooling == null) throw new NullPointerException("pooling");
    if (out == null) throw new NullPointerException("out");
    if (!out.isDirect() || out.isReadOnly()) {
      throw new IllegalArgumentException("embed needs a direct, writable FloatBuffer");
    }
    if (out.order() != ByteOrder.nativeOrder()) {
      throw new IllegalArgumentException("embed needs a FloatBuffer in the native byte order");
    }
    Batch b = new Batch(sequences);
    long h = acquire();
    try {
      Native.sessionEmbedBuffer(h, b.ids, b.lengths, b.batch, b.seq, pooling.ordinal(), normalize ? 1 : 0,
          out, out.position(), out.remaining());
    } finally {
      release();
    }
  }

  // ---- State ----

  /** Bytes of the decoder state {@link #saveState()} writes. */
  public long stateSize() throws OctetException {
    long h = acquire();
    try {
      return Native.stateSize(h);
    } finally {
      release();
    }
  }

  /**
   * The decoder state (KV cache, positions, last logits) as bytes: restored with
   * {@link #loadState} into a session of the same model, the next sample and every following
   * step give bit-identical results.
   */
  public byte[] saveState() throws OctetException {
    long h = acquire();
    try {
      return Native.stateSave(h);
    } finally {
      release();
    }
  }

  /**
   * Writes the state into a direct buffer from its position, which advances past it; returns
   * the bytes written. BUFFER_TOO_SMALL when it does not fit ({@link #stateSize()}).
   */
  public int saveState(ByteBuffer out) throws OctetException {
    if (out == null) throw new NullPointerException("out");
    if (!out.isDirect() || out.isReadOnly()) {
      throw new IllegalArgumentException("saveState needs a direct, writable ByteBuffer");
    }
    long h = acquire();
    try {
      int n = (int) Native.stateSaveBuffer(h, out, out.position(), out.remaining());
      out.position(out.position() + n);
      return n;
    } finally {
      release();
    }
  }

  /** Restores a state saved from a session of the same model (checked). */
  public void loadState(byte[] state) throws OctetException {
    if (state == null) throw new NullPointerException("state");
    long h = acquire();
    try {
      Native.stateLoad(h, state);
    } finally {
      release();
    }
  }

  /** Restores a state from a direct buffer's remaining bytes (its position is not moved). */
  public void loadState(ByteBuffer state) throws OctetException {
    if (state == null) throw new NullPointerException("state");
    if (!state.isDirect()) throw new IllegalArgumentException("loadState needs a direct ByteBuffer");
    long h = acquire();
    try {
      Native.stateLoadBuffer(h, state, state.position(), state.remaining());
    } finally {
      release();
    }
  }

  // ---- Helpers ----

  private int[] encode(String text) throws OctetException {
    long h = acquire(); // the session is ours while its tokenizer is made and used
    try {
      if (tokenizer == null) tokenizer = model.newTokenizerForChild();
      return tokenizer.encode(text);
    } finally {
      release();
    }
  }

  /** A batch of sequences flattened to [batch, seq] with lengths. */
  static final class Batch {
    final int[] ids;
    final int[] lengths;
    final int batch, seq;

    Batch(int[][] sequences) {
      if (sequences == null) throw new NullPointerException("sequences");
      batch = sequences.length;
      int longest = 0;
      for (int[] s : sequences) {
        if (s == null) throw new NullPointerException("a sequence is null");
        longest = Math.max(longest, s.length);
      }
      seq = longest;
      ids = new int[batch * seq];
      lengths = new int[batch];
      for (int b = 0; b < batch; ++b) {
        System.arraycopy(sequences[b], 0, ids, b * seq, sequences[b].length);
        lengths[b] = sequences[b].length;
      }
    }
  }

  /** Collects a generation's ids and text and forwards them to the caller's callback and hook. */
  static final class Dispatch extends Callbacks {
    private final TokenCallback callback;
    private final LogitsHook hook;
    private final Session session; // whose cancel() also stops the generation here
    private final int[][] ids;
    private final int[] counts;
    private final StringBuilder[] texts;
    private boolean stopped;
    boolean cancelled;

    Dispatch(TokenCallback callback, LogitsHook hook, int batch, Session session) {
      this.callback = callback;
      this.hook = hook;
      this.session = session;
      ids = new int[batch][16];
      counts = new int[batch];
      texts = new StringBuilder[batch];
      for (int b = 0; b < batch; ++b) texts[b] = new StringBuilder();
    }

    @Override
    boolean onToken(int sequence, int id, int index, boolean isEos, byte[] text) {
      String piece = text == null ? "" : new String(text, StandardCharsets.UTF_8);
      if (id >= 0) {
        if (counts[sequence] == ids[sequence].length) {
          ids[sequence] = java.util.Arrays.copyOf(ids[sequence], 2 * counts[sequence]);
        }
        ids[sequence][counts[sequence]++] = id;
      }
      texts[sequence].append(piece);
      if (callback != null && !callback.onToken(new Token(sequence, id, index, isEos, piece))) {
        stopped = true;
        return false;
      }
      if (session != null && session.cancelRequested) {
        cancelled = true;
        return false;
      }
      return true;
    }

    @Override
    boolean onLogits(int sequence, ByteBuffer logits) {
      return hook.onLogits(sequence, logits.order(ByteOrder.nativeOrder()).asFloatBuffer());
    }

    Generation result() {
      int[][] out = new int[ids.length][];
      String[] text = new String[ids.length];
      for (int b = 0; b < ids.length; ++b) {
        out[b] = java.util.Arrays.copyOf(ids[b], counts[b]);
        text[b] = texts[b].toString();
      }
      return new Generation(out, text, stopped);
    }
  }
}
