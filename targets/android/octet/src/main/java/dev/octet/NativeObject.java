package dev.octet;

/**
 * A native handle with the lifetime rules every closeable class of the API shares.
 *
 * <ul>
 *   <li>{@link #close()} is idempotent; any other use after it throws IllegalStateException.
 *   <li>close() waits for the calls running on the object to return (a {@link Session}'s
 *       generation is cancelled first), so closing from another thread never frees memory that a
 *       call still uses.
 *   <li>An exclusive object (a session, a tokenizer, a text decoder: octet.h lets one thread use
 *       it at a time) refuses a second call while one runs, with IllegalStateException, instead
 *       of racing in native code.
 *   <li>A parent (the model) stays allocated while children made from it are open: closing the
 *       model first only defers its release to the last child's close.
 * </ul>
 */
abstract class NativeObject implements AutoCloseable {
  private final String what;
  private final boolean exclusive;
  private long handle;
  private int busy; // calls running now
  private Thread user; // the thread of the running call (exclusive objects)
  private int children; // open objects made from this one
  private boolean closed;
  private boolean freed;

  NativeObject(String what, boolean exclusive) {
    this.what = what;
    this.exclusive = exclusive;
  }

  /** Called once by the subclass's constructor with the new handle (non-zero). */
  final void setHandle(long handle) {
    this.handle = handle;
  }

  /** Frees the native object; called once, with no call running and no child open. */
  abstract void free(long handle);

  /** Called by close() before it waits for the running calls (a session cancels its generation). */
  void interrupt(long handle) {}

  /** Starts a native call: the handle, valid until the matching {@link #release()}. */
  final synchronized long acquire() {
    if (closed) throw new IllegalStateException(what + " is closed");
    if (exclusive && busy > 0) {
      throw new IllegalStateException(
          what
              + (user == Thread.currentThread()
                  ? " is running a call on this thread (a call from its own callback?)"
                  : " is in use by another thread (one thread at a time)"));
    }
    ++busy;
    user = Thread.currentThread();
    return handle;
  }

  /**
   * {@link #acquire()} for a child's call (a session making its tokenizer): allowed after this
   * object's close(), since an open child keeps it allocated.
   */
  final synchronized long acquireForChild() {
    if (freed) throw new IllegalStateException(what + " is freed");
    ++busy;
    return handle;
  }

  /** Ends a native call started by {@link #acquire()}. */
  final synchronized void release() {
    if (--busy == 0) {
      user = null;
      notifyAll();
    }
  }

  /** For calls that any thread may make at any time (cancel): the handle, or 0 once freed. */
  final synchronized long handleForAnyThread() {
    if (closed) throw new IllegalStateException(what + " is closed");
    return handle;
  }

  /** A child is made from this object: this one stays allocated until the child's release. */
  final synchronized void retain() {
    if (freed) throw new IllegalStateException(what + " is freed");
    ++children;
  }

  /** A child made from this object was closed. */
  final void releaseChild() {
    long h = 0;
    synchronized (this) {
      if (--children == 0 && closed && !freed) {
        freed = true;
        h = handle;
        handle = 0;
      }
    }
    if (h != 0) free(h);
  }

  /** True once close() was called. */
  public final synchronized boolean isClosed() {
    return closed;
  }

  /**
   * Frees the native object (deferred while children are open). Harmless when called again. From
   * another thread it waits for the running call to return; from inside this object's own
   * callback it throws IllegalStateException (it would wait for itself).
   */
  @Override
  public final void close() {
    long h = 0;
    synchronized (this) {
      if (closed) return;
      if (busy > 0 && exclusive && user == Thread.currentThread()) {
        throw new IllegalStateException(what + " cannot be closed from its own callback");
      }
      closed = true;
      if (busy > 0) interrupt(handle);
      boolean interrupted = false;
      while (busy > 0) {
        try {
          wait();
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      if (interrupted) Thread.currentThread().interrupt();
      if (children == 0 && !freed) {
        freed = true;
        h = handle;
        handle = 0;
      }
    }
    if (h != 0) free(h);
  }
}
