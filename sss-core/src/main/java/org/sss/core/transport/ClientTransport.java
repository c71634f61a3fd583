package org.sss.core.transport;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * The event loops that outgoing connections share. One small group per process: a client
 * talks to few nodes and the loops only move bytes; work happens elsewhere.
 */
public final class ClientTransport {
  private static final EventLoopGroup SHARED =
      new NioEventLoopGroup(Math.max(2, Runtime.getRuntime().availableProcessors()),
          new DefaultThreadFactory("sss-client-io", true));

  private ClientTransport() {}

  /** The process-wide client event loop group (daemon threads, never shut down). */
  public static EventLoopGroup group() {
    return SHARED;
  }
}
