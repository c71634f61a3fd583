package org.sss.server.execution;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.transport.Connection;
import org.sss.core.transport.NodeUnavailableException;
import org.sss.core.transport.Pipelines;

/**
 * This node's connections to the other nodes, for the shuffle. Opened when a stage starts
 * ({@link #warmUp}), all at once and without waiting, and reopened after a break; a node that
 * cannot be reached fails the stage that needs it.
 *
 * <p>Why warm up: a connection costs a TCP handshake and the cluster-secret challenge. Opened
 * on first use, one after another, they stood between a runner's last pair and the stage's
 * barrier, and made most of a short job's time on a freshly started cluster.
 */
public final class PeerLinks implements AutoCloseable {
  /** A shuffle batch not acknowledged in this time counts as a lost node. */
  static final Duration SHUFFLE_TIMEOUT = Duration.ofSeconds(60);

  private final ClusterSpec spec;
  private final int self;
  private final Connection[] links;
  /** Connections being opened, by node; null when none is. */
  private final CompletableFuture<?>[] opening;
  private final io.netty.handler.ssl.SslContext tls;

  public PeerLinks(ClusterSpec spec, int self) {
    this.spec = spec;
    this.self = self;
    this.links = new Connection[spec.nodeCount()];
    this.opening = new CompletableFuture<?>[spec.nodeCount()];
    this.tls = org.sss.core.transport.Tls.clientContext(spec);
  }

  /** Starts opening every missing link to another node; returns at once. */
  public void warmUp() {
    synchronized (links) {
      for (int node = 0; node < links.length; node++) {
        if (node != self) {
          openingOrOpen(node);
        }
      }
    }
  }

  /** The connection to {@code node}, connecting if needed. Blocks while connecting. */
  public Connection get(int node) {
    CompletableFuture<Connection> f;
    synchronized (links) {
      Connection c = links[node];
      if (c != null && c.isActive()) {
        return c;
      }
      f = openingOrOpen(node);
    }
    Connection c;
    try {
      c = f.get(15, TimeUnit.SECONDS);
    } catch (Exception e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      throw new NodeUnavailableException("node " + self + " cannot reach " + spec.node(node) + ": "
          + cause.getMessage(), cause);
    } finally {
      synchronized (links) {
        if (opening[node] == f) {
          opening[node] = null;
        }
      }
    }
    synchronized (links) {
      links[node] = c;
    }
    return c;
  }

  /** The attempt under way to open a link to {@code node}, started now if there is none. */
  @SuppressWarnings("unchecked")
  private CompletableFuture<Connection> openingOrOpen(int node) {
    Connection c = links[node];
    if (c != null && c.isActive()) {
      return CompletableFuture.completedFuture(c);
    }
    CompletableFuture<Connection> f = (CompletableFuture<Connection>) opening[node];
    boolean stale = f != null && f.isDone() && (f.isCompletedExceptionally() || !f.join().isActive());
    if (f == null || stale) {
      f = Connection.open(spec.node(node), spec.secret(), "node-" + self, tls, Pipelines.DEFAULT_MAX_FRAME,
          SHUFFLE_TIMEOUT);
      opening[node] = f;
    }
    return f;
  }

  @Override
  public void close() {
    synchronized (links) {
      for (Connection c : links) {
        if (c != null) {
          c.close();
        }
      }
      for (CompletableFuture<?> f : opening) {
        if (f != null) {
          f.thenAccept(c -> ((Connection) c).close());
        }
      }
    }
  }
}
