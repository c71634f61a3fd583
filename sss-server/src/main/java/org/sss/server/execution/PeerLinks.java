package org.sss.server.execution;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.transport.Connection;
import org.sss.core.transport.NodeUnavailableException;
import org.sss.core.transport.Pipelines;
import org.sss.core.transport.Tls;

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
  /** The link to each node: opened, or being opened; null before the first attempt. */
  private final List<CompletableFuture<Connection>> links;
  private final io.netty.handler.ssl.SslContext tls;

  public PeerLinks(ClusterSpec spec, int self) {
    this.spec = spec;
    this.self = self;
    this.links = new ArrayList<>(Collections.nCopies(spec.nodeCount(), null));
    this.tls = Tls.clientContext(spec);
  }

  /** Starts opening every missing link to another node; returns at once. */
  public void warmUp() {
    for (int node = 0; node < links.size(); node++) {
      if (node != self) {
        link(node);
      }
    }
  }

  /** The connection to {@code node}, connecting if needed. Blocks while connecting. */
  public Connection get(int node) {
    try {
      return link(node).get(15, TimeUnit.SECONDS);
    } catch (Exception e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      throw new NodeUnavailableException("node " + self + " cannot reach " + spec.node(node) + ": "
          + cause.getMessage(), cause);
    }
  }

  /** The link to {@code node}; a new attempt when there was none or the last one failed or broke. */
  private CompletableFuture<Connection> link(int node) {
    synchronized (links) {
      CompletableFuture<Connection> f = links.get(node);
      boolean usable = f != null && (!f.isDone() || !f.isCompletedExceptionally() && f.join().isActive());
      if (!usable) {
        f = Connection.open(spec.node(node), spec.secret(), "node-" + self, spec.partitionMap().layout(), tls, Pipelines.DEFAULT_MAX_FRAME,
            SHUFFLE_TIMEOUT);
        links.set(node, f);
      }
      return f;
    }
  }

  /**
   * Breaks the link to {@code node}, failing the batches waiting on it with {@code why}; the next
   * use opens a new one. For a node the members decided down or out: killed, its connection
   * breaks by itself, but one whose disk hangs keeps its connection open and answers nothing,
   * and a stage sending to it would otherwise wait the whole {@link #SHUFFLE_TIMEOUT} before the
   * job can run again without it.
   */
  public void drop(int node, String why) {
    CompletableFuture<Connection> f;
    synchronized (links) {
      f = links.get(node);
      links.set(node, null);
    }
    if (f != null) {
      f.thenAccept(c -> c.abandon(why));
    }
  }

  @Override
  public void close() {
    synchronized (links) {
      for (CompletableFuture<Connection> f : links) {
        if (f != null) {
          f.thenAccept(Connection::close);
        }
      }
    }
  }
}
