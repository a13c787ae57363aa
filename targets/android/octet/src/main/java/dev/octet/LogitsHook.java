package dev.octet;

import java.nio.FloatBuffer;

/**
 * Called before each sampling with the next-token logits of one sequence, which it may change in
 * place (a mask: -Infinity; a bias: add), so a grammar or a JSON-schema engine can steer the
 * text. At least one logit must stay finite. The buffer is a direct view of native memory, valid
 * only during the call. Return true to go on; false stops the generation (or the sample) with
 * {@link OctetException.Code#CANCELLED}. An exception thrown here stops it too and comes out of
 * the call unchanged.
 */
public interface LogitsHook {
  boolean onLogits(int sequence, FloatBuffer logits);
}
