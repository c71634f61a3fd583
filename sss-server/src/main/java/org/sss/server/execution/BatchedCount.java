package org.sss.server.execution;

import java.util.concurrent.atomic.LongAdder;

/**
 * A task's share of a stage-wide count, added to the shared adder every 1024 increments:
 * counting every emitted pair on a shared adder costs more than combining it. Not thread-safe
 * (one per task); {@link #flush} at the end of the task.
 */
final class BatchedCount {
  private static final int BATCH = 1024;
  private final LongAdder target;
  private int pending;

  BatchedCount(LongAdder target) {
    this.target = target;
  }

  /** Counts one; true when this completed a batch (every {@value #BATCH}th call), for checks that need not run per pair. */
  boolean increment() {
    if (++pending == BATCH) {
      target.add(BATCH);
      pending = 0;
      return true;
    }
    return false;
  }

  void flush() {
    target.add(pending);
    pending = 0;
  }
}
