package org.sss.core.transport;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The event loops that outgoing connections share. One small group per process: a client
 * talks to few nodes and the loops only move bytes; work happens elsewhere.
 *
 * <p>The loops are stopped when the process ends. A loop waits for I/O in native code, and a
 * JVM that exits while any thread is in native code waits for it to come back, polling every
 * 10 ms for up to 300 ms: a command would end 0.3 s after its work was done.
 */
public final class ClientTransport {
  private static final EventLoopGroup SHARED =
      new NioEventLoopGroup(Math.max(2, Runtime.getRuntime().availableProcessors()),
          new DefaultThreadFactory("sss-client-io", true));

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(ClientTransport::stopLoops, "sss-client-io-stop"));
  }

  private ClientTransport() {}

  private static void stopLoops() {
    SHARED.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(1, TimeUnit.SECONDS);
  }

  /** Makes the loops now rather than at the first connection (class loading of tens of milliseconds in a fresh JVM). */
  public static void prepare() {
    SHARED.isShutdown(); // the class is initialized; nothing else to do
  }

  /** The process-wide client event loop group (daemon threads, stopped when the JVM exits). */
  public static EventLoopGroup group() {
    return SHARED;
  }
}
