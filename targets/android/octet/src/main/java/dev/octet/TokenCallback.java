package dev.octet;

/**
 * Receives each token of a generation as it is sampled, on the generating thread. Return true to
 * go on, false to end the whole generation (it then returns normally). An exception thrown here
 * ends the generation too and comes out of {@link Session#generate} unchanged. Do not use the
 * session from here except for {@link Session#cancel()}.
 */
public interface TokenCallback {
  boolean onToken(Token token);
}
