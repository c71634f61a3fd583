package org.sss.server.transport;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * A node's worker pool, as its connections hand it requests, with a measure of whether it moves:
 * how long requests have waited while no worker began one ({@link #stalledMillis}).
 *
 * <h2>Why</h2>
 * The members probe a node with a {@code GetView}, answered on the connection's event loop so
 * that a node whose workers are busy (a commit syncing a large output) is not taken for a dead
 * one. But a node whose workers hang (a disk that stopped answering, a deadlock) would then look
 * alive for ever while serving nothing. Busy workers begin waiting requests now and then; hung
 * ones do not. The answer carries this measure, and the probe counts a node stalled for long as
 * silent.
 */
public final class WorkerProgress implements Executor {
  private final Executor workers;
  private final LongSupplier nanoClock;
  private final AtomicInteger waiting = new AtomicInteger();
  private final AtomicBoolean samplePending = new AtomicBoolean();
  private volatile long lastBeganNanos;
  private volatile long waitingSinceNanos;

  public WorkerProgress(Executor workers) {
    this(workers, System::nanoTime);
  }

  WorkerProgress(Executor workers, LongSupplier nanoClock) {
    this.workers = workers;
    this.nanoClock = nanoClock;
    this.lastBeganNanos = nanoClock.getAsLong();
  }

  @Override
  public void execute(Runnable request) {
    // the time first, then the count: a reader that sees the count sees a start no older than
    // this wait (the other order let a probe read an hour-old start between the two)
    if (waiting.get() == 0) {
      waitingSinceNanos = nanoClock.getAsLong();
    }
    waiting.incrementAndGet();
    try {
      workers.execute(() -> {
        lastBeganNanos = nanoClock.getAsLong();
        waiting.decrementAndGet();
        request.run();
      });
    } catch (RejectedExecutionException e) {
      waiting.decrementAndGet();
      throw e;
    }
  }

  /**
   * Hands the workers an empty request unless one is waiting already: so that workers that hang
   * with nothing else waiting (their clients only wait) still show as stalled. Called at every
   * probe, as the probe itself waited for the workers before it was answered on the event loop.
   */
  public void sample() {
    if (samplePending.compareAndSet(false, true)) {
      try {
        execute(() -> samplePending.set(false));
      } catch (RejectedExecutionException shuttingDown) {
        samplePending.set(false);
      }
    }
  }

  /**
   * Milliseconds since a worker last began a request, or since requests began to wait if that is
   * later; 0 while no request waits (workers busy with long requests and nothing behind them
   * are not stalled).
   */
  public long stalledMillis() {
    if (waiting.get() == 0) {
      return 0;
    }
    long since = Math.max(lastBeganNanos, waitingSinceNanos);
    return Math.max(0, TimeUnit.NANOSECONDS.toMillis(nanoClock.getAsLong() - since));
  }
}
