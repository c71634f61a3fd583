package org.sss.server;

import ch.qos.logback.classic.AsyncAppender;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * A server process's log is written by a thread of its own, from a bounded queue that drops
 * events when full rather than make the logging thread wait.
 *
 * <h2>Why</h2>
 * A server's log is usually a file on the node's disk ({@code cluster start} sends it to
 * {@code server.log} in the node's directory). When that disk hangs, every write to the file
 * hangs, and so would every thread that logs: the membership thread of a leader whose disk
 * stopped answering blocked on the very line saying it hands its leadership over, for as long
 * as the disk was frozen (the frozen-disk drill, mode leader). With the writes on their own
 * thread, the node's threads go on and the hand-over happens; what is logged while the disk
 * hangs is lost once the queue is full, which is the price of not waiting.
 *
 * <p>Only server processes: a command's own log (an embedded cluster's included) goes to the
 * user's terminal and is written as before, so that nothing is lost when the command exits.
 */
final class LogOffTheCallersThread {
  /** Events held while the writes wait: a few seconds of a busy node's log. */
  static final int QUEUE = 8_192;

  private LogOffTheCallersThread() {}

  /**
   * Moves the root logger's appenders behind one {@link AsyncAppender} that never blocks; does
   * nothing when the log is not logback's.
   */
  static void install() {
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
      return;
    }
    Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    List<Appender<ILoggingEvent>> appenders = new ArrayList<>();
    for (Iterator<Appender<ILoggingEvent>> it = root.iteratorForAppenders(); it.hasNext(); ) {
      appenders.add(it.next());
    }
    if (appenders.isEmpty() || appenders.stream().anyMatch(a -> a instanceof AsyncAppender)) {
      return;
    }
    AsyncAppender async = new AsyncAppender();
    async.setContext(context);
    async.setName("ASYNC");
    async.setQueueSize(QUEUE);
    async.setDiscardingThreshold(0); // every level is kept while there is room
    async.setNeverBlock(true);
    for (Appender<ILoggingEvent> a : appenders) {
      async.addAppender(a);
    }
    async.start();
    root.addAppender(async);
    for (Appender<ILoggingEvent> a : appenders) {
      root.detachAppender(a);
    }
  }

  /** Writes out what is queued (waiting at most a second: the disk may hang) and stops the log. */
  static void flush() {
    if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
      context.stop();
    }
  }
}
