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

  void increment() {
    if (++pending == BATCH) {
      target.add(BATCH);
      pending = 0;
    }
  }

  void flush() {
    target.add(pending);
    pending = 0;
  }
}
