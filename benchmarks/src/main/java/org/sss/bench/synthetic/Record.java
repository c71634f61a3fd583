package org.sss.bench.synthetic;

/**
 * One run's outcome as reported: a point, an engine, whether it was a warm-up (untimed: run
 * before the series' first timed run, never in a median), its number among the warm-ups or the
 * timed runs (0-based), and the result (null when the run was skipped or failed; then
 * {@code note} says why).
 */
public record Record(SweepPlan.Point point, String engine, boolean warmup, int run, RunResult result, String note) {
  public boolean verified() {
    return result != null && result.verified();
  }

  /** A timed run (not a warm-up). */
  public boolean timed() {
    return !warmup;
  }

  public String series() {
    return engine + (point.params().combinerEnabled() ? "+combiner" : "");
  }

  /** "warmup" or "timed", as results.csv says. */
  public String kind() {
    return warmup ? "warmup" : "timed";
  }
}
