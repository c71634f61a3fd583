package org.sss.client.it;

import io.netty.util.ResourceLeakDetector;

/**
 * The build runs tests with paranoid leak detection, which records a stack trace on every
 * access to every buffer and makes bulk transfers several times slower. Tests that move a lot
 * of data switch to sampled detection (which still reports leaks) and switch back after.
 */
public final class LeakDetection implements AutoCloseable {
  private final ResourceLeakDetector.Level previous;

  private LeakDetection(ResourceLeakDetector.Level level) {
    previous = ResourceLeakDetector.getLevel();
    ResourceLeakDetector.setLevel(level);
  }

  /** Sampled detection until {@link #close()}. */
  public static LeakDetection sampled() {
    return new LeakDetection(ResourceLeakDetector.Level.SIMPLE);
  }

  @Override
  public void close() {
    ResourceLeakDetector.setLevel(previous);
  }
}
