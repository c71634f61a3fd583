package org.sss.server;

import java.util.Objects;

/**
 * The steps of releasing a node's resources, each run even when one before it throws.
 *
 * <p>Why: a node releases its resources in order (network, engine, store, lock). A step that
 * threw used to skip the ones after it, leaving the store open and its lock held in this JVM,
 * where an embedded cluster's other nodes go on: the node could not start again until the JVM
 * ended, and a close that another thread waits for never finished. Here every step runs; the
 * first failure is thrown (or added to the failure being handled) with the others suppressed in it.
 */
final class CleanupSteps {
  /** A step that may throw anything. */
  @FunctionalInterface
  interface Step {
    void run() throws Exception;
  }

  /** The failure the steps' own are added to; null until one happens when nothing failed before. */
  private Throwable failure;
  private final boolean owned;

  private CleanupSteps(Throwable failure) {
    this.failure = failure;
    this.owned = failure == null;
  }

  /** Steps of a release that nothing failed before: {@link #done} throws their first failure. */
  static CleanupSteps release() {
    return new CleanupSteps(null);
  }

  /** Steps after {@code failure}: theirs are suppressed in it, for its thrower to throw. */
  static CleanupSteps after(Throwable failure) {
    return new CleanupSteps(Objects.requireNonNull(failure));
  }

  /** Runs {@code step}; what it throws is kept, and the next steps still run. */
  CleanupSteps run(Step step) {
    try {
      step.run();
    } catch (Throwable t) {
      if (t instanceof InterruptedException) {
        Thread.currentThread().interrupt(); // the steps after it still run; the caller sees the flag
      }
      if (failure == null) {
        failure = t;
      } else if (failure != t) {
        failure.addSuppressed(t);
      }
    }
    return this;
  }

  /** Whether a step failed (or the failure the steps came after exists). */
  boolean failed() {
    return failure != null;
  }

  /**
   * Ends a {@link #release()}: throws the first step's failure, if there was one (an exception
   * that is not unchecked wrapped in an {@code IllegalStateException}). Does nothing after
   * {@link #after}: that failure is its caller's to throw.
   */
  void done() {
    if (!owned || failure == null) {
      return;
    }
    if (failure instanceof RuntimeException e) {
      throw e;
    }
    if (failure instanceof Error e) {
      throw e;
    }
    throw new IllegalStateException(failure.getMessage(), failure);
  }
}
