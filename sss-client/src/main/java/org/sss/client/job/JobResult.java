package org.sss.client.job;

import java.util.List;
import java.util.Map;

/**
 * A finished job.
 *
 * @param jobId              the id of this run
 * @param stages             per-stage figures
 * @param counters           user counters summed over every task and node, and
 *                           {@link #RERUNS_COUNTER} when the job ran again after a node was lost,
 *                           {@link #TASKS_TAKEN_COUNTER} when nodes took waiting map tasks from others,
 *                           {@link #BUILT_FILE_PAIRS_COUNTER} when output pairs travelled in built files
 * @param seconds            wall time from submission to the end of cleanup
 * @param intermediateTables tables between stages, if kept
 */
public record JobResult(String jobId, List<StageSummary> stages, Map<String, Long> counters, double seconds,
                        List<String> intermediateTables) {
  /**
   * How many times the whole job ran again from its input, each after a node was lost and the
   * members decided it out; absent when it ran once.
   */
  public static final String RERUNS_COUNTER = "sss.job.reruns";

  /**
   * Map tasks a node ran for a partition another node leads, taken over once its own were done
   * and before that node started them (inputs of two or more copies); absent when none was.
   */
  public static final String TASKS_TAKEN_COUNTER = "sss.job.tasks.taken";

  /**
   * Output pairs the writing nodes built into SST files, once for every copy, and sent whole
   * (an output of two or more copies, one value per key); absent when none were.
   */
  public static final String BUILT_FILE_PAIRS_COUNTER = "sss.job.pairs.in.built.files";

  /** A user counter, 0 when never incremented. */
  public long counter(String name) {
    return counters.getOrDefault(name, 0L);
  }
}
