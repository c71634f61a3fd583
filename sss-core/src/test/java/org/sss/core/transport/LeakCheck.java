package org.sss.core.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Turns Netty's leak reports into test failures. Surefire runs with
 * {@code -Dio.netty.leakDetection.level=paranoid}, so every buffer is tracked, but the detector
 * only logs a leak after the buffer has been garbage-collected and another buffer is allocated.
 * {@link #assertNoLeaks()} forces both and fails if anything was reported.
 *
 * <p>Netty logs through JDK logging here (sss-core's tests have no SLF4J provider); if a
 * provider is added, reports bypass this handler and the check passes vacuously.
 */
final class LeakCheck {
  private static final Logger LOGGER = Logger.getLogger(ResourceLeakDetector.class.getName());

  private final List<String> leaks = new CopyOnWriteArrayList<>();
  private final Handler handler = new Handler() {
    @Override
    public void publish(LogRecord record) {
      if (record.getMessage() != null && record.getMessage().contains("LEAK")) {
        leaks.add(record.getMessage());
      }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };

  private LeakCheck() {}

  static LeakCheck install() {
    LeakCheck check = new LeakCheck();
    LOGGER.addHandler(check.handler);
    return check;
  }

  void assertNoLeaks() throws InterruptedException {
    try {
      for (int round = 0; round < 3; round++) {
        System.gc();
        Thread.sleep(50);
        for (int i = 0; i < 32; i++) {
          ByteBufAllocator.DEFAULT.buffer(8).release(); // each tracked allocation polls for leaks
        }
      }
      assertEquals(List.of(), leaks, "Netty reported leaked buffers");
    } finally {
      LOGGER.removeHandler(handler);
    }
  }
}
