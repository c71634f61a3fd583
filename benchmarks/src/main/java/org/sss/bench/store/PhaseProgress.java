package org.sss.bench.store;

import java.io.PrintStream;

/**
 * Prints a phase's progress (phase, percent, pairs/s) every two seconds, then a summary. The
 * per-pair call reads the clock only every {@code checkEvery} pairs, so it costs nothing
 * measurable next to a store write.
 */
final class PhaseProgress {
  private static final long INTERVAL_NANOS = 2_000_000_000L;

  private final String phase;
  private final long total;
  private final PrintStream out;
  private final int checkEvery;
  private final long start = System.nanoTime();
  private long lastShown = start;
  private long done;
  private int sinceCheck;

  PhaseProgress(String phase, long total, long pairBytes, PrintStream out) {
    this.phase = phase;
    this.total = total;
    this.out = out;
    this.checkEvery = (int) Math.max(1, Math.min(4096, (1 << 20) / Math.max(1, pairBytes)));
    out.printf("%s: started (%,d pairs)%n", phase, total);
    out.flush();
  }

  /** One more pair done. */
  void add() {
    done++;
    if (++sinceCheck >= checkEvery) {
      sinceCheck = 0;
      long now = System.nanoTime();
      if (now - lastShown >= INTERVAL_NANOS) {
        lastShown = now;
        show(now, "");
      }
    }
  }

  private void show(long now, String suffix) {
    double seconds = Math.max(1e-9, (now - start) / 1e9);
    out.printf("%s: %5.1f%%  %,d pairs  %,.0f pairs/s  %.1f s%s%n", phase,
        total == 0 ? 100.0 : 100.0 * done / total, done, done / seconds, seconds, suffix);
    out.flush();
  }

  /** Prints the final line with a note (e.g. the verification result). */
  void finish(String note) {
    show(System.nanoTime(), note.isEmpty() ? "" : "  " + note);
  }
}
