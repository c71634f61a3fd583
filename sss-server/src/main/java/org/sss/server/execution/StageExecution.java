package org.sss.server.execution;

import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiPredicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sss.core.proto.StageReport;
import org.sss.core.proto.StageSpec;

/**
 * One node's part of one stage: a task per local partition of the input table, run by
 * {@code threads} runners at once, then the shuffle barrier. The map tasks of one runner emit
 * into one {@link MapOutput}, sent when the runner has no task left (or, in a last stage that
 * writes files, each task of the runner into a part file of its own: {@link TextPartOutput}). The runners borrow threads
 * from the node's shared pool: a stage of a few milliseconds must not pay for starting threads.
 * The future completes with the node's report once every task finished and every pair sent was
 * acknowledged, or fails with the first error (a task's, or a lost peer's); the other tasks then
 * stop at their next check.
 *
 * <p>Runners take the node's own tasks first, then map tasks another node has not started, of
 * partitions this node holds a copy of ({@link TaskTaking}); the node hands over its own waiting
 * tasks the same way when asked ({@link #handOver}).
 */
final class StageExecution {
  private static final Logger LOG = LoggerFactory.getLogger(StageExecution.class);

  private final StageContext stage;
  private final List<Integer> partitions;
  private final int threads;
  private final ExecutorService readers;
  private final ExecutorService runners;
  private final TaskTaking taking;
  /** Whether a node may take the task of a partition: (taker, partition). */
  private final BiPredicate<Integer, Integer> mayHandOver;
  /** The node's own tasks not started yet: its runners take from the head, a taker from the tail. */
  private final ConcurrentLinkedDeque<Integer> pending;
  private final AtomicInteger handedOver = new AtomicInteger();
  private final AtomicInteger taken = new AtomicInteger();
  /** Partitions whose task ended without error here, for the coordinator's exactly-once check. */
  private final Queue<Integer> ran = new ConcurrentLinkedQueue<>();
  private final AtomicInteger tasksDone = new AtomicInteger();
  private final long startNanos = System.nanoTime();
  private final CompletableFuture<StageReport> result = new CompletableFuture<>();
  /** The runner threads working for this stage now: an abort interrupts them. */
  private final Set<Thread> working = ConcurrentHashMap.newKeySet();

  StageExecution(StageContext stage, List<Integer> partitions, int threads, ExecutorService readers,
                 ExecutorService runners, TaskTaking taking, BiPredicate<Integer, Integer> mayHandOver) {
    this.stage = stage;
    this.partitions = partitions;
    this.threads = threads;
    this.readers = readers;
    this.runners = runners;
    this.taking = taking;
    this.mayHandOver = mayHandOver;
    this.pending = new ConcurrentLinkedDeque<>(partitions);
  }

  CompletableFuture<StageReport> start() {
    if (partitions.isEmpty() && taking.isEmpty()) {
      finish();
      return result;
    }
    int n = Math.max(1, Math.min(threads, partitions.size() + taking.size()));
    AtomicInteger runnersLeft = new AtomicInteger(n);
    for (int i = 0; i < n; i++) {
      runners.execute(() -> {
        TaskOutput<?, ?> output = null;
        Thread self = Thread.currentThread();
        working.add(self);
        if (stage.stopping()) {
          self.interrupt(); // aborted before this runner registered: it must not miss the interrupt
        }
        try {
          for (Integer p = nextTask(); p != null; p = nextTask()) {
            if (output == null && needsOutput()) {
              int first = p;
              output = attempt(() -> stage.writesFiles() ? new TextPartOutput<>(stage, isMap())
                  : new MapOutput<>(stage, first));
            }
            runTask(p, output);
          }
          if (output != null) {
            finishOutput(output);
          }
        } finally {
          synchronized (working) { // not between an abort's look at the runners and its interrupt
            working.remove(self);
            Thread.interrupted(); // an abort's interrupt must not reach the pool's next task
          }
          // a runner's output is sent before the barrier may start
          if (runnersLeft.decrementAndGet() == 0) {
            finish();
          }
        }
      });
    }
    return result;
  }

  /** The node's next own task, else one taken from another node, else null. */
  private Integer nextTask() {
    Integer own = pending.pollFirst();
    if (own != null || stage.stopping()) {
      return own;
    }
    Integer p = attempt(() -> {
      try {
        return taking.next(stage::stopping);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new StageAborted();
      }
    });
    if (p != null) {
      taken.incrementAndGet();
    }
    return p;
  }

  /**
   * Hands over a task of one of {@code wanted} that no runner here has started, to {@code taker}
   * if it holds an in-sync copy of its partition; returns its partition, or null when none waits. The last
   * waiting first: the runners here take from the other end.
   */
  Integer handOver(int taker, Collection<Integer> wanted) {
    if (stage.stopping()) {
      return null;
    }
    for (Iterator<Integer> it = pending.descendingIterator(); it.hasNext(); ) {
      Integer p = it.next();
      // removed by exactly one of this and a runner's poll: a task is run once
      if (wanted.contains(p) && mayHandOver.test(taker, p) && pending.removeLastOccurrence(p)) {
        handedOver.incrementAndGet();
        return p;
      }
    }
    return null;
  }

  int stageIndex() {
    return stage.spec.getIndex();
  }

  private boolean isMap() {
    return stage.spec.getKind() == StageSpec.Kind.MAP;
  }

  /** Map tasks share their runner's output; reduce tasks too when they write files. */
  private boolean needsOutput() {
    return isMap() || stage.writesFiles();
  }

  private void finishOutput(TaskOutput<?, ?> output) {
    if (stage.stopping()) {
      output.discard();
      return;
    }
    attempt(() -> {
      output.finish();
      return null;
    });
  }

  private void runTask(int partition, TaskOutput<?, ?> output) {
    if (stage.stopping() || needsOutput() && output == null) {
      return;
    }
    attempt(() -> {
      task(partition, output).run();
      tasksDone.incrementAndGet();
      ran.add(partition);
      return null;
    });
  }

  /** Runs a step of the stage; a failure becomes the stage's (the first one wins) and gives null. */
  private <T> T attempt(Supplier<T> step) {
    try {
      return step.get();
    } catch (StageAborted e) {
      // the stage's failure or abort is reported once, in finish(); an interrupt nobody asked for
      // (user code's own) must not end a task, or a task handed over here, unseen
      if (!stage.stopping()) {
        stage.failure.compareAndSet(null, new IllegalStateException("a task of job " + stage.jobId + " on node "
            + stage.nodeId + " was interrupted, but the stage was not stopped"));
      }
    } catch (Throwable e) {
      if (stage.failure.compareAndSet(null, e)) {
        String m = e.getMessage() == null ? e.toString() : e.getMessage();
        LOG.warn("{}", m.lines().findFirst().orElse(m));
      }
    }
    return null;
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private Runnable task(int partition, TaskOutput<?, ?> output) {
    return isMap()
        ? new MapTask<>(stage, partition, readers, (TaskOutput) output)
        : new ReduceTask<>(stage, partition, (TaskOutput) output);
  }

  /** The barrier: wait for this node's sends to be acknowledged, then report. */
  private void finish() {
    readers.execute(() -> {
      try {
        stage.shuffle.awaitAcks();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      Throwable failure = stage.failure.get();
      if (failure != null) {
        result.completeExceptionally(failure);
      } else if (stage.aborted.get()) {
        result.completeExceptionally(new StageAbortedException(stage.abortReason));
      } else {
        result.complete(report(true));
      }
    });
  }

  /** Completes (either way) when the stage has stopped on this node. */
  CompletableFuture<StageReport> done() {
    return result;
  }

  /**
   * Stops the stage: tasks see the flag at their next record, key, value or emit, and user code
   * blocked in a sleep, a wait or interruptible I/O is interrupted, so that a cancel reaches a
   * slow mapper within moments rather than after its record.
   */
  void abort(String reason) {
    stage.abortReason = reason;
    stage.aborted.set(true);
    synchronized (working) {
      for (Thread t : working) {
        t.interrupt();
      }
    }
  }

  StageReport report(boolean done) {
    StageReport.Builder r = StageReport.newBuilder()
        .setTasksDone(tasksDone.get())
        .setTasksTotal(partitions.size() - handedOver.get() + taken.get())
        .setRecordsIn(stage.recordsIn.sum())
        .setRecordsOut(stage.recordsOut.sum())
        .setRecordsShuffled(stage.shuffle.pairsShuffled.get())
        .setBytesShuffled(stage.shuffle.bytesShuffled.get())
        .setPairsInBuiltFiles(stage.shuffle.pairsInBuiltFiles.get())
        .setDone(done)
        .setElapsedNanos(System.nanoTime() - startNanos)
        .addAllPartitionsRun(ran)
        .setTasksTaken(taken.get());
    stage.counters.forEach((k, v) -> r.putCounters(k, v.sum()));
    return r.build();
  }

  /** The stage was aborted on request (cancel, or another node failed). */
  static final class StageAbortedException extends RuntimeException {
    StageAbortedException(String reason) {
      super("aborted: " + reason);
    }
  }
}
