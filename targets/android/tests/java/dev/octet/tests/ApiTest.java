package dev.octet.tests;

import static dev.octet.OctetException.Code.BUFFER_TOO_SMALL;
import static dev.octet.OctetException.Code.CANCELLED;
import static dev.octet.OctetException.Code.INVALID_ARGUMENT;
import static dev.octet.OctetException.Code.INVALID_MODEL;
import static dev.octet.OctetException.Code.INVALID_STATE;
import static dev.octet.OctetException.Code.IO_ERROR;
import static dev.octet.OctetException.Code.LIMIT_EXCEEDED;
import static dev.octet.OctetException.Code.UNSUPPORTED;

import dev.octet.ChatMessage;
import dev.octet.ChatTemplate;
import dev.octet.GenerateOptions;
import dev.octet.Generation;
import dev.octet.MemoryPlan;
import dev.octet.Model;
import dev.octet.ModelInfo;
import dev.octet.Octet;
import dev.octet.OctetException;
import dev.octet.Pooling;
import dev.octet.Sampling;
import dev.octet.Session;
import dev.octet.SessionOptions;
import dev.octet.SpecialToken;
import dev.octet.Structure;
import dev.octet.TextDecoder;
import dev.octet.Token;
import dev.octet.Tokenizer;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Every public method of the binding and every exception path, on small models:
 *   tiny.octet (a llama decoder, no tokenizer), bert.octet, t5.octet, truncated.octet,
 *   austen-tiny.octet (byte-level BPE), qwen.octet (a chat template).
 * Usage: ApiTest MODELS_DIR OCTET_CLI
 */
public final class ApiTest {
  static File dir;
  static String cli;

  public static void main(String[] args) throws Exception {
    dir = new File(args[0]);
    cli = args[1];
    long t0 = System.nanoTime();
    version();
    loading();
    info();
    sessions();
    runsAndSteps();
    sampling();
    generation();
    encoderDecoder();
    embeddings();
    state();
    tokenizer();
    textDecoder();
    chat();
    lifetimes();
    threads();
    exceptionType();
    System.out.printf("ApiTest: %d checks passed in %.1f s%n", Check.passed, (System.nanoTime() - t0) * 1e-9);
  }

  static String path(String name) {
    return new File(dir, name).getPath();
  }

  static void version() {
    Check.equal(Octet.version(), "0.2.0", "Octet.version()");
    Check.equal(Octet.versionNumber(), 200, "Octet.versionNumber()");
    Check.equal(Octet.versionNumber() / 10000, Octet.BINDING_VERSION_NUMBER / 10000, "major versions agree");
  }

  static void loading() throws Exception {
    try (Model m = Model.load(path("tiny.octet"))) {
      Check.that(m.info().isMapped(), "a loaded file is mapped");
    }
    try (Model m = Model.load(new File(path("tiny.octet")))) {
      Check.equal(m.info().family(), "llama", "Model.load(File)");
    }
    // A message with non-ASCII text survives the trip through JNI (UTF-8, not modified UTF-8).
    OctetException e = Check.fails(IO_ERROR, "a missing file", () -> Model.load(path("n\u00e9ant-\uD83D\uDE42.octet")));
    Check.that(e.getMessage().contains("n\u00e9ant-\uD83D\uDE42.octet"), "the message names the file: " + e.getMessage());
    Check.fails(INVALID_MODEL, "a truncated file", () -> Model.load(path("truncated.octet")));
    Check.fails(INVALID_ARGUMENT, "a path with a NUL", () -> Model.load("a\0b"));
    Check.throwsA(NullPointerException.class, "a null path", () -> Model.load((String) null));

    // From a direct buffer: aligned (allocateAligned) works, misaligned is refused.
    byte[] bytes = Files.readAllBytes(new File(path("tiny.octet")).toPath());
    ByteBuffer aligned = Model.allocateAligned(bytes.length);
    Check.equal(aligned.capacity(), bytes.length, "allocateAligned's capacity");
    aligned.put(bytes);
    aligned.flip();
    try (Model m = Model.fromBuffer(aligned)) {
      Check.that(!m.info().isMapped(), "a buffer model is not mapped");
      Check.equal(m.info().fileBytes(), (long) bytes.length, "the buffer's size");
      try (Session s = m.newSession()) {
        s.run(1, 2, 3);
        Check.equal(s.outputShape()[2], 32, "a buffer model runs");
      }
    }
    ByteBuffer shifted = Model.allocateAligned(bytes.length + 1);
    shifted.position(1);
    shifted.put(bytes);
    shifted.position(1);
    Check.fails(INVALID_ARGUMENT, "a misaligned buffer", () -> Model.fromBuffer(shifted));
    Check.throwsA(IllegalArgumentException.class, "a heap buffer", () -> Model.fromBuffer(ByteBuffer.wrap(bytes)));
    Check.throwsA(IllegalArgumentException.class, "a negative size", () -> Model.allocateAligned(-1));
    ByteBuffer garbage = Model.allocateAligned(4096);
    Check.fails(INVALID_MODEL, "a buffer of zeros", () -> Model.fromBuffer(garbage));

    // From a file descriptor: the whole file, and a model inside a bigger file (an APK asset).
    try (FileInputStream in = new FileInputStream(path("tiny.octet"));
         Model m = Model.fromFileDescriptor(in.getFD(), 0, 0)) {
      Check.that(m.info().isMapped(), "a whole-file fd is mapped");
    }
    File packed = new File(dir, "packed.bin");
    for (int offset : new int[] {4096, 100}) {
      try (FileOutputStream out = new FileOutputStream(packed)) {
        out.write(new byte[offset]);
        out.write(bytes);
        out.write(new byte[77]);
      }
      try (RandomAccessFile f = new RandomAccessFile(packed, "r");
           Model m = Model.fromFileDescriptor(f.getFD(), offset, bytes.length)) {
        Check.equal(m.info().fileBytes(), (long) bytes.length, "an fd range's size");
        Check.equal(m.info().isMapped(), offset % 64 == 0, "an aligned range is mapped, an odd one read");
        try (Session s = m.newSession()) {
          s.run(4, 5);
        }
      }
    }
    Check.fails(INVALID_ARGUMENT, "descriptor -1", () -> Model.fromFd(-1, 0, 0));
    Check.fails(IO_ERROR, "a descriptor that is not open", () -> Model.fromFd(99999, 0, 0));
    Check.fails(INVALID_ARGUMENT, "a negative offset", () -> Model.fromFd(0, -1, 0));
    try (RandomAccessFile f = new RandomAccessFile(packed, "r")) {
      Check.fails(INVALID_MODEL, "a range of padding", () -> Model.fromFileDescriptor(f.getFD(), 0, 64));
    }
    Check.throwsA(NullPointerException.class, "a null descriptor", () -> Model.fromFileDescriptor(null, 0, 0));
  }

  static void info() throws Exception {
    try (Model m = Model.load(path("tiny.octet"))) {
      ModelInfo i = m.info();
      Check.equal(i.family(), "llama", "family");
      Check.equal(i.structure(), Structure.DECODER_ONLY, "structure");
      Check.equal(i.vocabSize(), 32, "vocab");
      Check.equal(i.hiddenSize(), 16, "hidden");
      Check.equal(i.numLayers(), 2, "layers");
      Check.equal(i.numDecoderLayers(), 0, "decoder layers");
      Check.that(i.numHeads() >= 1 && i.numKvHeads() >= 1 && i.headDim() * i.numHeads() >= 1, "heads");
      Check.that(i.maxPositions() >= 0, "max positions");
      Check.that(i.bosTokenId() >= -1 && i.eosTokenId() >= -1 && i.padTokenId() >= -1
          && i.decoderStartTokenId() >= -1, "special ids");
      Check.that(!i.hasTokenizer() && !i.hasChatTemplate(), "no tokenizer");
      Check.that(i.isInt8(), "int8");
      Check.that(i.fileBytes() > 0 && i.weightsBytes() > 0 && i.weightsBytes() <= i.fileBytes(), "bytes");
      Check.that(i.toString().startsWith("llama DECODER_ONLY, vocab 32"), "toString: " + i);
      if (i.eosTokenId() >= 0) Check.that(m.isEos(i.eosTokenId()), "isEos(eos)");
      Check.that(!m.isEos(-5), "isEos(-5)");
    }
    try (Model m = Model.load(path("austen-tiny.octet"))) {
      ModelInfo i = m.info();
      Check.that(i.hasTokenizer() && !i.hasChatTemplate() && i.isMapped(), "austen-tiny: tokenizer");
      Check.equal(i.vocabSize(), 512, "austen-tiny's vocabulary");
      Check.equal(i.maxPositions(), 512, "austen-tiny's positions");
      Check.that(m.isEos(1) && !m.isEos(2), "austen-tiny's eos is </s> (1)");
    }
    try (Model m = Model.load(path("t5.octet"))) {
      Check.equal(m.info().structure(), Structure.ENCODER_DECODER, "t5's structure");
      Check.that(m.info().numDecoderLayers() >= 1, "t5's decoder layers");
    }
    try (Model m = Model.load(path("bert.octet"))) {
      Check.equal(m.info().structure(), Structure.ENCODER_ONLY, "bert's structure");
    }
  }

  static void sessions() throws Exception {
    try (Model m = Model.load(path("tiny.octet"))) {
      SessionOptions o = new SessionOptions().maxBatch(2).maxSeq(8).maxNewTokens(4).threads(2)
          .prefillChunk(4).allLogits(true);
      Check.equal(Arrays.asList(o.maxBatch(), o.maxSeq(), o.maxNewTokens(), o.threads(), o.flags(), o.prefillChunk()),
          Arrays.asList(2, 8, 4, 2, SessionOptions.ALL_LOGITS, 4), "SessionOptions' getters");
      Check.equal(o.allLogits(false).flags(), 0, "allLogits(false)");
      Check.equal(o.flags(SessionOptions.ALL_LOGITS).flags(), 1, "flags()");
      MemoryPlan plan = m.planMemory(o);
      Check.that(plan.activationBytes() > 0 && plan.kvCacheBytes() > 0 && plan.scratchBytes() >= 0,
          "the plan's parts: " + plan);
      Check.that(plan.memoryBytes() >= plan.activationBytes() + plan.scratchBytes() + plan.kvCacheBytes(),
          "memoryBytes holds all three");
      Check.that(plan.toString().contains("KV cache"), "MemoryPlan.toString");
      Check.fails(INVALID_ARGUMENT, "unknown session flags", () -> m.planMemory(new SessionOptions().flags(8)));
      Check.fails(INVALID_ARGUMENT, "unknown session flags at creation", () -> m.newSession(new SessionOptions().flags(8)));
      Check.fails(INVALID_ARGUMENT, "batch 0", () -> m.newSession(new SessionOptions().maxBatch(0)));

      float[] own;
      try (Session s = m.newSession(o)) {
        Check.that(s.arenaBytes() > 0, "arenaBytes");
        Check.that(s.model() == m, "Session.model()");
        s.run(new int[][] {{1, 2, 3}, {4, 5}});
        own = s.output();
      }
      // Caller memory: the same numbers as the session's own arenas.
      ByteBuffer memory = Model.allocateAligned((int) plan.memoryBytes());
      try (Session s = m.newSession(o, memory)) {
        s.run(new int[][] {{1, 2, 3}, {4, 5}});
        Check.equal(s.output(), own, "a session in caller memory computes the same");
      }
      ByteBuffer small = Model.allocateAligned((int) plan.memoryBytes() - 64);
      Check.fails(BUFFER_TOO_SMALL, "caller memory too small", () -> m.newSession(o, small));
      ByteBuffer odd = Model.allocateAligned((int) plan.memoryBytes() + 64);
      odd.position(8);
      Check.fails(INVALID_ARGUMENT, "misaligned caller memory", () -> m.newSession(o, odd));
      Check.throwsA(IllegalArgumentException.class, "heap memory", () -> m.newSession(o, ByteBuffer.allocate(64)));
      Check.throwsA(NullPointerException.class, "null options", () -> m.newSession(null));
      try (Session s = m.newSession()) {
        s.run(new int[128]);
        Check.fails(LIMIT_EXCEEDED, "more than the default 128 tokens", () -> s.run(new int[129]));
      }
    }
  }

  static void runsAndSteps() throws Exception {
    try (Model m = Model.load(path("tiny.octet"));
         Session s = m.newSession(new SessionOptions().maxBatch(2).maxSeq(6).maxNewTokens(3))) {
      Check.fails(INVALID_STATE, "output before any run", s::output);
      Check.fails(INVALID_STATE, "outputShape before any run", s::outputShape);
      Check.fails(INVALID_STATE, "a step before any run", () -> s.step(1));
      Check.fails(INVALID_STATE, "sample before any run", () -> s.sample(new Sampling()));
      s.run(new int[][] {{1, 2, 3, 4}, {5, 6}});
      Check.equal(s.outputShape(), new int[] {2, 1, 32}, "last logits only: [batch, 1, vocab]");
      float[] logits = s.output();
      FloatBuffer view = s.outputBuffer();
      Check.that(view.isReadOnly() && view.isDirect(), "outputBuffer is a read-only direct view");
      float[] viewed = new float[view.remaining()];
      view.get(viewed);
      Check.equal(viewed, logits, "outputBuffer == output");
      s.step(7, 8);
      Check.equal(s.outputShape(), new int[] {2, 1, 32}, "a step's output");
      s.step(new int[] {9, 10});
      s.step(11, 12);
      // The longest sequence (4 + 3 steps) has room for 6 + 3 positions: two more steps, not three.
      s.step(1, 1);
      s.step(1, 1);
      Check.fails(LIMIT_EXCEEDED, "steps beyond maxSeq + maxNewTokens", () -> s.step(1, 1));
      Check.fails(INVALID_ARGUMENT, "a step with the wrong batch", () -> s.step(1));
      Check.fails(INVALID_ARGUMENT, "an id outside the vocabulary", () -> s.run(1, 99));
      Check.fails(LIMIT_EXCEEDED, "a batch over maxBatch", () -> s.run(new int[][] {{1}, {2}, {3}}));
      Check.fails(LIMIT_EXCEEDED, "a run over maxSeq", () -> s.run(1, 2, 3, 4, 5, 6, 7));
      Check.fails(INVALID_ARGUMENT, "an empty sequence", () -> s.run(new int[][] {{1, 2}, {}}));
      Check.throwsA(NullPointerException.class, "a null sequence", () -> s.run(new int[][] {{1}, null}));

      // Extend == steps: the same logits after [1,2,3] + extend(4,5) as after [1,2,3] + step 4 + step 5.
      s.run(1, 2, 3);
      s.extend(4, 5);
      float[] extended = s.output();
      s.run(1, 2, 3);
      s.step(4);
      s.step(5);
      Check.equal(s.output(), extended, "extend == the same steps");
      s.run(new int[][] {{1, 2}, {3, 4}});
      s.extend(new int[][] {{5, 6}, {7, 8}});
      Check.equal(s.outputShape(), new int[] {2, 1, 32}, "a batch extend");
      Check.throwsA(IllegalArgumentException.class, "ragged extend", () -> s.extend(new int[][] {{1, 2}, {3}}));
      Check.fails(LIMIT_EXCEEDED, "extend beyond the cache", () -> s.extend(new int[][] {{1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1}}));
    }
    // Every logit: [batch, seq, vocab].
    try (Model m = Model.load(path("tiny.octet"));
         Session s = m.newSession(new SessionOptions().maxSeq(4).allLogits(true))) {
      s.run(1, 2, 3);
      Check.equal(s.outputShape(), new int[] {1, 3, 32}, "ALL_LOGITS: [1, 3, 32]");
      Check.equal(s.output().length, 96, "ALL_LOGITS: 96 floats");
    }
  }

  static int argmax(float[] v, int from, int n) {
    int best = 0;
    for (int i = 1; i < n; ++i) {
      if (v[from + i] > v[from + best]) best = i;
    }
    return best;
  }

  static void sampling() throws Exception {
    try (Model m = Model.load(path("tiny.octet"));
         Session s = m.newSession(new SessionOptions().maxBatch(2).maxSeq(4).maxNewTokens(8))) {
      s.run(new int[][] {{1, 2, 3}, {4, 5, 6}});
      float[] logits = s.output();
      Sampling greedy = new Sampling().temperature(0);
      int[] next = s.sample(greedy);
      Check.equal(next, new int[] {argmax(logits, 0, 32), argmax(logits, 32, 32)}, "greedy == argmax");
      Sampling a = new Sampling().temperature(1.5f).topK(20).topP(0.9f).seed(42);
      Check.equal(Arrays.asList(a.temperature(), a.topK(), a.topP(), a.state(), a.logitsHook()),
          Arrays.asList(1.5f, 20, 0.9f, 42L, null), "Sampling's getters");
      int[] first = s.sample(a);
      Check.that(a.state() != 42L, "the random state advances");
      int[] second = s.sample(a);
      Sampling b = new Sampling().temperature(1.5f).topK(20).topP(0.9f).seed(42);
      Check.equal(s.sample(b), first, "same seed, same draw");
      Check.equal(s.sample(b), second, "same state, same stream");
      Check.fails(INVALID_ARGUMENT, "top_p 0", () -> s.sample(new Sampling().topP(0)));
      Check.fails(INVALID_ARGUMENT, "a negative temperature", () -> s.sample(new Sampling().temperature(-1)));

      // A logits hook: the mask wins over the logits, for each sequence.
      List<Integer> seen = new ArrayList<>();
      int[] forced = s.sample(new Sampling().temperature(0).logitsHook((seq, l) -> {
        seen.add(seq);
        Check.equal(l.remaining(), 32, "the hook sees the vocabulary");
        for (int i = 0; i < l.limit(); ++i) {
          if (i != 17 + seq) l.put(i, Float.NEGATIVE_INFINITY);
        }
        return true;
      }));
      Check.equal(forced, new int[] {17, 18}, "the hook's mask decides");
      Check.equal(seen, Arrays.asList(0, 1), "the hook sees each sequence");
      Check.fails(CANCELLED, "a hook that stops", () -> s.sample(new Sampling().logitsHook((seq, l) -> false)));
      Check.fails(INVALID_ARGUMENT, "a hook that masks everything", () -> s.sample(new Sampling().logitsHook((seq, l) -> {
        for (int i = 0; i < l.limit(); ++i) l.put(i, Float.NEGATIVE_INFINITY);
        return true;
      })));
      IllegalStateException thrown = Check.throwsA(IllegalStateException.class, "a hook's exception comes back",
          () -> s.sample(new Sampling().logitsHook((seq, l) -> {
            throw new IllegalStateException("from the hook");
          })));
      Check.equal(thrown.getMessage(), "from the hook", "the hook's own exception");
      // Hooks edit the logits in place: run again, then the same greedy ids.
      s.run(new int[][] {{1, 2, 3}, {4, 5, 6}});
      Check.equal(s.sample(greedy), next, "the session works after a hook threw");
      Check.throwsA(NullPointerException.class, "null sampling", () -> s.sample(null));
    }
  }

  static void generation() throws Exception {
    try (Model m = Model.load(path("austen-tiny.octet"));
         Tokenizer t = m.newTokenizer();
         Session s = m.newSession(new SessionOptions().maxBatch(2).maxSeq(16).maxNewTokens(24))) {
      String prompt = "It was a truth";
      int[] ids = t.encode(prompt);
      List<Token> tokens = new ArrayList<>();
      GenerateOptions o = new GenerateOptions().maxNewTokens(20).temperature(0.8f).topK(40).topP(0.95f).seed(3);
      Check.equal(Arrays.asList(o.maxNewTokens(), o.temperature(), o.topK(), o.topP(), o.seed(), o.keepSpecial(),
          o.ignoreEos(), o.logitsHook()), Arrays.asList(20, 0.8f, 40, 0.95f, 3L, false, false, null), "GenerateOptions' getters");
      Generation g = s.generate(prompt, o, tok -> {
        tokens.add(tok);
        return true;
      });
      Check.that(g.ids().length >= 1 && g.ids().length <= 20, "1 to 20 tokens");
      Check.equal(g.batch(), 1, "Generation.batch()");
      Check.that(!g.stopped(), "not stopped");
      StringBuilder joined = new StringBuilder();
      int[] fromCallback = new int[g.ids().length];
      int n = 0;
      for (Token tok : tokens) {
        joined.append(tok.text());
        Check.equal(tok.sequence(), 0, "Token.sequence()");
        if (tok.id() >= 0) {
          Check.equal(tok.index(), n, "Token.index()");
          fromCallback[n++] = tok.id();
        }
        Check.that(tok.toString().startsWith("Token(0, "), "Token.toString");
      }
      Check.equal(fromCallback, g.ids(), "the callback saw every id");
      Check.equal(joined.toString(), g.text(), "the pieces make the text");
      Check.equal(g.text(), g.text(0), "text() == text(0)");
      Check.equal(g.ids(), g.ids(0), "ids() == ids(0)");
      int last = g.ids()[g.ids().length - 1];
      Check.that(g.ids().length == 20 || m.isEos(last), "it ran to the end or an eos");
      Check.equal(tokens.get(tokens.size() - 1).isEos() || tokens.get(tokens.size() - 1).id() == -1,
          m.isEos(last) || tokens.get(tokens.size() - 1).id() == -1, "Token.isEos()");
      int[] all = Arrays.copyOf(ids, ids.length + g.ids().length);
      System.arraycopy(g.ids(), 0, all, ids.length, g.ids().length);
      Check.equal(t.decode(ids) + g.text(), t.decode(all), "prompt + pieces == decode(prompt + generated)");
      Check.that(g.toString().startsWith("Generation("), "Generation.toString");

      // The same seed from ids and from text; no callback at all.
      Generation again = s.generate(ids, o, null);
      Check.equal(again.ids(), g.ids(), "generate(ids) == generate(text), same seed");
      Check.equal(again.text(), g.text(), "same text");
      // A batch: the same as each prompt alone.
      int[] other = t.encode("She said");
      Generation batch = s.generate(new int[][] {ids, other}, new GenerateOptions().maxNewTokens(6).temperature(0), null);
      Generation alone = s.generate(other, new GenerateOptions().maxNewTokens(6).temperature(0), null);
      Check.equal(batch.batch(), 2, "a batch of two");
      Check.equal(batch.ids(1), alone.ids(), "a batch's sequence == the prompt alone (greedy)");
      Check.equal(batch.text(1), alone.text(), "and its text");
      // The callback stops it.
      Generation stopped = s.generate(ids, new GenerateOptions().maxNewTokens(20).ignoreEos(true), tok -> tok.index() < 4);
      Check.that(stopped.stopped(), "stopped()");
      Check.equal(stopped.ids().length, 5, "the callback's false ends it after that token");
      // ignoreEos runs every token; keepSpecial keeps </s> in the text.
      Generation full = s.generate(ids, new GenerateOptions().maxNewTokens(24).ignoreEos(true).keepSpecial(true)
          .logitsHook((seq, l) -> {
            for (int i = 0; i < l.limit(); ++i) if (i != 1) l.put(i, Float.NEGATIVE_INFINITY);
            return true;
          }), null);
      Check.equal(full.ids().length, 24, "ignoreEos: every token");
      Check.that(full.text().contains("</s>"), "keepSpecial: </s> in the text: " + full.text());
      Generation eos = s.generate(ids, new GenerateOptions().maxNewTokens(24).logitsHook((seq, l) -> {
        for (int i = 0; i < l.limit(); ++i) if (i != 1) l.put(i, Float.NEGATIVE_INFINITY);
        return true;
      }), null);
      Check.equal(eos.ids(), new int[] {1}, "an eos ends the sequence");
      Check.equal(eos.text(), "", "an eos has no text");
      // Errors.
      Check.fails(LIMIT_EXCEEDED, "more tokens than the session holds",
          () -> s.generate(ids, new GenerateOptions().maxNewTokens(40), null));
      Check.fails(INVALID_ARGUMENT, "maxNewTokens 0", () -> s.generate(ids, new GenerateOptions().maxNewTokens(0), null));
      Check.fails(CANCELLED, "a logits hook that stops",
          () -> s.generate(ids, new GenerateOptions().logitsHook((seq, l) -> false).maxNewTokens(4), null));
      ArithmeticException boom = Check.throwsA(ArithmeticException.class, "the callback's exception comes back",
          () -> s.generate(ids, new GenerateOptions().maxNewTokens(8), tok -> {
            if (tok.index() == 2) throw new ArithmeticException("boom");
            return true;
          }));
      Check.equal(boom.getMessage(), "boom", "the same exception");
      OutOfMemoryError oom = Check.throwsA(OutOfMemoryError.class, "an Error from the callback comes back",
          () -> s.generate(ids, new GenerateOptions().maxNewTokens(8), tok -> {
            throw new OutOfMemoryError("pretend");
          }));
      Check.equal(oom.getMessage(), "pretend", "the same Error");
      Check.equal(s.generate(ids, o, null).ids(), g.ids(), "the session generates again after an exception");
      // generate(null options) uses the defaults (128 tokens: more than this session holds).
      Check.fails(LIMIT_EXCEEDED, "null options: the defaults", () -> s.generate(ids, null, null));
      Check.throwsA(NullPointerException.class, "a null prompt", () -> s.generate((String) null, o, null));
    }
    try (Model m = Model.load(path("tiny.octet")); Session s = m.newSession(new SessionOptions().maxNewTokens(4))) {
      // No tokenizer: ids only, empty text.
      Generation g = s.generate(new int[] {1, 2}, new GenerateOptions().maxNewTokens(3).ignoreEos(true), tok -> {
        Check.equal(tok.text(), "", "no tokenizer: empty text");
        return true;
      });
      Check.equal(g.ids().length, 3, "ids without a tokenizer");
    }
    // 10,000 tokens in one generation, a token callback and a logits hook (a direct buffer) at
    // every step: the glue's per-token local references must not pile up (-Xcheck:jni warns
    // past 32).
    try (Model m = Model.load(path("tiny.octet"));
         Session s = m.newSession(new SessionOptions().maxSeq(4).maxNewTokens(10000))) {
      final int[] hooks = {0};
      Generation g = s.generate(new int[] {1, 2}, new GenerateOptions().maxNewTokens(10000).ignoreEos(true)
          .logitsHook((seq, l) -> ++hooks[0] > 0), tok -> true);
      Check.equal(g.ids().length, 10000, "a 10,000-token generation");
      Check.equal(hooks[0], 10000, "the hook ran at every step");
      Check.fails(UNSUPPORTED, "generate(String) without a tokenizer", () -> s.generate("hi", null, null));
    }
    try (Model m = Model.load(path("bert.octet")); Session s = m.newSession(new SessionOptions().maxSeq(8))) {
      Check.fails(UNSUPPORTED, "generate on an encoder", () -> s.generate(new int[] {1, 2}, null, null));
    }
  }

  static void encoderDecoder() throws Exception {
    try (Model m = Model.load(path("t5.octet"));
         Session s = m.newSession(new SessionOptions().maxSeq(6).maxNewTokens(4))) {
      int start = m.info().decoderStartTokenId();
      s.runEncoderDecoder(new int[][] {{3, 4, 5}}, new int[][] {{start, 7}});
      // Without ALL_LOGITS, the last decoder position's logits only (octet.h says [batch, dec_seq, vocab]).
      Check.equal(s.outputShape()[1], 1, "teacher-forced decoder logits, last row: [1, 1, vocab]");
      s.step(9);
      Check.equal(s.outputShape()[1], 1, "an encoder-decoder step");
      Generation g = s.generate(new int[] {3, 4, 5}, new GenerateOptions().maxNewTokens(4).temperature(0), null);
      Check.that(g.ids().length >= 1, "encoder-decoder generation");
      Check.throwsA(IllegalArgumentException.class, "sources and decoder inputs of different batches",
          () -> s.runEncoderDecoder(new int[][] {{1}, {2}}, new int[][] {{start}}));
      Check.fails(UNSUPPORTED, "run() on an encoder-decoder", () -> s.run(1, 2));
    }
    try (Model m = Model.load(path("t5.octet"));
         Session s = m.newSession(new SessionOptions().maxSeq(6).allLogits(true))) {
      s.runEncoderDecoder(new int[][] {{3, 4, 5}}, new int[][] {{m.info().decoderStartTokenId(), 7}});
      Check.equal(s.outputShape()[1], 2, "ALL_LOGITS: teacher-forced decoder logits [1, 2, vocab]");
    }
  }

  static void embeddings() throws Exception {
    try (Model m = Model.load(path("bert.octet"));
         Session s = m.newSession(new SessionOptions().maxBatch(2).maxSeq(8))) {
      int hidden = m.info().hiddenSize();
      float[] one = s.embed(new int[] {2, 5, 9}, Pooling.MEAN, false);
      Check.equal(one.length, hidden, "one embedding");
      float[][] two = s.embed(new int[][] {{2, 5, 9}, {4, 4}}, Pooling.MEAN, false);
      Check.equal(two[0], one, "a batch's first == alone");
      float[] normalized = s.embed(new int[] {2, 5, 9}, Pooling.CLS, true);
      double norm = 0;
      for (float v : normalized) norm += v * v;
      Check.that(Math.abs(norm - 1) < 1e-5, "normalize: unit length (" + norm + ")");
      FloatBuffer out = ByteBuffer.allocateDirect(4 * (2 * hidden + 3)).order(ByteOrder.nativeOrder()).asFloatBuffer();
      out.position(3);
      s.embed(new int[][] {{2, 5, 9}, {4, 4}}, Pooling.MEAN, false, out);
      Check.equal(out.position(), 3, "the buffer's position stays");
      float[] got = new float[hidden];
      out.position(3 + hidden);
      out.get(got);
      Check.equal(got, two[1], "embed into a direct FloatBuffer == embed into arrays");
      FloatBuffer small = ByteBuffer.allocateDirect(4 * hidden).order(ByteOrder.nativeOrder()).asFloatBuffer();
      Check.fails(BUFFER_TOO_SMALL, "a buffer too small", () -> s.embed(new int[][] {{1}, {2}}, Pooling.MEAN, false, small));
      Check.throwsA(IllegalArgumentException.class, "a heap FloatBuffer",
          () -> s.embed(new int[][] {{1}}, Pooling.MEAN, false, FloatBuffer.allocate(hidden)));
      Check.throwsA(IllegalArgumentException.class, "a big-endian FloatBuffer", () -> s.embed(new int[][] {{1}}, Pooling.MEAN, false,
          ByteBuffer.allocateDirect(4 * hidden).order(ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN
              ? ByteOrder.LITTLE_ENDIAN : ByteOrder.BIG_ENDIAN).asFloatBuffer()));
      Check.fails(UNSUPPORTED, "embed(String) without a tokenizer", () -> s.embed("hello", Pooling.MEAN, false));
      Check.fails(INVALID_ARGUMENT, "an id outside the vocabulary", () -> s.embed(new int[] {1000}, Pooling.MEAN, false));
      Check.throwsA(NullPointerException.class, "null pooling", () -> s.embed(new int[] {1}, null, false));
      // The hidden states themselves.
      s.run(2, 5, 9);
      Check.equal(s.outputShape(), new int[] {1, 3, hidden}, "an encoder's output: hidden states");
    }
    try (Model m = Model.load(path("tiny.octet")); Session s = m.newSession()) {
      Check.fails(UNSUPPORTED, "embed on a decoder", () -> s.embed(new int[] {1}, Pooling.MEAN, false));
    }
  }

  static void state() throws Exception {
    try (Model m = Model.load(path("austen-tiny.octet"));
         Session a = m.newSession(new SessionOptions().maxSeq(16).maxNewTokens(8));
         Session b = m.newSession(new SessionOptions().maxSeq(32).maxNewTokens(8))) {
      Check.fails(INVALID_STATE, "saveState before a run", a::saveState);
      a.run(0, 40, 41, 42, 43);
      long size = a.stateSize();
      byte[] state = a.saveState();
      Check.equal((long) state.length, size, "saveState's size");
      a.step(50);
      float[] want = a.output();
      b.loadState(state);
      b.step(50);
      Check.equal(b.output(), want, "restored state: bit-identical logits");
      // Through direct buffers (the state has grown by a step).
      long grown = a.stateSize();
      Check.that(grown > size, "a step grows the state");
      ByteBuffer direct = ByteBuffer.allocateDirect((int) grown + 10);
      direct.position(10);
      Check.equal(a.saveState(direct), (int) grown, "saveState(ByteBuffer)'s bytes");
      Check.equal(direct.position(), 10 + (int) grown, "the position advances");
      direct.position(10);
      b.loadState(direct);
      Check.equal(direct.position(), 10, "loadState leaves the position");
      b.step(51);
      a.step(51);
      Check.equal(b.output(), a.output(), "restored from a direct buffer");
      OctetException e = Check.fails(BUFFER_TOO_SMALL, "a buffer too small", () -> a.saveState(ByteBuffer.allocateDirect(16)));
      Check.that(e.getMessage().contains("bytes"), "the message says the size: " + e.getMessage());
      Check.fails(INVALID_ARGUMENT, "garbage state", () -> b.loadState(new byte[64]));
      Check.fails(INVALID_ARGUMENT, "an empty state", () -> b.loadState(new byte[0]));
      Check.throwsA(IllegalArgumentException.class, "a heap buffer", () -> a.saveState(ByteBuffer.allocate(16)));
      Check.throwsA(IllegalArgumentException.class, "a heap buffer to load", () -> b.loadState(ByteBuffer.allocate(16)));
      try (Model other = Model.load(path("tiny.octet")); Session c = other.newSession()) {
        Check.fails(INVALID_ARGUMENT, "a state from another model", () -> c.loadState(state));
      }
    }
  }

  static void tokenizer() throws Exception {
    try (Model m = Model.load(path("austen-tiny.octet")); Tokenizer t = m.newTokenizer()) {
      int[] ids = t.encode("Hello, world");
      Check.equal(ids[0], 0, "add_special_tokens: <s> first");
      Check.equal(t.encode("Hello, world", Tokenizer.ENCODE_NO_SPECIAL),
          Arrays.copyOfRange(ids, 1, ids.length), "ENCODE_NO_SPECIAL");
      Check.equal(t.decode(ids), "Hello, world", "decode skips <s>");
      Check.equal(t.decode(ids, Tokenizer.DECODE_KEEP_SPECIAL), "<s>Hello, world", "DECODE_KEEP_SPECIAL");
      Check.equal(t.decodeUtf8(ids, 0), "Hello, world".getBytes(StandardCharsets.UTF_8), "decodeUtf8");
      Check.equal(t.encodeUtf8("Hello, world".getBytes(StandardCharsets.UTF_8), 0), ids, "encodeUtf8");
      Check.equal(t.encode("<s>x", Tokenizer.ENCODE_NO_SPECIAL)[0], 0, "<s> in the text is the special token");
      Check.that(t.encode("<s>x", Tokenizer.ENCODE_NO_SPECIAL | Tokenizer.ENCODE_SPLIT_SPECIAL)[0] != 0,
          "ENCODE_SPLIT_SPECIAL: plain text");
      Check.equal(t.encode(""), new int[] {0}, "the empty text");
      Check.equal(t.decode(new int[0]), "", "decode of nothing");
      // A long text: more ids than the first guess of the glue's buffer.
      StringBuilder longText = new StringBuilder();
      for (int i = 0; i < 3000; ++i) longText.append("\u00e9\u4f60");
      int[] many = t.encode(longText.toString(), Tokenizer.ENCODE_NO_SPECIAL);
      Check.that(many.length > longText.length(), "a text with more ids than characters");
      Check.equal(t.decode(many), longText.toString(), "round trip of a long text");
      Check.equal(t.vocabSize(), 512, "vocabSize");
      Check.equal(t.token(0), "<s>", "token(0)");
      Check.equal(t.tokenBytes(1), "</s>".getBytes(StandardCharsets.UTF_8), "tokenBytes(1)");
      Check.fails(INVALID_ARGUMENT, "token(-1)", () -> t.token(-1));
      Check.fails(INVALID_ARGUMENT, "token(vocab)", () -> t.tokenBytes(512));
      List<SpecialToken> specials = t.specialTokens();
      Check.equal(specials.size(), 2, "two special tokens");
      Check.equal(specials.get(0).content(), "<s>", "SpecialToken.content");
      Check.equal(specials.get(1).id(), 1, "SpecialToken.id");
      Check.that(!specials.get(0).lstrip() && !specials.get(0).rstrip(), "SpecialToken.lstrip/rstrip");
      Check.equal(specials.get(1).toString(), "</s>=1", "SpecialToken.toString");
      Check.throwsA(UnsupportedOperationException.class, "specialTokens is unmodifiable", () -> specials.clear());
      Check.fails(INVALID_ARGUMENT, "invalid UTF-8", () -> t.encodeUtf8(new byte[] {'a', (byte) 0xff, 'b'}, 0));
      Check.fails(INVALID_ARGUMENT, "unknown encode flags", () -> t.encode("a", 8));
      Check.fails(INVALID_ARGUMENT, "unknown decode flags", () -> t.decode(new int[] {5}, 4));
      Check.fails(INVALID_ARGUMENT, "decode of an id outside the vocabulary", () -> t.decode(new int[] {5, 4000}));
      Check.throwsA(NullPointerException.class, "encode(null)", () -> t.encode(null));
      Check.throwsA(NullPointerException.class, "decode(null)", () -> t.decode(null));
      try (TextDecoder d = t.newDecoder(false)) {
        Check.equal(d.push(ids[1]) + d.push(ids[2]) + d.finish(), t.decode(new int[] {ids[1], ids[2]}), "Tokenizer.newDecoder");
      }
    }
    try (Model m = Model.load(path("tiny.octet"))) {
      Check.fails(UNSUPPORTED, "a tokenizer of a model without one", m::newTokenizer);
      Check.fails(UNSUPPORTED, "a text decoder of a model without a tokenizer", m::newTextDecoder);
    }
  }

  static void textDecoder() throws Exception {
    try (Model m = Model.load(path("austen-tiny.octet")); Tokenizer t = m.newTokenizer()) {
      String text = "Caf\u00e9 \u2603 \uD83D\uDE42!";
      int[] ids = t.encode(text);
      try (TextDecoder d = m.newTextDecoder()) {
        StringBuilder sb = new StringBuilder();
        int empty = 0;
        for (int id : ids) {
          String piece = d.push(id);
          if (piece.isEmpty()) ++empty;
          sb.append(piece);
        }
        sb.append(d.finish());
        Check.equal(sb.toString(), text, "pieces + finish == the text");
        Check.that(empty > 1, "some tokens only start a character (" + empty + ")");
        // A cut character: finish gives what decode gives for the same bytes.
        d.push(ids[ids.length - 2]);
        Check.equal(d.finish(), t.decode(new int[] {ids[ids.length - 2]}), "finish() of half an emoji == decode");
        Check.equal(d.finish(), "", "finish() empties the decoder");
        d.push(ids[ids.length - 3]);
        d.reset();
        Check.equal(d.finish(), "", "reset() forgets");
        Check.fails(INVALID_ARGUMENT, "push(-1)", () -> d.push(-1));
        Check.fails(INVALID_ARGUMENT, "push(vocab)", () -> d.push(512));
      }
      try (TextDecoder keep = m.newTextDecoder(true); TextDecoder skip = m.newTextDecoder(false)) {
        Check.equal(keep.push(0), "<s>", "keepSpecial: <s>");
        Check.equal(skip.push(0), "", "not keepSpecial: nothing");
      }
    }
  }

  @SuppressWarnings("try") // closes the model inside its try to test the template after it
  static void chat() throws Exception {
    List<ChatMessage> messages = Arrays.asList(ChatMessage.system("You are terse."), ChatMessage.user("Hello \uD83D\uDE42 \u4f60\u597d"),
        ChatMessage.assistant("Hi."), new ChatMessage("user", "Bye"));
    Check.equal(messages.get(1).role(), "user", "ChatMessage.role");
    Check.equal(messages.get(2).content(), "Hi.", "ChatMessage.content");
    Check.throwsA(NullPointerException.class, "a null role", () -> new ChatMessage(null, "x"));
    Check.throwsA(NullPointerException.class, "a null content", () -> new ChatMessage("user", null));
    try (Model m = Model.load(path("qwen.octet"))) {
      Check.that(m.info().hasChatTemplate(), "qwen has a chat template");
      ChatTemplate chat = m.chatTemplate();
      String rendered = chat.render(messages);
      // The CLI renders the same messages from a JSON file.
      File json = new File(dir, "messages.json");
      StringBuilder sb = new StringBuilder("[");
      for (ChatMessage msg : messages) {
        if (sb.length() > 1) sb.append(',');
        sb.append("{\"role\":\"").append(msg.role()).append("\",\"content\":\"").append(msg.content()).append("\"}");
      }
      Files.write(json.toPath(), sb.append(']').toString().getBytes(StandardCharsets.UTF_8));
      byte[] cliText = Check.run(cli, "chat-template", path("qwen.octet"), "--messages", json.getPath());
      Check.equal(rendered.getBytes(StandardCharsets.UTF_8), cliText, "render == octet chat-template");
      Check.that(rendered.endsWith("<|im_start|>assistant\n"), "the generation prompt");
      String noPrompt = chat.render(messages, false);
      Check.equal(noPrompt + "<|im_start|>assistant\n", rendered, "addGenerationPrompt false");
      Check.equal(chat.render(messages, true, 0L), rendered, "a fixed time (the template reads none)");
      // Qwen's template reads messages[0]: with none, the template's own error.
      OctetException none = Check.fails(INVALID_ARGUMENT, "a template error (no messages)",
          () -> chat.render(new ArrayList<ChatMessage>(), false));
      Check.that(none.getMessage().contains("chat template line"), "the template's message: " + none.getMessage());
      Check.fails(INVALID_ARGUMENT, "a NUL in a message", () -> chat.render(Arrays.asList(ChatMessage.user("a\0b"))));
      Check.throwsA(NullPointerException.class, "null messages", () -> chat.render(null));
      Check.throwsA(NullPointerException.class, "a null message", () -> chat.render(Arrays.asList((ChatMessage) null)));
      m.close();
      Check.throwsA(IllegalStateException.class, "render after the model's close", () -> chat.render(messages));
    }
    try (Model m = Model.load(path("austen-tiny.octet"))) {
      Check.fails(UNSUPPORTED, "a model without a chat template", () -> m.chatTemplate().render(messages));
    }
  }

  static void lifetimes() throws Exception {
    Model m = Model.load(path("austen-tiny.octet"));
    Session s = m.newSession(new SessionOptions().maxSeq(8).maxNewTokens(4));
    Tokenizer t = m.newTokenizer();
    TextDecoder d = m.newTextDecoder();
    // The model closed first: its children keep working, and it is freed after the last.
    m.close();
    Check.that(m.isClosed(), "isClosed()");
    m.close();
    Check.throwsA(IllegalStateException.class, "Model.info after close", m::info);
    Check.throwsA(IllegalStateException.class, "Model.newSession after close", () -> m.newSession());
    Check.throwsA(IllegalStateException.class, "Model.newTokenizer after close", m::newTokenizer);
    Check.throwsA(IllegalStateException.class, "Model.newTextDecoder after close", () -> m.newTextDecoder());
    Check.throwsA(IllegalStateException.class, "Model.chatTemplate after close", m::chatTemplate);
    Check.throwsA(IllegalStateException.class, "Model.isEos after close", () -> m.isEos(1));
    Check.throwsA(IllegalStateException.class, "Model.planMemory after close", () -> m.planMemory(new SessionOptions()));
    s.run(t.encode("It was"));
    Check.equal(d.push(t.encode("a", Tokenizer.ENCODE_NO_SPECIAL)[0]), "a", "a decoder outlives the model's close");
    Check.that(s.generate("It", new GenerateOptions().maxNewTokens(3), null).ids().length > 0, "a session outlives it");
    t.close();
    t.close();
    Check.throwsA(IllegalStateException.class, "Tokenizer.encode after close", () -> t.encode("x"));
    Check.throwsA(IllegalStateException.class, "Tokenizer.vocabSize after close", t::vocabSize);
    d.close();
    Check.throwsA(IllegalStateException.class, "TextDecoder.push after close", () -> d.push(1));
    Check.throwsA(IllegalStateException.class, "TextDecoder.reset after close", d::reset);
    s.close();
    s.close();
    Check.that(s.isClosed(), "Session.isClosed()");
    Check.throwsA(IllegalStateException.class, "Session.run after close", () -> s.run(1));
    Check.throwsA(IllegalStateException.class, "Session.output after close", s::output);
    Check.throwsA(IllegalStateException.class, "Session.cancel after close", s::cancel);
    Check.throwsA(IllegalStateException.class, "Session.generate after close", () -> s.generate(new int[] {1}, null, null));
    Check.throwsA(IllegalStateException.class, "Session.arenaBytes after close", s::arenaBytes);
    Check.throwsA(IllegalStateException.class, "Session.saveState after close", s::saveState);

    // Inside its own callback, a session refuses other calls and close(); cancel() works.
    try (Model m2 = Model.load(path("austen-tiny.octet"));
         Session s2 = m2.newSession(new SessionOptions().maxSeq(8).maxNewTokens(8))) {
      AtomicReference<Throwable> inner = new AtomicReference<>();
      Check.fails(CANCELLED, "cancel() from the callback", () -> s2.generate("It", new GenerateOptions().maxNewTokens(8).ignoreEos(true), tok -> {
        try {
          s2.run(1);
        } catch (Throwable e) {
          inner.set(e);
        }
        Check.throwsA(IllegalStateException.class, "close() from the callback", s2::close);
        s2.cancel();
        return true;
      }));
      Check.that(inner.get() instanceof IllegalStateException
          && inner.get().getMessage().contains("this thread"), "a call from the callback: " + inner.get());
      Check.that(!s2.isClosed(), "the refused close left it open");
      s2.run(1, 2);
    }
  }

  @SuppressWarnings("try") // closes the session from another thread inside its try
  static void threads() throws Exception {
    try (Model m = Model.load(path("austen-tiny.octet"));
         Session s = m.newSession(new SessionOptions().maxSeq(8).maxNewTokens(400))) {
      // Another thread's call while a generation runs: refused, not raced.
      CountDownLatch started = new CountDownLatch(1);
      CountDownLatch checked = new CountDownLatch(1);
      AtomicReference<Throwable> other = new AtomicReference<>();
      Thread t = new Thread(() -> {
        try {
          started.await();
          s.run(1);
        } catch (Throwable e) {
          other.set(e);
        } finally {
          checked.countDown();
        }
      });
      t.start();
      s.generate("It", new GenerateOptions().maxNewTokens(6).ignoreEos(true), tok -> {
        if (tok.index() == 0) {
          started.countDown();
          try {
            checked.await();
          } catch (InterruptedException e) {
            throw new RuntimeException(e);
          }
        }
        return true;
      });
      t.join();
      Check.that(other.get() instanceof IllegalStateException && other.get().getMessage().contains("another thread"),
          "a second thread's call is refused: " + other.get());

      // close() from another thread cancels the generation and waits for it.
      CountDownLatch running = new CountDownLatch(1);
      Thread closer = new Thread(() -> {
        try {
          running.await();
          s.close();
        } catch (InterruptedException e) {
          throw new RuntimeException(e);
        }
      });
      closer.start();
      Check.fails(CANCELLED, "close() from another thread cancels", () -> s.generate("It",
          new GenerateOptions().maxNewTokens(400).ignoreEos(true), tok -> {
            running.countDown();
            return true;
          }));
      closer.join();
      Check.that(s.isClosed(), "and closes it");
    }
  }

  static void exceptionType() {
    OctetException e = new OctetException(OctetException.Code.IO_ERROR, "gone");
    Check.equal(e.code(), IO_ERROR, "code()");
    Check.equal(e.getMessage(), "gone", "getMessage()");
    Check.equal(e.toString(), "OctetException(IO_ERROR): gone", "toString()");
    Check.that(!RuntimeException.class.isAssignableFrom(OctetException.class), "a checked exception");
    for (OctetException.Code c : OctetException.Code.values()) {
      Check.equal(OctetException.Code.of(c.value()), c, "Code.of(value()) for " + c);
    }
    Check.equal(OctetException.Code.of(99), OctetException.Code.INTERNAL, "an unknown code");
    Check.equal(OctetException.Code.CANCELLED.value(), 10, "OCTET_CANCELLED");
    Check.equal(Pooling.valueOf("CLS").ordinal(), 1, "Pooling's order is octet_pooling's");
    Check.equal(Structure.values().length, 3, "three structures");
  }
}
