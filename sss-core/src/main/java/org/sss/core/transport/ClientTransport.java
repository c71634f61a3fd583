package org.sss.core.transport;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The event loops that outgoing connections share. One small group per process: a client
 * talks to few nodes and the loops only move bytes; work happens elsewhere.
 */
public final class ClientTransport {
  /** Made at first use (a holder class): a process that never connects makes no loops. */
  private static final class Shared {
    static final EventLoopGroup GROUP = new NioEventLoopGroup(Math.max(2, Runtime.getRuntime().availableProcessors()),
        new DefaultThreadFactory("sss-client-io", true));
  }

  private static volatile boolean made;

  private ClientTransport() {}

  /**
   * Stops the loops, for a process whose work is done and that exits next: a loop waits for I/O
   * in native code, and a JVM that exits while a thread is in native code waits for it to come
   * back, polling every 10 ms for up to 0.3 s. A command ended that long after its work. Not a
   * shutdown hook: hooks run side by side, and another one (a command's cleanup after Ctrl-C)
   * may still need a connection.
   */
  public static void stop() {
    if (made) {
      Shared.GROUP.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(1, TimeUnit.SECONDS);
    }
  }

  /** Makes the loops now rather than at the first connection (class loading of tens of milliseconds in a fresh JVM). */
  public static void prepare() {
    group();
  }

  /** The process-wide client event loop group (daemon threads). */
  public static EventLoopGroup group() {
    made = true;
    return Shared.GROUP;
  }
}
