package dev.octet;

/** What a program needs to know about a model (octet.h's octet_model_info). Immutable. */
public final class ModelInfo {
  // The order of the long[] the JNI glue fills.
  static final int STRUCTURE = 0;
  static final int VOCAB_SIZE = 1;
  static final int HIDDEN_SIZE = 2;
  static final int NUM_LAYERS = 3;
  static final int NUM_DECODER_LAYERS = 4;
  static final int NUM_HEADS = 5;
  static final int NUM_KV_HEADS = 6;
  static final int HEAD_DIM = 7;
  static final int MAX_POSITIONS = 8;
  static final int BOS = 9;
  static final int EOS = 10;
  static final int PAD = 11;
  static final int DECODER_START = 12;
  static final int HAS_TOKENIZER = 13;
  static final int HAS_CHAT_TEMPLATE = 14;
  static final int INT8 = 15;
  static final int MAPPED = 16;
  static final int FILE_BYTES = 17;
  static final int WEIGHTS_BYTES = 18;
  static final int COUNT = 19;

  private final String family;
  private final long[] v;

  ModelInfo(String family, long[] values) {
    this.family = family;
    this.v = values.clone();
  }

  /** "bert", "gpt2", "llama", "qwen2", "mistral", "marian" or "t5". */
  public String family() {
    return family;
  }

  public Structure structure() {
    return Structure.of(v[STRUCTURE]);
  }

  public int vocabSize() {
    return (int) v[VOCAB_SIZE];
  }

  public int hiddenSize() {
    return (int) v[HIDDEN_SIZE];
  }

  /** Encoder layers, or the layers of a decoder-only model. */
  public int numLayers() {
    return (int) v[NUM_LAYERS];
  }

  /** Decoder layers of an encoder-decoder model; else 0. */
  public int numDecoderLayers() {
    return (int) v[NUM_DECODER_LAYERS];
  }

  public int numHeads() {
    return (int) v[NUM_HEADS];
  }

  public int numKvHeads() {
    return (int) v[NUM_KV_HEADS];
  }

  public int headDim() {
    return (int) v[HEAD_DIM];
  }

  /** The longest sequence the positions support; 0 = no bound. */
  public int maxPositions() {
    return (int) v[MAX_POSITIONS];
  }

  /** -1 when the model has none. */
  public int bosTokenId() {
    return (int) v[BOS];
  }

  /** The architecture's eos id; {@link Model#isEos} knows the whole set. */
  public int eosTokenId() {
    return (int) v[EOS];
  }

  public int padTokenId() {
    return (int) v[PAD];
  }

  public int decoderStartTokenId() {
    return (int) v[DECODER_START];
  }

  public boolean hasTokenizer() {
    return v[HAS_TOKENIZER] != 0;
  }

  public boolean hasChatTemplate() {
    return v[HAS_CHAT_TEMPLATE] != 0;
  }

  /** True for int8 weights; false for an fp32 file. */
  public boolean isInt8() {
    return v[INT8] != 0;
  }

  /** True when the weights are used in place from a file mapping. */
  public boolean isMapped() {
    return v[MAPPED] != 0;
  }

  public long fileBytes() {
    return v[FILE_BYTES];
  }

  public long weightsBytes() {
    return v[WEIGHTS_BYTES];
  }

  @Override
  public String toString() {
    return family + " " + structure() + ", vocab " + vocabSize() + ", hidden " + hiddenSize()
        + ", layers " + numLayers() + (numDecoderLayers() > 0 ? "+" + numDecoderLayers() : "")
        + ", heads " + numHeads() + "/" + numKvHeads() + "x" + headDim()
        + (isInt8() ? ", int8" : ", fp32") + ", " + fileBytes() + " bytes"
        + (isMapped() ? " mapped" : "");
  }
}
