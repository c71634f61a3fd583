package org.sss.bench.synthetic;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.locks.LockSupport;
import org.sss.client.SssClient;
import org.sss.client.job.Job;
import org.sss.client.job.JobResult;
import org.sss.client.job.ProgressListener;
import org.sss.client.job.RunningJob;

/**
 * The one clock of the benchmarks: a job's time runs from just before its submission to the
 * first of a series of polls, every {@link #POLL_MILLIS} ms, that sees it complete. Every engine
 * is observed the same way, so the observation adds the same 0 to {@value #POLL_MILLIS} ms
 * (plus the scheduler's delay in waking the polling thread) to each; a poll reads a flag in the
 * client's memory on both (SSS: its coordinator's result; Hadoop's local runner: the job
 * status object its job thread sets), which costs microseconds.
 */
public final class JobClock {
  public static final long POLL_MILLIS = 2;
  /** How often the progress callback runs while waiting. */
  static final long TICK_NANOS = 100_000_000L;

  private JobClock() {}

  /** Whether a job has ended (successfully or not). */
  @FunctionalInterface
  public interface Completion {
    boolean isComplete() throws Exception;
  }

  /** A value and the seconds it took. */
  public record Timed<T>(T value, double seconds) {}

  /**
   * Polls {@code done} every {@link #POLL_MILLIS} ms until it says complete, calling {@code tick}
   * about every 100 ms meanwhile; returns the seconds from {@code startNanos}
   * ({@link System#nanoTime()}) to the poll that saw the job complete.
   */
  public static double waitFor(long startNanos, Completion done, Runnable tick) throws Exception {
    long lastTick = System.nanoTime();
    while (!done.isComplete()) {
      long now = System.nanoTime();
      if (now - lastTick >= TICK_NANOS) {
        tick.run();
        lastTick = now;
      }
      LockSupport.parkNanos(POLL_MILLIS * 1_000_000L);
      if (Thread.interrupted()) {
        throw new InterruptedException("interrupted while waiting for a job");
      }
    }
    return (System.nanoTime() - startNanos) / 1e9;
  }

  /** Submits an SSS job and times it from just before the submission; see {@link #sss(long, SssClient, Job, ProgressListener)}. */
  public static Timed<JobResult> sss(SssClient client, Job job, ProgressListener listener) throws Exception {
    return sss(-1, client, job, listener);
  }

  /**
   * Submits an SSS job and waits for it, polling {@link RunningJob#isDone()} (set when the
   * client's coordinator completes the job's result, after the commit round). Progress reaches
   * {@code listener} through a thread parked in {@link RunningJob#await}, started before the
   * clock does.
   *
   * @param startNanos when the timed region began ({@link System#nanoTime()}), or -1 for just
   *                   before the submission
   * @throws org.sss.client.job.JobFailedException when the job failed
   */
  public static Timed<JobResult> sss(long startNanos, SssClient client, Job job, ProgressListener listener)
      throws Exception {
    CompletableFuture<RunningJob> submitted = new CompletableFuture<>();
    CompletableFuture<JobResult> result = new CompletableFuture<>();
    Thread waiter = new Thread(() -> {
      try {
        result.complete(submitted.join().await(listener));
      } catch (Throwable e) {
        result.completeExceptionally(e);
      }
    }, "sss-bench-job-progress");
    waiter.setDaemon(true);
    waiter.start();
    long t0 = startNanos < 0 ? System.nanoTime() : startNanos;
    RunningJob running;
    try {
      running = client.submit(job);
    } catch (RuntimeException e) {
      submitted.completeExceptionally(e);
      throw e;
    }
    submitted.complete(running);
    double seconds = waitFor(t0, running::isDone, () -> { });
    try {
      return new Timed<>(result.join(), seconds);
    } catch (CompletionException e) {
      Throwable cause = e.getCause() instanceof CompletionException c && c.getCause() != null ? c.getCause()
          : e.getCause();
      if (cause instanceof Exception x) {
        throw x;
      }
      throw e;
    }
  }
}
