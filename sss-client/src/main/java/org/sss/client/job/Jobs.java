package org.sss.client.job;

import java.security.SecureRandom;
import java.util.HexFormat;
import org.sss.client.SssClient;

/** Starts jobs; the entry point is {@link SssClient#submit}. */
public final class Jobs {
  private static final SecureRandom RANDOM = new SecureRandom();

  private Jobs() {}

  public static RunningJob start(SssClient client, Job job) {
    String jobId = newId();
    JobCoordinator coordinator = new JobCoordinator(client, job, jobId);
    Thread t = new Thread(coordinator, "sss-job-" + job.name + "-" + jobId);
    t.setDaemon(true);
    t.start();
    return new RunningJob(jobId, coordinator);
  }

  /** A new job id: 12 hex digits, random (the names of a job's tables embed it, see JobTables). */
  static String newId() {
    byte[] id = new byte[6];
    RANDOM.nextBytes(id);
    return HexFormat.of().formatHex(id);
  }
}
