package org.sss.client.it;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Collects Netty's leak reports ("LEAK: ByteBuf.release() was not called ..."), which Netty
 * only logs, so that a test can fail on them.
 */
public final class LeakWatch implements AutoCloseable {
  private final Logger logger = (Logger) LoggerFactory.getLogger(ResourceLeakDetector.class);
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

  public LeakWatch() {
    appender.start();
    logger.addAppender(appender);
  }

  /**
   * Collects garbage, then allocates tracked buffers (the detector reports leaks it has found
   * when a new buffer is tracked) and returns the reports so far.
   */
  public List<String> leaks() throws InterruptedException {
    ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
    ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    try {
      for (int round = 0; round < 5; round++) {
        System.gc();
        Thread.sleep(50);
        for (int i = 0; i < 50; i++) {
          ByteBuf a = PooledByteBufAllocator.DEFAULT.directBuffer(16);
          ByteBuf b = PooledByteBufAllocator.DEFAULT.heapBuffer(16);
          ByteBuf c = UnpooledByteBufAllocator.DEFAULT.buffer(16);
          a.release();
          b.release();
          c.release();
        }
      }
    } finally {
      ResourceLeakDetector.setLevel(level);
    }
    List<String> out = new ArrayList<>();
    synchronized (appender) {
      for (ILoggingEvent e : new ArrayList<>(appender.list)) {
        if (e.getFormattedMessage().contains("LEAK")) {
          out.add(e.getFormattedMessage());
        }
      }
    }
    return out;
  }

  @Override
  public void close() {
    logger.detachAppender(appender);
    appender.stop();
  }
}
