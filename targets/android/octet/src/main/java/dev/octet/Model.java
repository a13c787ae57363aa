package dev.octet;

import java.io.File;
import java.io.FileDescriptor;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * A verified model file, immutable and shareable by any number of threads (octet_model). Make
 * sessions, tokenizers and text decoders from it; it stays allocated until they are closed too.
 *
 * <pre>{@code
 * try (Model model = Model.load("austen.octet");
 *      Session session = model.newSession(new SessionOptions().maxSeq(64).maxNewTokens(32))) {
 *   session.generate("It was", new GenerateOptions().maxNewTokens(32),
 *       token -> { System.out.print(token.text()); return true; });
 * }
 * }</pre>
 */
public final class Model extends NativeObject {
  private final ByteBuffer buffer; // a buffer-backed model keeps its bytes reachable

  private Model(long handle, ByteBuffer buffer) {
    super("Model", false);
    setHandle(handle);
    this.buffer = buffer;
  }

  /** Maps and verifies a model file. */
  public static Model load(String path) throws OctetException {
    if (path == null) throw new NullPointerException("path");
    return new Model(Native.modelLoad(path.getBytes(StandardCharsets.UTF_8)), null);
  }

  /** Maps and verifies a model file. */
  public static Model load(File file) throws OctetException {
    if (file == null) throw new NullPointerException("file");
    return load(file.getPath());
  }

  /**
   * A model in a direct buffer, used in place: its bytes from position to limit, whose first
   * byte must be 64-byte aligned ({@link #allocateAligned} makes such buffers). The buffer must
   * not change while the model is open; the model keeps a reference to it.
   */
  public static Model fromBuffer(ByteBuffer data) throws OctetException {
    if (data == null) throw new NullPointerException("data");
    if (!data.isDirect()) {
      throw new IllegalArgumentException("Model.fromBuffer needs a direct ByteBuffer (allocateAligned)");
    }
    return new Model(Native.modelLoadBuffer(data, data.position(), data.remaining()), data);
  }

  /**
   * A model stored at [offset, offset + length) of an open file (length 0: to the end): on
   * Android an uncompressed asset, from AssetFileDescriptor's getFileDescriptor(),
   * getStartOffset() and getLength(). The range is mapped when the model starts 64-byte aligned
   * in it, else read. The descriptor may be closed once this returns.
   */
  public static Model fromFileDescriptor(FileDescriptor fd, long offset, long length)
      throws OctetException {
    if (fd == null) throw new NullPointerException("fd");
    return fromFd(Native.descriptorOf(fd), offset, length);
  }

  /** {@link #fromFileDescriptor} for a descriptor number (Android's ParcelFileDescriptor.getFd()). */
  public static Model fromFd(int fd, long offset, long length) throws OctetException {
    return new Model(Native.modelLoadFd(fd, offset, length), null);
  }

  /**
   * A direct buffer of {@code size} bytes whose position 0 is 64-byte aligned, for
   * {@link #fromBuffer} and for a session's caller-owned memory.
   */
  public static ByteBuffer allocateAligned(int size) {
    if (size < 0) throw new IllegalArgumentException("size " + size);
    ByteBuffer raw = ByteBuffer.allocateDirect(size + 64);
    int skip = (int) ((64 - (Native.addressOf(raw) & 63)) & 63);
    raw.position(skip);
    raw.limit(skip + size);
    return raw.slice();
  }

  @Override
  void free(long handle) {
    Native.modelFree(handle);
  }

  /** The model's facts. */
  public ModelInfo info() throws OctetException {
    long h = acquire();
    try {
      long[] v = new long[ModelInfo.COUNT];
      byte[] family = Native.modelInfo(h, v);
      return new ModelInfo(new String(family, StandardCharsets.UTF_8), v);
    } finally {
      release();
    }
  }

  /** True when id ends generation (the tokenizer's end-of-sequence ids, else the architecture's). */
  public boolean isEos(int id) {
    long h = acquire();
    try {
      return Native.modelIsEos(h, id);
    } finally {
      release();
    }
  }

  /** The bytes a session for these options needs, before anything is allocated. */
  public MemoryPlan planMemory(SessionOptions options) throws OctetException {
    if (options == null) throw new NullPointerException("options");
    long h = acquire();
    try {
      long[] v = new long[4];
      Native.planMemory(h, options.toArray(), v);
      return new MemoryPlan(v);
    } finally {
      release();
    }
  }

  /** A session with the default options (batch 1, 128 tokens, no decoder steps). */
  public Session newSession() throws OctetException {
    return newSession(new SessionOptions());
  }

  /** A session that allocates its own arenas. */
  public Session newSession(SessionOptions options) throws OctetException {
    return newSession(options, null);
  }

  /**
   * A session whose arenas live in {@code memory} (direct, 64-byte aligned at its position, at
   * least {@link MemoryPlan#memoryBytes()} remaining), or allocated by octet when it is null.
   * The session keeps a reference to the buffer.
   */
  public Session newSession(SessionOptions options, ByteBuffer memory) throws OctetException {
    if (options == null) throw new NullPointerException("options");
    if (memory != null && !memory.isDirect()) {
      throw new IllegalArgumentException("a session's memory must be a direct ByteBuffer (allocateAligned)");
    }
    long h = acquire();
    try {
      retain();
      try {
        long s =
            memory == null
                ? Native.sessionCreate(h, options.toArray(), null, 0, 0)
                : Native.sessionCreate(h, options.toArray(), memory, memory.position(), memory.remaining());
        return new Session(this, h, s, memory);
      } catch (OctetException | RuntimeException | Error e) {
        releaseChild();
        throw e;
      }
    } finally {
      release();
    }
  }

  /** The model's tokenizer (UNSUPPORTED when the file has none), for one thread at a time. */
  public Tokenizer newTokenizer() throws OctetException {
    return newTokenizer(acquire());
  }

  // For a session's own tokenizer: works after the model's close() while the session is open.
  Tokenizer newTokenizerForChild() throws OctetException {
    return newTokenizer(acquireForChild());
  }

  private Tokenizer newTokenizer(long h) throws OctetException {
    try {
      retain();
      try {
        return new Tokenizer(this, Native.tokenizerCreate(h));
      } catch (OctetException | RuntimeException | Error e) {
        releaseChild();
        throw e;
      }
    } finally {
      release();
    }
  }

  /** A streaming decoder that leaves special tokens out of the text. */
  public TextDecoder newTextDecoder() throws OctetException {
    return newTextDecoder(false);
  }

  /** A streaming decoder; keepSpecial: the text includes special tokens' strings. */
  public TextDecoder newTextDecoder(boolean keepSpecial) throws OctetException {
    long h = acquire();
    try {
      retain();
      try {
        return new TextDecoder(this, Native.streamCreate(h, keepSpecial ? Tokenizer.DECODE_KEEP_SPECIAL : 0));
      } catch (OctetException | RuntimeException | Error e) {
        releaseChild();
        throw e;
      }
    } finally {
      release();
    }
  }

  /** The model's chat template (rendering throws UNSUPPORTED when the model has none). */
  public ChatTemplate chatTemplate() {
    acquire();
    release();
    return new ChatTemplate(this);
  }

  // For the children: the model's handle for one call.
  long handleForCall() {
    return acquire();
  }

  void endCall() {
    release();
  }

  ByteBuffer buffer() {
    return buffer;
  }
}
