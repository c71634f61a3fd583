package org.sss.client.job;

/** Receives a job's progress about twice a second while it runs. */
@FunctionalInterface
public interface ProgressListener {
  /**
   * @param stage       index of the running stage
   * @param stageCount  stages in the job
   * @param kind        "map" or "reduce"
   * @param tasksDone   tasks finished over all nodes
   * @param tasksTotal  tasks over all nodes
   * @param recordsIn   pairs read so far in this stage
   * @param recordsOut  pairs emitted so far in this stage
   * @param bytesShuffled bytes written to the stage's output so far
   * @param seconds     time in this stage
   */
  void update(int stage, int stageCount, String kind, long tasksDone, long tasksTotal,
              long recordsIn, long recordsOut, long bytesShuffled, double seconds);

  /** Ignores progress. */
  static ProgressListener none() {
    return (s, n, k, d, t, i, o, b, sec) -> {};
  }

  /** A live line on stderr: stage, tasks, records, rate. */
  static ProgressListener console() {
    boolean terminal = System.console() != null;
    long[] last = {0};
    return (s, n, k, d, t, in, out, b, sec) -> {
      long now = System.nanoTime();
      if (!terminal && now - last[0] < 5_000_000_000L) {
        return;
      }
      last[0] = now;
      String line = String.format("stage %d/%d %-6s tasks %d/%d (%3.0f%%)  in %,d  out %,d  %.1f MB  %,.0f rec/s  %.1f s",
          s + 1, n, k, d, t, t == 0 ? 100.0 : 100.0 * d / t, in, out, b / 1e6, sec > 0 ? in / sec : 0.0, sec);
      System.err.print(terminal ? "\r" + line : line + "\n");
      System.err.flush();
    };
  }
}
