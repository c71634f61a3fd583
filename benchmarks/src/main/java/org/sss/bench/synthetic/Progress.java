package org.sss.bench.synthetic;

import java.io.PrintStream;

/**
 * The live progress line: workload, point, engine, phase and percent, rewritten in place on a
 * terminal (at most 4 times a second), one line every 5 seconds otherwise.
 */
public final class Progress {
  private final PrintStream out;
  private final boolean terminal;
  private String prefix = "";
  private String phase = "";
  private long lastShown;
  private long phaseStart;
  private int lastLength;

  public Progress(PrintStream out, boolean terminal) {
    this.out = out;
    this.terminal = terminal;
  }

  public static Progress console() {
    return new Progress(System.err, System.console() != null);
  }

  /** Silent, for tests. */
  public static Progress none() {
    return new Progress(null, false);
  }

  /** A new run: what is shown before the phase. */
  public synchronized void run(String workload, String point, String engine) {
    prefix = workload + (point.isEmpty() ? "" : " " + point) + " " + engine;
  }

  public synchronized void phase(String name) {
    phase = name;
    phaseStart = System.nanoTime();
    if (terminal) {
      lastShown = 0;
      update(0);
    } else {
      lastShown = phaseStart; // a log gets a line only for phases longer than 5 s
    }
  }

  /** Progress of the current phase, 0..1. */
  public synchronized void update(double fraction) {
    if (out == null) {
      return;
    }
    long now = System.nanoTime();
    long every = terminal ? 250_000_000L : 5_000_000_000L;
    if (lastShown != 0 && now - lastShown < every) {
      return;
    }
    lastShown = now;
    String line = String.format("%s %s %3.0f%% %.1fs", prefix, phase, Math.min(1, Math.max(0, fraction)) * 100,
        (now - phaseStart) / 1e9);
    if (terminal) {
      String pad = line.length() < lastLength ? " ".repeat(lastLength - line.length()) : "";
      out.print("\r" + line + pad);
      lastLength = line.length();
    } else {
      out.println(line);
    }
    out.flush();
  }

  /** A message on its own line (ends the progress line). */
  public synchronized void say(String message) {
    if (out == null) {
      return;
    }
    if (terminal && lastLength > 0) {
      out.print("\r" + " ".repeat(lastLength) + "\r");
      lastLength = 0;
    }
    out.println(message);
    out.flush();
  }
}
