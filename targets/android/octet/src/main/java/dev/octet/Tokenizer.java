package dev.octet;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The model's tokenizer, compiled into the model file (octet_tokenizer): Hugging Face
 * tokenizers' encode and decode, id for id and byte for byte. One thread at a time.
 */
public final class Tokenizer extends NativeObject {
  /** encode: add_special_tokens=False (no template: BOS, CLS, ...). */
  public static final int ENCODE_NO_SPECIAL = 1;
  /** encode: special tokens' strings in the text are plain text. */
  public static final int ENCODE_SPLIT_SPECIAL = 2;
  /** decode: skip_special_tokens=False. */
  public static final int DECODE_KEEP_SPECIAL = 1;

  private final Model model;

  Tokenizer(Model model, long handle) {
    super("Tokenizer", true);
    this.model = model;
    setHandle(handle);
  }

  @Override
  void free(long handle) {
    Native.tokenizerFree(handle);
    model.releaseChild();
  }

  /** encode(text) with special tokens added, as Hugging Face does by default. */
  public int[] encode(String text) throws OctetException {
    return encode(text, 0);
  }

  /** encode(text) with {@link #ENCODE_NO_SPECIAL} and/or {@link #ENCODE_SPLIT_SPECIAL}. */
  public int[] encode(String text, int flags) throws OctetException {
    if (text == null) throw new NullPointerException("text");
    return encodeUtf8(text.getBytes(StandardCharsets.UTF_8), flags);
  }

  /** encode() of UTF-8 bytes (an invalid byte is INVALID_ARGUMENT, its offset in the message). */
  public int[] encodeUtf8(byte[] utf8, int flags) throws OctetException {
    if (utf8 == null) throw new NullPointerException("utf8");
    long h = acquire();
    try {
      return Native.tokenizerEncode(h, utf8, flags);
    } finally {
      release();
    }
  }

  /** decode(ids) with special tokens skipped, as Hugging Face does by default. */
  public String decode(int[] ids) throws OctetException {
    return decode(ids, 0);
  }

  /** decode(ids); flags: {@link #DECODE_KEEP_SPECIAL} or 0. */
  public String decode(int[] ids, int flags) throws OctetException {
    return new String(decodeUtf8(ids, flags), StandardCharsets.UTF_8);
  }

  /** decode(ids) as UTF-8 bytes. */
  public byte[] decodeUtf8(int[] ids, int flags) throws OctetException {
    if (ids == null) throw new NullPointerException("ids");
    long h = acquire();
    try {
      byte[] b = Native.tokenizerDecode(h, ids, flags);
      return b == null ? new byte[0] : b;
    } finally {
      release();
    }
  }

  /** The vocabulary's size. */
  public int vocabSize() {
    long h = acquire();
    try {
      return Native.tokenizerVocabSize(h);
    } finally {
      release();
    }
  }

  /** The token's string as the vocabulary spells it ("Ġthe", "<0xF0>", "##ing"). */
  public String token(int id) throws OctetException {
    return new String(tokenBytes(id), StandardCharsets.UTF_8);
  }

  /** The token's spelling as bytes. */
  public byte[] tokenBytes(int id) throws OctetException {
    long h = acquire();
    try {
      byte[] b = Native.tokenizerToken(h, id);
      return b == null ? new byte[0] : b;
    } finally {
      release();
    }
  }

  /** The special added tokens ({@code <s>}, {@code <|im_start|>}, ...). */
  public List<SpecialToken> specialTokens() throws OctetException {
    long h = acquire();
    try {
      int n = Native.tokenizerSpecialCount(h);
      List<SpecialToken> out = new ArrayList<SpecialToken>(n);
      int[] v = new int[3];
      for (int i = 0; i < n; ++i) {
        byte[] content = Native.tokenizerSpecial(h, i, v);
        out.add(new SpecialToken(
            content == null ? "" : new String(content, StandardCharsets.UTF_8), v[0], v[1] != 0, v[2] != 0));
      }
      return Collections.unmodifiableList(out);
    } finally {
      release();
    }
  }

  /** A streaming decoder for the same model ({@link Model#newTextDecoder(boolean)}). */
  public TextDecoder newDecoder(boolean keepSpecial) throws OctetException {
    acquire();
    try {
      return model.newTextDecoder(keepSpecial);
    } finally {
      release();
    }
  }
}
