package dev.octet;

/** How a model is built (octet.h's octet_structure). */
public enum Structure {
  /** bert: hidden states, embeddings. */
  ENCODER_ONLY,
  /** gpt2, llama, qwen2, mistral: logits, generation. */
  DECODER_ONLY,
  /** marian, t5: source in, generated target out. */
  ENCODER_DECODER;

  static Structure of(long value) {
    Structure[] all = values();
    return value >= 0 && value < all.length ? all[(int) value] : DECODER_ONLY;
  }
}
