package dev.octet;

import java.nio.ByteBuffer;

/**
 * What the JNI glue calls back during a generation or a sample, on the calling thread. Method
 * IDs are cached when the library loads; an exception thrown here stops the native call and
 * reaches the caller unchanged.
 */
abstract class Callbacks {
  /** One token (id -1: held-back text at the end); text is UTF-8, null when empty. */
  abstract boolean onToken(int sequence, int id, int index, boolean isEos, byte[] text);

  /** The next-token logits of one sequence: a direct buffer over native memory. */
  abstract boolean onLogits(int sequence, ByteBuffer logits);
}
