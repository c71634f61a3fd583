package org.sss.server.transport;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs tasks one at a time, in the order given, on a shared pool, and gives the pool's thread
 * back after each task: the next task of the lane queues behind whatever else the pool has to
 * do. A lane that drained its whole queue on one thread (as Guava's sequential executor does)
 * could hold every worker of a small pool while a client streams writes, and starve the node's
 * reads, progress polls and commits.
 */
final class OrderedLane implements Executor {
  private final Executor pool;
  private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean scheduled = new AtomicBoolean();

  OrderedLane(Executor pool) {
    this.pool = pool;
  }

  @Override
  public void execute(Runnable task) {
    tasks.add(task);
    schedule();
  }

  private void schedule() {
    if (!tasks.isEmpty() && scheduled.compareAndSet(false, true)) {
      try {
        pool.execute(this::runOne);
      } catch (RuntimeException e) {
        scheduled.set(false);
        tasks.clear(); // the pool is gone: nothing of this lane will run
        throw e;
      }
    }
  }

  private void runOne() {
    Runnable task = tasks.poll();
    try {
      if (task != null) {
        task.run();
      }
    } finally {
      scheduled.set(false);
      try {
        schedule();
      } catch (RuntimeException shuttingDown) {
        // the pool refuses work: the node is stopping
      }
    }
  }
}
