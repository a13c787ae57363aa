package dev.octet;

/** How {@link Session#embed} pools the hidden states of a sequence (octet.h's octet_pooling). */
public enum Pooling {
  /** The mean of the real tokens' hidden states. */
  MEAN,
  /** The first token's hidden state. */
  CLS
}
