package org.sss.client.job;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.sss.client.internal.NodeChannels;

/**
 * A submitted job. The job runs on its own coordinator thread from submission on;
 * {@link #await} waits for it, {@link #cancel} stops it.
 */
public final class RunningJob {
  private final String jobId;
  private final CompletableFuture<JobResult> result;
  private final JobCoordinator coordinator;

  RunningJob(String jobId, JobCoordinator coordinator) {
    this.jobId = jobId;
    this.coordinator = coordinator;
    this.result = coordinator.result();
  }

  public String id() {
    return jobId;
  }

  /**
   * Waits for the job, reporting progress to {@code listener}.
   *
   * @throws JobFailedException when the job failed or was cancelled
   */
  public JobResult await(ProgressListener listener) {
    coordinator.listen(listener);
    try {
      return result.get();
    } catch (ExecutionException e) {
      throw NodeChannels.unwrap(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      cancel();
      throw new IllegalStateException("interrupted while waiting for job " + jobId, e);
    }
  }

  /** Waits for the job without progress reports. */
  public JobResult await() {
    return await(ProgressListener.none());
  }

  /** Asks every node to stop the job; {@link #await} then throws {@link JobFailedException}. */
  public void cancel() {
    coordinator.cancel("cancelled by the client");
  }

  public boolean isDone() {
    return result.isDone();
  }
}
