package dev.octet.tests;

import dev.octet.GenerateOptions;
import dev.octet.Model;
import dev.octet.OctetException;
import dev.octet.Session;
import dev.octet.SessionOptions;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Session.cancel() from another Java thread stops a running generation within one step: after
 * cancel() returns, at most one more token arrives (the one being sampled when it was called),
 * and generate throws CANCELLED. A generation started after a cancel is not affected.
 * Usage: CancelTest MODEL.octet
 */
public final class CancelTest {
  public static void main(String[] args) throws Exception {
    long t0 = System.nanoTime();
    try (Model model = Model.load(args[0]);
         Session s = model.newSession(new SessionOptions().maxSeq(8).maxNewTokens(480))) {
      int worst = 0;
      for (int round = 0; round < 50; ++round) {
        final int at = 5 + round * 7 % 200; // cancel after this many tokens
        AtomicInteger count = new AtomicInteger();
        AtomicInteger seenAtCancel = new AtomicInteger(-1);
        CountDownLatch reached = new CountDownLatch(1);
        Thread canceller = new Thread(() -> {
          try {
            reached.await();
          } catch (InterruptedException e) {
            return;
          }
          s.cancel();
          seenAtCancel.set(count.get());
        });
        canceller.start();
        OctetException.Code code = null;
        try {
          s.generate("It was", new GenerateOptions().maxNewTokens(480).ignoreEos(true), tok -> {
            if (count.incrementAndGet() == at) reached.countDown();
            return true;
          });
        } catch (OctetException e) {
          code = e.code();
        }
        canceller.join();
        Check.equal(code, OctetException.Code.CANCELLED, "round " + round + ": generate throws CANCELLED");
        int after = count.get() - seenAtCancel.get();
        Check.that(after <= 1, "round " + round + ": " + after + " tokens after cancel() returned (at most 1)");
        Check.that(count.get() < 480, "round " + round + ": stopped early (" + count.get() + " tokens)");
        worst = Math.max(worst, after);
      }
      // A cancel before a generation starts does not stop it.
      s.cancel();
      int n = s.generate("It was", new GenerateOptions().maxNewTokens(20).ignoreEos(true), null).ids().length;
      Check.equal(n, 20, "a generation after cancel() runs to the end");
      System.out.printf("CancelTest: 50 cancels from another thread, at most %d token(s) after cancel() returned%n", worst);
    }
    System.out.printf("CancelTest: %d checks passed in %.1f s%n", Check.passed, (System.nanoTime() - t0) * 1e-9);
  }
}
