package org.sss.bench.synthetic;

/**
 * One run's outcome as reported: a point, an engine, a repeat, and the result (null when the
 * run was skipped or failed; then {@code note} says why).
 */
public record Record(SweepPlan.Point point, String engine, int repeat, RunResult result, String note) {
  public boolean verified() {
    return result != null && result.verified();
  }

  public String series() {
    return engine + (point.params().combinerEnabled() ? "+combiner" : "");
  }
}
