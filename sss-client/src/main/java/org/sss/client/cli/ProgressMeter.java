package org.sss.client.cli;

import java.io.PrintStream;

/**
 * Shows the progress of a long transfer on stderr: pairs, megabytes and MB/s, at most once a
 * second (rewriting one line on a terminal, one line every 5 s otherwise), then a summary.
 */
public final class ProgressMeter {
  private final String stage;
  private final PrintStream out;
  private final boolean terminal;
  private final long start = System.nanoTime();
  private long lastShown = start;
  private long pairs;
  private long bytes;

  public ProgressMeter(String stage) {
    this(stage, System.err, System.console() != null);
  }

  ProgressMeter(String stage, PrintStream out, boolean terminal) {
    this.stage = stage;
    this.out = out;
    this.terminal = terminal;
  }

  /** Counts one more pair of {@code size} bytes. Cheap enough to call per pair. */
  public void add(long size) {
    pairs++;
    bytes += size;
    if ((pairs & 1023) == 0) {
      long now = System.nanoTime();
      if (now - lastShown > (terminal ? 1_000_000_000L : 5_000_000_000L)) {
        lastShown = now;
        show(now, false);
      }
    }
  }

  /** Counts pairs moved elsewhere (by the nodes), for the summary. */
  public void addAll(long n, long size) {
    pairs += n;
    bytes += size;
  }

  private void show(long now, boolean last) {
    double seconds = Math.max(1e-9, (now - start) / 1e9);
    String line = String.format("%s: %,d pairs, %.1f MB, %.1f MB/s, %,.0f pairs/s, %.1f s",
        stage, pairs, bytes / 1e6, bytes / 1e6 / seconds, pairs / seconds, seconds);
    if (terminal) {
      out.print("\r" + line + (last ? "\n" : ""));
    } else {
      out.println(line);
    }
    out.flush();
  }

  /** Prints the summary line. */
  public void done() {
    show(System.nanoTime(), true);
  }

  public long pairs() {
    return pairs;
  }
}
