package org.sss.server.execution;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.transport.Connection;
import org.sss.core.transport.NodeUnavailableException;
import org.sss.core.transport.Pipelines;

/**
 * This node's connections to the other nodes, for the shuffle. Opened on first use and
 * reopened after a break; a node that cannot be reached fails the stage that needs it.
 */
public final class PeerLinks implements AutoCloseable {
  /** A shuffle batch not acknowledged in this time counts as a lost node. */
  static final Duration SHUFFLE_TIMEOUT = Duration.ofSeconds(60);

  private final ClusterSpec spec;
  private final int self;
  private final Connection[] links;
  private final io.netty.handler.ssl.SslContext tls;

  public PeerLinks(ClusterSpec spec, int self) {
    this.spec = spec;
    this.self = self;
    this.links = new Connection[spec.nodeCount()];
    this.tls = org.sss.core.transport.Tls.clientContext(spec);
  }

  /** The connection to {@code node}, connecting if needed. Blocks while connecting. */
  public Connection get(int node) {
    synchronized (links) {
      Connection c = links[node];
      if (c != null && c.isActive()) {
        return c;
      }
      CompletableFuture<Connection> f = Connection.open(spec.node(node), spec.secret(), "node-" + self,
          tls, Pipelines.DEFAULT_MAX_FRAME, SHUFFLE_TIMEOUT);
      try {
        c = f.get(15, TimeUnit.SECONDS);
      } catch (Exception e) {
        Throwable cause = e.getCause() != null ? e.getCause() : e;
        throw new NodeUnavailableException("node " + self + " cannot reach " + spec.node(node) + ": "
            + cause.getMessage(), cause);
      }
      links[node] = c;
      return c;
    }
  }

  @Override
  public void close() {
    synchronized (links) {
      for (Connection c : links) {
        if (c != null) {
          c.close();
        }
      }
    }
  }
}
