package org.sss.server;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;

/**
 * A node's listening socket, bound before the node starts.
 *
 * <p>The nodes of a cluster need each other's addresses in the cluster spec before any of them
 * starts. Binding every node's socket first (port 0: a port the kernel picks), reading the ports
 * back, and only then writing the spec and starting the nodes on the sockets already bound leaves
 * no moment in which another process could take a port that was picked as free.
 * {@link SssServer#start(NodeConfig, NodeListener)} takes the socket over; until then, closing
 * the listener releases it. Connections made in between wait in the socket's backlog.
 */
public final class NodeListener implements AutoCloseable {
  static final int BACKLOG = 256;

  private final ServerSocketChannel channel;
  private final InetSocketAddress address;
  private boolean taken;

  private NodeListener(ServerSocketChannel channel, InetSocketAddress address) {
    this.channel = channel;
    this.address = address;
  }

  /** Binds {@code host:port}; port 0 binds a port the kernel picks (see {@link #port()}). */
  public static NodeListener bind(String host, int port) throws IOException {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port out of range: " + port);
    }
    ServerSocketChannel ch = ServerSocketChannel.open();
    try {
      ch.setOption(StandardSocketOptions.SO_REUSEADDR, true);
      ch.bind(new InetSocketAddress(host, port), BACKLOG);
      return new NodeListener(ch, (InetSocketAddress) ch.getLocalAddress());
    } catch (IOException | RuntimeException e) {
      ch.close();
      throw e;
    }
  }

  /** The port bound. */
  public int port() {
    return address.getPort();
  }

  /** The address bound. */
  public InetAddress address() {
    return address.getAddress();
  }

  /** True when the socket listens on {@code host} (any wildcard address stands for every other). */
  boolean listensOn(InetAddress host) {
    InetAddress bound = address();
    return bound.equals(host) || bound.isAnyLocalAddress() && host.isAnyLocalAddress();
  }

  /** True until the socket is closed (by {@link #close()}, or by the server that took it over). */
  public boolean isOpen() {
    return channel.isOpen();
  }

  /** Hands the socket to a starting server: from then on the server closes it. */
  synchronized ServerSocketChannel take() {
    if (taken) {
      throw new IllegalStateException("listener on port " + port() + " is already used by a server");
    }
    if (!channel.isOpen()) {
      throw new IllegalStateException("listener on port " + port() + " is closed");
    }
    taken = true;
    return channel;
  }

  /** Releases the socket unless a server took it over. */
  @Override
  public synchronized void close() {
    if (!taken) {
      try {
        channel.close();
      } catch (IOException ignored) {
        // closing a listening socket: nothing to do about a failure
      }
    }
  }

  @Override
  public String toString() {
    return address.getHostString() + ":" + port();
  }
}
